#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What rrxe shows of itself (Documentation/usage.rst, "Observing a
# device"): in debugfs, /sys/kernel/debug/rrxe/DEV/qpN, one file per QP
# with its live state, made with the QP and removed with it; the device's
# directory with the device, the module's with the module. In the kernel
# log, a line when the data path puts a QP into ERR, naming the cause. In
# `rdma res show qp -dd`, the same fields as the driver's attributes. In
# `rdma statistic qp`, per-QP counters (at the end, with rdma_rxe as the
# control).
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
wait_for 20 tcp_listening "" 18515 $srv
ibv_rc_pingpong -d obs0 -g "$gid" -n 300 198.18.0.1 >/tmp/pp.client 2>&1 &
cli=$!
# two_rts: two QP files say RC and RTS in their first line (read in bash:
# a poll of ours starts no process).
two_rts() {
	local f line n=0
	for f in "$dir"/qp*; do
		read -r line 2>/dev/null <"$f" || continue
		[[ $line =~ ^qp\ [0-9]+\ Rc\ Rts ]] && n=$((n + 1))
	done
	[ $n -ge 2 ]
}
seen=
poll $((100 * POLL_SLACK)) 0.1 two_rts && seen=1
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

# Per-QP counters (`rdma statistic qp`, usage.rst "Observing a device"):
# two RC QPs of one device talking to each other (qp_counter.py), bound to
# a counter in auto mode, then by hand. The counter must see their packets
# and the port's totals (`rdma statistic show link`: the driver's port
# counters plus the counters, live and gone) must move by exactly as much:
# nothing counted twice, nothing lost when the QPs are unbound or exit.
# rdma_rxe, the control, has no counter operations: what it does is
# reported beside rrxe's, its refusals as "not supported".
qpc_py=$RRXE_TOP/tools/testing/qp_counter.py

# The fields of the rdma tool's JSON, wherever it nests them: KEY's values
# under each element of the top-level list (a link, a counter).
# shellcheck disable=SC2016 # Python, not shell
qpc_json='
import json, sys
def find(o, key, out):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == key:
                out.append(v)
            find(v, key, out)
    elif isinstance(o, list):
        for v in o:
            find(v, key, out)
    return out
def flat(v):
    return sum((flat(x) for x in v), []) if isinstance(v, list) else [v]
def last(o, key):
    return find(o, key, [0])[-1]
'

# link_stats DEV: the port's totals "SENT RCVD" (packets).
link_stats() {
	rdma -j statistic show link "$1/1" | python3 -c "$qpc_json"'
for d in json.load(sys.stdin):
    print(last(d, "sent_pkts"), last(d, "rcvd_pkts"))'
}

# qp_counters DEV: one line per counter of DEV's port: "CNTN LQPN,... SENT
# RCVD" (whatever the rdma tool's JSON nests them in).
qp_counters() {
	rdma -j statistic qp show link "$1/1" | python3 -c "$qpc_json"'
for c in json.load(sys.stdin):
    qpns = [q for q in flat(find(c, "lqpn", [])) if isinstance(q, int)]
    print(c.get("cntn"), ",".join(map(str, qpns)) or "-", last(c, "sent_pkts"), last(c, "rcvd_pkts"))'
}

# counter_of DEV QPN: "CNTN SENT RCVD" of the counter QPN is bound to;
# fails if none.
counter_of() {
	qp_counters "$1" | awk -v q="$2" '{ n = split($2, a, ","); for (i = 1; i <= n; i++)
		if (a[i] == q) { print $1, $3, $4; found = 1 } } END { exit !found }'
}

# qpc_start DEV GID / qpc_cmd CMD / qpc_stop: qp_counter.py as a
# coprocess; qpc_start sets QPA and QPB, qpc_cmd sends a command and
# reads its answer into QPC_ANSWER.
qpc_start() {
	coproc QPC { python3 "$qpc_py" "$1" "$2" 2>/tmp/qpc.err; }
	read -r -t 30 QPC_ANSWER <&"${QPC[0]}" || QPC_ANSWER=
	local word
	read -r word QPA QPB <<<"$QPC_ANSWER"
	[ "$word" = qpns ] && return 0
	sed 's/^/# qp_counter.py: /' /tmp/qpc.err
	return 1
}
qpc_cmd() {
	echo "$1" >&"${QPC[1]}"
	read -r -t 60 QPC_ANSWER <&"${QPC[0]}" || QPC_ANSWER=
	case $QPC_ANSWER in sent*) return 0 ;; *) return 1 ;; esac
}
qpc_stop() {
	local pid=${QPC_PID:-}
	[ -n "$pid" ] || return 0
	echo exit >&"${QPC[1]}"
	wait "$pid"
}

