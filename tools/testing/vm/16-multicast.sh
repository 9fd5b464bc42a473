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
#    rrxe-rxe rxe-rrxe), mckey receives in h2 on the server's device (joined
#    first) what mckey sends from h1 on the client's (`mckey_pair`); then
#    sender and receiver both on the server's device (`mckey_local`: a
#    device delivers its own multicast sends to its attached QPs, through
#    the IP stack's multicast loopback, as rdma_rxe does). rxe-rxe validates
#    the test.
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

# mckey_run NAME GROUP RNS RIP SNS SIP: mckey receives 5 messages in RNS,
# bound to RIP, from mckey sending in SNS from SIP; the receiver joins
# first. Fails with the outputs as comments.
mckey_run() {
	local name=$1 group=$2 rns=$3 rip=$4 sns=$5 sip=$6 rpid rc src why=
	local ro=$tmp/$name.recv so=$tmp/$name.send
	ip netns exec "$rns" timeout -k 5 "$T" mckey -m "$group" -b "$rip" -C 5 >"$ro" 2>&1 &
	rpid=$!
	wait_for 30 grep -q "joined dgid" "$ro" || echo "# $name: the receiver has not joined after 30 s"
	ip netns exec "$sns" timeout -k 5 "$T" mckey -m "$group" -b "$sip" -C 5 -s >"$so" 2>&1
	src=$?
	stop_after $rpid 30
	rc=$?
	if [ $src != 0 ]; then
		why="sender exit $src"
	elif [ $rc = 124 ] || [ $rc = 137 ]; then
		why="the receiver did not get 5 messages"
	elif [ $rc != 0 ]; then
		why="receiver exit $rc"
	elif ! grep -q "data transfers complete" "$ro"; then
		why="the receiver did not complete"
	fi
	[ -z "$why" ] && return 0
	echo "# $name: $why"
	echo "#   receiver (in $rns):"
	tail -8 "$ro" | sed 's/^/#     /'
	echo "#   sender (in $sns):"
	tail -8 "$so" | sed 's/^/#     /'
	return 1
}

# rcvd DEV: DEV's rcvd_pkts counter.
rcvd() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/rcvd_pkts" 2>/dev/null || echo 0; }

g=1
load_rrxe 2>/dev/null
modprobe rdma_rxe
for pair in "${pairs[@]}"; do
	cl=${pair%-*} sv=${pair#*-}
	if ! pair_up "$cl" "$sv"; then
		not_ok "$pair: setup"
		pair_down
		continue
	fi
	ip -n "$PAIR_NS1" link set lo up
	ip -n "$PAIR_NS2" link set lo up
	before=$(rcvd "$DEV2")
	if mckey_run "$pair-pair" "239.2.0.$g" "$PAIR_NS2" "$PAIR_IP2" "$PAIR_NS1" "$PAIR_IP1"; then
		ok "$pair: mckey_pair: $DEV2 received 239.2.0.$g from $DEV1"
	else
		not_ok "$pair: mckey_pair: $DEV2 received 239.2.0.$g from $DEV1"
	fi
	echo "# $DEV2 rcvd_pkts +$(($(rcvd "$DEV2") - before))"
	g=$((g + 1))
	if mckey_run "$pair-local" "239.2.0.$g" "$PAIR_NS2" "$PAIR_IP2" "$PAIR_NS2" "$PAIR_IP2"; then
		ok "$pair: mckey_local: $DEV2 received its own sends to 239.2.0.$g"
	else
		not_ok "$pair: mckey_local: $DEV2 received its own sends to 239.2.0.$g"
	fi
	g=$((g + 1))
	pair_down
done

rm -rf "$tmp"
check "rrxe unloads" rmmod rrxe
rmmod rdma_rxe 2>/dev/null
finish
