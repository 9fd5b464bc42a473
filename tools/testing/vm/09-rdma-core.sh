#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# rdma-core's own Python test suite (shipped by python3-pyverbs in
# /usr/share/doc/rdma-core/tests), run through tools/testing/rdma_core_suite.py
# on a C rdma_rxe device and on an rrxe device in the same VM, on each
# device's RoCEv2 IPv4 GID, traffic included: the suite's traffic tests
# connect two QPs of one device (loopback). Every test that passes on
# rdma_rxe must pass on rrxe, except the known gaps below; a test rdma_rxe
# skips may skip or pass on rrxe; a test that fails on rdma_rxe itself may
# fail the same way or pass on rrxe. The per-device results are printed as
# comments; only the comparisons count.
#
# Arguments, if any, replace the list of suite modules (e.g. test_qpex).
. "$RRXE_TOP/tools/testing/lib.sh"

runner="$RRXE_TOP/tools/testing/rdma_core_suite.py"
# The modules run. test_odp: on-demand paging, explicit ODP as rdma_rxe;
# implicit ODP on rrxe only (test_odp_implicit_rc_traffic skips on
# rdma_rxe, which does not advertise IBV_ODP_SUPPORT_IMPLICIT, and must
# pass on rrxe: "rrxe pass, rdma_rxe skip" counts as ok below); its
# huge-page cases skip on both (neither driver has them); its prefetch
# cases, implicit ones included, skip on both the same way where the
# guest's rxe provider does not pass ibv_advise_mr on (EOPNOTSUPP), and
# tools/testing/vm/28-odp.sh reaches advise_mr through the ioctl. Left out:
# test_relaxed_ordering (pyverbs crashes in it, on rdma_rxe too),
# test_parent_domain, test_cqex's XRC and the mlx5/EFA/CUDA modules
# (hardware or features neither driver has).
modules="${*:-test_device test_pd test_cq test_cq_events test_mr test_qp test_srq test_addr
	test_atomic test_cqex test_qpex test_shared_pd test_rdmacm test_odp}"

# Known gaps: features rrxe does not implement yet, whose tests may fail or
# skip on rrxe even where rdma_rxe passes. Each test is named exactly; a
# test here that passes is reported, so that the list can be emptied as
# the features land.
known_gaps=(
	# Empty: memory windows, FLUSH and ATOMIC WRITE have landed.
)
# Not implemented, and not in the works; treated as the known gaps are.
not_implemented=(
	# Empty: multicast (attach_mcast) has landed.
)
declare -A gap
for t in "${known_gaps[@]}" "${not_implemented[@]}"; do gap[$t]=1; done
ref=rxe0
dut=rrxe0
tmp=$(mktemp -d)

# Setup problems are notes, not assertions: they show up in the results.
# Each device is in its own namespace (rdma_rxe and rrxe cannot share UDP
# port 4791 in one); each runner runs in its device's namespace.
rxe_and_rrxe $ref $dut
declare -A ns=([$ref]=$REF_NS [$dut]=$DUT_NS)
declare -A gid
for dev in $ref $dut; do
	port_active $dev || echo "# setup: $dev port 1 is not ACTIVE"
	if gid[$dev]=$(roce_v2_ipv4_gid $dev); then
		echo "# $dev: RoCEv2 IPv4 GID index ${gid[$dev]}:" \
			"$(cat /sys/class/infiniband/$dev/ports/1/gids/${gid[$dev]})"
	else
		echo "# setup: $dev has no RoCEv2 IPv4 GID"
	fi
done

echo "# setup took ${SECONDS}s"

# Both devices at once, each in its own runner: starting Python and pyverbs
# takes long under TCG, and the VM has two CPUs. Each test has its own
# 60 s alarm in the runner; `timeout` guards the runner as a whole (test_odp
# added some 20 tests of 100 messages each: 1020 s, from 840, within
# guest-run.sh's 1200 s per script).
for dev in $ref $dut; do
	[ -n "${gid[$dev]:-}" ] || continue
	# shellcheck disable=SC2086 # modules is a word list
	timeout -k 10 1020 ip netns exec "${ns[$dev]}" python3 "$runner" --dev $dev --gid "${gid[$dev]}" \
		--out "$tmp/$dev.res" $modules >"$tmp/$dev.log" 2>&1 &
