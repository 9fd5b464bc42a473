#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# rdma-core's own Python test suite (shipped by python3-pyverbs in
# /usr/share/doc/rdma-core/tests), run through tools/testing/rdma_core_suite.py
# on a C rdma_rxe device and on an rrxe device in the same VM, on each
# device's RoCEv2 IPv4 GID. rdma_rxe runs everything; rrxe runs with
# --no-traffic, which skips any test that waits for a completion ("needs the
# data path"), rrxe having no data path yet. Each test's outcome on rrxe must
# be rdma_rxe's, or a data-path skip where rdma_rxe passes, or a skip where
# rdma_rxe skips too. Tests that fail on rdma_rxe itself only need rrxe to
# fail the same way. The per-device results are printed as comments; only
# the comparisons count.
. "$RRXE_TOP/tools/testing/lib.sh"

runner="$RRXE_TOP/tools/testing/rdma_core_suite.py"
modules="test_device test_pd test_cq test_cq_events test_mr test_qp test_srq test_addr"
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
# 60 s alarm in the runner; `timeout` guards the runner as a whole.
declare -A extra=([$ref]="" [$dut]="--no-traffic")
for dev in $ref $dut; do
	[ -n "${gid[$dev]:-}" ] || continue
	# shellcheck disable=SC2086 # extra and modules are word lists
	timeout -k 10 840 ip netns exec "${ns[$dev]}" python3 "$runner" --dev $dev --gid "${gid[$dev]}" \
		--out "$tmp/$dev.res" ${extra[$dev]} $modules >"$tmp/$dev.log" 2>&1 &
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

datapath='needs the data path'
# The table: one row per test; reasons of other outcomes than pass (and than
# rrxe's data-path skips) follow on their own lines.
printf '# %-62s | %-7s | %-7s\n' test $ref $dut
for id in "${ids[@]}"; do
	r=${status[$ref,$id]:-missing}
	d=${status[$dut,$id]:-missing}
	dshow=$d
	[ "$d" = skip ] && [[ ${reason[$dut,$id]} == *"$datapath"* ]] && dshow=skip-dp
	printf '# %-62s | %-7s | %-7s\n' "${id#tests.}" "$r" "$dshow"
	[ "$r" = pass ] || [ "$r" = missing ] || echo "#     $ref: ${reason[$ref,$id]}"
	case $dshow in pass | skip-dp | missing) ;; *) echo "#     $dut: ${reason[$dut,$id]}" ;; esac
done

same=0 dp=0 both_skip=0 differ=0
for id in "${ids[@]}"; do
	t=${id#tests.}
	r=${status[$ref,$id]:-missing}
	d=${status[$dut,$id]:-missing}
	rwhy=${reason[$ref,$id]:--} dwhy=${reason[$dut,$id]:--}
	if [ "$r" = "$d" ] && [ "$d" != missing ] && [ "$d" != skip ]; then
		same=$((same + 1))
		ok "$t: $dut $d, as $ref"
		if [ "$d" != pass ] && [ "$rwhy" != "$dwhy" ]; then
			echo "#   reasons differ: $ref: $rwhy"
			echo "#                   $dut: $dwhy"
		fi
	elif [ "$r" = pass ] && [ "$d" = skip ] && [[ $dwhy == *"$datapath"* ]]; then
		dp=$((dp + 1))
		ok "$t: $dut skip (data path), $ref pass"
	elif [[ $r == fail || $r == error ]] && [ "$d" = skip ] && [[ $dwhy == *"$datapath"* ]]; then
		# rdma_rxe's own traffic failure (e.g. test_resize_cq losing a
		# completion as "queue full"): nothing to compare until rrxe
		# moves data too.
		dp=$((dp + 1))
		ok "$t: $dut skip (data path), $ref $r ($rwhy)"
	elif [ "$r" = skip ] && [ "$d" = skip ]; then
		both_skip=$((both_skip + 1))
		if [ "$rwhy" = "$dwhy" ]; then
			ok "$t: both skip ($rwhy)"
		else
			ok "$t: both skip ($ref: $rwhy; $dut: $dwhy)"
		fi
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
echo "# ${#ids[@]} tests: $same same outcome, $dp rrxe data-path skips where rxe passes," \
	"$both_skip skipped on both, $differ differ"

rm -rf "$tmp"
rxe_and_rrxe_teardown $ref $dut
echo "# 09-rdma-core took ${SECONDS}s"
finish
