#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # the functions run in run_pairings' subshells
# Netdev events under traffic. Two hosts (namespaces h1_N and h2_N joined
# by a veth pair) with an RDMA device each move verified data with
# rrxe_xfer (tools/testing/xfer) while the netdevs underneath change:
#
#   mtu      the MTU goes up to 9000, back, down to 1200 and up again, all
#            above what the QPs' 1024-byte path MTU needs: the port's
#            active MTU follows the netdev, the path MTU does not, and the
#            transfer completes intact.
#   mtu-low  the MTU drops to 600 for a second, below the path MTU: no
#            packet larger than the netdev's MTU is sent (rrxe counts them
#            in send_err), the requester retries, and the transfer either
#            completes once the MTU is back or ends in a retry error. Both
#            are fine; hanging is not.
#   down     one end of the link goes down for a second: port ERR, then
#            ACTIVE again, and with rrxe requesting the transfer recovers
#            by retransmission (rdma_rxe fails the WQE whose packet finds
#            no route, so with it requesting the tools need only exit).
#   gone     the veth pair is deleted mid-transfer: both devices are
#            unregistered with QPs, timers, work and packets in flight.
#            The client, in the middle of RDMA operations, must exit (with
#            an error) within 60 s, the devices disappear, `rdma link` still
#            answers, and the driver unloads.
#
# The harness fails the run on any KASAN, lockdep, refcount or kmemleak
# report, so "the kernel stays clean" is checked throughout.
#
# The pairings run at the same time (run_pairings in lib.sh), the Nth with
# namespaces h1_N and h2_N, devices rrxe1_N, rxe2_N, ... and ports of its
# own (pairing_up in traffic.sh): every step above touches only its own
# pairing's netdevs, and the drivers are loaded before and unloaded after
# all of them. Their outputs are shown one after the other once they end;
# RRXE_SERIAL=1 runs them one at a time.
#
# usage: 15-netdev-events.sh [PAIR...]   (CLIENT-SERVER as in 11-traffic:
#   rrxe-rrxe, rxe-rrxe (rrxe responding), rrxe-rxe, rxe-rxe (rdma_rxe
#   alone: the reference behaviour); default $RRXE_PAIRS, else
#   "rrxe-rrxe rxe-rrxe rxe-rxe")
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

bytes=${RRXE_XFER_BYTES:-$((2 << 20))}
parse_pairs "rrxe-rrxe rxe-rrxe rxe-rxe" "$@"
need_xfer

# xfer_start NAME BYTES [CLIENT_ARGS...]: starts an rrxe_xfer server in
# $PAIR_NS2 and, once it listens, its client in $PAIR_NS1, both in the
# background (XFER_SRV, XFER_CLI), each giving up after 120 s (killed
# after 130 s).
xfer_start() {
	local name=$1 b=$2 port=$TRAFFIC_PORT
	shift 2
	TRAFFIC_PORT=$((TRAFFIC_PORT + 1))
	XFER_OUT=$TRAFFIC_TMP/$name
	ip netns exec "$PAIR_NS2" timeout -k 5 130 "$xfer" -t 120 -d "$DEV2" -g "$GID2" -p "$port" \
		>"$XFER_OUT.server" 2>&1 &
	XFER_SRV=$!
	wait_for 30 tcp_listening "$PAIR_NS2" "$port" "$XFER_SRV" || echo "# $name: the server does not listen"
	ip netns exec "$PAIR_NS1" timeout -k 5 130 "$xfer" -t 120 -d "$DEV1" -g "$GID1" -p "$port" \
		-b "$b" -s 3 "$@" "$PAIR_IP2" >"$XFER_OUT.client" 2>&1 &
	XFER_CLI=$!
}

# xfer_started NAME: waits (up to 60 s) until the client has connected its
# QP to the server's, so that what the caller does next hits a transfer
# and not its set-up: a link down while the server moves its QP to RTR
# fails the route lookup there (ENETUNREACH from ib_core), which a loaded
# guest met once after a fixed 3 s.
xfer_started() {
	wait_for 60 matches '<-> server QP' "$XFER_OUT.client" ||
		echo "# $1: the transfer did not start within 60 s"
}

