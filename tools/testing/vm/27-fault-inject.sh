#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Fault injection (issue 17, "Fault injection"): the kernel's failslab and
# fail_page_alloc (scripts/kernel/test.config). An rrxe device and, as the
# control, an rdma_rxe device, each in a namespace of its own
# (rxe_and_rrxe) with lo up and a dummy netdev fi0 for the device adds.
#
# Verbs: tools/testing/fault_inject.py fails, through its thread's
# /proc/thread-self/fail-nth, the 1st, 2nd, ... allocation of each verb
# that allocates (open_device, alloc_pd, create_comp_channel, create_cq
# with and without a channel, resize_cq, create_srq, modify_srq, reg_mr,
# alloc_mw of both types, create_ah, create_qp RC/UC/UD/RC on an SRQ,
# modify_qp RC and UD state by state, attach_mcast, and `rdma link add`
# sent as netlink from the same thread) until a call succeeds without
# reaching its fault. Each failure must be an errno, leave the device's
# resource counts as they were, and the object made after the walk must
# work (it passes data, gets events, receives, ...).
#
# Packets: the driver's own skb allocations (data packets, ACKs, read
# responses) fail at $RRXE_FI_PCT % (5) for $RRXE_FI_SECS seconds (3) while
# rrxe_xfer moves verified data between two QPs of the device (its own
# address): failslab's cache filter on skbuff_head_cache and its stack
# filter on the driver's code (require-start/-end: the module's text from
# /proc/kallsyms), so that nothing else in the kernel fails; `times` bounds
# the failures (300) should the script die with the window open. The
# transfer must end verified, or with its retries exhausted ("transport
# retry counter exceeded"), never hang nor corrupt; a fresh verified
# transfer must pass afterwards.
#
# Then, for rrxe: no QP, CQ, MR or PD of the tool's process left, no device
# fi_rrxe, link delete and rmmod. rrxe is unloaded before the control
# runs, so that a warning of rdma_rxe's own error paths is the harness's
# note, not a failure (guest-run.sh); the control's results are printed as
# comments beside rrxe's. The harness fails the run on any kernel report
# and on kmemleak's leaks, the error paths' leaks included.
#
# usage: 27-fault-inject.sh [DEV...]   (rrxe, rxe; default both, rrxe first;
#   or $RRXE_FI_DEVS)
# $RRXE_FI_CAP (400) faults at most per verb; $RRXE_FI_ADD_POINTS (4) of
# `rdma link add`'s sites are failed, drawn by $RRXE_FI_SEED (default: the
# date; printed).
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

helper=$RRXE_TOP/tools/testing/fault_inject.py
tmp=$TRAFFIC_TMP
dbg=/sys/kernel/debug
cap=${RRXE_FI_CAP:-400}
points=${RRXE_FI_ADD_POINTS:-4}
seed=${RRXE_FI_SEED:-$(date +%s)}
pct=${RRXE_FI_PCT:-5}
secs=${RRXE_FI_SECS:-3}
times=300
bytes=$((1 << 20))
read -ra types <<<"${*:-${RRXE_FI_DEVS:-rrxe rxe}}"
echo "# seed $seed; devices: ${types[*]}"

mountpoint -q $dbg || mount -t debugfs none $dbg

# fi_set CAPABILITY FILE VALUE: a fault-injection setting in debugfs.
fi_set() { echo "$3" >"$dbg/$1/$2"; }

# fi_present: the kernel has what this script uses.
fi_present() {
	[ -e /proc/self/fail-nth ] && [ -d $dbg/failslab ] && [ -d $dbg/fail_page_alloc ] &&
		[ -e $dbg/failslab/require-start ] && [ -e /sys/kernel/slab/skbuff_head_cache/failslab ]
}

