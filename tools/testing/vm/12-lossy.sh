#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Reliable delivery over a bad wire: rrxe_xfer (tools/testing/xfer) moves
# patterned data with RDMA WRITE, RDMA READ and SEND/RECV between two hosts
# (each pairing's namespaces h1_N and h2_N, joined by a veth pair) and
# verifies every byte; first over a clean wire, then with netem on both
# veth ends losing 5%, duplicating 1%, reordering 25% and delaying 1 ms.
# RC must hide all of it: retransmission after NAKs and timeouts, duplicate
# detection, in-order completion. The requester's and responder's retry
# counters are shown.
#
# usage: 12-lossy.sh [PAIR...]   (PAIR as in 11-traffic.sh: CLIENT-SERVER,
#   default $RRXE_PAIRS, else rrxe-rrxe rrxe-rxe rxe-rrxe; rxe-rxe
#   validates the harness)
# $RRXE_XFER_BYTES (default 4 MiB) is moved per operation on the clean wire,
# $RRXE_LOSSY_BYTES (default 1 MiB) on the lossy one, $RRXE_LOSSY_MIXED_BYTES
# (default 256 KiB) when rrxe and rdma_rxe are paired: there recovery is
# far slower (measured: 1 MiB READ in 72 s and SEND in 128 s for
# rrxe-rxe, the rdma_rxe responder sending 110 MB for 3 MiB, against 5 s
# each for rrxe-rrxe; see Documentation/testing.rst). The pairings run at
# the same time (run_pairings in lib.sh; RRXE_SERIAL=1: one after the
# other). A pairing that fails on the clean wire skips the lossy run, and
# no pairing starts after $RRXE_BUDGET seconds (default 900), to stay
# within the VM's time limit.
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

clean_bytes=${RRXE_XFER_BYTES:-$((4 << 20))}
lossy_bytes=${RRXE_LOSSY_BYTES:-$((1 << 20))}
mixed_bytes=${RRXE_LOSSY_MIXED_BYTES:-$((256 << 10))}
budget=${RRXE_BUDGET:-900}
netem='delay 1ms reorder 25% 50% loss 5% duplicate 1%'

parse_pairs "rrxe-rrxe rrxe-rxe rxe-rrxe" "$@"
need_xfer

# counters DEV: the rxe counters that show recovery, one line.
counters() {
	local d=/sys/class/infiniband/$1/ports/1/hw_counters c line=
	for c in sent_pkts rcvd_pkts duplicate_request out_of_seq_request rcvd_seq_err \
		completer_retry_err retry_exceeded_err rcvd_rnr_err send_rnr_err; do
		[ -r "$d/$c" ] && line+=" $c=$(cat "$d/$c")"
	done
	echo "${line# }"
}

# lossy_pairing PAIR N: the clean and the lossy transfer over PAIR, the Nth
# pairing of run_pairings: the pairings run at the same time, each with
# namespaces, a veth pair, devices and ports of its own (pairing_up in
# traffic.sh), so netem on one pairing's veth touches no other's.
# shellcheck disable=SC2317 # called by run_pairings
lossy_pairing() {
	local pair=$1 bytes stats d dropped ns
	if [ $SECONDS -ge "$budget" ]; then
		not_ok "$pair: not run (no time left, ${budget}s budget)"
		return
	fi
	if ! pairing_up "$pair" "$2"; then
		not_ok "$pair: setup"
		pair_down
		return
	fi
	if run_traffic "$pair-clean" 240 "xfer: OK bytes=$((3 * clean_bytes))" \
		"$xfer" -t 220 -- -b "$clean_bytes" -s 1; then
		ok "$pair: rrxe_xfer, clean wire, $clean_bytes bytes each of write/read/send (${TRAFFIC_SECS}s)"
	else
		not_ok "$pair: rrxe_xfer, clean wire"
		not_ok "$pair: rrxe_xfer over a lossy wire (not run: the clean wire failed)"
		pair_down
		return
	fi
	grep '^xfer: [a-z]* [0-9]* bytes' "$TRAFFIC_TMP/$pair-clean.client" | sed 's/^/# /'

	check "$pair: netem on veth1 ($netem)" ip netns exec "$PAIR_NS1" tc qdisc add dev veth1 root netem $netem
	check "$pair: netem on veth2" ip netns exec "$PAIR_NS2" tc qdisc add dev veth2 root netem $netem
	echo "# before: $DEV1: $(counters $DEV1)"
	echo "# before: $DEV2: $(counters $DEV2)"
	bytes=$lossy_bytes
	[ "${pair%-*}" != "${pair#*-}" ] && bytes=$mixed_bytes
	if run_traffic "$pair-lossy" 560 "xfer: OK bytes=$((3 * bytes))" \
		"$xfer" -t 540 -- -b "$bytes" -s 2 -T 14; then
		ok "$pair: rrxe_xfer over loss, duplication and reordering, $bytes bytes each (${TRAFFIC_SECS}s)"
	else
		not_ok "$pair: rrxe_xfer over loss, duplication and reordering"
	fi
	grep '^xfer: [a-z]* [0-9]* bytes' "$TRAFFIC_TMP/$pair-lossy.client" | sed 's/^/# /'
	echo "# after:  $DEV1: $(counters $DEV1)"
	echo "# after:  $DEV2: $(counters $DEV2)"
	dropped=0
	for ns in "$PAIR_NS1:veth1" "$PAIR_NS2:veth2"; do
		stats=$(ip netns exec "${ns%:*}" tc -s qdisc show dev "${ns#*:}" | sed -n 's/^ *\(Sent.*\)/\1/p')
		echo "# netem on ${ns#*:}: $stats"
		d=$(echo "$stats" | sed -n 's/.*(dropped \([0-9]*\).*/\1/p')
		dropped=$((dropped + ${d:-0}))
	done
	check "$pair: netem dropped packets ($dropped): the loss was real" test "$dropped" -gt 0
	pair_down
}

run_pairings lossy_pairing "${pairs[@]}"

rm -rf "$TRAFFIC_TMP"
unload_drivers
echo "# 12-lossy took ${SECONDS}s"
finish
