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
rc=0
if dmesg | grep -Eq "$bad"; then
	echo "not ok - $name: the kernel booted with a splat"
	dmesg | grep -E -B5 -A40 "$bad" | head -80
	rc=1
fi
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
	if [ -s $kml ]; then
		echo "not ok - $name: kmemleak found leaks"
		head -60 $kml
		rc=1
	fi
fi

if dmesg | grep -Eq "$bad"; then
	echo "not ok - $name: kernel log has a splat"
	dmesg | grep -E -B5 -A40 "$bad" | head -150
	rc=1
else
	echo "ok - $name: kernel log clean"
fi
echo "RRXE-EXIT: $rc"
exit "$rc"
