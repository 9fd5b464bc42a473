#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The guest half of `make bench` (scripts/bench.sh): the same perftest
# workloads on an rdma_rxe pair and on an rrxe pair, row by row, one driver
# after the other. Each pair is two network namespaces joined by a veth
# pair (rxe: h1/h2, 198.18.1.0/24; rrxe: d1/d2, 198.18.2.0/24): the drivers
# cannot both own UDP port 4791 in one namespace, and interleaving the rows
# spreads any drift of the host's load over both drivers.
#
# usage: bench-guest.sh KO ITERS LAT_ITERS TIMEOUT
# Prints `BENCH|row|driver|value|unit` per measurement (value `fail` when
# the run failed or its output could not be parsed) for the host to
# tabulate. TIMEOUT bounds each perftest run; a driver whose first row
# fails is not run again (its other rows are `fail` too).
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

RRXE_KO=${1:-$RRXE_KO}
iters=${2:-5000}
lat_iters=${3:-2000}
timeout=${4:-300}

# row | unit | perftest command (sizes, QPs; -n is added)
rows=(
	"ib_write_bw 64KiB|MiB/s|ib_write_bw -s 65536"
	"ib_write_bw 4KiB|MiB/s|ib_write_bw -s 4096"
	"ib_send_bw 64KiB|MiB/s|ib_send_bw -s 65536"
	"ib_send_bw 4KiB|MiB/s|ib_send_bw -s 4096"
	"ib_read_bw 64KiB|MiB/s|ib_read_bw -s 65536"
	"ib_read_bw 4KiB|MiB/s|ib_read_bw -s 4096"
	"ib_send_lat 64B|usec|ib_send_lat -s 64"
	"ib_write_lat 64B|usec|ib_write_lat -s 64"
	"ib_read_lat 64B|usec|ib_read_lat -s 64"
	"ib_write_bw 64KiB 4 QPs|MiB/s|ib_write_bw -s 65536 -q 4"
)

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
echo "# bench: iterations $iters (bandwidth), $lat_iters (latency); $(uname -r); drivers: ${drivers[*]}"

# value FILE UNIT: the result of a perftest client's output: average
# bandwidth (MiB/s) or typical latency (usec), from the first result row.
value() {
	local col=4
	[ "$2" = usec ] && col=5
	grep -E "$PERF_ROW" "$1" | head -1 | awk -v c=$col '$c ~ /^[0-9.]+$/ { print $c; ok = 1 } END { exit !ok }'
}

declare -A broken
first=${rows[0]%%|*}
for r in "${rows[@]}"; do
	name=${r%%|*}
	rest=${r#*|}
	unit=${rest%%|*}
	read -ra cmd <<<"${rest#*|}"
	n=$iters
	[ "$unit" = usec ] && n=$lat_iters
	for d in rxe rrxe; do
		v=fail
		if [ -n "${broken[$d]:-}" ]; then
			echo "# $d: $name not run (${broken[$d]})"
		elif [ -n "${pair_state[$d]:-}" ]; then
			use_pair $d
			tag=$(echo "$d-$name" | tr ' ' _)
			if run_traffic "$tag" "$timeout" "$PERF_ROW" "${cmd[@]}" -n "$n" >"$TRAFFIC_TMP/$tag.why"; then
				v=$(value "$TRAFFIC_TMP/$tag.client" "$unit") || v=fail
			fi
			[ "$v" = fail ] && head -20 "$TRAFFIC_TMP/$tag.why"
			[ "$v" = fail ] && [ "$name" = "$first" ] && broken[$d]="its first row failed"
		fi
		echo "BENCH|$name|$d|$v|$unit"
	done
done

for d in rxe rrxe; do
	[ -n "${pair_state[$d]:-}" ] || continue
	use_pair $d
	pair_down
done
unload_drivers
rm -rf "$TRAFFIC_TMP"
echo "# bench took ${SECONDS}s"
exit 0
