#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What rrxe shows of itself (Documentation/usage.rst, "Observing a
# device"): in debugfs, /sys/kernel/debug/rrxe/DEV/qpN, one file per QP
# with its live state, made with the QP and removed with it; the device's
# directory with the device, the module's with the module. In the kernel
# log, a line when the data path puts a QP into ERR, naming the cause. In
# `rdma res show qp -dd`, the same fields as the driver's attributes.
#
# Reading the files while their QPs come and go is the lifetime check: a
# reader holds the QP through its file, and destroying the QP removes the
# file first (waiting for the reader), so neither a KASAN report nor a
# QP left over may follow. One device on a veth in the initial namespace
# talks to its own address (rrxe sends those packets through the IP stack).
. "$RRXE_TOP/tools/testing/lib.sh"

dbg=/sys/kernel/debug/rrxe
dir=$dbg/obs0
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug

veth_pair
ip link set lo up
load_rrxe
check "the module's debugfs directory" test -d $dbg
check "rdma link add obs0" rdma link add obs0 type rrxe netdev a0
check "port ACTIVE" port_active obs0
gid=$(roce_v2_ipv4_gid obs0)
check "the device's directory" test -d $dir
check "the GSI QP's file (qp1)" sh -c "grep -q '^qp 1 Gsi Rts' $dir/qp1"
# The same fields through the RDMA core's resource tracking: the driver's
# attributes after the core's own in `rdma res show qp -dd`.
rdma -dd res show qp link obs0/1 lqpn 1 >/tmp/res 2>&1
sed 's/^/# /' /tmp/res
check "rdma res show qp -dd: rrxe's attributes (home_cpu, sq_window, resp_msn)" \
	sh -c "grep -q 'drv_home_cpu [0-9]' /tmp/res && grep -q 'drv_sq_window 128' /tmp/res &&
		grep -q 'drv_resp_msn [0-9]' /tmp/res"

t0=$SECONDS
# An RC ping-pong long enough to be read mid-flight.
ibv_rc_pingpong -d obs0 -g "$gid" -n 300 >/tmp/pp.server 2>&1 &
srv=$!
wait_for 20 sh -c "grep -q ':4853 00000000:0000 0A' /proc/net/tcp /proc/net/tcp6"
ibv_rc_pingpong -d obs0 -g "$gid" -n 300 198.18.0.1 >/tmp/pp.client 2>&1 &
cli=$!
seen=
for _ in $(seq 100); do
	n=$(grep -l '^qp [0-9]* Rc Rts' $dir/qp* 2>/dev/null | wc -l)
	if [ "$n" -ge 2 ]; then
		seen=1
		break
	fi
	sleep 0.1
done
check "two RC QPs in RTS, each with a file" test -n "$seen"
f=$(grep -l '^qp [0-9]* Rc Rts' $dir/qp* 2>/dev/null | head -1)
# One read, kept: the ping-pong may end (and its files go) meanwhile.
cat "$f" >/tmp/qpfile 2>/dev/null
echo "# $f:"
sed 's/^/#   /' /tmp/qpfile
check "a QP's file: path, queues, timer, requester and responder" \
	sh -c "grep -q 'dest qp [0-9]* sport [0-9]* mtu 1024 home cpu' /tmp/qpfile &&
		grep -q '^queues: sq [0-9]*/[0-9]* rq [0-9]*/[0-9]*' /tmp/qpfile &&
		grep -q '^timer: timeout' /tmp/qpfile && grep -q '^send: psn 0x' /tmp/qpfile &&
		grep -q '^send: retry left 7 rnr left 7' /tmp/qpfile &&
		grep -q '^resp: psn 0x' /tmp/qpfile"
# Readers all along while the ping-pong ends and its QPs go.
reader() {
	while kill -0 "$cli" 2>/dev/null || kill -0 "$srv" 2>/dev/null; do
		cat $dir/qp* >/dev/null 2>&1
		sleep 0.01
	done
}
reader &
r1=$!
reader &
r2=$!
wait "$cli"
rc=$?
wait "$srv"
check "the ping-pong completes" test "$rc" = 0
wait "$r1" "$r2"
check "only the GSI QP's file is left" sh -c "[ \"\$(ls $dir)\" = qp1 ]"