# qp_counter_case DEV KIND: the case on DEV (KIND rrxe or rdma_rxe); sets
# QPC_AUTO and QPC_MANUAL to what each part found, for the side-by-side
# summary. On rdma_rxe, a refused binding is "not supported", not a
# failure; on rrxe every step is checked.
qp_counter_case() {
	local dev=$1 kind=$2 gid n=50 t0 t1 t2 c0 c1 cntn d out
	gid=$(roce_v2_ipv4_gid "$dev")
	# Auto mode: the QPs are bound, by type, as they move to INIT.
	if ! out=$(rdma statistic qp set link "$dev/1" auto type on 2>&1); then
		QPC_AUTO="not supported on $kind (auto mode: ${out##*: })"
		[ "$kind" = rrxe ] && not_ok "$dev: rdma statistic qp set auto type on ($out)"
	fi
	if ! qpc_start "$dev" "$gid"; then
		not_ok "$dev: two connected RC QPs ($QPC_ANSWER)"
		return
	fi
	echo "# $dev: QPs $QPA and $QPB"
	if c0=$(counter_of "$dev" "$QPA") && counter_of "$dev" "$QPB" >/dev/null; then
		read -r cntn _ <<<"$c0"
		t0=$(link_stats "$dev")
		qpc_cmd "send $n" || not_ok "$dev: $n messages ($QPC_ANSWER)"
		c1=$(counter_of "$dev" "$QPA")
		t1=$(link_stats "$dev")
		d=$(qpc_delta "$c0" "$c1" "$t0" "$t1")
		echo "# $dev auto: counter $cntn $c0 -> $c1, link $t0 -> $t1"
		QPC_AUTO="counter $cntn: $d"
		check "$dev: auto mode binds both QPs to counter $cntn, whose packets move" qpc_moved "$c0" "$c1" $n
		check "$dev: the link totals move by the counter's packets, counted once" qpc_once "$c0" "$c1" "$t0" "$t1"
		qpc_stop
		t2=$(link_stats "$dev")
		check "$dev: the QPs exit, counter $cntn goes and the totals stay ($t1 -> $t2)" \
			same_and_gone "$t1" "$t2" "$dev" "$cntn"
	else
		qpc_stop
		QPC_AUTO=${QPC_AUTO:-"not supported on $kind (no counter bound in auto mode)"}
		[ "$kind" = rrxe ] && not_ok "$dev: auto mode binds the QPs to a counter"
	fi
	rdma statistic qp set link "$dev/1" auto off 2>/dev/null
	# By hand: A binds to a new counter, B to the same; unbinding A keeps
	# the counter (with B) and its values; unbinding B ends it.
	qpc_start "$dev" "$gid" || { not_ok "$dev: two connected RC QPs ($QPC_ANSWER)"; return; }
	if out=$(rdma statistic qp bind link "$dev/1" lqpn "$QPA" 2>&1) &&
		c0=$(counter_of "$dev" "$QPA"); then
		read -r cntn _ <<<"$c0"
		check "$dev: bind QP $QPB to counter $cntn too" \
			rdma statistic qp bind link "$dev/1" lqpn "$QPB" cntn "$cntn"
		t0=$(link_stats "$dev")
		qpc_cmd "send $n" || not_ok "$dev: $n messages ($QPC_ANSWER)"
		c1=$(counter_of "$dev" "$QPB")
		t1=$(link_stats "$dev")
		echo "# $dev manual: counter $cntn $c0 -> $c1, link $t0 -> $t1"
		QPC_MANUAL="counter $cntn: $(qpc_delta "$c0" "$c1" "$t0" "$t1")"
		check "$dev: counter $cntn's packets move" qpc_moved "$c0" "$c1" $n
		check "$dev: the link totals move by the counter's packets, counted once" qpc_once "$c0" "$c1" "$t0" "$t1"
		check "$dev: unbind QP $QPA" rdma statistic qp unbind link "$dev/1" cntn "$cntn" lqpn "$QPA"
		check "$dev: counter $cntn keeps its values with QP $QPB" \
			test "$(counter_of "$dev" "$QPB" | cut -d' ' -f2-)" = "${c1#* }"
		check "$dev: unbind QP $QPB" rdma statistic qp unbind link "$dev/1" cntn "$cntn" lqpn "$QPB"
		t2=$(link_stats "$dev")
		check "$dev: counter $cntn goes, the totals stay ($t1 -> $t2)" \
			same_and_gone "$t1" "$t2" "$dev" "$cntn"
		qpc_cmd "send $n" || not_ok "$dev: $n messages unbound ($QPC_ANSWER)"
		t2=$(link_stats "$dev")
		check "$dev: unbound, the port counts the QPs again ($t1 -> $t2)" qpc_port_moved "$t1" "$t2" $n
	else
		QPC_MANUAL="not supported on $kind (bind: ${out##*: })"
		[ "$kind" = rrxe ] && not_ok "$dev: rdma statistic qp bind lqpn $QPA ($out)"
	fi
	qpc_stop
}

