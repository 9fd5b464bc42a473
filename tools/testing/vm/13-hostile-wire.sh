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
#  4. Security cases (hostile_wire.py sec-dut / sec-attack), with rrxe and
#     then rdma_rxe as the DUT, their outcomes printed side by side: an
#     oversized UD datagram to QP1 with the GSI Q_Key (QP1 stays in RTS and
#     rdma_cm still connects), to a user UD QP and an oversized UC SEND
#     (both QPs stay in RTS and receive the next message that fits), a READ
#     of more than 2^31 bytes, READ and atomic with max_dest_rd_atomic 0
#     (NAK, invalid request), duplicate READs naming other memory than the
#     READ (dropped), a request to another address of the DUT's host than
#     the QP's path names (dropped), SEND_WITH_INVALIDATE of a type 2B
#     window bound through another QP (the window stays valid). A check
#     rdma_rxe is known to fail is a comment there, not a failure.
# The harness fails the run on any kernel splat.
#
# usage: 13-hostile-wire.sh [DUT_TYPE [PEER_TYPE [PARTS]]]
#   DUT_TYPE rrxe (default, or $RRXE_DUT) or rxe (validates the test);
#   PEER_TYPE rxe (default) or rrxe;
#   PARTS wire,sec (default, or $RRXE_HW_PARTS), wire (1-3) or sec (4).
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

dut_type=${1:-${RRXE_DUT:-rrxe}}
peer_type=${2:-rxe}
helper=$RRXE_TOP/tools/testing/hostile_wire.py
tmp=$TRAFFIC_TMP
parts=${3:-${RRXE_HW_PARTS:-wire,sec}}
parts=" ${parts//,/ } "
other_ip=198.18.1.3
echo "# DUT: $dut_type in h2; peer: $peer_type in h1; parts: $parts"

wire_cases() {
	if ! pair_up "$peer_type" "$dut_type"; then
		not_ok "setup: $peer_type in h1, $dut_type in h2"
		pair_down
		return
	fi
	peer=$DEV1
	dut=$DEV2

	# 1. ICRCs of real traffic, both directions.
	ip netns exec h1 timeout -k 5 300 tcpdump -Z root -i veth1 -n -U -w "$tmp/wire.pcap" udp port 4791 \
		>"$tmp/tcpdump.log" 2>&1 &
	tcpdump_pid=$!
	wait_for 60 matches 'listening on' "$tmp/tcpdump.log" || echo "# tcpdump did not say it listens"
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
}

# 4. The security cases with DUT type $1 (results in $tmp/sec-$1.out).
sec_cases() {
	local t=$1 out=$tmp/sec-$1.out fails
	echo "# security cases: DUT $t in h2, peer $peer_type in h1"
	if ! pair_up "$peer_type" "$t"; then
		not_ok "security cases: setup of $peer_type in h1, $t in h2"
		pair_down
		return
	fi
	# A second address on the DUT's host, which no QP's path names.
	ip -n h2 addr add $other_ip/24 dev veth2
	rm -f "$tmp/sec.json" "$tmp/sec.stop"
	ip netns exec h2 timeout -k 5 300 python3 "$helper" sec-dut --dev "$DEV2" --gid "$GID2" \
		--peer-ip $PAIR_IP1 --out "$tmp/sec.json" --stop "$tmp/sec.stop" --timeout 240 \
		>"$tmp/sec-dut.out" 2>&1 &
	local dut_pid=$!
	if ! wait_for 120 test -s "$tmp/sec.json"; then
		not_ok "$t: the DUT's pyverbs helper set up its QPs"
		sed 's/^/#   /' "$tmp/sec-dut.out"
	else
		sed 's/^/# /' "$tmp/sec-dut.out"
		local mac
		mac=$(ip netns exec h2 cat /sys/class/net/veth2/address)
		ip netns exec h1 timeout -k 5 240 python3 "$helper" sec-attack --info "$tmp/sec.json" \
			--stop "$tmp/sec.stop" --iface veth1 --src-ip $PAIR_IP1 --dst-ip $PAIR_IP2 \
			--other-ip $other_ip --dst-mac "$mac" --dev "$DEV2" --dut-type "$t" >"$out" 2>&1
		local rc=$?
		grep -v '^outcome: ' "$out" | sed "s/^\(not \)\{0,1\}ok - /&$t: /"
		fails=$(grep -c '^not ok - ' "$out")
		RRXE_FAILS=$((RRXE_FAILS + fails))
		if [ $rc != 0 ] && [ "$fails" = 0 ]; then
			not_ok "$t: the security attack script failed (exit $rc)"
		fi
	fi
	touch "$tmp/sec.stop"
	stop_after $dut_pid 60 >/dev/null
	# QP1 took the oversized GSI datagram: still RTS, and rdma_cm works.
	local gsi
	gsi=$(rdma res show qp link "$DEV2/1" lqpn 1 2>&1 | tr -s ' ')
	echo "outcome: gsi_oversize: $gsi" >>"$out"
	check "$t: gsi_oversize: QP1 is still in RTS after the oversized GSI datagram" \
		sh -c "rdma res show qp link $DEV2/1 | grep -q 'lqpn 1 type GSI state RTS'"
	if run_traffic "ucmatose-$t" 90 "" ucmatose; then
		ok "$t: gsi_oversize: ucmatose (rdma_cm) connects to the DUT afterwards"
		echo "outcome: gsi_oversize: ucmatose connects" >>"$out"
	else
		not_ok "$t: gsi_oversize: ucmatose (rdma_cm) connects to the DUT afterwards"
		echo "outcome: gsi_oversize: ucmatose fails" >>"$out"
	fi
	pair_down
}

case $parts in *" wire "*) wire_cases ;; esac
case $parts in
*" sec "*)
	other=rxe
	[ "$dut_type" = rxe ] && other=rrxe
	sec_cases "$dut_type"
	# $RRXE_SEC_ONE=1: the first DUT type only (e.g. to try a build).
	[ "${RRXE_SEC_ONE:-0}" = 1 ] || sec_cases "$other"
	echo "# security cases side by side (what the DUT did):"
	python3 - "$tmp/sec-$dut_type.out" "$tmp/sec-$other.out" "$dut_type" "$other" <<'PY'
import sys
cols = []
for path in sys.argv[1:3]:
    got = {}
    try:
        for line in open(path):
            if line.startswith('outcome: '):
                case, _, what = line[9:].strip().partition(': ')
                got.setdefault(case, []).append(what)
    except OSError:
        pass
    cols.append(got)
for case in dict.fromkeys(list(cols[0]) + list(cols[1])):
    print(f'# {case}:')
    for name, got in zip(sys.argv[3:5], cols):
        print(f'#   {name:5} ' + ' / '.join(got.get(case, ['-'])))
PY
	;;
esac

unload_drivers
rm -rf "$tmp"
echo "# 13-hostile-wire took ${SECONDS}s"
finish
