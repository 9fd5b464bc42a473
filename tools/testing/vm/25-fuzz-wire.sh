#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Wire fuzzing (tools/testing/fuzz_wire.py). Two hosts (namespaces h1 and h2
# joined by a veth pair): a peer device in h1, the device under test (DUT)
# in h2 with live RC, UC and UD QPs, a 64 KiB MR open to remote access and
# receives posted (a pyverbs helper). From h1, seeded mutations of valid
# packets of every opcode (and MADs to QP1), most with their ICRC
# recomputed so that they reach the transport, go to the DUT's QPs on a raw
# socket. Then: every QP still works (a SEND probe at its expected PSN
# arrives byte-exact) or is in the error state with every receive flushed;
# rcvd_pkts moved by no more than what was sent; a verified rrxe_xfer
# transfer on fresh QPs between the peer and the DUT works; the links go
# and the driver unloads. The harness fails the run on any kernel report.
#
# usage: 25-fuzz-wire.sh [DUT...]   (rrxe, or rxe to see what C rxe does;
#   default $RRXE_FUZZ_DUTS, else rrxe)
# $RRXE_FUZZ_PACKETS (default 3000) packets per DUT, sent within
# $RRXE_FUZZ_TIMEOUT seconds (900); $RRXE_FUZZ_SEED seeds
# them (default: the date; printed, so a run can be repeated); with
# $RRXE_VM_OUT set, the last 64 packets sent are kept there
# (fuzz-last-DUT.hex), to replay the input of a splat. `make fuzz` is the
# developer run: 1,000,000 packets (see Documentation/testing.rst).
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

helper=$RRXE_TOP/tools/testing/fuzz_wire.py
tmp=$TRAFFIC_TMP
packets=${RRXE_FUZZ_PACKETS:-3000}
# How long the fuzzer may take (make fuzz raises it with the count).
secs=${RRXE_FUZZ_TIMEOUT:-900}
seed=${RRXE_FUZZ_SEED:-$(date +%s)}
read -ra duts <<<"${*:-${RRXE_FUZZ_DUTS:-rrxe}}"
echo "# seed $seed, $packets packets per DUT; DUTs: ${duts[*]}"
need_xfer

# fuzz DUT: one DUT type's run, with rdma_rxe as its peer.
fuzz() {
	local t=$1 keep=() out fails rc dut_pid mac
	echo "# --- DUT $t in h2, peer rxe in h1"
	load_drivers "rxe-$t"
	if ! pair_up rxe "$t"; then
		not_ok "$t: setup"
		pair_down
		return
	fi
	rm -f "$tmp/fuzz.json" "$tmp/fuzz.stop"
	ip netns exec h2 timeout -k 5 $((secs + 200)) python3 "$helper" dut --dev "$DEV2" --gid "$GID2" \
		--peer-ip "$PAIR_IP1" --out "$tmp/fuzz.json" --stop "$tmp/fuzz.stop" \
		>"$tmp/fuzz-dut.out" 2>&1 &
	dut_pid=$!
	if ! wait_for 120 test -s "$tmp/fuzz.json"; then
		not_ok "$t: the DUT's pyverbs helper set up its QPs"
		sed 's/^/#   /' "$tmp/fuzz-dut.out"
	else
		sed 's/^/# /' "$tmp/fuzz-dut.out"
		mac=$(ip netns exec h2 cat /sys/class/net/veth2/address)
		[ -n "${RRXE_VM_OUT:-}" ] && keep=(--keep "$RRXE_VM_OUT/fuzz-last-$t.hex")
		out=$tmp/fuzz-$t.out
		ip netns exec h1 timeout -k 5 "$secs" python3 "$helper" attack --info "$tmp/fuzz.json" \
			--stop "$tmp/fuzz.stop" --iface veth1 --src-ip "$PAIR_IP1" --dst-ip "$PAIR_IP2" \
			--dst-mac "$mac" --dev "$DEV2" --seed "$seed" --packets "$packets" "${keep[@]}" \
			>"$out" 2>&1
		rc=$?
		sed "s/^\(not \)\{0,1\}ok - /&$t: /" "$out"
		fails=$(grep -c '^not ok - ' "$out")
		RRXE_FAILS=$((RRXE_FAILS + fails))
		if [ $rc != 0 ] && [ "$fails" = 0 ]; then
			not_ok "$t: the fuzzer failed (exit $rc)"
		fi
	fi
	touch "$tmp/fuzz.stop"
	stop_after $dut_pid 60 >/dev/null
	rc=$?
	sed -n 's/^fuzz-dut: states/# DUT: states/p' "$tmp/fuzz-dut.out"
	if [ $rc != 0 ]; then
		# Whatever the helper said last (a Python traceback, a verb's errno).
		echo "# the DUT helper ended with exit $rc; its last words:"
		tail -n 25 "$tmp/fuzz-dut.out" | sed 's/^/#   /'
	fi
	echo "# $(rdma statistic show link "$DEV2/1" | tr -s ' \n' '  ')"
	if run_traffic "xfer-after-$t" 150 "xfer: OK bytes=$((3 << 18))" \
		"$xfer" -t 120 -- -b $((1 << 18)) -s 1; then
		ok "$t: a verified transfer between the peer and the DUT after the fuzzing"
	else
		not_ok "$t: a verified transfer between the peer and the DUT after the fuzzing"
	fi
	pair_down
	check "$t: link delete leaves no device" sh -c "! ls /sys/class/infiniband | grep -q ."
}

for t in "${duts[@]}"; do
	fuzz "$t"
done
if [ -d /sys/module/rrxe ]; then
	check "rmmod rrxe after the fuzzing" unload_rrxe
fi
unload_drivers
rm -rf "$tmp"
finish
