#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The guest half of `make bench` (scripts/bench.sh): the same perftest
# workloads on an rdma_rxe pair and on an rrxe pair. Each pair is two
# network namespaces joined by a veth pair (rxe: h1/h2, 198.18.1.0/24;
# rrxe: d1/d2, 198.18.2.0/24): the drivers cannot both own UDP port 4791
# in one namespace. Each row runs REPEAT times, the two drivers taking
# turns (rxe first, then rrxe first, ...), so that drift in the host's
# load spreads over both; the host takes medians.
#
# usage: bench-guest.sh KO SECS LAT_ITERS TIMEOUT REPEAT
#   SECS       perftest's -D (seconds) of the bandwidth rows
#   LAT_ITERS  perftest's -n of the latency rows
# Prints `BENCH|row|driver|value|unit` per run (value `fail` when the run
# failed or its output could not be parsed), `BENCH-LIMIT|…` (rrxe's
# in-kernel memcpy/CRC-32 measurement) and `BENCH-CPU|…` for the host to
# tabulate. TIMEOUT bounds each perftest run; a driver whose first run
# fails is not run again (its other rows are `fail` too).
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

RRXE_KO=${1:-$RRXE_KO}
secs=${2:-4}
lat_iters=${3:-2000}
timeout=${4:-300}
repeat=${5:-5}

# row | unit | perftest command (sizes, QPs; -D or -n is added). The unit
# says which column is read: MiB/s the average bandwidth, Mpps the message
# rate, usec the typical latency.
rows=(
	"ib_write_bw 64KiB|MiB/s|ib_write_bw -s 65536"
	"ib_write_bw 4KiB|MiB/s|ib_write_bw -s 4096"
	"ib_send_bw 64KiB|MiB/s|ib_send_bw -s 65536"
	"ib_send_bw 4KiB|MiB/s|ib_send_bw -s 4096"
	"ib_read_bw 64KiB|MiB/s|ib_read_bw -s 65536"
	"ib_read_bw 4KiB|MiB/s|ib_read_bw -s 4096"
	"ib_write_bw 64B rate|Mpps|ib_write_bw -s 64"
	"ib_send_bw 64B rate|Mpps|ib_send_bw -s 64"
	"ib_send_lat 64B|usec|ib_send_lat -s 64"
	"ib_write_lat 64B|usec|ib_write_lat -s 64"
	"ib_read_lat 64B|usec|ib_read_lat -s 64"
	"ib_write_bw 64KiB 4 QPs|MiB/s|ib_write_bw -s 65536 -q 4"
	"ib_write_bw 64KiB 8 QPs|MiB/s|ib_write_bw -s 65536 -q 8"
)
[ -n "${RRXE_BENCH_ROWS:-}" ] && {
	# RRXE_BENCH_ROWS: a regular expression; only the rows it matches run.
	kept=()
	for r in "${rows[@]}"; do [[ ${r%%|*} =~ $RRXE_BENCH_ROWS ]] && kept+=("$r"); done
	rows=("${kept[@]}")
}

# What the guest's CPU is: the model, and whether it has what the kernel's
# CRC-32 (PCLMULQDQ) and memcpy (ERMS/FSRM) use.
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
cpu_flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -Ex 'pclmulqdq|erms|fsrm|avx2|avx512f' | paste -sd, -)
echo "BENCH-CPU|$(nproc) x $cpu_model|$cpu_flags"

# rrxe measures the per-byte limit as it loads (rrxe's limit.rs).
modprobe -a udp_tunnel ip6_udp_tunnel 2>/dev/null
if insmod "$RRXE_KO" measure_limit=1; then
	lim=$(dmesg | grep -o 'limit: memcpy .*' | tail -1)
	read -r _ _ memcpy _ _ crc _ _ ceiling _ <<<"$lim"
	echo "BENCH-LIMIT|$memcpy|$crc|$ceiling"
fi

declare -A pair_state
# save_pair NAME / use_pair NAME: remember and restore what pair_up set.
save_pair() {
	pair_state[$1]="$DEV1 $DEV2 $GID1 $GID2 $PAIR_NS1 $PAIR_NS2 $PAIR_IP1 $PAIR_IP2"
}
use_pair() {
	read -r DEV1 DEV2 GID1 GID2 PAIR_NS1 PAIR_NS2 PAIR_IP1 PAIR_IP2 <<<"${pair_state[$1]}"
}

drivers=()
if pair_up rxe rxe h1 h2 1; then
	save_pair rxe
	drivers+=(rxe)
else
	echo "# bench: no rdma_rxe pair"
