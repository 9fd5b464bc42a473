#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Multicast (UD): the attach/detach verbs, side by side on rdma_rxe and
# rrxe, and traffic with rdma_cm's mckey between two hosts and within one.
#
# 1. rrxe_mcast (tools/testing/xfer) runs the same cases on an rdma_rxe
#    and an rrxe device: attach (IPv4 and IPv6 groups, twice), attach of an
#    RC QP and of a unicast GID, detach of a group or QP not attached,
#    destroy of an attached QP, the 57th QP of a group, detach twice. Each
#    case passes when rrxe answers as rdma_rxe. rrxe must have joined each
#    group's Ethernet address on its netdev while attached (01:00:5e:01:02:03
#    for 239.1.2.3, 33:33:0d:b8:00:01 for ff0e::db8:1) and left it after;
#    then a process exits with a QP still attached, and nothing may be left.
# 2. For each pairing CLIENT-SERVER (default: $RRXE_PAIRS, else rrxe-rrxe
#    rrxe-rxe rxe-rrxe; the pairings run at the same time, run_pairings in
#    lib.sh), rrxe_mccm (tools/testing/xfer: rdma_cm joins, data checked)
#    receives in h2_N on the server's device (joined first) what it sends
#    from h1_N on the client's (`mc_pair`); then sender and receiver
#    both on the server's device (`mc_local`: a device delivers its own
#    multicast sends to its attached QPs, through the IP stack's multicast
#    loopback, as rdma_rxe does); with rrxe sending, rdma_cm's mckey too.
#    rxe-rxe validates the test.
#
# usage: 16-multicast.sh [PAIR...]
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

parse_pairs "rrxe-rrxe rrxe-rxe rxe-rrxe" "$@"
T=${RRXE_CASE_TIMEOUT:-60}
tmp=$(mktemp -d)

# ---- 1. the verbs, rdma_rxe vs rrxe --------------------------------------

if ! probe=$(xfer_bin rrxe_mcast); then
	not_ok "rrxe_mcast builds"
	finish
fi
ref=rxe0
dut=rrxe0
rxe_and_rrxe $ref $dut
ip netns exec $REF_NS "$probe" -d $ref -n a0 >"$tmp/ref" 2>&1
echo "# $ref: rrxe_mcast exit $?"
ip netns exec $DUT_NS "$probe" -d $dut -n b0 >"$tmp/dut" 2>&1
echo "# $dut: rrxe_mcast exit $?"
sed "s/^/# $ref: /" "$tmp/ref"
sed "s/^/# $dut: /" "$tmp/dut"

ncases=0
while IFS= read -r line; do
	case $line in
	"case "*) ;;
	*) continue ;;
	esac
	name=${line#case }
	name=${name%%:*}
	r=${line#*: }
	d=$(sed -n "s/^case $name: //p" "$tmp/dut")
	ncases=$((ncases + 1))
	if [ "$r" = "$d" ]; then
		ok "verbs $name: $dut ${d}, as $ref"
	else
		not_ok "verbs $name: $dut ${d:-missing}, $ref $r"
	fi
done <"$tmp/ref"
[ $ncases -ge 15 ] || not_ok "rrxe_mcast ran its cases on $ref ($ncases)"

maddr() { sed -n "s/^maddr $1: //p" "$tmp/dut"; }
for mac in 01005e010203 33330db80001; do
	case " $(maddr attached) " in
	*" $mac "*) ok "$dut joined $mac on b0 while attached" ;;
	*) not_ok "$dut joined $mac on b0 while attached ($(maddr attached))" ;;
	esac
	case " $(maddr before) $(maddr detached) " in
	*" $mac "*) not_ok "$dut left $mac on b0 after the last detach" ;;
	*) ok "$dut left $mac on b0 after the last detach" ;;
	esac
done

# A process that exits attached: uverbs detaches, the driver leaves the
# address (kmemleak, run by the harness, checks the rest).
ip netns exec $DUT_NS "$probe" -d $dut -n b0 -x >"$tmp/dut-x" 2>&1
check "$dut: rrxe_mcast -x exits 0" [ $? = 0 ]
grep -q "exiting with ud\[0\] attached" "$tmp/dut-x" || sed 's/^/#   /' "$tmp/dut-x"
if ip netns exec $DUT_NS grep -q " b0 .*01005e010203" /proc/net/dev_mcast; then
	not_ok "$dut left 01005e010203 on b0 after a process exited attached"
else
	ok "$dut left 01005e010203 on b0 after a process exited attached"
fi
rxe_and_rrxe_teardown $ref $dut

# ---- 2. traffic ----------------------------------------------------------