echo "# the ping-pong took $((SECONDS - t0)) s"
t0=$SECONDS
# QPs made and destroyed under readers, many times over (rdma-core's
# create/destroy through the verbs of python3-pyverbs).
python3 - obs0 <<'PY' &
import sys
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.qp import QP, QPInitAttr, QPCap
from pyverbs.libibverbs_enums import ibv_qp_type
ctx = Context(name=sys.argv[1])
pd = PD(ctx)
cq = CQ(ctx, 16)
for i in range(20):
    qps = [QP(pd, QPInitAttr(qp_type=t, scq=cq, rcq=cq, cap=QPCap(4, 4, 1, 1)))
           for t in (ibv_qp_type.IBV_QPT_RC, ibv_qp_type.IBV_QPT_UC, ibv_qp_type.IBV_QPT_UD)]
    for q in qps:
        q.close()
PY
maker=$!
cli=$maker srv=$maker
reader &
r1=$!
reader &
r2=$!
wait "$maker"
rc=$?
wait "$r1" "$r2"
check "60 QPs made and destroyed under two readers" test "$rc" = 0
check "... and no file of theirs is left" sh -c "[ \"\$(ls $dir)\" = qp1 ]"

echo "# the QPs took $((SECONDS - t0)) s"

# A QP the data path puts into ERR says why in the kernel log: an RC QP
# sending to a QP number nobody has runs out of retries.
# Its trace events, and those of an RNR wait that runs out, are recorded
# alongside (the rrxe trace system, all events on).
tr=/sys/kernel/tracing
mountpoint -q $tr || mount -t tracefs none $tr
echo 0 >$tr/tracing_on
echo >$tr/trace
echo 1 >$tr/events/rrxe/enable
echo 1 >$tr/tracing_on
# Only the log's lines after a mark count: scripts before this one in the
# boot (10-kverbs) put QPs into ERR too, and the ring may be full.
mark="22-observability: mark $$ $SECONDS"
echo "$mark" >/dev/kmsg
check "a QP's retries run out (RETRY_EXC_ERR)" python3 "$RRXE_TOP/tools/testing/qp_error.py" obs0 "$gid" retry
line=$(dmesg | sed -n "/$mark/,\$p" | grep -m1 'on a0 enters ERR: a send WQE completed with RetryExcErr')
echo "# ${line#*] }"
check "its entry into ERR is logged, with the cause" test -n "$line"
check "an RNR wait runs out (RNR_RETRY_EXC_ERR)" python3 "$RRXE_TOP/tools/testing/qp_error.py" obs0 "$gid" rnr
echo 0 >$tr/tracing_on
echo 0 >$tr/events/rrxe/enable
cp $tr/trace /tmp/trace
grep -v '^#' /tmp/trace | awk '{ $1 = ""; $2 = ""; $3 = ""; print }' | sort -u -k2,2 |
	sed 's/^ */#   /' | head -20
# trace_event PATTERN: the recorded trace has a line matching PATTERN.
# shellcheck disable=SC2317 # called through check
trace_event() { grep -Eq "$1" /tmp/trace; }
check "trace: packets sent (rrxe_tx)" trace_event 'rrxe_tx: dqpn=[0-9]+ opcode=0x04 psn=0x'
check "trace: packets received (rrxe_rx)" trace_event 'rrxe_rx: dqpn=[0-9]+ opcode=0x'
check "trace: a packet for no QP dropped (rrxe_drop)" trace_event 'rrxe_drop: dqpn=1043915 .* reason=no_qp'
check "trace: retransmissions on timeout (rrxe_retransmit)" trace_event 'rrxe_retransmit: qpn=[0-9]+ from psn=0x000000 cause=timeout'
check "trace: RNR NAKs sent and received (rrxe_nak)" \
	sh -c "grep -Eq 'rrxe_nak: sent .*\(RNR NAK\)' /tmp/trace && grep -Eq 'rrxe_nak: received .*\(RNR NAK\)' /tmp/trace"
check "trace: the RNR wait (rrxe_rnr_wait)" trace_event 'rrxe_rnr_wait: qpn=[0-9]+ waits [0-9]+ us'
check "trace: QP state changes (rrxe_qp_state)" \
	sh -c "grep -Eq 'rrxe_qp_state: qpn=[0-9]+ RTR -> RTS' /tmp/trace && grep -Eq 'rrxe_qp_state: qpn=[0-9]+ RTS -> ERR' /tmp/trace"
check "trace: completions in error (rrxe_wc_error)" \
	sh -c "grep -Eq 'rrxe_wc_error: .*status=RETRY_EXC_ERR' /tmp/trace && grep -Eq 'rrxe_wc_error: .*status=RNR_RETRY_EXC_ERR' /tmp/trace"
check "rdma link delete obs0" rdma link delete obs0
check "the device's directory goes with it" wait_for 5 sh -c "! test -e $dir"
check "rmmod rrxe" rmmod rrxe
check "the module's directory goes with it" sh -c "! test -e $dbg"
ip link del a0
finish
