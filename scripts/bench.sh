#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: rdma_rxe against rrxe on the same perftest workloads, in one
# VM booted with the bench kernel (no debug options; built once, ~30 min,
# by scripts/build-kernel.sh bench), and a table of the results.
#
# usage: bench.sh [ITERS [LAT_ITERS]]
#   ITERS      perftest iterations of the bandwidth rows (default
#              $BENCH_ITERS, else 5000)
#   LAT_ITERS  iterations of the latency rows (default $BENCH_LAT_ITERS,
#              else 2000)
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
iters=${1:-${BENCH_ITERS:-5000}}
lat_iters=${2:-${BENCH_LAT_ITERS:-2000}}
kdir=$(bash "$RRXE_TOP/scripts/build-kernel.sh" "$flavour") || exit 1

# A clean copy of the sources (what git would check out, plus files not yet
# committed), built against the chosen kernel.
src=$RRXE_CACHE/bench-src-$flavour
note "building rrxe.ko against the $flavour kernel in $src"
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

out=$(mktemp "$RRXE_CACHE/bench-out.XXXXXX")
trap 'rm -f "$out"' EXIT
note "booting the $flavour kernel: $iters iterations per bandwidth row, $lat_iters per latency row"
RRXE_FLAVOUR=$flavour RRXE_KO=$ko RRXE_VM_TIMEOUT=${RRXE_VM_TIMEOUT:-3600} \
	bash "$RRXE_TOP/scripts/vm-run.sh" tools/testing/bench-guest.sh "$ko" "$iters" "$lat_iters" \
	"${BENCH_TIMEOUT:-300}" |
	tee "$out"
vm_rc=${PIPESTATUS[0]}

# The table. BENCH|row|driver|value|unit lines, in row order.
echo
echo "rdma_rxe vs rrxe, $flavour kernel, $(date -u +%Y-%m-%d) ($iters/$lat_iters iterations)"
echo "ratio: rrxe's bandwidth / rxe's, rxe's latency / rrxe's: above 1 means rrxe is better"
tr -d '\r' <"$out" | awk -F'|' '
	$1 == "BENCH" {
		if (!($2 in unit)) { order[n++] = $2 }
		unit[$2] = $5
		v[$2, $3] = $4
	}
	function num(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ && x + 0 > 0 }
	END {
		printf "%-26s | %-6s | %10s | %10s | %6s\n", "workload", "unit", "rxe", "rrxe", "ratio"
		printf "%-26s-+-%-6s-+-%10s-+-%10s-+-%6s\n", "--------------------------", "------", "----------", "----------", "------"
		for (i = 0; i < n; i++) {
			r = order[i]
			a = ((r, "rxe") in v) ? v[r, "rxe"] : "fail"
			b = ((r, "rrxe") in v) ? v[r, "rrxe"] : "fail"
			ratio = "-"
			if (num(a) && num(b))
				ratio = sprintf("%.2f", unit[r] == "usec" ? a / b : b / a)
			printf "%-26s | %-6s | %10s | %10s | %6s\n", r, unit[r], a, b, ratio
		}
		if (n == 0) print "(no results: see the VM output above)"
	}'
exit "$vm_rc"