# fi_reset: both capabilities as the kernel boots them, but verbose 0 (at
# the default 2 an injected failure prints a stack dump: a splat for the
# harness), and no cache marked for the cache filter.
fi_reset() {
	local c
	for c in failslab fail_page_alloc; do
		fi_set $c probability 0
		fi_set $c verbose 0
		fi_set $c interval 1
		fi_set $c times 1
		fi_set $c space 0
		fi_set $c task-filter N
		fi_set $c ignore-gfp-wait Y
		fi_set $c stacktrace-depth 32
		fi_set $c require-start 0
		fi_set $c require-end 0xffffffffffffffff
		fi_set $c reject-start 0
		fi_set $c reject-end 0
	done
	fi_set failslab cache-filter N
	fi_set fail_page_alloc ignore-gfp-highmem Y
	fi_set fail_page_alloc min-order 1
	for c in skbuff_head_cache skbuff_small_head; do
		echo 0 >/sys/kernel/slab/$c/failslab
	done
} 2>/dev/null

# sym_range NAME: "START END" of kernel function NAME: its address and the
# next symbol's (/proc/kallsyms lists the kernel's symbols by address).
sym_range() {
	awk -v n="$1" 'a != "" && $1 != a { print "0x" a, "0x" $1; ok = 1; exit }
		a == "" && $3 == n { a = $1 } END { exit !ok }' /proc/kallsyms
}

