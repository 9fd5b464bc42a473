#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Processes die at any moment: a kill storm. Between two hosts (namespaces
# h1 and h2 joined by a veth pair with netem loss and delay, so that
# retransmit timers are armed and packets sit in the qdisc when a process
# dies), each cycle starts one workload, lets it run for a random moment,
# then kills the server, the client or both with SIGKILL or SIGTERM. The
# workload families: RC WRITE/READ/SEND/atomic bandwidth with several QPs,
# UD SEND, UC WRITE, WRITE and SEND latency, rdma_cm (perftest -R, rping,
# ucmatose), rrxe_xfer (byte-verified WRITE/READ/SEND) and a kernel consumer
# (tools/testing/kverbs/rrxe_kverbs_stream.ko: FRWR, WRITE, READ and SEND
# between RC QPs on the two devices, as a storage ULP; "killed" by rmmod,
# which destroys its QPs with their work in flight). QP timeouts are short
# (perftest -u 10 and the kernel consumer: 4 ms) to keep the retransmit
# work busy. Cycles take the families in turn from a random one, so that
# every family runs once in any 13 consecutive cycles.
#
# After the storm: no QP but the GSI QP is left on either device, a
# verified transfer works on the same devices, then link delete and rmmod.
# The harness fails the run on any Oops, KASAN, lockdep or kmemleak report.
# C rxe (rxe-rxe) runs the same storm as the control.
#
# usage: 17-kill-storm.sh [PAIR...]   (CLIENT-SERVER as in 11-traffic.sh;
#   default $RRXE_PAIRS, else rrxe-rrxe rxe-rxe)
# $RRXE_KILL_CYCLES (default 13, every family once) cycles per pairing
# ($RRXE_KILL_CONTROL_CYCLES, default 6, for rxe-rxe: C rxe's teardown
# waits up to 50 s per leaked QP, see testing.rst), $RRXE_KILL_SLOTS (3)
# of them at a time; $RRXE_KILL_SEED seeds the choices (default: the date),
# printed so a run can be repeated.
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

cycles=${RRXE_KILL_CYCLES:-13}
control_cycles=${RRXE_KILL_CONTROL_CYCLES:-6}
slots=${RRXE_KILL_SLOTS:-3}
seed=${RRXE_KILL_SEED:-$(date +%s)}
netem='delay 2ms 1ms loss 2%'
RANDOM=$seed
echo "# seed $seed, $cycles cycles per pairing ($control_cycles for rxe-rxe), $slots at a time, netem: $netem"

parse_pairs "rrxe-rrxe rxe-rxe" "$@"
need_xfer