fi
if pair_up rrxe rrxe d1 d2 2; then
	save_pair rrxe
	drivers+=(rrxe)
else
	echo "# bench: no rrxe pair"
fi
echo "# bench: ${secs} s a bandwidth run, $lat_iters iterations a latency run, $repeat runs a row and driver; $(uname -r); drivers: ${drivers[*]}"

# value FILE UNIT: the result of a perftest client's output: average
# bandwidth (MiB/s) or typical latency (usec), from the first result row.
value() {
	local col=4
	[ "$2" = usec ] || [ "$2" = Mpps ] && col=5
	grep -E "$PERF_ROW" "$1" | head -1 | awk -v c=$col '$c ~ /^[0-9.]+$/ { print $c; ok = 1 } END { exit !ok }'
}

# ctr DEV: DEV's port counters as "name value" pairs on one line.
ctr() {
	rdma statistic show link "$1/1" 2>/dev/null | tr -s ' \n' '  ' | cut -d' ' -f3-
}

# ctr_delta BEFORE AFTER: the counters that tell a clean run from one
# that lost and resent packets, as name=after-before.
ctr_delta() {
	awk -v b="$1" -v a="$2" 'BEGIN {
		nb = split(b, x, " "); for (i = 1; i < nb; i += 2) before[x[i]] = x[i + 1]
		na = split(a, y, " ")
		for (i = 1; i < na; i += 2) {
			n = y[i]
			if (n ~ /^(sent_pkts|rcvd_pkts|rcvd_seq_err|duplicate_request|out_of_seq_request|completer_retry_err|rcvd_rnr_err|send_rnr_err|ack_deferred)$/)
				printf "%s%s=%d", sep, n, y[i + 1] - before[n], sep = " "
		}
	}'
}

declare -A broken
first=${rows[0]%%|*}
# run_row NAME UNIT DRIVER CMD...: one run of a row on one driver.
run_row() {
	local name=$1 unit=$2 d=$3 v=fail tag
	shift 3
	if [ -n "${broken[$d]:-}" ]; then
		echo "# $d: $name not run (${broken[$d]})"
	elif [ -n "${pair_state[$d]:-}" ]; then
		use_pair "$d"
		tag=$(echo "$d-$name" | tr ' ' _)
		local b1 b2
		b1=$(ctr "$DEV1") b2=$(ctr "$DEV2")
		if run_traffic "$tag" "$timeout" "$PERF_ROW" "$@" >"$TRAFFIC_TMP/$tag.why"; then
			v=$(value "$TRAFFIC_TMP/$tag.client" "$unit") || v=fail
		fi
		# What each side's port counted during the run: retransmissions
		# and out-of-sequence packets say whether a slow run lost packets.
		echo "# counters $d $name: $DEV1 $(ctr_delta "$b1" "$(ctr "$DEV1")"); $DEV2 $(ctr_delta "$b2" "$(ctr "$DEV2")")"
		[ "$v" = fail ] && head -20 "$TRAFFIC_TMP/$tag.why"
		[ "$v" = fail ] && [ "$name" = "$first" ] && broken[$d]="its first run failed"
	fi
	echo "BENCH|$name|$d|$v|$unit"
}

