#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Verbs fuzzing (tools/testing/fuzz_verbs.py; issue 17, "Verbs and ring
# fuzzing"). An rrxe device and, as the control, an rdma_rxe device, each
# in a namespace of its own (rxe_and_rrxe) with lo up, so that QPs of one
# device connected to each other exchange data over lo. On each, the same
# seeded sequences of random verbs, each sequence a process of its own:
# objects created and destroyed in any order (in use too), QPs walked
# through random and illegal states with random attributes, random and
# well-formed work requests posted, CQs polled, armed and resized, SRQs
# armed and resized, forks, exits with everything alive, now and then the
# rings scribbled over. Every errno is expected and counted; what fails
# the run: a sequence that hangs, dies of a signal or cannot exit; a QP,
# CQ, MR or PD of the fuzzer's processes left on the device after they
# exit; a verified rrxe_xfer transfer on fresh QPs of the device (to its
# own address) failing after the fuzzing; link delete or rmmod failing;
# and, as in every script, any kernel report (the harness). The per-verb
# counts of both devices are printed side by side; rdma_rxe's outcome is
# shown as comments (its failures are C rxe's, not ours).
#
# usage: 26-fuzz-verbs.sh [DEV...]   (rrxe, rxe; default both, rrxe first;
#   or $RRXE_FUZZ_DEVS)
# $RRXE_FUZZ_VERBS (default 8) sequences per device of $RRXE_FUZZ_STEPS
# (default 60) verbs each, within $RRXE_FUZZ_TIMEOUT seconds (600; no
# sequence starts after it, a running one has 60 s); $RRXE_FUZZ_SEED seeds
# them (default: the date; printed, so a run can be repeated). `make
# fuzz-verbs` is the developer run: 100 times as many sequences.
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

helper=$RRXE_TOP/tools/testing/fuzz_verbs.py
tmp=$TRAFFIC_TMP
seqs=${RRXE_FUZZ_VERBS:-8}
steps=${RRXE_FUZZ_STEPS:-60}
secs=${RRXE_FUZZ_TIMEOUT:-600}
seed=${RRXE_FUZZ_SEED:-$(date +%s)}
read -ra types <<<"${*:-${RRXE_FUZZ_DEVS:-rrxe rxe}}"
echo "# seed $seed, $seqs sequences of $steps verbs per device; devices: ${types[*]}"
need_xfer

ref=rxe0
dut=rrxe0
rxe_and_rrxe $ref $dut
declare -A dev_of=([rrxe]=$dut [rxe]=$ref) ns=([$ref]=$REF_NS [$dut]=$DUT_NS) \
	addr=([$ref]=198.18.0.1 [$dut]=198.18.0.2)

# leftovers DEV: the QPs, CQs, MRs and PDs of DEV that a python3 process
# made (the fuzzer's); none once they have all exited.
leftovers() {
	local kind
	for kind in qp cq mr pd; do
		rdma res show $kind 2>/dev/null | grep -E "^(dev|link) $1[/ ]" | grep 'comm python3'
	done
}

no_leftovers() { [ -z "$(leftovers "$1")" ]; }

# report DEV LINE...: a check's result, as itself for rrxe, as a comment
# for rdma_rxe (the control).
report() {
	local dev=$1
	shift
	if [ "$dev" = $dut ]; then
		"$@"
	else
		"$@" | sed 's/^\(not \)\{0,1\}ok - /# rdma_rxe: &/'
	fi
}

fuzz() {
	local t=$1 dev=${dev_of[$1]} out rc gid fails t0
	echo "# --- $t: $dev in namespace ${ns[$dev]}"
	if ! port_active "$dev" || ! gid=$(roce_v2_ipv4_gid "$dev"); then
		report "$dev" not_ok "$t: $dev is ACTIVE with a RoCEv2 IPv4 GID"
		return
	fi
	out=$tmp/fuzz-$t.out
	t0=$SECONDS
	# rdma_rxe frees a QP that a bound type 2 window still holds when the
	# QP is destroyed, and the window's dealloc then uses it (KASAN; the
	# 160-sequence run of 2026-11-26, testing.rst "Known rdma_rxe bugs"):
	# its control binds no type 2 window.
	local avoid=()
	[ $t = rxe ] && avoid=(--no-type2-bind)
	ip netns exec "${ns[$dev]}" timeout -k 10 $((secs + 120)) python3 "$helper" --dev "$dev" \
		--gid "$gid" --seed "$seed" --sequences "$seqs" --steps "$steps" --timeout "$secs" \
		"${avoid[@]}" >"$out" 2>&1
	rc=$?
	grep -v '^verb \|^\(not \)\{0,1\}ok - ' "$out" | sed 's/^\([^#]\)/# \1/'
	if [ $t = rrxe ]; then
		grep '^\(not \)\{0,1\}ok - ' "$out"
		fails=$(grep -c '^not ok - ' "$out")
		RRXE_FAILS=$((RRXE_FAILS + fails))
		if [ $rc != 0 ] && [ "$fails" = 0 ]; then
			not_ok "$t: the fuzzer failed (exit $rc)"
		fi
	else
		grep '^\(not \)\{0,1\}ok - ' "$out" | sed 's/^/# rdma_rxe: /'
		[ $rc = 0 ] || echo "# rdma_rxe: the fuzzer ended with exit $rc"
	fi
	# The kernel tears a process's objects down when its file closes; the
	# last ones may still be going.
	if wait_for 20 no_leftovers "$dev"; then
		report "$dev" ok "$t: no QP, CQ, MR or PD of the fuzzer's processes left"
	else
		report "$dev" not_ok "$t: no QP, CQ, MR or PD of the fuzzer's processes left"
		leftovers "$dev" | head -20 | sed 's/^/#   /'
	fi
	# A verified transfer on fresh QPs, the device talking to itself.
	PAIR_NS1=${ns[$dev]} PAIR_NS2=${ns[$dev]} DEV1=$dev DEV2=$dev GID1=$gid GID2=$gid \
		PAIR_IP2=${addr[$dev]}
	if run_traffic "xfer-after-$t" 150 "xfer: OK bytes=$((3 << 18))" \
		"$xfer" -t 120 -- -b $((1 << 18)) -s 1; then
		report "$dev" ok "$t: a verified transfer on fresh QPs after the fuzzing"
		echo "# $t: the transfer took $TRAFFIC_SECS s; fuzzing to here $((SECONDS - t0)) s"
	else
		report "$dev" not_ok "$t: a verified transfer on fresh QPs after the fuzzing"
	fi
}

echo "# set up in $SECONDS s"
for t in "${types[@]}"; do
	fuzz "$t"
done

# The per-verb counts side by side (the same seed: the same choices, until
# the devices' answers make the sequences differ).
if [ -s "$tmp/fuzz-rrxe.out" ] && [ -s "$tmp/fuzz-rxe.out" ]; then
	verbs_side_by_side 24 52 "$tmp/fuzz-rrxe.out" "$tmp/fuzz-rxe.out"
fi

check "rdma link delete $dut after the fuzzing" rdma link delete $dut
check "$dut is gone" gone $dut 100
check "rmmod rrxe after the fuzzing" unload_rrxe
rdma link delete $ref 2>/dev/null
gone $ref 100 || echo "# teardown: $ref still exists"
rmmod rdma_rxe 2>&1 | sed 's/^/# teardown: /'
netns_del_wait $REF_NS $DUT_NS
rm -rf "$tmp"
finish
