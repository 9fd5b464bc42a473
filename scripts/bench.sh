#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: rdma_rxe against rrxe on the same perftest workloads, in one
# VM booted with the bench kernel (no debug options; built once, ~30 min,
# by scripts/build-kernel.sh bench), and a table of the results.
#
# usage: bench.sh [SECS [LAT_ITERS [REPEAT]]]
#   SECS       seconds of each bandwidth run, perftest's -D (default
#              $BENCH_SECS, else 4)
#   LAT_ITERS  iterations of each latency run (default $BENCH_LAT_ITERS,
#              else 2000)
#   REPEAT     runs of each row on each driver, the drivers taking turns
#              (default $BENCH_REPEAT, else 5); the table shows the median,
#              the lowest and the highest
# BENCH_ROWS (a regular expression) keeps only the rows it matches.
# BENCH_PERF=1 then profiles each row once more on each driver with perf
# in the guest (scripts/get-perf.sh fetches it): the flat profiles are
# printed, recordings and reports left in $RRXE_CACHE/bench-perf.
# BENCH_TRACE=1 then runs each row once more on each driver with the
# kernel's tracer on for 50 ms mid-run (a latency run: all of it; rrxe's packet events, scheduler
# switches, softirqs, work items): the traces are left in
# $RRXE_CACHE/bench-trace, and tools/testing/trace_timeline.py FILE
# condenses one into a timeline.
# Environment: RRXE_FLAVOUR (bench; `test` runs on the debug kernel, for
# trying this script out), RRXE_KVM=1, RRXE_VM_TIMEOUT (default 3600),
# BENCH_TIMEOUT (seconds per perftest run, default 300).
#
# rrxe.ko is built against the chosen kernel from a copy of the sources in
# $RRXE_CACHE/bench-src-FLAVOUR, so the worktree's test build stays as is.
# The guest half is tools/testing/bench-guest.sh.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

flavour=${RRXE_FLAVOUR:-bench}
secs=${1:-${BENCH_SECS:-4}}
lat_iters=${2:-${BENCH_LAT_ITERS:-2000}}
repeat=${3:-${BENCH_REPEAT:-5}}
kdir=$(bash "$RRXE_TOP/scripts/build-kernel.sh" "$flavour") || exit 1