# parse_row ROW: sets name, unit and cmd (the perftest command line, with
# -n or -D added) from an entry of `rows`.
parse_row() {
	local rest=${1#*|}
	name=${1%%|*}
	unit=${rest%%|*}
	read -ra cmd <<<"${rest#*|}"
	if [ "$unit" = usec ]; then cmd+=(-n "$lat_iters"); else cmd+=(-D "$secs"); fi
}

for r in "${rows[@]}"; do
	parse_row "$r"
	for ((i = 0; i < repeat; i++)); do
		order="rxe rrxe"
		((i % 2)) && order="rrxe rxe"
		for d in $order; do run_row "$name" "$unit" "$d" "${cmd[@]}"; done
	done
done

# RRXE_BENCH_PERF=DIR (writable: RRXE_VM_OUT): then each row once more on each driver under
# `perf record -a -g` (cpu-clock: TCG has no PMU), the flat profile
# printed and the reports (flat, by command, call graphs) left in DIR. perf comes from
# RRXE_BENCH_PERF_DIR (scripts/get-perf.sh).
if [ -n "${RRXE_BENCH_PERF:-}" ]; then
	perf_bin=$RRXE_BENCH_PERF_DIR/usr/bin/perf
	export LD_LIBRARY_PATH=$RRXE_BENCH_PERF_DIR/usr/lib/x86_64-linux-gnu
	mkdir -p "$RRXE_BENCH_PERF"
	for r in "${rows[@]}"; do
		parse_row "$r"
		for d in rxe rrxe; do
			f=$RRXE_BENCH_PERF/$(echo "$d-$name" | tr ' ' _)
			# perf cannot write its data over 9p ("Bad address"): /tmp.
			data=/tmp/perf-$(basename "$f").data
			"$perf_bin" record -q -a -g -e cpu-clock -F 1999 -o "$data" -- sleep $((secs + 4)) 2>"$f.err" &
			pp=$!
			sleep 0.5
			run_row "$name" "$unit" "$d" "${cmd[@]}" | sed 's/^BENCH|/BENCH-PERF-RUN|/'
			wait $pp
			"$perf_bin" report --kallsyms=/proc/kallsyms -i "$data" --no-children --sort sym --stdio -g none \
				--percent-limit 0.7 2>/dev/null | grep -v '^#' | grep -v '^$' >"$f.txt"
			"$perf_bin" report --kallsyms=/proc/kallsyms -i "$data" --no-children --sort comm,dso --stdio -g none \
				--percent-limit 1 2>/dev/null | grep -v '^#' | grep -v '^$' >"$f.comm.txt"
			# Per CPU: whether the work shares the CPUs or one does it all.
			"$perf_bin" report --kallsyms=/proc/kallsyms -i "$data" --no-children --sort cpu,comm --stdio -g none \
				--percent-limit 2 2>/dev/null | grep -v '^#' | grep -v '^$' >"$f.cpu.txt"
			echo "# perf $d $name: where the CPU time went (all CPUs, cpu-clock)"
			sed 's/^/# perf   /' "$f.comm.txt" | head -12
			echo "# perf $d $name: by CPU and command"
			sed 's/^/# perf   /' "$f.cpu.txt" | head -12
			sed 's/^/# perf   /' "$f.txt" | head -40
			# Call graphs of the top entries (each with its callers), for the notes.
			"$perf_bin" report --kallsyms=/proc/kallsyms -i "$data" --no-children --sort sym --stdio -g graph,0.5,callee \
				--percent-limit 3 2>/dev/null | head -400 >"$f.graph.txt"
			rm -f "$data"
		done
	done
fi

# RRXE_BENCH_TRACE=DIR (writable: RRXE_VM_OUT): then each row once more on
# each driver, with the kernel's tracer recording 50 ms from the middle of
# the run: rrxe's packet events (rrxe_tx, rrxe_rx; rdma_rxe has none), the
# scheduler's switches, softirq entries and work items run. The raw traces
# go to DIR; tools/testing/trace_timeline.py condenses them on the host.
if [ -n "${RRXE_BENCH_TRACE:-}" ]; then
	T=/sys/kernel/tracing
	mkdir -p "$RRXE_BENCH_TRACE"
	echo 8192 >$T/buffer_size_kb
	for e in rrxe/rrxe_tx rrxe/rrxe_rx rrxe/rrxe_drop rrxe/rrxe_nak sched/sched_switch \
		workqueue/workqueue_execute_start irq/softirq_entry; do
		[ -e $T/events/$e/enable ] && echo 1 >$T/events/$e/enable
	done
	for r in "${rows[@]}"; do
		parse_row "$r"
		for d in rxe rrxe; do
			f=$RRXE_BENCH_TRACE/$(echo "$d-$name" | tr ' ' _).txt
			echo 0 >$T/tracing_on
			echo >$T/trace
			# 50 ms from the middle of a bandwidth run; a latency
			# run (a few thousand round trips, well under a second)
			# whole, set-up included.
			if [ "$unit" = usec ]; then
				echo 1 >$T/tracing_on
				tp=
			else
				(sleep $((secs / 2 + 1)); echo 1 >$T/tracing_on; sleep 0.05; echo 0 >$T/tracing_on) &
				tp=$!
			fi
			run_row "$name" "$unit" "$d" "${cmd[@]}" | sed 's/^BENCH|/BENCH-TRACE-RUN|/'
			[ -n "$tp" ] && wait "$tp"
			echo 0 >$T/tracing_on
			cp $T/trace "$f"
			echo "# trace $d $name: $(grep -vc '^#' "$f") events in $f"
		done
	done
	echo 0 >$T/events/enable
fi

for d in rxe rrxe; do
	[ -n "${pair_state[$d]:-}" ] || continue
	use_pair $d
	pair_down
done
unload_drivers
rm -rf "$TRAFFIC_TMP"
echo "# bench took ${SECONDS}s"
exit 0
