#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the test VM (see vm-run.sh): runs one test script, or with
# --group several one after the other, and after each checks the kernel log
# and kmemleak, so that a splat counts against the script that was running.
# Prints `RRXE-EXIT: N` for the host.
#
#   guest-run.sh SCRIPT [ARGS...]
#   guest-run.sh --group SCRIPT...    (no arguments; between two scripts
#                                      the guest is put back as booted)
set -u

kml=/sys/kernel/debug/kmemleak
# kmemleak=off on the command line (RRXE_VM_APPEND) leaves the file in
# debugfs, takes "clear" but refuses "scan" and the rest: check leaks only
# when it takes "scan=off" (a no-op here: the automatic scan is built off).
kml_on=0
echo scan=off 2>/dev/null >$kml && kml_on=1
# Each script of a group may run this long (the host bounds the whole VM).
script_timeout=${RRXE_SCRIPT_TIMEOUT:-1200}

# Any of these in the kernel log fails the run, whatever the script said.
# A kernel GP fault reads "general protection fault, ..." or "...: 0000"
# (and comes with "Oops"); "traps: TOOL[PID] general protection fault ip:"
# is a user process's, which check_log reports as a comment: a tool the
# kill storm signals mid-teardown may fault in its own library.
bad='Oops|BUG:|WARNING:|KASAN|UBSAN|possible circular locking|inconsistent lock state|possible recursive locking|suspicious RCU usage|refcount_t:|blocked for more than|general protection fault[,:]|kernel BUG|Call Trace:|unreferenced object|list_(add|del) corruption|sleeping function called from invalid context'

# Upstream rdma_rxe bugs that rxe-to-rxe runs hit by themselves: a splat
# block ("cut here" to "end trace") whose WARNING line matches one of these,
# and which has no rrxe frame, is listed as a note, not counted as a
# failure. Only rdma_rxe's own source lines belong here, never anything of
# rrxe's; each is explained in Documentation/testing.rst.
known_rxe='WARNING: drivers/infiniband/sw/rxe/rxe_(comp\.c:827 at rxe_completer|pool\.c:212 at __rxe_cleanup|mr\.c:393 at rxe_mr_copy)'

# Upstream rdma_rxe bugs whose warning is raised in generic code on
# rdma_rxe's behalf: a splat block whose WARNING line matches
# known_rxe_warn and whose trace has a frame matching known_rxe_frame (a C
# function of rdma_rxe's: the drop-in build's frames are Rust symbols),
# and no rrxe frame. rxe_requester re-arms a QP's retransmit timer that
# debugobjects does not know (ODEBUG assert_init): 26-fuzz-verbs' control
# (testing.rst, "Known rdma_rxe bugs"). When that timer fires, the timer
# core's stub_timer warns from the timer softirq, whose trace names
# whatever it interrupted: one such block (known_rxe_then, no rrxe frame)
# is listed after each listed ODEBUG block, no more.
known_rxe_warn='WARNING: lib/debugobjects\.c:[0-9]+ at debug_object_assert_init'
known_rxe_then='WARNING: kernel/time/timer\.c:[0-9]+ at stub_timer'
known_rxe_frame=' rxe_requester\+0x[0-9a-f]+/0x[0-9a-f]+ \[rdma_rxe\]'

# An upstream ULP bug that the rdma_rxe control hits by itself: a lockdep
# report naming all of these (separated by ";") and no driver frame is
# listed as a note. nvmet-rdma removes a port's rdma_cm ID under
# nvmet_config_sem, while a connect that races its queue's ESTABLISHED
# event runs under the ID's handler_mutex and takes nvmet_config_sem
# (testing.rst, "Known ULP bugs"). lockdep reports once per boot: after it,
# locking is not checked, so the scripts that can hit it run last in a boot.
known_ulp_lockdep='(nvmet_config_sem);(&id_priv->handler_mutex);nvmet_rdma_disable_port'