# A clean copy of the sources (what git would check out, plus files not yet
# committed), built against the chosen kernel.
src=$RRXE_CACHE/bench-src-$flavour
note "building rrxe.ko against the $flavour kernel in $src"
# A fresh copy each time: tar keeps the files' times, and Kbuild would keep
# an object newer than an older source that replaced a newer one (another
# worktree's copy).
rm -rf "$src"
mkdir -p "$src"
if git -C "$RRXE_TOP" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$RRXE_TOP" ls-files -z --cached --others --exclude-standard |
		(cd "$RRXE_TOP" && xargs -0 -r sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done' _) |
		tar -C "$RRXE_TOP" --null -T - -cf - | tar -C "$src" -xf - || die "cannot copy the sources"
else
	tar -C "$RRXE_TOP" --exclude='*.o' --exclude='*.ko' -cf - . | tar -C "$src" -xf - ||
		die "cannot copy the sources"
fi
log=$RRXE_CACHE/bench-build.log
(cd "$src" && inroot make -C "$kdir" M="$src" LLVM=1 modules) >"$log" 2>&1 ||
	{ tail -30 "$log" >&2; die "building rrxe.ko for the $flavour kernel failed (see $log)"; }
ko=$src/drivers/infiniband/sw/rrxe/rrxe.ko

if [ -n "${BENCH_PERF:-}" ]; then
	RRXE_BENCH_PERF_DIR=$(bash "$RRXE_TOP/scripts/get-perf.sh") || die "no perf for the guest"
	export RRXE_BENCH_PERF_DIR
	export RRXE_BENCH_PERF=$RRXE_CACHE/bench-perf RRXE_VM_OUT=$RRXE_CACHE/bench-perf
	rm -rf "$RRXE_BENCH_PERF"
	mkdir -p "$RRXE_BENCH_PERF"
fi
if [ -n "${BENCH_TRACE:-}" ]; then
	[ -n "${BENCH_PERF:-}" ] && die "BENCH_PERF and BENCH_TRACE: one at a time"
	export RRXE_BENCH_TRACE=$RRXE_CACHE/bench-trace RRXE_VM_OUT=$RRXE_CACHE/bench-trace
	rm -rf "$RRXE_BENCH_TRACE"
	mkdir -p "$RRXE_BENCH_TRACE"
fi
# The guest sees only RRXE_* variables.
export RRXE_BENCH_ROWS=${BENCH_ROWS:-}
out=$(mktemp "$RRXE_CACHE/bench-out.XXXXXX")
trap 'rm -f "$out"' EXIT
note "booting the $flavour kernel: ${secs} s a bandwidth run, $lat_iters iterations a latency run, $repeat runs a row and driver"
RRXE_FLAVOUR=$flavour RRXE_KO=$ko RRXE_VM_TIMEOUT=${RRXE_VM_TIMEOUT:-3600} \
	bash "$RRXE_TOP/scripts/vm-run.sh" tools/testing/bench-guest.sh "$ko" "$secs" "$lat_iters" \
	"${BENCH_TIMEOUT:-300}" "$repeat" |
	tee "$out"
vm_rc=${PIPESTATUS[0]}

# The table, from the guest's BENCH|row|driver|value|unit lines (one per
# run, rows in order), BENCH-CPU|cpus x model|flags and
# BENCH-LIMIT|memcpy|crc32|ceiling.
echo
echo "rdma_rxe vs rrxe, $flavour kernel, $(date -u +%Y-%m-%d), VM CPU ${RRXE_VM_CPU:-max,la57=off} ($secs s a bandwidth run, $lat_iters iterations a latency run, $repeat runs a row and driver)"
tr -d '\r' <"$out" | awk -F'|' '
	$1 == "BENCH-CPU" { printf "guest: %s (%s)\n", $2, $3 }
	$1 == "BENCH-LIMIT" {
		ceiling = $4 + 0
		printf "limit: memcpy %s MiB/s, crc32 %s MiB/s: a driver that copies and checksums each byte once a side, a CPU a side, moves at most %s MiB/s\n", $2, $3, $4
	}
	$1 == "BENCH" {
		if (!($2 in unit)) { order[n++] = $2 }
		unit[$2] = $5
		k = $2 SUBSEP $3
		runs[k]++
		if ($4 ~ /^[0-9]+(\.[0-9]+)?$/ && $4 + 0 > 0) { val[k, ++good[k]] = $4 + 0 }
	}
	# stats K: sets med, lo, hi of the good runs of K; returns their count.
	function stats(k,   m, i, j, t, a) {
		m = good[k] + 0
		for (i = 1; i <= m; i++) a[i] = val[k, i]
		for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		if (m == 0) return 0
		lo = a[1]; hi = a[m]
		med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
		return m
	}
	function cell(k) {
		if (!stats(k)) return sprintf("%-26s", "fail")
		return sprintf("%8.4g %8.4g-%-8.4g", med, lo, hi) (good[k] < runs[k] ? "!" : " ")
	}
	END {
		print "ratio: of the medians, rrxe/rxe for bandwidth and rate, rxe/rrxe for latency: above 1 means rrxe is better"
		print "cells: median lowest-highest; ! when some runs failed; of limit: the medians over the ceiling above"
		printf "%-24s | %-5s | %-28s | %-28s | %5s | %s\n", "workload", "unit", "rxe", "rrxe", "ratio", "of limit rxe/rrxe"
		for (i = 0; i < n; i++) {
			r = order[i]
			a = cell(r SUBSEP "rxe"); ma = stats(r SUBSEP "rxe") ? med : 0
			b = cell(r SUBSEP "rrxe"); mb = stats(r SUBSEP "rrxe") ? med : 0
			ratio = "-"
			if (ma > 0 && mb > 0) ratio = sprintf("%.2f", unit[r] == "usec" ? ma / mb : mb / ma)
			lim = ""
			if (unit[r] == "MiB/s" && ceiling > 0) lim = sprintf("%.2f/%.2f", ma / ceiling, mb / ceiling)
			printf "%-24s | %-5s | %s | %s | %5s | %s\n", r, unit[r], a, b, ratio, lim
		}
		if (n == 0) print "(no results: see the VM output above)"
	}'
exit "$vm_rc"
