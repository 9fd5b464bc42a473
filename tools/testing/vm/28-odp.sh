#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# On-demand paging (issue 15; Documentation/design.rst, "On-demand
# paging"), side by side on rdma_rxe and rrxe: rrxe_odp (tools/testing/xfer)
# runs the same cases on an rdma_rxe device (the control) and on an rrxe
# device, each in its own namespace (rxe_and_rrxe), two QPs of the device
# talking to each other over lo:
#
# - registration: the odp_caps the device advertises; IBV_ACCESS_HUGETLB
#   refused (EOPNOTSUPP, as rdma_rxe);
# - traffic on regions registered with IBV_ACCESS_ON_DEMAND, every byte
#   checked, the pages taken away under the device between messages:
#   madvise(MADV_DONTNEED) of both buffers (RC SEND/RECV, WRITE, READ,
#   atomics, SRQ receives, UD SEND/RECV), a new mapping over the target
#   (mmap MAP_FIXED), a fork whose child holds a copy-on-write copy (the
#   writes must land in the parent, the child keep the old bytes);
# - advise_mr (through the ioctl: the guest's rxe provider does not pass
#   ibv_advise_mr on): read, write and no-fault prefetch, with and without
#   the flush flag, traffic after each; a bad L_Key; a range outside the
#   region; a range the process unmapped; a region registered at an iova
#   other than its address (prefetch_iova: rrxe reads the SGE in the
#   region's iova space, as mlx5 and as a work request's SGE; rdma_rxe
#   reads it as an address, EFAULT for the iova, and its data path reads
#   iovas as addresses, so it gets no traffic there: shown, not counted);
# - hostile: a WRITE or READ of a remote region whose memory was unmapped,
#   a SEND from an unmapped local buffer, a SEND into an unmapped receive,
#   a 4 MiB WRITE whose target is unmapped right after it was posted:
#   clean completion errors (or success, for the last), never a hang;
# - memfd_secret memory (out of the kernel's direct map) registered with
#   ODP, on rrxe only (rdma_rxe's data path maps its pages: an oops): a
#   WRITE into it, a READ of it, a SEND from it fail cleanly, the device
#   never touching the pages;
# - implicit ODP (one region over the whole address space: ibv_reg_mr of
#   NULL, SIZE_MAX), which rrxe has and rdma_rxe refuses (EOPNOTSUPP at
#   registration): IBV_ODP_SUPPORT_IMPLICIT advertised; an iova other than
#   0 refused (EINVAL, as mlx5); RC SEND, WRITE, READ and atomics between
#   two buffers 2 GiB apart, each across a 1 GiB boundary (so over four of
#   rrxe's 1 GiB children, a copy crossing from one into the next), both
#   madvised before every message, every byte checked; advise_mr on the
#   region (its children made by the prefetch), then a checked WRITE; a
#   prefetch of memory the process does not have (EFAULT with the flush
#   flag, ok without); a WRITE or READ of unmapped memory never reached
#   before, and of memory reached once then unmapped (a remote access
#   error), a SEND from unmapped memory (a local protection error), as
#   for explicit ODP on rrxe.
#
# Each case passes when rrxe answers as rdma_rxe (or says "ok" where
# rdma_rxe fails), but for the differences listed in `differs` below and
# the implicit cases (`implicit_want`: rrxe's answer, rdma_rxe's being
# EOPNOTSUPP, or "no implicit" for the caps); every data case must also
# say "ok" on rrxe.
# The harness fails the script on any kernel report (KASAN, lockdep,
# WARNING, BUG) and kmemleak finds what a region left behind.
#
# usage: 28-odp.sh [CASE...]   (rrxe_odp's cases; default all; `secret`
#   runs on rrxe alone)
#   $RRXE_ODP_ITERS messages per traffic case (default 20).
. "$RRXE_TOP/tools/testing/lib.sh"

iters=${RRXE_ODP_ITERS:-20}
tmp=$(mktemp -d)

if ! probe=$(xfer_bin rrxe_odp); then
	not_ok "rrxe_odp builds"
	finish