done
wait
for dev in $ref $dut; do
	echo "# --- $dev runner output (last lines)"
	tail -15 "$tmp/$dev.log" 2>/dev/null | sed 's/^/# /'
done

declare -A status reason
ids=()
for dev in $ref $dut; do
	[ -s "$tmp/$dev.res" ] || continue
	# (not `< <(...)`: the guest's /dev has no /dev/fd)
	while IFS=$'\t' read -r id s r; do
		[ -n "$id" ] || continue
		[ -n "${status[$ref,$id]}${status[$dut,$id]}" ] || ids+=("$id")
		status[$dev,$id]=$s
		reason[$dev,$id]=$r
	done <<<"$(cat "$tmp/$dev.res")"
done

# The table: one row per test (known gaps marked); reasons of outcomes
# other than pass follow on their own lines.
printf '# %-62s | %-7s | %-7s\n' test $ref $dut
for id in "${ids[@]}"; do
	t=${id#tests.}
	r=${status[$ref,$id]:-missing}
	d=${status[$dut,$id]:-missing}
	printf '# %-62s | %-7s | %-7s%s\n' "$t" "$r" "$d" "${gap[$t]:+ (known gap)}"
	[ "$r" = pass ] || [ "$r" = missing ] || echo "#     $ref: ${reason[$ref,$id]}"
	[ "$d" = pass ] || [ "$d" = missing ] || echo "#     $dut: ${reason[$dut,$id]}"
done

same=0 better=0 gaps=0 gaps_pass=0 both_skip=0 differ=0
for id in "${ids[@]}"; do
	t=${id#tests.}
	r=${status[$ref,$id]:-missing}
	d=${status[$dut,$id]:-missing}
	rwhy=${reason[$ref,$id]:--} dwhy=${reason[$dut,$id]:--}
	if [ -n "${gap[$t]:-}" ]; then
		gaps=$((gaps + 1))
		if [ "$d" = pass ]; then
			gaps_pass=$((gaps_pass + 1))
			ok "$t: $dut pass (a known gap that passes: take it off the list)"
		else
			ok "$t: $dut $d, a known gap ($ref $r)"
		fi
	elif [ "$d" = missing ]; then
		differ=$((differ + 1))
		not_ok "$t: no outcome on $dut ($ref $r)"
	elif [ "$r" = "$d" ] && [ "$d" != skip ]; then
		same=$((same + 1))
		ok "$t: $dut $d, as $ref"
		if [ "$d" != pass ] && [ "$rwhy" != "$dwhy" ]; then
			echo "#   reasons differ: $ref: $rwhy"
			echo "#                   $dut: $dwhy"
		fi
	elif [ "$r" = skip ] && [ "$d" = skip ]; then
		both_skip=$((both_skip + 1))
		if [ "$rwhy" = "$dwhy" ]; then
			ok "$t: both skip ($rwhy)"
		else
			ok "$t: both skip ($ref: $rwhy; $dut: $dwhy)"
		fi
	elif [ "$d" = pass ] && [ "$r" != pass ]; then
		# rrxe does more than rdma_rxe, or rdma_rxe fails a test
		# itself (e.g. test_resize_cq losing a completion as "queue
		# full").
		better=$((better + 1))
		ok "$t: $dut pass, $ref $r ($rwhy)"
	else
		differ=$((differ + 1))
		not_ok "$t: $dut $d ($dwhy), $ref $r ($rwhy)"
	fi
done

for dev in $ref $dut; do
	if [ ! -s "$tmp/$dev.res" ]; then
		not_ok "$dev: the runner produced no results"
		sed 's/^/#   /' "$tmp/$dev.log" 2>/dev/null | tail -30
	fi
done

declare -A count
for id in "${ids[@]}"; do
	for dev in $ref $dut; do
		s=${status[$dev,$id]:-missing}
		count[$dev,$s]=$((${count[$dev,$s]:-0} + 1))
	done
done
for dev in $ref $dut; do
	line="# $dev:"
	for s in pass fail error skip missing; do
		line+=" $s ${count[$dev,$s]:-0}"
	done
	echo "$line"
done
echo "# ${#ids[@]} tests: $same same outcome, $better pass on rrxe only," \
	"$both_skip skipped on both, $gaps known gaps ($gaps_pass of them pass), $differ differ"

rm -rf "$tmp"
rxe_and_rrxe_teardown $ref $dut
echo "# 09-rdma-core took ${SECONDS}s"
finish
