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

# Setup problems are notes, not assertions: they show up in the results.
# Each device is in its own namespace (rdma_rxe and rrxe cannot share UDP
# port 4791 in one); each helper runs in its device's namespace.
rxe_and_rrxe $ref $dut
declare -A ns=([$ref]=$REF_NS [$dut]=$DUT_NS)
for dev in $ref $dut; do
	port_active $dev || echo "# setup: $dev port 1 is not ACTIVE"
done

echo "# setup took ${SECONDS}s"

# Both devices at once, each in its own helper: starting Python and pyverbs
# takes long under TCG, and the VM has two CPUs. The helpers' TAP lines
# become comments so that only the comparisons below count.
for dev in $ref $dut; do
	timeout -k 5 170 ip netns exec "${ns[$dev]}" python3 "$helper" --timeout 30 --summary "$tmp/$dev.sum" $dev \
		>"$tmp/$dev.out" 2>&1 &
done
wait
for dev in $ref $dut; do
	echo "# --- $dev"
	sed 's/^\([^#]\)/# \1/' "$tmp/$dev.out"
done

cases=$(sed -n 's/^# cases: //p' "$tmp/$ref.sum" 2>/dev/null)
declare -A status reason values took
# (not `< <(...)`: the guest's /dev has no /dev/fd)
while IFS=$'\t' read -r dev c s r v t; do
	case $dev in '#'*) continue ;; esac
	status[$dev,$c]=$s
	[ "$r" = - ] || reason[$dev,$c]=$r
	values[$dev,$c]=$v
	took[$dev,$c]=${t}s
done <<<"$(cat "$tmp/$ref.sum" "$tmp/$dut.sum" 2>/dev/null)"

printf '# %-20s | %-14s | %-14s\n' case $ref $dut
for c in $cases; do
	printf '# %-20s | %-7s %6s | %-7s %6s\n' "$c" \
		"${status[$ref,$c]:-missing}" "${took[$ref,$c]}" \
		"${status[$dut,$c]:-missing}" "${took[$dut,$c]}"
done

ref_bad=()
for c in $cases; do
	r=${status[$ref,$c]:-missing}
	d=${status[$dut,$c]:-missing}
	[ "$r" = pass ] || ref_bad+=("$c")
	if [ "$r" = "$d" ] && [ "$d" != missing ]; then
		ok "$c: $dut $d, as $ref"
	else
		dwhy=${reason[$dut,$c]} rwhy=${reason[$ref,$c]}
		not_ok "$c: $dut $d${dwhy:+ ($dwhy)}, $ref $r${rwhy:+ ($rwhy)}"
	fi
	# Sizes and the like are informational: shown when they differ.
	if [ "$r" = pass ] && [ "$d" = pass ] && [ "${values[$ref,$c]}" != "${values[$dut,$c]}" ]; then
		echo "#   values differ: $ref ${values[$ref,$c]}"
		echo "#                  $dut ${values[$dut,$c]}"
	fi
done

if [ -z "$cases" ]; then
	not_ok "the helper ran no cases"
elif [ ${#ref_bad[@]} = 0 ]; then
	ok "$ref (rdma_rxe, the reference) passes all $(echo $cases | wc -w) cases"
else
	not_ok "$ref (rdma_rxe, the reference) does not pass: ${ref_bad[*]}"
fi

rm -rf "$tmp"
rxe_and_rrxe_teardown $ref $dut
echo "# 07-verbs-objects took ${SECONDS}s"
finish
