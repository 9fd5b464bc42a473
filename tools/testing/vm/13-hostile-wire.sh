#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The device under test (DUT) against a hostile wire, with
# tools/testing/hostile_wire.py. Two hosts (namespaces h1 and h2 joined by a
# veth pair): a peer device in h1, the DUT in h2.
#
#  1. Real traffic between the peer and the DUT (pingpongs, perftest's
#     read, atomic, write-with-immediate and send) is captured with tcpdump
#     and every ICRC in it is recomputed: checks the script's ICRC against
#     the peer's and the DUT's (with rdma_rxe as either, against C rxe's).
#  2. A pyverbs helper gives the DUT a live RC QP "connected" to a QPN in
#     h1 that nothing serves, with a 4 KiB MR open to remote reads.
#  3. From h1, scapy sends malformed packets (truncated BTHs, bad UDP
#     lengths, bad ICRC, bad P_Keys, unknown QPNs and opcodes, a stranger's
#     source address...): no answer, no rcvd_pkts. Then a READ ahead of the
#     expected PSN (a sequence NAK), valid READs (the MR's bytes, good
#     ICRCs), and a READ past the MR's end: a remote access NAK, after which
#     the QP is in the error state.
# The harness fails the run on any kernel splat.
#
# usage: 13-hostile-wire.sh [DUT_TYPE [PEER_TYPE]]
#   DUT_TYPE rrxe (default, or $RRXE_DUT) or rxe (validates the test);
#   PEER_TYPE rxe (default) or rrxe.
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

dut_type=${1:-${RRXE_DUT:-rrxe}}
peer_type=${2:-rxe}
helper=$RRXE_TOP/tools/testing/hostile_wire.py
tmp=$TRAFFIC_TMP
echo "# DUT: $dut_type in h2; peer: $peer_type in h1"

if ! pair_up "$peer_type" "$dut_type"; then
	not_ok "setup: $peer_type in h1, $dut_type in h2"
	pair_down
	unload_drivers
	finish
fi
peer=$DEV1
dut=$DEV2

# 1. ICRCs of real traffic, both directions.
ip netns exec h1 timeout -k 5 300 tcpdump -Z root -i veth1 -n -U -w "$tmp/wire.pcap" udp port 4791 \
	>"$tmp/tcpdump.log" 2>&1 &
tcpdump_pid=$!
wait_for 60 grep -q 'listening on' "$tmp/tcpdump.log" || echo "# tcpdump did not say it listens"
traffic=(
	"rc_pingpong|ibv_rc_pingpong -n 3 -e -c"
	"ud_pingpong|ibv_ud_pingpong -n 3 -e -c -s 100"
	"read_bw|ib_read_bw -n 5 -s 3000"
	"atomic_bw|ib_atomic_bw -n 5"
	"write_imm|ib_write_bw -n 5 -s 2001 --write_with_imm"
	"send_bw|ib_send_bw -n 5 -s 77"
)
for t in "${traffic[@]}"; do
	read -ra cmd <<<"${t#*|}"
	run_traffic "${t%%|*}" 90 "" "${cmd[@]}" && continue
	# Its packets are checked anyway; but if the first fails, the others
	# would only wait for their timeouts.
	echo "# (traffic ${t%%|*} failed)"
	[ "${t%%|*}" = rc_pingpong ] && { echo "# (no more traffic)"; break; }
done
sleep 1
kill -INT $tcpdump_pid 2>/dev/null
stop_after $tcpdump_pid 10
sed 's/^/# tcpdump: /' "$tmp/tcpdump.log" | tail -3
python3 "$helper" icrc-check "$tmp/wire.pcap" >"$tmp/icrc.out" 2>&1
icrc_rc=$?
cat "$tmp/icrc.out"
if [ $icrc_rc = 0 ]; then
	ok "every ICRC of the captured $peer <-> $dut traffic is what the script computes"
else
	not_ok "ICRCs of the captured $peer <-> $dut traffic"
fi
for ip in $PAIR_IP1 $PAIR_IP2; do
	check "the capture holds packets from $ip" grep -q "^# $ip " "$tmp/icrc.out"
done

# 2. A live QP on the DUT, connected to nobody.
rm -f "$tmp/dut.json" "$tmp/dut.stop"
ip netns exec h2 timeout -k 5 400 python3 "$helper" dut --dev "$dut" --gid "$GID2" \
	--peer-ip $PAIR_IP1 --out "$tmp/dut.json" --stop "$tmp/dut.stop" --timeout 360 \
	>"$tmp/dut.out" 2>&1 &
dut_pid=$!
if ! wait_for 120 test -s "$tmp/dut.json"; then
	not_ok "the DUT's pyverbs helper set up a QP"
	sed 's/^/#   /' "$tmp/dut.out"
else
	sed 's/^/# /' "$tmp/dut.out"
	# 3. The attack, from h1.
	mac=$(ip netns exec h2 cat /sys/class/net/veth2/address)
	ip netns exec h1 timeout -k 5 300 python3 "$helper" attack --info "$tmp/dut.json" \
		--iface veth1 --src-ip $PAIR_IP1 --dst-ip $PAIR_IP2 --dst-mac "$mac" \
		--dev "$dut" >"$tmp/attack.out" 2>&1
	attack_rc=$?
	cat "$tmp/attack.out"
	fails=$(grep -c '^not ok - ' "$tmp/attack.out")
	RRXE_FAILS=$((RRXE_FAILS + fails))
	if [ $attack_rc != 0 ] && [ "$fails" = 0 ]; then
		not_ok "the attack script failed (exit $attack_rc)"
	fi
	touch "$tmp/dut.stop"
fi
stop_after $dut_pid 60
sed -n 's/^dut: QP state/# DUT QP state/p' "$tmp/dut.out"
check "the DUT's QP is in the error state after the remote access error" \
	grep -q '"state": "ERR"' "$tmp/dut.json"
check "rdma statistic shows $dut" sh -c "rdma statistic show link $dut/1 | grep -q rcvd_pkts"
echo "# $(rdma statistic show link "$dut/1" | tr -s ' \n' '  ')"

pair_down
unload_drivers
rm -rf "$tmp"
echo "# 13-hostile-wire took ${SECONDS}s"
finish