# Upstream ULP bugs that a KASAN report of the rdma_rxe control shows: a
# report ("BUG: KASAN: ... in FUNCTION") in one of these functions, with no
# rrxe frame, raised while rrxe was unloaded (the test library's last
# "rrxe-test:" mark in the kernel log is "rrxe unloaded": unload_rrxe in
# tools/testing/lib.sh, which the consumer tests call before their control
# half), is listed as a note. ib_isert frees a portal with a connection
# request of rdma_rxe's still pending and handles its late CM event
# (testing.rst, "Known ULP bugs"). The guest boots with kasan_multi_shot
# (vm-run.sh), so KASAN still reports after it; lockdep is off after any
# KASAN report, which the note says. RRXE_KNOWN_ULP_KASAN replaces the list
# (harness-selftest.sh).
known_ulp_kasan=${RRXE_KNOWN_ULP_KASAN:-isert_cma_handler}

# A WARNING raised while no out-of-tree module was loaded cannot be rrxe's:
# rrxe (like the drop-in rdma_rxe.ko and every test module) is out of tree,
# an O among its flags in the report's "Modules linked in:" line ("(O)",
# "(ON+)" while its init runs: harness-selftest's warn case), and a warning
# needs code that runs. The consumer tests (tools/testing/ulp.sh) unload rrxe before
# their rdma_rxe control half, whose ULP and rdma_rxe warnings are then
# listed as notes, not counted: CI met one in 24-iser's control
# (iscsit_release_cmd, testing.rst "Known ULP bugs"). Only "cut here"
# warning blocks: an Oops, a KASAN or lockdep report can be the late
# fallout of a driver that is gone, and still fails the run.

# kernel_log: dmesg without the known rdma_rxe and ULP splats and without
# the warnings of in-tree code alone; each is appended to $known_log
# instead.
known_log=/tmp/rrxe-known-splats
kernel_log() {
	dmesg | filter_known_splats
}

# filter_known_splats: kernel_log's filter, a kernel log on standard input.
filter_known_splats() {
	known=$known_rxe kwarn=$known_rxe_warn kframe=$known_rxe_frame kthen=$known_rxe_then sig=$known_ulp_lockdep kasan=$known_ulp_kasan out=$known_log awk '
		BEGIN { known = ENVIRON["known"]; kwarn = ENVIRON["kwarn"]; kframe = ENVIRON["kframe"]; kthen = ENVIRON["kthen"]; owed = 0
			out = ENVIRON["out"]; nsig = split(ENVIRON["sig"], sig, ";")
			kasan = "BUG: KASAN: [a-z-]+ in (" ENVIRON["kasan"] ")\\+"; unloaded = 0; held = "" }
		/rrxe-test: rrxe unloaded/ { unloaded = 1 }
		/rrxe-test: rrxe loaded/ { unloaded = 0 }
		# A KASAN report is framed by lines of "=": the opening one is held
		# until the next line says whether a report starts.
		inka {
			blk = blk $0 "\n"
			if ($0 ~ /\] =+$/) {
				inka = 0
				if (kaknown && !ours) printf "known ULP KASAN report: %s", blk >>out
				else printf "%s", blk
			}
			if ($0 ~ /\[rrxe\]/) ours = 1
			next
		}
		held != "" {
			line = held; held = ""
			if ($0 ~ /BUG: KASAN: /) {
				inka = 1; blk = line "\n" $0 "\n"; ours = 0
				kaknown = unloaded && $0 ~ kasan
				next
			}
			print line
		}
		!inld && !inblk && /\] =+$/ { held = $0; next }
		/WARNING: possible circular locking dependency detected/ { inld = 1; blk = $0 "\n"; next }
		inld {
			blk = blk $0 "\n"
			if ($0 ~ /<\/TASK>/) {
				inld = 0
				n = 0
				for (i = 1; i <= nsig; i++) if (index(blk, sig[i])) n++
				if (n == nsig && blk !~ /\[(rrxe|rdma_rxe)\]/) printf "known ULP lockdep report: %s", blk >>out
				else printf "%s", blk
			}
			next
		}
		/-+\[ cut here \]-+/ { inblk = 1; blk = $0 "\n"; isknown = 0; ours = 0; mods = ""; warn = ""; kw = 0; kf = 0; kt = 0; next }
		inblk {
			blk = blk $0 "\n"
			if ($0 ~ known) isknown = 1
			if ($0 ~ kwarn) kw = 1
			if ($0 ~ kframe) kf = 1
			if ($0 ~ kthen) kt = 1
			if ($0 ~ /\[rrxe\]/) ours = 1
			if (warn == "" && $0 ~ /WARNING: /) { warn = $0; sub(/^.*WARNING: /, "", warn) }
			if ($0 ~ /Modules linked in:/) { mods = $0; sub(/^.*Modules linked in:/, "", mods); sub(/\[last unloaded:[^]]*\]/, "", mods) }
			if ($0 ~ /---\[ end trace/) {
				inblk = 0
				if (!ours && kw && kf) { isknown = 1; owed++ }
				else if (!ours && kt && owed > 0) { isknown = 1; owed-- }
				if (isknown && !ours) printf "%s", blk >>out
				else if (mods != "" && mods !~ /\([A-Z+-]*O[A-Z+-]*\)/ && !ours) printf "in-tree warning: %s (modules:%s)\n", warn, mods >>out
				else printf "%s", blk
			}
			next
		}
		{ print }
		END { if (held != "") print held; if (inblk || inld || inka) printf "%s", blk }'
}