# qpc_delta C0 C1 T0 T1: "sent +S rcvd +R, link +S' +R'".
qpc_delta() {
	local a b c d e f g h
	read -r _ a b <<<"$1"
	read -r _ c d <<<"$2"
	read -r e f <<<"$3"
	read -r g h <<<"$4"
	echo "sent +$((c - a)) rcvd +$((d - b)), link +$((g - e)) +$((h - f))"
}
# qpc_moved C0 C1 N: the counter counted at least N packets each way.
qpc_moved() {
	local a b c d
	read -r _ a b <<<"$1"
	read -r _ c d <<<"$2"
	[ $((c - a)) -ge "$3" ] && [ $((d - b)) -ge "$3" ]
}
# qpc_once C0 C1 T0 T1: the totals moved by what the counter counted.
qpc_once() {
	local a b c d e f g h
	read -r _ a b <<<"$1"
	read -r _ c d <<<"$2"
	read -r e f <<<"$3"
	read -r g h <<<"$4"
	[ $((g - e)) = $((c - a)) ] && [ $((h - f)) = $((d - b)) ]
}
# qpc_port_moved T0 T1 N: the totals moved by at least N each way.
qpc_port_moved() {
	local e f g h
	read -r e f <<<"$1"
	read -r g h <<<"$2"
	[ $((g - e)) -ge "$3" ] && [ $((h - f)) -ge "$3" ]
}
# same_and_gone T1 T2 DEV CNTN: the totals T1 and T2 are the same, and
# DEV's port has no counter CNTN any more.
same_and_gone() {
	[ "$1" = "$2" ] && ! qp_counters "$3" | awk -v c="$4" '$1 == c { f = 1 } END { exit !f }'
}

qp_counter_case obs0 rrxe
rrxe_auto=$QPC_AUTO rrxe_manual=$QPC_MANUAL

check "rdma link delete obs0" rdma link delete obs0
check "the device's directory goes with it" wait_for 5 absent "$dir"
check "rmmod rrxe" rmmod rrxe
check "the module's directory goes with it" absent "$dbg"

# The control: the same on rdma_rxe, on the same netdev.
QPC_AUTO='' QPC_MANUAL=''
if setup modprobe rdma_rxe && setup rdma link add obsrxe type rxe netdev a0 && port_active obsrxe; then
	qp_counter_case obsrxe rdma_rxe
	rdma link delete obsrxe
	gone obsrxe 100 || echo "# teardown: obsrxe still exists"
else
	QPC_AUTO="no rdma_rxe device" QPC_MANUAL=$QPC_AUTO
fi
rmmod rdma_rxe 2>&1 | sed 's/^/# teardown: /'
printf '# %-12s %-44s %s\n' "qp counters" rrxe rdma_rxe
printf '# %-12s %-44s %s\n' auto "$rrxe_auto" "$QPC_AUTO"
printf '# %-12s %-44s %s\n' "by hand" "$rrxe_manual" "$QPC_MANUAL"
ip link del a0
finish