# module_text MODULE: "START END" of the module's code: its lowest and
# highest text symbol, rounded out to the page (its code is one
# page-aligned allocation, so nothing else lies in between).
module_text() {
	local lo hi
	read -r lo hi < <(awk -v m="[$1]" '$4 == m && ($2 == "t" || $2 == "T") {
		if (lo == "" || $1 < lo) lo = $1; if ($1 > hi) hi = $1 } END { print lo, hi }' /proc/kallsyms)
	# Unprivileged kallsyms shows zeros; no symbol: no module.
	[ -n "$hi" ] && [ "$((16#$hi))" != 0 ] || return 1
	printf '0x%x 0x%x\n' $((16#${lo} & ~0xfff)) $(((16#$hi | 0xfff) + 1))
}

# fi_nth_mode: only fail-nth injects, into GFP_KERNEL allocations too, page
# allocations of any order (but user pages), nothing under vmalloc: its
# failures print warn_alloc()'s stack dump (fault_inject.py's docstring).
fi_nth_mode() {
	local r c
	r=$(sym_range __vmalloc_node_range_noprof) || return 1
	for c in failslab fail_page_alloc; do
		fi_set $c verbose 0 && fi_set $c probability 0 && fi_set $c ignore-gfp-wait N &&
			fi_set $c stacktrace-depth 32 && fi_set $c reject-start "${r% *}" &&
			fi_set $c reject-end "${r#* }" || return 1
	done
	fi_set failslab cache-filter N && fi_set fail_page_alloc min-order 0 &&
		fi_set fail_page_alloc ignore-gfp-highmem Y
}

# fi_skb_mode "START END": failslab, once its probability is set, fails
# GFP_ATOMIC allocations of skbuff_head_cache (and skbuff_small_head, if
# it is not merged with another cache: the cache filter takes only a cache
# of its own) whose stack has a return address in START..END, at most
# $times of them.
fi_skb_mode() {
	fi_set failslab probability 0 && fi_set failslab verbose 0 &&
		echo 1 >/sys/kernel/slab/skbuff_head_cache/failslab || return 1
	if echo 1 2>/dev/null >/sys/kernel/slab/skbuff_small_head/failslab; then
		echo "# skbuff_small_head is a cache of its own: marked too"
	fi
	fi_set failslab cache-filter Y && fi_set failslab ignore-gfp-wait Y &&
		fi_set failslab task-filter N && fi_set failslab interval 1 &&
		fi_set failslab space 0 && fi_set failslab times $times &&
		fi_set failslab stacktrace-depth 32 && fi_set failslab reject-start 0 &&
		fi_set failslab reject-end 0 && fi_set failslab require-start "${1% *}" &&
		fi_set failslab require-end "${1#* }"
}

if ! fi_present; then
	not_ok "the kernel has fault injection: /proc/self/fail-nth, failslab and fail_page_alloc" \
		"in debugfs with the stack-trace filter, /sys/kernel/slab/*/failslab" \
		"(scripts/kernel/test.config: FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC," \
		"FAULT_INJECTION_DEBUG_FS, FAULT_INJECTION_STACKTRACE_FILTER)"
	finish
fi
trap fi_reset EXIT
fi_reset
need_xfer

ref=rxe0
dut=rrxe0
rxe_and_rrxe $ref $dut
declare -A dev_of=([rrxe]=$dut [rxe]=$ref) mod_of=([rrxe]=rrxe [rxe]=rdma_rxe) \
	ns_of=([$ref]=$REF_NS [$dut]=$DUT_NS) addr_of=([$ref]=198.18.0.1 [$dut]=198.18.0.2) gid_of=()
for ns in $REF_NS $DUT_NS; do
	ip -n "$ns" link add fi0 type dummy && ip -n "$ns" link set fi0 up ||
		echo "# setup: no dummy netdev fi0 in $ns"
done

# report DEV CHECK ARGS...: a check's result, as itself for rrxe, as a
# comment for rdma_rxe (the control).
report() {
	local dev=$1
	shift
	if [ "$dev" = $dut ]; then
		"$@"
	else
		"$@" | sed 's/^\(not \)\{0,1\}ok - /# rdma_rxe: &/'
	fi
}

# tool_result TYPE OUT STATUS: fault_inject.py's lines, counted for rrxe,
# comments for rdma_rxe; its other output as comments.
tool_result() {
	local t=$1 out=$2 rc=$3 fails
	grep -v '^verb \|^\(not \)\{0,1\}ok - ' "$out" | sed 's/^\([^#]\)/# \1/'
	if [ "$t" = rrxe ]; then
		grep '^\(not \)\{0,1\}ok - ' "$out"
		fails=$(grep -c '^not ok - ' "$out")
		RRXE_FAILS=$((RRXE_FAILS + fails))
		if [ "$rc" != 0 ] && [ "$fails" = 0 ]; then
			not_ok "$t: fault_inject.py failed (exit $rc)"
		fi
	else
		grep '^\(not \)\{0,1\}ok - ' "$out" | sed 's/^/# rdma_rxe: /'
		[ "$rc" = 0 ] || echo "# rdma_rxe: fault_inject.py ended with exit $rc"
	fi
}

# fi_walks TYPE: fault_inject.py on the device of TYPE, in its namespace.
fi_walks() {
	local t=$1 dev=${dev_of[$1]} out rc extra=() add=$points
	out=$tmp/fi-$t.out
	if ! fi_nth_mode; then
		fi_reset
		report "$dev" not_ok "$t: fail-nth set up (no __vmalloc_node_range_noprof in /proc/kallsyms?)"
		return
	fi
	# rdma_rxe frees a QP that a bound type 2 window still holds
	# (testing.rst, "Known rdma_rxe bugs"): its control binds none.
	[ "$t" = rxe ] && extra=(--no-type2-bind)
	# After a failed device add rdma_rxe leaks its namespace's UDP socket
	# (kmemleak, the first run; testing.rst, "Known rdma_rxe bugs"): the
	# control adds its device without faults.
	[ "$t" = rxe ] && add=0
	ip netns exec "${ns_of[$dev]}" timeout -k 10 300 python3 "$helper" --dev "$dev" \
		--gid "${gid_of[$dev]}" --cap "$cap" --link-type "$t" --netdev fi0 \
		--link-name "fi_$t" --add-points "$add" --seed "$seed" "${extra[@]}" >"$out" 2>&1
	rc=$?
	fi_reset
	tool_result "$t" "$out" "$rc"
}

# hw_counter DEV NAME: a port counter of DEV (0 if it has none of that name).
hw_counter() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0
}

# sent_moved DEV BEFORE N: DEV has sent N packets more than BEFORE.
# shellcheck disable=SC2317 # called through wait_for
sent_moved() { [ $(($(hw_counter "$1" sent_pkts) - $2)) -ge "$3" ]; }

# xfer_start NAME: a verified rrxe_xfer of $bytes each of write, read and
# send between two QPs of DEV1 (the pair_up variables), server and client
# in the background (XF_SRV, XF_CLI, outputs XF_OUT.server and .client);
# QP timeout 14 (67 ms), as over 12-lossy's lossy wire.
xfer_start() {
	local port=$TRAFFIC_PORT
	TRAFFIC_PORT=$((TRAFFIC_PORT + 1))
	XF_OUT=$tmp/$1
	ip netns exec "$PAIR_NS2" timeout -k 5 130 "$xfer" -t 120 -d "$DEV2" -g "$GID2" \
		-p "$port" >"$XF_OUT.server" 2>&1 &
	XF_SRV=$!
	wait_for 30 tcp_listening "$PAIR_NS2" "$port" "$XF_SRV" || echo "# $1: the server does not listen"
	ip netns exec "$PAIR_NS1" timeout -k 5 130 "$xfer" -t 120 -d "$DEV1" -g "$GID1" \
		-p "$port" -b $bytes -s 7 -T 14 "$PAIR_IP2" >"$XF_OUT.client" 2>&1 &
	XF_CLI=$!
}

# xfer_verdict: waits for the transfer; XF_VERDICT says how it ended:
# "verified", "retries exhausted" (allowed), else why not.
xfer_verdict() {
	local crc src
	wait "$XF_CLI"
	crc=$?
	stop_after "$XF_SRV" 20
	src=$?
	case "$crc $src" in
	*124* | *137*) XF_VERDICT="hung (client exit $crc, server exit $src)" ;;
	"0 0")
		XF_VERDICT="not verified"
		grep -q "xfer: OK bytes=$((3 * bytes))" "$XF_OUT.client" && XF_VERDICT=verified
		;;
	*)
		XF_VERDICT="failed (client exit $crc, server exit $src)"
		grep -q 'transport retry counter exceeded' "$XF_OUT.client" &&
			XF_VERDICT="retries exhausted"
		;;
	esac
}