# check_log WHEN: fails the run on any splat left in the kernel log.
check_log() {
	local log
	: >"$known_log"
	log=$(kernel_log)
	grep -E "$known_rxe|$known_rxe_warn|$known_rxe_then" "$known_log" | sed 's/^[^]]*\] /# known rdma_rxe bug, not rrxe'"'"'s: /'
	grep '^in-tree warning: ' "$known_log" |
		sed 's/^in-tree warning: /# a WARNING while no out-of-tree module was loaded (rrxe was not), not counted: /'
	grep -o 'BUG: KASAN: .*' "$known_log" |
		sed 's/^/# known ULP bug in the rdma_rxe control (rrxe unloaded), not rrxe'"'"'s: lockdep is off for the rest of this boot: /'
	grep -q '^known ULP lockdep report' "$known_log" &&
		echo "# known nvmet-rdma lockdep report (nvmet_config_sem vs the rdma_cm ID's handler_mutex), not rrxe's: lockdep is off for the rest of this boot"
	echo "$log" | grep -E '\] traps: .* general protection fault ip:' |
		sed 's/^[^]]*\] /# a user process faulted (not a kernel report): /'
	if echo "$log" | grep -Eq "$bad"; then
		echo "not ok - $name: $1"
		echo "$log" | grep -E -B5 -A40 "$bad" | head -150
		return 1
	fi
	return 0
}