if ! mccm=$(xfer_bin rrxe_mccm); then
	not_ok "rrxe_mccm builds"
	finish
fi

# counters DEV: DEV's sent and received packet counters.
counters() {
	local d=/sys/class/infiniband/$1/ports/1/hw_counters
	echo "sent_pkts $(cat $d/sent_pkts 2>/dev/null) rcvd_pkts $(cat $d/rcvd_pkts 2>/dev/null)"
}

# mc_run NAME TOOL GROUP RNS RIP SNS SIP: TOOL (rrxe_mccm or mckey)
# receives 5 messages to GROUP in RNS, bound to RIP, that it sends from
# SNS, bound to SIP; the receiver has joined before the sender starts.
# Fails with both outputs and the devices' counters as comments.
mc_run() {
	local name=$1 tool=$2 group=$3 rns=$4 rip=$5 sns=$6 sip=$7 rpid rc src why= done_re
	local ro=$tmp/$name.recv so=$tmp/$name.send
	if [ "$tool" = mckey ]; then
		set -- mckey -C 5
		done_re="data transfers complete"
	else
		set -- "$mccm" -c 5 -t "$T"
		done_re="received 5 ok"
	fi
	ip netns exec "$rns" timeout -k 5 "$T" stdbuf -oL "$@" -m "$group" -b "$rip" >"$ro" 2>&1 &
	rpid=$!
	wait_for 30 matches joined "$ro" || echo "# $name: the receiver has not joined after 30 s"
	ip netns exec "$sns" timeout -k 5 "$T" stdbuf -oL "$@" -m "$group" -b "$sip" -s >"$so" 2>&1
	src=$?
	stop_after $rpid 30
	rc=$?
	if [ $src != 0 ]; then
		why="sender exit $src"
	elif [ $rc = 124 ] || [ $rc = 137 ]; then
		why="the receiver did not get 5 messages"
	elif [ $rc != 0 ]; then
		why="receiver exit $rc"
	elif ! grep -q "$done_re" "$ro"; then
		why="the receiver did not complete"
	fi
	[ -z "$why" ] && return 0
	echo "# $name: $why"
	echo "#   receiver (in $rns):"
	tail -8 "$ro" | sed 's/^/#     /'
	echo "#   sender (in $sns):"
	tail -8 "$so" | sed 's/^/#     /'
	echo "#   $DEV1: $(counters "$DEV1"); $DEV2: $(counters "$DEV2")"
	return 1
}

# mc_pairing PAIR N: mc_pair, mc_local and (rrxe sending) mckey over PAIR,
# the Nth pairing of run_pairings: the pairings run at the same time, each
# with namespaces, devices and addresses of its own (pairing_up in
# traffic.sh) and groups of its own, 239.2.N.1 to 239.2.N.3.
# shellcheck disable=SC2317 # called by run_pairings
mc_pairing() {
	local pair=$1 n=$2 cl=${1%-*} g=1
	if ! pairing_up "$pair" "$n"; then
		not_ok "$pair: setup"
		pair_down
		return
	fi
	if mc_run "$pair-$n-pair" rrxe_mccm "239.2.$n.$g" "$PAIR_NS2" "$PAIR_IP2" "$PAIR_NS1" "$PAIR_IP1"; then
		ok "$pair: mc_pair: $DEV2 received 239.2.$n.$g from $DEV1"
	else
		not_ok "$pair: mc_pair: $DEV2 received 239.2.$n.$g from $DEV1"
	fi
	g=$((g + 1))
	if mc_run "$pair-$n-local" rrxe_mccm "239.2.$n.$g" "$PAIR_NS2" "$PAIR_IP2" "$PAIR_NS2" "$PAIR_IP2"; then
		ok "$pair: mc_local: $DEV2 received its own sends to 239.2.$n.$g"
	else
		not_ok "$pair: mc_local: $DEV2 received its own sends to 239.2.$n.$g"
	fi
	g=$((g + 1))
	# mckey posts its sends unsignaled and destroys its QP at once, which
	# loses sends on rdma_rxe: only with rrxe sending.
	if [ "$cl" = rrxe ]; then
		if mc_run "$pair-$n-mckey" mckey "239.2.$n.$g" "$PAIR_NS2" "$PAIR_IP2" "$PAIR_NS1" "$PAIR_IP1"; then
			ok "$pair: mckey: $DEV2 received 239.2.$n.$g from $DEV1"
		else
			not_ok "$pair: mckey: $DEV2 received 239.2.$n.$g from $DEV1"
		fi
	fi
	pair_down
}

run_pairings mc_pairing "${pairs[@]}"

rm -rf "$tmp"
check "rrxe unloads" rmmod rrxe
rmmod rdma_rxe 2>/dev/null
finish