# The workload families: TOOL ARGS (the server's and the client's, as
# run_traffic takes them). perftest runs by duration, killed long before.
families=(
	"ib_write_bw -q 4 -D 30 -u 10"
	"ib_read_bw -q 2 -D 30 -u 10"
	"ib_send_bw -q 2 -D 30 -u 10"
	"ib_atomic_bw -D 30 -u 10"
	"ib_send_bw -c UD -D 30"
	"ib_write_bw -c UC -D 30"
	"ib_write_lat -D 30 -u 10"
	"ib_send_lat -D 30 -u 10"
	"ib_send_bw -R -D 30 -u 10"
	"rping -C 1000000 -S 4096"
	"ucmatose -c 4 -C 1000000 -S 4096"
	"xfer -b 4194304 -s 1 -T 10 -t 60"
	"kverbs"
)
stream_ko=$RRXE_TOP/tools/testing/kverbs/rrxe_kverbs_stream.ko
first_family=$((RANDOM % ${#families[@]}))

# left DEV...: the QPs of the DEVs other than their GSI QPs.
left() {
	local d pat=()
	for d in "$@"; do pat+=(-e "^link $d/"); done
	rdma res show qp 2>/dev/null | awk '$4 != 1' | grep "${pat[@]}"
}

# none_left DEV...: no QP of the DEVs is left but their GSI QPs.
none_left() { ! left "$@" >/dev/null; }

# kverbs_cycle N: a cycle of the kernel consumer: loaded, streaming for a
# random moment, unloaded. One at a time (the module loads once): a cycle
# waits for another slot's.
kverbs_cycle() {
	local n=$1 pause nap lock=/tmp/rrxe-kverbs-stream.lock t0 t1 said
	until mkdir "$lock" 2>/dev/null; do sleep 0.5; done
	pause=$((RANDOM % 2500))
	t0=${EPOCHREALTIME/./}
	if ! insmod "$stream_ko" devs="$DEV1,$DEV2"; then
		rmdir "$lock"
		echo "# cycle $n: insmod of the kernel consumer failed"
		return 1
	fi
	printf -v nap '%d.%03d' $((pause / 1000)) $((pause % 1000))
	sleep "$nap"
	rmmod rrxe_kverbs_stream
	t1=${EPOCHREALTIME/./}
	said=$(dmesg | sed -n 's/.*kverbs-stream: //p' | tail -2 | paste -sd ';')
	rmdir "$lock"
	printf '# cycle %s: kernel consumer, rmmod after %s ms (%s); load to unload %.1f s\n' \
		"$n" "$pause" "$said" "$((t1 - t0))e-6"
}

# stuck_stacks N PID...: what the PIDs (the `timeout` wrappers) and their
# children (the tools) are doing: state, wait channel and kernel stack of
# every thread, one comment line each.
stuck_stacks() {
	local n=$1 p t pids
	shift
	pids=$(echo "$@" $(pgrep -P "$(echo "$@" | tr ' ' ',')") | tr ' ' '\n' | sort -un)
	for p in $pids; do
		for t in /proc/"$p"/task/*; do
			[ -d "$t" ] || continue
			echo "# cycle $n: pid $p ($(cat /proc/"$p"/comm 2>/dev/null)) task ${t##*/}" \
				"state $(awk '{ print $3 }' "$t/stat" 2>/dev/null)" \
				"wchan $(cat "$t/wchan" 2>/dev/null) still there after 10 s:" \
				"$(awk '{ print $2 }' "$t/stack" 2>/dev/null | head -12 | paste -sd ' ')"
		done
	done
}

# storm_cycle N: one cycle; prints one comment line.
storm_cycle() {
	local n=$1 fam tool args port=$TRAFFIC_PORT srv cli sopts copts victim sig pause nap t0 t1 t2 t3
	fam=${families[$(((first_family + n - 1) % ${#families[@]}))]}
	read -r tool args <<<"$fam"
	[ "$tool" = kverbs ] && { kverbs_cycle "$n"; return; }
	[ "$tool" = xfer ] && tool=$xfer
	TRAFFIC_PORT=$((TRAFFIC_PORT + 1))
	# shellcheck disable=SC2086 # word lists
	sopts=$(traffic_opts server "$port" "$tool" $args) || return 1
	# shellcheck disable=SC2086
	copts=$(traffic_opts client "$port" "$tool" $args) || return 1
	# shellcheck disable=SC2086
	ip netns exec "$PAIR_NS2" timeout -k 2 60 "$tool" $args $sopts >/dev/null 2>&1 &
	srv=$!
	t0=${EPOCHREALTIME/./}
	# shellcheck disable=SC2086
	wait_for 20 traffic_listening -p $srv "$tool" "$port" $args
	t1=${EPOCHREALTIME/./}
	# shellcheck disable=SC2086
	ip netns exec "$PAIR_NS1" timeout -k 2 60 "$tool" $args $copts >/dev/null 2>&1 &
	cli=$!
	# Kill at a random moment in the first 2.5 s: during setup, connection
	# or traffic.
	pause=$((RANDOM % 2500))
	printf -v nap '%d.%03d' $((pause / 1000)) $((pause % 1000))
	sleep "$nap"
	sig=TERM
	[ $((RANDOM % 2)) = 0 ] && sig=KILL
	case $((RANDOM % 3)) in
	0) victim=server; pkill -"$sig" -P "$srv" ;;
	1) victim=client; pkill -"$sig" -P "$cli" ;;
	*) victim=both; pkill -"$sig" -P "$srv"; pkill -"$sig" -P "$cli" ;;
	esac
	t2=${EPOCHREALTIME/./}
	# The survivor may wait for its peer for a while: end it too.
	sleep 0.5
	pkill -KILL -P "$srv" 2>/dev/null
	pkill -KILL -P "$cli" 2>/dev/null
	# A process still going after 10 s is stuck in the kernel's teardown:
	# say where, once. Counted in seconds, not polls: on the debug kernel
	# under load one `sleep 0.5` poll costs well over a second.
	local from=$SECONDS said=0
	while kill -0 "$srv" 2>/dev/null || kill -0 "$cli" 2>/dev/null; do
		sleep 0.5
		if [ $said = 0 ] && [ $((SECONDS - from)) -ge 10 ]; then
			stuck_stacks "$n" "$srv" "$cli"
			said=1
		fi
	done
	local polled=$((SECONDS - from))
	wait "$srv" "$cli" 2>/dev/null
	t3=${EPOCHREALTIME/./}
	# "exit" runs from the signal to the end of the wait; "polled" is the
	# part spent waiting for the wrappers to go (the rest is pkill, the
	# shell and the reaping: slow on a loaded debug kernel).
	printf '# cycle %s: %s (%s), SIG%s to %s after %s ms; listen %.1f s, exit %.1f s (polled %s s)\n' \
		"$n" "${fam%% -*}" "$args" "$sig" "$victim" "$pause" \
		"$((t1 - t0))e-6" "$((t3 - t2))e-6" "$polled"
}

for pair in "${pairs[@]}"; do
	pair_cycles=$cycles
	[ "$pair" = rxe-rxe ] && pair_cycles=$control_cycles
	echo "# --- $pair: client ${pair%-*} in h1, server ${pair#*-} in h2"
	if ! pair_up "${pair%-*}" "${pair#*-}"; then
		not_ok "$pair: setup"
		pair_down
		continue
	fi
	ip netns exec "$PAIR_NS1" tc qdisc add dev veth1 root netem $netem
	ip netns exec "$PAIR_NS2" tc qdisc add dev veth2 root netem $netem
	start=$SECONDS
	# Several slots cycle side by side, each on ports of its own: more
	# kills per minute, and destroys that race each other.
	for slot in $(seq "$slots"); do
		(
			TRAFFIC_PORT=$((20000 + slot * 2000))
			RANDOM=$((seed + slot))
			for n in $(seq "$slot" "$slots" "$pair_cycles"); do
				storm_cycle "$n" || echo "# cycle $n could not start"
			done
		) &
	done
	wait
	ok "$pair: $pair_cycles kill cycles in $((SECONDS - start)) s ($slots at a time)"
	# Destroy is synchronous, but the kernel's rdma_cm may still be
	# tearing down the IDs of a killed process.
	if wait_for 30 none_left "$DEV1" "$DEV2"; then
		ok "$pair: no QP left but the GSI QPs"
	else
		not_ok "$pair: QPs left after the storm"
		left "$DEV1" "$DEV2" | sed 's/^/#   /'
	fi
	ip netns exec "$PAIR_NS1" tc qdisc del dev veth1 root
	ip netns exec "$PAIR_NS2" tc qdisc del dev veth2 root
	if run_traffic "$pair-after" 120 "xfer: OK bytes=$((3 << 20))" \
		"$xfer" -t 100 -- -b $((1 << 20)) -s 1; then
		ok "$pair: a verified transfer after the storm"
	else
		not_ok "$pair: a verified transfer after the storm"
	fi
	pair_down
	check "$pair: link delete leaves no device" sh -c "! ls /sys/class/infiniband | grep -q ."
done
[ -d /sys/module/rrxe ] && check "rmmod rrxe after the storm" unload_rrxe
unload_drivers
finish