# reset_guest: undoes what a script may have left behind (devices, links,
# namespaces, drivers, processes), so the next script of a group starts from
# the guest as booted; says what it found.
reset_guest() {
	local tools='^(ib_.*|ibv_.*|rping|ucmatose|rdma_.*|rrxe_.*|mckey|python3|tcpdump|qperf|mpirun|prte.*)$' left d
	left=$(pgrep -a "$tools")
	[ -n "$left" ] && echo "$left" | sed 's/^/# leftover process: /'
	pkill -KILL "$tools" 2>/dev/null && sleep 1
	for d in $(rdma link show 2>/dev/null | awk '{ sub("/.*", "", $2); print $2 }'); do
		echo "# leftover RDMA link: $d"
		rdma link delete "$d" 2>/dev/null
	done
	for d in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
		echo "# leftover namespace: $d"
		ip netns del "$d"
	done
	for d in /sys/class/net/*; do
		d=${d##*/}
		[ "$d" = lo ] && continue
		echo "# leftover netdev: $d"
		ip link del "$d" 2>/dev/null
	done
	for d in rrxe_kverbs_test rrxe_kverbs_stream rrxe rdma_rxe; do
		[ -d "/sys/module/$d" ] && { echo "# leftover module: $d"; rmmod "$d"; }
	done
	rm -rf /tmp/* 2>/dev/null
	return 0
}

# kmemleak_scans ENDED: the two scans after a script that ended at ENDED
# (date +%s%N). kmemleak reports an object that no scan found referenced,
# whose contents did not change since the scan before (each scan takes
# every white object's checksum, and a new or changed one is spared that
# time), and that is older than 5 s. So the first scan runs at once (it
# only takes the checksums of what the script left) and the second once
# what the script allocated last is 5.5 s old; a scan of this guest takes
# seconds of its own, so there is little or nothing left to wait.
kmemleak_scans() {
	local ended=$1 wait_ns
	echo scan >$kml
	wait_ns=$((ended + 5500000000 - $(date +%s%N)))
	[ "$wait_ns" -gt 0 ] && sleep "$((wait_ns / 1000000000)).$(printf '%09d' $((wait_ns % 1000000000)))"
	echo scan >$kml
}

# cpu_ticks: the guest's busy and total CPU ticks so far, and the number
# of processes (forks) started since boot, from /proc/stat.
cpu_ticks() {
	awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; b = t - $5 - $6 }
		/^processes / { p = $2 } END { print b, t, p }' /proc/stat
}

# mem_line NAME: one comment line on the guest's memory after a script, so
# that what a boot's scripts keep (or an OOM kill) shows in the log.
mem_line() {
	awk -v name="$1" '{ m[$1] = int($2 / 1024) }
		END { printf "# memory after %s: %d MiB available of %d, slab %d MiB (%d unreclaimable)\n",
			name, m["MemAvailable:"], m["MemTotal:"], m["Slab:"], m["SUnreclaim:"] }' /proc/meminfo
}

# jiffies_now: the kernel's jiffies (what kmemleak stamps an object with).
jiffies_now() {
	awk '/^jiffies:/ { print $2; exit }' /proc/timer_list
}

# execlog_start, execlog_stop NAME: with RRXE_EXECLOG=1 and RRXE_VM_OUT set,
# every fork and exec of the script's run
# goes to $RRXE_VM_OUT/NAME.execs, for tools/testing/exec_counts.py: on the
# debug kernel a process start costs a tenth of a second (testing.rst,
# "Where the time goes"), so what a script starts is what it costs.
execlog_start() {
	[ -n "${RRXE_EXECLOG:-}" ] && [ -n "${RRXE_VM_OUT:-}" ] || return 0
	local t=/sys/kernel/tracing
	echo 0 >$t/tracing_on
	echo 16384 >$t/buffer_size_kb
	: >$t/trace
	echo 1 >$t/events/sched/sched_process_exec/enable
	echo 1 >$t/events/sched/sched_process_fork/enable
	echo 1 >$t/tracing_on
}
execlog_stop() {
	[ -n "${RRXE_EXECLOG:-}" ] && [ -n "${RRXE_VM_OUT:-}" ] || return 0
	local t=/sys/kernel/tracing
	echo 0 >$t/tracing_on
	echo 0 >$t/events/sched/sched_process_exec/enable
	echo 0 >$t/events/sched/sched_process_fork/enable
	grep -v '^#' $t/trace >"$RRXE_VM_OUT/${1%.sh}.execs"
	: >$t/trace
}

# Each script's first jiffy and name, "JIFFIES NAME" a line, for
# check_leaks; and when the last one ended (date +%s%N).
script_starts=/run/rrxe-script-starts
: >"$script_starts"
last_ended=0

# run_one SCRIPT [ARGS...]: runs a script, then its log check (its leaks are
# checked with the others', by check_leaks). Returns non-zero if it failed.
run_one() {
	local script=$1 rc=0 start=$SECONDS busy0 total0 busy1 total1 forks0 forks1
	shift
	read -r busy0 total0 forks0 < <(cpu_ticks)
	name=$(basename "$script")
	echo "$(jiffies_now) $name" >>"$script_starts"
	dmesg --clear
	local log=/run/rrxe-script.log
	# A copy of the output, to tell a failed script that said nothing. Not
	# a pipe: a process the script leaves behind would keep it open.
	local run=(bash "$script")
	if [ -n "${RRXE_XTRACE:-}" ] && [ -n "${RRXE_VM_OUT:-}" ]; then
		# Every command with the second it started at, for
		# tools/testing/xtrace_gaps.py (testing.rst, "Where the time goes").
		# Root's bash takes no PS4 from the environment: set inside.
		run=(bash -c 'exec 9>"$1"; BASH_XTRACEFD=9 PS4="+[\$SECONDS] \${BASH_SOURCE##*/}:\$LINENO: "
			s=$2; shift 2; set -x; . "$s"' _ "$RRXE_VM_OUT/${name%.sh}.trace" "$script")
	fi
	execlog_start
	timeout -k 10 "$script_timeout" "${run[@]}" "$@" > >(tee "$log") 2>&1
	rc=$?
	execlog_stop "$name"
	last_ended=$(date +%s%N)
	sleep 0.5
	# How busy the guest's CPUs were: a script that leaves them idle waits
	# on timers and timeouts, not on the debug kernel (testing.rst).
	# How many processes it started: on the debug kernel each fork and exec
	# costs a tenth of a second or more (testing.rst).
	read -r busy1 total1 forks1 < <(cpu_ticks)
	echo "# $name took $((SECONDS - start)) s, CPUs $(((busy1 - busy0) * 100 / (total1 - total0 + 1)))% busy, $((forks1 - forks0)) processes"
	mem_line "$name"
	if [ $rc = 124 ] || { [ $rc = 137 ] && [ $((SECONDS - start)) -ge "$script_timeout" ]; }; then
		echo "not ok - $name: did not finish within ${script_timeout}s"
	elif [ $rc = 137 ]; then
		# SIGKILL before the timeout: the OOM killer, most likely.
		echo "not ok - $name: killed (SIGKILL) after $((SECONDS - start)) s"
		dmesg | grep -E 'Out of memory|oom-kill:|Killed process' | head -20 | sed 's/^/# /'
	elif [ $rc != 0 ] && ! grep -q '^not ok - ' "$log"; then
		echo "not ok - $name: exit $rc"
	fi
	if check_log "kernel log has a splat"; then
		echo "ok - $name: kernel log clean"
	else
		rc=1
	fi
	return $rc
}