# xfer_wait: waits for both sides; XFER_CRC and XFER_SRC are their exit
# codes (124 or 137: killed by the timeout, i.e. hung).
xfer_wait() {
	wait "$XFER_CLI"
	XFER_CRC=$?
	stop_after "$XFER_SRV" 30
	XFER_SRC=$?
}

# xfer_show: the tail of both outputs, as comments.
xfer_show() {
	echo "#   client (exit $XFER_CRC):"
	tail -4 "$XFER_OUT.client" | sed 's/^/#     /'
	echo "#   server (exit $XFER_SRC):"
	tail -4 "$XFER_OUT.server" | sed 's/^/#     /'
}

# xfer_ok DESC: the transfer finished and every byte was verified.
xfer_ok() {
	if [ "$XFER_CRC" = 0 ] && [ "$XFER_SRC" = 0 ] &&
		grep -q "xfer: OK bytes=$((3 * bytes))" "$XFER_OUT.client"; then
		ok "$1"
	else
		not_ok "$1"
		xfer_show
	fi
}

# xfer_exited DESC: both sides ended by themselves (any exit status but a
# kill by the timeout).
xfer_exited() {
	case "$XFER_CRC $XFER_SRC" in
	*124* | *137*)
		not_ok "$1"
		xfer_show
		;;
	*)
		ok "$1"
		;;
	esac
}

# set_mtu MTU: both ends of the link.
set_mtu() {
	ip -n "$PAIR_NS1" link set veth1 mtu "$1" && ip -n "$PAIR_NS2" link set veth2 mtu "$1"
}

# active_mtu DEV: the port's active MTU in bytes.
active_mtu() {
	devinfo_field "$1" active_mtu | awk '{ print $1 }'
}

# counter DEV NAME: a port counter (0 if the driver has none of that name).
counter() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0
}