fi
ref=rxe0
dut=rrxe0
rxe_and_rrxe $ref $dut
declare -A ns=([$ref]=$REF_NS [$dut]=$DUT_NS) gid
for dev in $ref $dut; do
	port_active "$dev" || echo "# setup: $dev port 1 is not ACTIVE"
	gid[$dev]=$(roce_v2_ipv4_gid "$dev") || echo "# setup: $dev has no RoCEv2 IPv4 GID"
done

# Where rrxe answers otherwise than rdma_rxe, on purpose (design.rst):
#   prefetch_ro: a write prefetch of a region registered without write
#     access: rdma_rxe looks the key up asking for local write (EINVAL),
#     rrxe refuses the write on a read-only region (EPERM, rxe's own answer
#     once the lookup passes).
#   unmapped_recv: a SEND whose receive cannot be written: rdma_rxe answers
#     a remote operational error and completes the receive with a local QP
#     operation error; rrxe answers any protection error of a receive
#     with an invalid request NAK and a local protection error (its rule
#     for every region, not only ODP). Both must fail cleanly.
#   unmapped_send: a SEND from a local buffer the process unmapped: rrxe
#     completes it with a local protection error (IBA's status for a local
#     access the region does not allow, as for any region); rdma_rxe
#     flushes it (Work Request Flushed Error: no completion says what
#     failed).
declare -A differs=([prefetch_ro]=1 [unmapped_recv]=1 [unmapped_send]=1)

# Implicit ODP: what rrxe must answer; rdma_rxe refuses the registration
# (EOPNOTSUPP; its caps say "no implicit"), which is what it must answer.
declare -A implicit_want=(
	[implicit_caps]=ok
	[implicit]=ok
	[implicit_iova]=EINVAL
	[implicit_rc_send]=ok
	[implicit_rc_write]=ok
	[implicit_rc_read]=ok
	[implicit_rc_atomic]=ok
	[implicit_prefetch]=ok
	[implicit_prefetch_unmapped]=EFAULT
	[implicit_prefetch_unmapped_async]=ok
	[implicit_unmapped_write]="remote access error"
	[implicit_unmapped_read]="remote access error"
	[implicit_unmapped_again]="remote access error"
	[implicit_unmapped_send]="local protection error"
)

# `secret` is rrxe's alone (below): never passed to the side-by-side run,
# which runs every case when none is left.
cases=()
secret=0
[ $# -gt 0 ] || secret=1
for c in "$@"; do
	if [ "$c" = secret ]; then secret=1; else cases+=("$c"); fi
done
side_by_side=1
[ $# -gt 0 ] && [ ${#cases[@]} -eq 0 ] && side_by_side=0

for dev in $ref $dut; do
	[ $side_by_side = 1 ] || break
	[ -n "${gid[$dev]:-}" ] || continue
	timeout -k 10 600 ip netns exec "${ns[$dev]}" "$probe" -d "$dev" -g "${gid[$dev]}" \
		-n "$iters" ${cases[@]+"${cases[@]}"} >"$tmp/$dev" 2>&1
	echo "# $dev: rrxe_odp exit $?"
	sed "s/^/# $dev: /" "$tmp/$dev"
done
touch "$tmp/$ref" "$tmp/$dut"

ncases=0
while IFS= read -r line; do
	case $line in
	"case "*) ;;
	*) continue ;;
	esac
	name=${line#case }
	name=${name%%:*}
	r=${line#*: }
	d=$(sed -n "s/^case $name: //p" "$tmp/$dut")
	ncases=$((ncases + 1))
	if [ -n "${implicit_want[$name]:-}" ]; then
		want=${implicit_want[$name]}
		rwant=EOPNOTSUPP
		[ "$name" = implicit_caps ] && rwant="no implicit"
		if [ "$d" = "$want" ] && [ "$r" = "$rwant" ]; then
			ok "$name: $dut $d, $ref $r"
		else
			not_ok "$name: $dut ${d:-missing} (wanted $want), $ref ${r:-missing} (wanted $rwant)"
		fi
	elif [ -n "${differs[$name]:-}" ]; then
		# Both must fail, cleanly, each its own way.
		case "$r|$d" in
		*FAIL* | *timeout* | *"|" | "|"*) not_ok "$name: $dut ${d:-missing}, $ref ${r:-missing}" ;;
		*) ok "$name: $dut $d ($ref: $r; the drivers differ here, see the script)" ;;
		esac
	elif [ "$r" = "$d" ]; then
		ok "$name: $dut ${d}, as $ref"
	elif [ "$d" = ok ]; then
		# The control's own failure (C rxe's), shown, not counted.
		ok "$name: $dut ok, $ref $r"
	else
		not_ok "$name: $dut ${d:-missing}, $ref $r"
	fi
