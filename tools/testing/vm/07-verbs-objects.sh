#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The verbs control path through pyverbs (tools/testing/verbs_objects.py):
# contexts, PDs, CQs, RC/UC/UD QPs and their state machine, MRs, SRQs, AHs,
# refused arguments and transitions, destroy order and teardown at process
# exit. The same cases run on a C rdma_rxe device and on an rrxe device in
# the same VM, and each case's outcome on rrxe (pass, skip for EOPNOTSUPP, or
# fail) must be rdma_rxe's. The per-device results are printed as comments;
# only the comparisons and a final check that rdma_rxe itself passed count.
. "$RRXE_TOP/tools/testing/lib.sh"

helper="$RRXE_TOP/tools/testing/verbs_objects.py"
ref=rxe0
dut=rrxe0
tmp=$(mktemp -d)

port_active() {
	for _ in $(seq 100); do
		grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# Setup problems are notes, not assertions: they show up as failed cases.
setup() { "$@" 2>&1 | sed 's/^/# setup: /'; return "${PIPESTATUS[0]}"; }
veth_pair
setup modprobe rdma_rxe || echo "# setup: modprobe rdma_rxe failed"
setup load_rrxe || echo "# setup: insmod rrxe failed"
setup rdma link add $ref type rxe netdev a0 || echo "# setup: no $ref"
setup rdma link add $dut type rrxe netdev b0 || echo "# setup: no $dut"
for dev in $ref $dut; do
	port_active $dev || echo "# setup: $dev port 1 is not ACTIVE"
done

cases=$(python3 "$helper" --list)
for dev in $ref $dut; do
	echo "# --- $dev"
	timeout -k 5 100 python3 "$helper" --timeout 30 --summary "$tmp/$dev" "$dev" 2>&1 |
		sed 's/^/# /'
done

declare -A status reason values
for dev in $ref $dut; do
	[ -f "$tmp/$dev" ] || continue
	while IFS=$'\t' read -r c s r v; do
		status[$dev,$c]=$s
		reason[$dev,$c]=$r
		values[$dev,$c]=$v
	done <"$tmp/$dev"
done

printf '# %-20s | %-7s | %-7s\n' case $ref $dut
for c in $cases; do
	printf '# %-20s | %-7s | %-7s\n' "$c" "${status[$ref,$c]:-missing}" "${status[$dut,$c]:-missing}"
done

ref_bad=()
for c in $cases; do
	r=${status[$ref,$c]:-missing}
	d=${status[$dut,$c]:-missing}
	[ "$r" = pass ] || ref_bad+=("$c")
	if [ "$r" = "$d" ] && [ "$d" != missing ]; then
		ok "$c: $dut $d, as $ref"
	else
		why=${reason[$dut,$c]}
		not_ok "$c: $dut $d${why:+ ($why)}, $ref $r"
	fi
	# Sizes and the like are informational: shown when they differ.
	if [ "$r" = pass ] && [ "$d" = pass ] && [ "${values[$ref,$c]}" != "${values[$dut,$c]}" ]; then
		echo "#   values differ: $ref ${values[$ref,$c]}"
		echo "#                  $dut ${values[$dut,$c]}"
	fi
done

if [ ${#ref_bad[@]} = 0 ]; then
	ok "$ref (rdma_rxe, the reference) passes all $(echo $cases | wc -w) cases"
else
	not_ok "$ref (rdma_rxe, the reference) does not pass: ${ref_bad[*]}"
fi

rm -rf "$tmp"
rdma link delete $dut 2>/dev/null
rdma link delete $ref 2>/dev/null
rmmod rrxe 2>&1 | sed 's/^/# teardown: /'
rmmod rdma_rxe 2>&1 | sed 's/^/# teardown: /'
ip link del a0
finish
