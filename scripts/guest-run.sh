#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the test VM (see vm-run.sh): runs one test script, then checks
# the kernel log and kmemleak, and prints `RRXE-EXIT: N` for the host.
set -u
script=$1
name=$(basename "$script")

kml=/sys/kernel/debug/kmemleak
[ -w $kml ] && echo clear >$kml

# Any of these in the kernel log fails the run, whatever the script said.
bad='Oops|BUG:|WARNING:|KASAN|UBSAN|possible circular locking|inconsistent lock state|possible recursive locking|suspicious RCU usage|refcount_t:|blocked for more than|general protection fault|kernel BUG|Call Trace:|unreferenced object|list_(add|del) corruption|sleeping function called from invalid context'

# Upstream rdma_rxe bugs that rxe-to-rxe runs hit by themselves: a splat
# block ("cut here" to "end trace") whose WARNING line matches one of these
# is listed as a note, not counted as a failure. Only rdma_rxe's own source
# lines belong here, never anything of rrxe's; each is explained in
# Documentation/testing.rst.
known_rxe='WARNING: drivers/infiniband/sw/rxe/rxe_comp\.c:827 at rxe_completer'

# kernel_log: dmesg without the known rdma_rxe splats; each known one is
# appended to $known_log instead.
known_log=/tmp/rrxe-known-splats
kernel_log() {
	dmesg | known=$known_rxe out=$known_log awk '
		BEGIN { known = ENVIRON["known"]; out = ENVIRON["out"] }
		/-+\[ cut here \]-+/ { inblk = 1; blk = $0 "\n"; isknown = 0; next }
		inblk {
			blk = blk $0 "\n"
			if ($0 ~ known) isknown = 1
			if ($0 ~ /---\[ end trace/) {
				inblk = 0
				if (isknown) printf "%s", blk >>out
				else printf "%s", blk
			}
			next
		}
		{ print }
		END { if (inblk) printf "%s", blk }'
}

# check_log WHEN: fails the run on any splat left in the kernel log.
check_log() {
	local log
	: >"$known_log"
	log=$(kernel_log)
	grep -E "$known_rxe" "$known_log" | sed 's/^[^]]*\] /# known rdma_rxe bug, not rrxe'"'"'s: /'
	if echo "$log" | grep -Eq "$bad"; then
		echo "not ok - $name: $1"
		echo "$log" | grep -E -B5 -A40 "$bad" | head -150
		return 1
	fi
	return 0
}

rc=0
check_log "the kernel booted with a splat" || rc=1
dmesg --clear

# Userspace verbs need the RDMA core's user access modules; without udev
# nobody loads them for us. rrxe's UDP tunnel sockets need udp_tunnel and
# ip6_udp_tunnel, which insmod does not load.
modprobe -a ib_core ib_uverbs rdma_ucm udp_tunnel ip6_udp_tunnel || rc=1

bash "$script" "${@:2}" || rc=1

# kmemleak only reports objects older than 5 s that stayed unreferenced over
# two scans: wait, then scan twice.
if [ -w $kml ]; then
	sleep 6
	echo scan >$kml
	echo scan >$kml
	# debugfs files have no size: read the report, do not test -s.
	leaks=$(cat $kml)
	if [ -n "$leaks" ]; then
		echo "not ok - $name: kmemleak found leaks"
		echo "$leaks" | head -80
		rc=1
	fi
fi

if check_log "kernel log has a splat"; then
	echo "ok - $name: kernel log clean"
else
	rc=1
fi
echo "RRXE-EXIT: $rc"
exit "$rc"
