#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What a debug option costs: the same small workload (process starts, a
# pyverbs import, one rrxe-rrxe pair: pingpong latency, write bandwidth, a
# verified 4 MiB transfer, set-up and tear-down), timed, whatever the
# kernel's command line. Not a test: run it once per variant and compare,
#
#   RRXE_VM_APPEND=kmemleak=off bash scripts/vm-run.sh tools/testing/debug-cost.sh
#
# (Documentation/testing.rst, "What the debug options cost").
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"
el() { echo "$(date +%s.%N) - $1" | bc; }
echo "# probe cmdline: $(tr ' ' '\n' </proc/cmdline | grep -vE '^(root|rootfstype|rootflags|console|init|rw|ro|rrxe\.|panic|quiet|loglevel|earlyprintk)' | paste -sd ' ')"
echo "# probe uptime at start: $(cut -d' ' -f1 /proc/uptime) s"
t=$(date +%s.%N); for i in $(seq 20); do /bin/true; done; echo "# probe exec /bin/true x20: $(el $t) s"
t=$(date +%s.%N); for i in 1 2 3 4 5; do ibv_devices >/dev/null; done; echo "# probe ibv_devices x5: $(el $t) s"
t=$(date +%s.%N); python3 -c 'import pyverbs.device' ; echo "# probe python3 import pyverbs: $(el $t) s"
t=$(date +%s.%N); load_rrxe; pair_up rrxe rrxe >/dev/null; echo "# probe load+pair_up: $(el $t) s"
need_xfer
t=$(date +%s.%N)
run_traffic pp 200 "" ibv_rc_pingpong -n 500 -s 64 -c >/dev/null
echo "# probe rc_pingpong 500x64B: $(grep -o '[0-9.]* usec/iter' $TRAFFIC_TMP/pp.client) (wall $(el $t) s)"
t=$(date +%s.%N)
run_traffic bw 200 "" ib_write_bw -n 300 -s 65536 >/dev/null
echo "# probe write_bw 64K x300: $(grep -E "$PERF_ROW" $TRAFFIC_TMP/bw.client | awk '{print $4 " MB/s"}') (wall $(el $t) s)"
t=$(date +%s.%N)
run_traffic xf 200 "" "$xfer" -t 100 -- -b 4194304 -s 1 >/dev/null
echo "# probe xfer 4MiB: $(grep '^xfer: [a-z]* [0-9]* bytes' $TRAFFIC_TMP/xf.client | sed 's/.*(\(.*\))/\1/' | paste -sd ' ') (wall $(el $t) s)"
t=$(date +%s.%N); pair_down; unload_drivers; echo "# probe pair_down+unload: $(el $t) s"
echo "# probe uptime at end: $(cut -d' ' -f1 /proc/uptime) s"