# fi_packets TYPE: the driver's skb allocations fail under a transfer.
fi_packets() {
	local t=$1 dev=${dev_of[$1]} mod=${mod_of[$1]} range c sent0 before=() after=() left
	local injected desc
	PAIR_NS1=${ns_of[$dev]} PAIR_NS2=${ns_of[$dev]} DEV1=$dev DEV2=$dev
	GID1=${gid_of[$dev]} GID2=${gid_of[$dev]} PAIR_IP2=${addr_of[$dev]}
	if ! range=$(module_text "$mod") || ! fi_skb_mode "$range"; then
		fi_reset
		report "$dev" not_ok "$t: failslab set up for $mod's skb allocations ($mod's code: ${range:-?})"
		return
	fi
	echo "# $t: $mod's code at $range"
	for c in sent_pkts rcvd_seq_err duplicate_request completer_retry_err retry_exceeded_err; do
		before+=("$(hw_counter "$dev" $c)")
	done
	sent0=${before[0]}
	xfer_start "$t-skb"
	wait_for 60 sent_moved "$dev" "$sent0" 100 || echo "# $t: the transfer has sent nothing after 60 s"
	fi_set failslab probability "$pct"
	sleep "$secs"
	fi_set failslab probability 0
	left=$(cat $dbg/failslab/times)
	injected=$((times - left))
	fi_reset
	xfer_verdict
	for c in sent_pkts rcvd_seq_err duplicate_request completer_retry_err retry_exceeded_err; do
		after+=("$(hw_counter "$dev" $c)")
	done
	echo "# $t: $injected skb allocations failed in $secs s at $pct %; the transfer: $XF_VERDICT;" \
		"sent +$((after[0] - before[0])), rcvd_seq_err +$((after[1] - before[1]))," \
		"duplicate_request +$((after[2] - before[2])), completer_retry_err" \
		"+$((after[3] - before[3])), retry_exceeded_err +$((after[4] - before[4]))"
	FI_SKB[$t]="$injected failed, $XF_VERDICT"
	desc="$t: $mod's skb allocations fail under a transfer"
	if [ "$injected" -gt 0 ]; then
		report "$dev" ok "$desc ($injected)"
	else
		report "$dev" not_ok "$desc (none did)"
	fi
	desc="$t: the transfer under skb faults ends verified or out of retries"
	case $XF_VERDICT in
	verified | "retries exhausted") report "$dev" ok "$desc ($XF_VERDICT)" ;;
	*)
		report "$dev" not_ok "$desc ($XF_VERDICT)"
		tail -4 "$XF_OUT.client" | sed 's/^/#   client: /'
		tail -4 "$XF_OUT.server" | sed 's/^/#   server: /'
		;;
	esac
	if run_traffic "$t-after" 120 "xfer: OK bytes=$((3 << 18))" \
		"$xfer" -t 100 -- -b $((1 << 18)) -s 8; then
		report "$dev" ok "$t: a fresh verified transfer after the skb faults"
	else
		report "$dev" not_ok "$t: a fresh verified transfer after the skb faults"
	fi
}