done <"$tmp/$ref"
[ $ncases -ge 34 ] || [ $# -gt 0 ] || not_ok "rrxe_odp ran its cases on $ref ($ncases)"

# rrxe on its own: the data cases pass (a control that fails one is shown
# above as a difference), and the caps are rdma_rxe's.
for name in caps rc_send rc_write rc_read rc_read_untouched rc_atomic rc_srq rc_remap \
	rc_fork ud_send prefetch_read prefetch_write prefetch_no_fault prefetch_read_async \
	prefetch_write_async prefetch_iova unmap_midway; do
	[ $# -gt 0 ] && ! grep -q "^case $name:" "$tmp/$dut" && continue
	check "$dut: $name ok" grep -q "^case $name: ok$" "$tmp/$dut"
done
for name in unmapped_write unmapped_read; do
	[ $# -gt 0 ] && ! grep -q "^case $name:" "$tmp/$dut" && continue
	check "$dut: $name ends with a remote access error" \
		grep -q "^case $name: remote access error$" "$tmp/$dut"
done
# Implicit ODP on rrxe alone, whatever the control printed.
for name in "${!implicit_want[@]}"; do
	[ $# -gt 0 ] && ! grep -q "^case $name:" "$tmp/$dut" && continue
	check "$dut: $name ${implicit_want[$name]}" \
		grep -qx "case $name: ${implicit_want[$name]}" "$tmp/$dut"
done
# Memory the kernel cannot read: rrxe only (see the top).
if [ $secret = 1 ] && [ -n "${gid[$dut]:-}" ]; then
	timeout -k 10 300 ip netns exec "${ns[$dut]}" "$probe" -d "$dut" -g "${gid[$dut]}" \
		secret >"$tmp/secret" 2>&1
	sed "s/^/# $dut: /" "$tmp/secret"
	s=$(sed -n 's/^case secret: //p' "$tmp/secret")
	want="write remote access error, read remote access error, send local protection error"
	case $s in
	"skip "*) echo "# skip - $dut: secret: no memfd_secret here (${s#skip })" ;;
	"$want") ok "$dut: secret: $s" ;;
	*) not_ok "$dut: secret: ${s:-missing} (wanted: $want)" ;;
	esac
fi
# The caps are rdma_rxe's but for implicit ODP (IBV_ODP_SUPPORT_IMPLICIT,
# 0x2 of the general caps: the implicit_caps case above).
odp_caps() {
	local g rest
	# (not `< <(...)`: the guest's /dev has no /dev/fd)
	read -r _ g rest <<<"$(sed -n 's/^info odp //p' "$tmp/$1")"
	[ -n "${g:-}" ] || return 0
	printf 'general 0x%x %s\n' $((g & ~2)) "$rest"
}
[ $# -gt 0 ] || check "$dut advertises rdma_rxe's odp_caps, implicit ODP aside ($(odp_caps $dut))" \
	[ "$(odp_caps $dut)" = "$(odp_caps $ref)" ]

# Nothing left on the devices once the process exited; the device goes.
left=$(rdma res show mr 2>/dev/null | grep -E "^(dev|link) ${dut}[/ ]" | grep -c rrxe_odp)
check "$dut: no MR of rrxe_odp left" [ "$left" = 0 ]
check "$dut: rdma link delete" rdma link delete $dut
rxe_and_rrxe_teardown $ref $dut
rm -rf "$tmp"
finish