# check_leaks: kmemleak's scans, once after the boot's last script, each
# leak reported against the script that was running when the object was
# allocated (kmemleak stamps it with the jiffies; the scripts' first
# jiffies are in $script_starts), what the guest's reset between two
# scripts allocates against the one before. Two scans per boot instead of
# two after each script: a scan and its wait cost 12-15 s each time.
# Returns non-zero if there was a leak.
check_leaks() {
	local t=$SECONDS leaks
	kmemleak_scans "$last_ended"
	# debugfs files have no size: read the report, do not test -s.
	leaks=$(cat $kml)
	echo "# kmemleak's scans took $((SECONDS - t)) s"
	[ -z "$leaks" ] && return 0
	echo "$leaks" | awk -v starts="$script_starts" '
		function owner(j,   i, w) {
			w = "boot"
			for (i = 1; i <= n; i++) if (j >= at[i]) w = who[i]
			return w
		}
		function flush(   w) {
			if (blk == "") return
			w = owner(j)
			if (!(w in text)) order[++no] = w
			text[w] = text[w] blk "\n"
			blk = ""
		}
		BEGIN {
			while ((getline line < starts) > 0) {
				split(line, f, " ")
				n++; at[n] = f[1] + 0; who[n] = f[2]
			}
		}
		/^unreferenced object/ { flush(); blk = $0; j = -1; next }
		blk != "" {
			blk = blk "\n" $0
			if (j < 0 && match($0, /jiffies [0-9]+/)) j = substr($0, RSTART + 8, RLENGTH - 8) + 0
		}
		END {
			flush()
			for (k = 1; k <= no; k++) {
				printf "not ok - %s: kmemleak found leaks\n", order[k]
				m = split(text[order[k]], l, "\n")
				for (i = 1; i <= m && i <= 80; i++) if (l[i] != "") print l[i]
			}
		}'
	return 1
}

name=boot
rc=0
# The console's reset sequence (no newline) comes just before our first
# line: start on a line of our own, so "RRXE-SCRIPT:" begins one.
echo
check_log "the kernel booted with a splat" || rc=1
dmesg --clear
if [ $kml_on = 1 ]; then
	# What the boot allocated is not the scripts' (check_leaks).
	echo clear >$kml
else
	echo "# kmemleak is off in this boot: leaks are not checked"
fi

# Userspace verbs need the RDMA core's user access modules; without udev
# nobody loads them for us. rrxe's UDP tunnel sockets need udp_tunnel and
# ip6_udp_tunnel, which insmod does not load.
modprobe -a ib_core ib_uverbs rdma_ucm udp_tunnel ip6_udp_tunnel || rc=1

if [ "${1:-}" = --group ]; then
	shift
	first=1
	for script in "$@"; do
		[ $first = 1 ] || reset_guest
		first=0
		echo "RRXE-SCRIPT: $(basename "$script")"
		run_one "$script" || rc=1
	done
else
	run_one "$@" || rc=1
fi
[ $kml_on = 1 ] && { check_leaks || rc=1; }
echo "RRXE-EXIT: $rc"
exit "$rc"