# leftovers DEV: the QPs, CQs, MRs and PDs of DEV a python3 process made.
leftovers() {
	local kind
	for kind in qp cq mr pd; do
		rdma res show $kind 2>/dev/null | grep -E "^(dev|link) $1[/ ]" | grep 'comm python3'
	done
}
# shellcheck disable=SC2317 # called through wait_for
no_leftovers() { [ -z "$(leftovers "$1")" ]; }

# fi_device TYPE: the walks, the skb faults, and what must be left.
declare -A FI_SKB=()
fi_device() {
	local t=$1 dev=${dev_of[$1]} t0=$SECONDS
	echo "# --- $t: $dev in namespace ${ns_of[$dev]}"
	if ! port_active "$dev" || ! gid_of[$dev]=$(roce_v2_ipv4_gid "$dev"); then
		report "$dev" not_ok "$t: $dev is ACTIVE with a RoCEv2 IPv4 GID"
		return
	fi
	fi_walks "$t"
	echo "# $t: the walks took $((SECONDS - t0)) s"
	t0=$SECONDS
	fi_packets "$t"
	echo "# $t: the skb faults took $((SECONDS - t0)) s"
	if wait_for 20 no_leftovers "$dev"; then
		report "$dev" ok "$t: no QP, CQ, MR or PD of fault_inject.py left"
	else
		report "$dev" not_ok "$t: no QP, CQ, MR or PD of fault_inject.py left"
		leftovers "$dev" | head -20 | sed 's/^/#   /'
	fi
	report "$dev" check "$t: no device fi_$t left" sh -c "! rdma link show | grep -q '^link fi_$t/'"
}

echo "# set up in $SECONDS s"
# rrxe first: the control runs with rrxe unloaded (see the top).
for t in rrxe rxe; do
	[[ " ${types[*]} " == *" $t "* ]] || continue
	if [ $t = rxe ] && [ -d /sys/module/rrxe ]; then
		rdma link delete $dut 2>/dev/null
		gone $dut 100 || echo "# teardown: $dut still exists"
		rmmod rrxe 2>&1 | sed 's/^/# teardown: /'
	fi
	fi_device "$t"
	if [ $t = rrxe ]; then
		check "rdma link delete $dut after the faults" rdma link delete $dut
		check "$dut is gone" gone $dut 100
		check "rmmod rrxe after the faults" unload_rrxe
	fi
done

# The per-verb results side by side.
if [ -s "$tmp/fi-rrxe.out" ] && [ -s "$tmp/fi-rxe.out" ]; then
	verbs_side_by_side 22 44 "$tmp/fi-rrxe.out" "$tmp/fi-rxe.out"
	printf '# %-22s | %-44s | %s\n' "skb faults" "${FI_SKB[rrxe]:-}" "${FI_SKB[rxe]:-}"
fi

rdma link delete $ref 2>/dev/null
gone $ref 100 || echo "# teardown: $ref still exists"
unload_drivers
netns_del_wait $REF_NS $DUT_NS
# Loading the dummy driver made dummy0 in the initial namespace too.
ip link del dummy0 2>/dev/null
rm -rf "$tmp"
finish