# events_pairing PAIR N: the four steps over PAIR, the Nth pairing of
# run_pairings. Its `ok` lines name the devices as they were named when the
# pairings ran one at a time (rrxe2: the server's, an rrxe device), so that
# logs still compare line by line; comments give the real names (rrxe2_N).
events_pairing() {
	local t=$1 name1=${1%-*}1 name2=${1#*-}2 seen m err1 err2 t0 took
	if ! pairing_up "$t" "$2"; then
		not_ok "$t: setup"
		pair_down
		return
	fi

	# mtu: every change stays above what the path MTU needs.
	xfer_start "$t-mtu" "$bytes"
	sleep 3
	seen=
	for m in 9000 1500 1200 3000 1500; do
		set_mtu "$m" || echo "# $t: cannot set MTU $m"
		sleep 1
		seen+=" $m:$(active_mtu "$DEV2")"
	done
	echo "# $t: netdev MTU:active MTU$seen"
	check "$t: active MTU follows the netdev (9000 -> 4096, 1500 -> 1024)" \
		sh -c "echo '$seen' | grep -q ' 9000:4096 1500:1024 ' && echo '$seen' | grep -q ' 3000:2048'"
	xfer_wait
	xfer_ok "$t: rrxe_xfer intact across MTU changes above the path MTU"

	# mtu-low: a second below the path MTU.
	err1=$(counter "$DEV1" send_err) err2=$(counter "$DEV2" send_err)
	xfer_start "$t-mtu-low" "$bytes" -T 17
	xfer_started "$t"
	sleep 1
	set_mtu 600
	sleep 1
	set_mtu 1500
	xfer_wait
	xfer_exited "$t: rrxe_xfer ends by itself after a second of MTU 600"
	if [ "$XFER_CRC" = 0 ]; then
		echo "# $t: the transfer recovered once the MTU was back"
	else
		echo "# $t: the transfer failed: $(grep -m1 'FAIL' "$XFER_OUT.client")"
	fi
	echo "# $t: send_err $DEV1 $err1 -> $(counter "$DEV1" send_err), $DEV2 $err2 -> $(counter "$DEV2" send_err)"

	# down: the link goes down for a second.
	xfer_start "$t-down" "$bytes" -T 17
	xfer_started "$t"
	sleep 1
	check "$t: veth2 down" ip -n "$PAIR_NS2" link set veth2 down
	check "$t: $name2's port leaves ACTIVE" \
		wait_for 5 not port_is_active "$DEV2"
	sleep 1
	check "$t: veth2 up" ip -n "$PAIR_NS2" link set veth2 up
	check "$t: $name2's port is ACTIVE again" port_active "$DEV2"
	xfer_wait
	if [ "${t%-*}" = rrxe ]; then
		xfer_ok "$t: rrxe_xfer recovers from a second of link down"
	else
		# rdma_rxe fails a WQE whose packet cannot be sent (no route while
		# the link is down), which takes its QP to the error state.
		xfer_exited "$t: rrxe_xfer ends by itself after a second of link down"
		[ "$XFER_CRC" = 0 ] || echo "# $t: rdma_rxe's requester gave up: $(grep -m1 'FAIL' "$XFER_OUT.client")"
	fi
	# The space: not another pairing's device whose name ends in this one's.
	[ "${t#*-}" = rrxe ] && check_dmesg "$t: the port events were logged" " $DEV2: port Error"

	# gone: the veth pair is deleted mid-transfer.
	# Deleted once data moves: not while the tools still connect over TCP
	# (which would only wait for a peer that is gone). Unregistrations take
	# turns with the other pairings' namespace changes (topology_lock in
	# lib.sh: an ib_core race); the turn is taken before the transfer
	# starts, so that waiting for it cannot let the transfer end before
	# the deletion, nor count in the client's time after it.
	topology_lock
	xfer_start "$t-gone" $((bytes * 4))
	xfer_started "$t"
	sleep 3
	orphans_go "$PAIR_NS1" "$PAIR_NS2"
	t0=$SECONDS
	check "$t: delete veth2 (and its peer) mid-transfer" ip -n "$PAIR_NS2" link del veth2
	# A device unregisters once the process using it has closed it (ib_core
	# waits for uverbs' users), and the client may take up to its 60 s
	# below (31 s in one run): 200 tenths, 60 s with lib.sh's POLL_SLACK.
	check "$t: $name1 is unregistered" gone "$DEV1" 200
	check "$t: $name2 is unregistered" gone "$DEV2" 200
	topology_unlock
	# The client is in the middle of RDMA operations: the device going away
	# must end them. The server waits for its next command on the TCP
	# connection, which died with the link: it may sit there until its own
	# time limit, so it is only stopped, not judged.
	wait "$XFER_CLI"
	XFER_CRC=$?
	took=$((SECONDS - t0))
	stop_after "$XFER_SRV" 10
	XFER_SRC=$?
	echo "# $t: the client ended ${took}s after the deletion (exit $XFER_CRC; server exit $XFER_SRC)"
	grep -m1 -h 'FAIL' "$XFER_OUT.client" "$XFER_OUT.server" | sed 's/^/#   /'
	case $XFER_CRC in
	124 | 137) not_ok "$t: the client exits by itself (an error is expected)" ;;
	*) ok "$t: the client exits by itself (an error is expected)" ;;
	esac
	check "$t: ... within 60 s, not by its own time limit" test "$took" -lt 60
	check "$t: rdma link still answers" rdma link show
	DEV1='' DEV2=''
	pair_down
}

run_pairings events_pairing "${pairs[@]}"

rm -rf "$TRAFFIC_TMP"
if [ -d /sys/module/rrxe ]; then
	check "rmmod rrxe after it all" rmmod rrxe
fi
unload_drivers
echo "# 15-netdev-events took ${SECONDS}s"
finish
