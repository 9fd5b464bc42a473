#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Soak (issue 17, "Soak"): mixed traffic over many QPs on a disturbed wire,
# phase after phase until a deadline, and the kernel's memory must come back.
#
# For each pairing (default rrxe-rrxe, then rxe-rxe as the control), two
# hosts h1 and h2 (pair_up) and, per phase, RRXE_SOAK_SLOTS workloads side
# by side, each slot starting one run after the other until the phase ends:
# slot 1 always rrxe_xfer (byte-verified WRITE/READ/SEND, QP timeout 17 so
# that it rides out a link flap), the others a random one of ib_write_bw
# (4 QPs), ib_send_bw (2 QPs), ib_read_bw (2 QPs), ib_send_bw over rdma_cm,
# rping -V (verified), ucmatose (4 connections) and rrxe_xfer. Meanwhile a
# disturber, at random moments, replaces netem on a veth end (loss,
# duplication, reordering, delay), flaps a veth end (down, up), changes the
# MTU of both ends (now and then to 600, below the path MTU, for a second)
# or sends SIGKILL or SIGTERM to a random run's server, client or both.
# After a phase: the wire is made clean again, every process must be gone,
# no QP but the GSI QPs nor any MR left, no page left pinned, and a
# verified rrxe_xfer on fresh QPs must work. Between phases the links are
# deleted and added again; before phase 2 and then every
# RRXE_SOAK_RELOAD_EVERY phases the driver is unloaded and loaded too.
#
# Memory: measured before the first pairing (the guest as the harness left
# it: no driver, no namespace, no device) and after each pairing (the same
# state again), each time after a settle: a pause for RCU callbacks and
# namespace exits, drop_caches, then every slab cache shrunk twice through
# /sys/kernel/slab/*/shrink, which on this KASAN kernel also empties the
# cache's share of KASAN's quarantine (kasan_cache_shrink; otherwise up to
# 1/32 of RAM of freed objects still counts as slab) and flushes the
# per-CPU slabs and sheaves, then vm.stat_refresh. Checked: the pages
# pinned with FOLL_PIN (ib_umem_get's pin_user_pages: nr_foll_pin_acquired
# minus nr_foll_pin_released in /proc/vmstat) exactly as before; Mlocked
# and Unevictable exactly as before; the live slab objects (the sum of
# active_objs x objsize in /proc/slabinfo, but the debug tools' own caches)
# within RRXE_SOAK_SLAB_OBJ_KB and
# SUnreclaim within RRXE_SOAK_SUNRECLAIM_KB of where they started
# (Documentation/testing.rst, "tools/testing/soak.sh", says why). The
# caches that grew most are printed.
#
# The control's (rxe-rxe) assertions are comments ("# rdma_rxe: ok - ..."):
# what fails on both drivers is the test's or the kernel's, not rrxe's.
# The figures of each pairing are printed side by side at the end.
#
# usage: soak.sh [PAIR...]   (CLIENT-SERVER as in 11-traffic; default
#   $RRXE_PAIRS, else "rrxe-rrxe rxe-rxe")
# $RRXE_SOAK_SECS (20): no phase starts after this many seconds of a
#   pairing's soak, but at least 2 phases run ($RRXE_SOAK_CONTROL_SECS, 0,
#   and at least 1 phase for a pairing without rrxe); make check runs the
#   minimum, `make soak` 1800 s (and 600 for the control)
# $RRXE_SOAK_PHASE_SECS (8): the disturbed traffic of one phase
# $RRXE_SOAK_SLOTS (4, at most 8): workloads at once
# $RRXE_SOAK_RELOAD_EVERY (3): phases between two driver reloads
# $RRXE_SOAK_XFER_BYTES (262144): rrxe_xfer's bytes per operation
# $RRXE_SOAK_SEED (default: the date; printed) seeds every choice
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

secs=${RRXE_SOAK_SECS:-20}
control_secs=${RRXE_SOAK_CONTROL_SECS:-0}
phase_secs=${RRXE_SOAK_PHASE_SECS:-8}
slots=${RRXE_SOAK_SLOTS:-4}
[ "$slots" -gt 8 ] && slots=8
reload_every=${RRXE_SOAK_RELOAD_EVERY:-3}
xfer_bytes=${RRXE_SOAK_XFER_BYTES:-262144}
seed=${RRXE_SOAK_SEED:-$(date +%s)}
obj_tol_kb=${RRXE_SOAK_SLAB_OBJ_KB:-1024}
unrecl_tol_kb=${RRXE_SOAK_SUNRECLAIM_KB:-4096}
tmp=$TRAFFIC_TMP
# The snapshots, out of $tmp (which the phases empty).
memdir=$(mktemp -d /tmp/soak-mem.XXXXXX)
control=0

parse_pairs "rrxe-rrxe rxe-rxe" "$@"
need_xfer
echo "# seed $seed; pairings ${pairs[*]}; $secs s a pairing with rrxe ($control_secs without), phases of $phase_secs s, $slots workloads at once, reload every $reload_every phases"

# The workload families of slots 2 and up (slot 1 always runs the first).
# DUR: a perftest duration, drawn per run. rping and ucmatose run by count,
# within the time limit of a run (DUR + 60 s; ucmatose's 100 messages on 4
# connections once overran it too): rping's 30 round trips take
# 5-15 s on the debug kernel under 3 % loss, where every lost packet costs
# a retransmit timeout (rdma_cm's 0.5 s) and each round trip is eight
# packets or more; 100 took 18-39 s on either driver there (2026-11-28),
# and past the limit under the disturber's 5 % loss and 3 ms delay.
families=(
	"xfer -T 17 -t 60"
	"ib_write_bw -q 4 -D DUR"
	"ib_send_bw -q 2 -D DUR"
	"ib_read_bw -q 2 -D DUR"
	"ib_send_bw -R -D DUR"
	"rping -V -C 30 -S 1024"
	"ucmatose -c 4 -C 30 -S 4096"
)
# What a tool prints when the data it checked was wrong: never acceptable,
# whatever the wire did (rrxe_xfer's FAIL lines, rping -V's).
corrupt_re='mismatch|wrote outside its scatter|bytes, expected|differs|miscompare'

# ---------------------------------------------------------------- memory

# settle: lets what the kernel frees late be freed (see the head comment).
settle() {
	local name
	sleep 3
	sync
	echo 3 >/proc/sys/vm/drop_caches
	# Largest caches first: each shrink walks what is left of the
	# quarantine, so emptying the big ones first keeps the walks short.
	for _ in 1 2; do
		awk 'NR > 2 { print $3 * $4, $1 }' /proc/slabinfo | sort -rn | while read -r _ name; do
			echo 1 >"/sys/kernel/slab/$name/shrink" 2>/dev/null
		done
		sleep 1
	done
	echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null
}

# pins: pages pinned with FOLL_PIN now (acquired minus released).
pins() {
	echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null
	awk '$1 == "nr_foll_pin_acquired" { a = $2 } $1 == "nr_foll_pin_released" { r = $2 }
		END { print a - r }' /proc/vmstat
}

# snapshot FILE: settles, then writes "KEY VALUE" lines to FILE (kB but
# pins, in pages) and the slab caches' live bytes to FILE.slab.
snapshot() {
	local t0=$SECONDS
	settle
	{
		awk '$1 ~ /^(Slab|SUnreclaim|SReclaimable|MemAvailable|Mlocked|Unevictable|Percpu|VmallocUsed):$/ {
			sub(":", "", $1); print $1, $2 }' /proc/meminfo
		echo "Pins $(pins)"
		# The debug tools' own metadata is not the soak's: debugobjects
		# keeps a pool sized by the most objects it tracked at once (30
		# minutes of traffic grew it by 1.3 MB), kmemleak an object per
		# allocation it tracks. Counted apart.
		awk 'NR > 2 { if ($1 ~ /^(debug_objects_cache|kmemleak_object)$/) d += $2 * $4; else s += $2 * $4 }
			END { printf "SlabObjects %d\nDebugSlabObjects %d\n", s / 1024, d / 1024 }' /proc/slabinfo
		echo "SettleSecs $((SECONDS - t0))"
	} >"$1"
	awk 'NR > 2 { print $1, $2, $4 }' /proc/slabinfo >"$1.slab"
}

# val FILE KEY: a value of a snapshot.
val() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# top_growth BEFORE AFTER: the caches whose live objects grew most.
top_growth() {
	awk 'NR == FNR { o[$1] = $2; b[$1] = $2 * $3; next }
		{ d = $2 * $3 - b[$1]; if (d > 0) printf "%d %s %+d objects (%+d kB)\n", d, $1, $2 - o[$1], d / 1024 }' \
		"$1.slab" "$2.slab" | sort -rn | head -8 | cut -d' ' -f2-
}

# ---------------------------------------------------------------- reporting

# r CMD...: an assertion (ok, not_ok, check): as itself for a pairing with
# rrxe, as a comment for the rdma_rxe control (its failures are not
# counted: they are C rxe's, or the kernel's, or the test's).
r() {
	if [ "$control" = 0 ]; then
		"$@"
	else
		"$@" | sed 's/^\(not \)\{0,1\}ok - /# rdma_rxe: &/'
	fi
}

# stacks WHO PID...: state, wait channel and kernel stack of every thread
# of the PIDs (timeout wrappers) and their children (the tools).
stacks() {
	local who=$1 p t
	shift
	for p in "$@" $(pgrep -P "$(echo "$@" | tr ' ' ',')"); do
		for t in /proc/"$p"/task/*; do
			[ -d "$t" ] || continue
			echo "# $who: pid $p ($(cat /proc/"$p"/comm 2>/dev/null)) state $(awk '{ print $3 }' "$t/stat" 2>/dev/null)" \
				"wchan $(cat "$t/wchan" 2>/dev/null): $(awk '{ print $2 }' "$t/stack" 2>/dev/null | head -12 | paste -sd ' ')"
		done
	done
}

# ---------------------------------------------------------------- workloads

# gone_or_listening PID TOOL PORT ARGS...: the server PID listens, or is gone.
gone_or_listening() {
	local pid=$1
	shift
	! kill -0 "$pid" 2>/dev/null || traffic_listening "$@"
}

# reap PID SECS: waits up to SECS for PID, then TERM, 5 s, KILL, 30 s.
# Returns its exit status, 124 if it had to be signalled; sets REAP_STUCK
# to 1 (else 0) if it is still there (not reaped: a wait would hang the
# script). Not an exit status: rping exits 255 (-1) on its own errors.
reap() {
	local pid=$1 end=$((SECONDS + $2)) sig
	REAP_STUCK=0
	for sig in none TERM KILL; do
		[ "$sig" != none ] && kill -"$sig" "$pid" 2>/dev/null
		while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.5; done
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			local rc=$?
			[ "$sig" = none ] && return $rc
			return 124
		fi
		if [ "$sig" = none ]; then end=$((SECONDS + 5)); else end=$((SECONDS + 30)); fi
	done
	REAP_STUCK=1
	return 124
}

# soak_run SLOT RUN FAMILY: one run of a workload; appends one line to
# $pdir/runs: SLOT FAMILY OUTCOME SECONDS VERIFIED_BYTES. OUTCOME: ok,
# failed (ended by itself with an error: expected on this wire), killed
# (the disturber's signal), hung (its time limit ended it), stuck (could
# not be ended), corrupt (a tool found wrong data).
soak_run() {
	local s=$1 n=$2 fam=$3 tool args port name so co srv cli sopts copts dur limit
	local start t_kill='' said=0 crc=0 src=0 outcome verified=0 mark cstuck=0 sstuck=0
	read -r tool args <<<"$fam"
	dur=$((2 + RANDOM % (phase_secs / 2 > 1 ? phase_secs / 2 : 1)))
	args=${args//DUR/$dur}
	[ "$tool" = xfer ] && { tool=$xfer; args="-b $xfer_bytes -s $((RANDOM + 1)) $args"; }
	limit=$((dur + 60))
	port=$((20000 + s * 2000 + (phase * 211 + n) % 2000))
	name=p$phase.s$s.r$n
	so=$pdir/$name.server co=$pdir/$name.client mark=$pdir/killed.$s.$n
	# shellcheck disable=SC2086 # word lists
	sopts=$(traffic_opts server "$port" "$tool" $args) || return
	# shellcheck disable=SC2086
	copts=$(traffic_opts client "$port" "$tool" $args) || return
	start=$SECONDS
	# shellcheck disable=SC2086
	ip netns exec "$PAIR_NS2" timeout -k 5 "$limit" "$tool" $args $sopts >"$so" 2>&1 &
	srv=$!
	echo "$n $srv" >"$pdir/cur.$s.new" && mv "$pdir/cur.$s.new" "$pdir/cur.$s"
	# shellcheck disable=SC2086
	if ! wait_for 30 gone_or_listening "$srv" "$tool" "$port" $args; then
		echo "# $name: the server does not listen after 30 s; starting the client anyway" >>"$pdir/notes"
	fi
	if kill -0 "$srv" 2>/dev/null; then
		# shellcheck disable=SC2086
		ip netns exec "$PAIR_NS1" timeout -k 5 "$limit" "$tool" $args $copts >"$co" 2>&1 &
		cli=$!
		echo "$n $srv $cli" >"$pdir/cur.$s.new" && mv "$pdir/cur.$s.new" "$pdir/cur.$s"
		while kill -0 "$cli" 2>/dev/null; do
			sleep 0.5
			[ -z "$t_kill" ] && [ -e "$mark" ] && t_kill=$SECONDS
			# The survivor of a kill may wait for its peer: end it.
			if [ -n "$t_kill" ] && [ $((SECONDS - t_kill)) -ge 5 ]; then
				pkill -KILL -P "$srv" 2>/dev/null
				pkill -KILL -P "$cli" 2>/dev/null
			fi
			# About to be ended by its time limit: say where it is.
			if [ $said = 0 ] && [ $((SECONDS - start)) -ge $((limit - 3)) ]; then
				stacks "$name" "$srv" "$cli" >>"$pdir/notes"
				said=1
			fi
			[ $((SECONDS - start)) -ge $((limit + 40)) ] && break
		done
		if kill -0 "$cli" 2>/dev/null; then
			crc=124 cstuck=1
			stacks "$name (stuck)" "$srv" "$cli" >>"$pdir/notes"
		else
			wait "$cli"
			crc=$?
		fi
	else
		touch "$co"
		crc=-1
	fi
	reap "$srv" $((crc == 0 ? 20 : 5))
	src=$?
	sstuck=$REAP_STUCK
	[ $sstuck = 1 ] && stacks "$name server (stuck)" "$srv" >>"$pdir/notes"
	echo "$n" >"$pdir/cur.$s.new" && mv "$pdir/cur.$s.new" "$pdir/cur.$s"
	verified=$(sed -n 's/^xfer: \(write\|read\|send\) \([0-9]*\) bytes verified.*/\2/p' "$co" | paste -sd+ | bc)
	if grep -Eq "$corrupt_re" "$so" "$co"; then
		outcome=corrupt
	elif [ $cstuck = 1 ] || [ $sstuck = 1 ]; then
		outcome=stuck
	elif [ -e "$mark" ]; then
		outcome=killed
	elif [ $crc = 124 ] || [ $crc = 137 ]; then
		outcome=hung
	elif [ $crc = 0 ] && [ $src = 0 ]; then
		outcome=ok
	else
		outcome=failed
	fi
	echo "$s ${fam%% *}$(echo "$fam" | grep -o -- ' -[qRc] [0-9A-Z]*' | tr -d ' ') $outcome $((SECONDS - start)) ${verified:-0}" >>"$pdir/runs"
	case $outcome in
	ok | killed)
		rm -f "$so" "$co"
		;;
	*)
		{
			echo "# $name: $outcome (client exit $crc, server exit $src): $tool $args"
			grep -Eh "$corrupt_re|FAIL|rror" "$co" "$so" | head -4 | sed 's/^/#     /'
			echo "#   client, last lines:"
			tail -4 "$co" | sed 's/^/#     /'
			echo "#   server, last lines:"
			tail -4 "$so" | sed 's/^/#     /'
		} >>"$pdir/notes"
		;;
	esac
}

# slot S: runs workloads one after the other until $pdir/stop exists.
slot() {
	local s=$1 n=0 fam
	RANDOM=$((seed + phase * 1000 + s))
	while [ ! -e "$pdir/stop" ]; do
		n=$((n + 1))
		fam=${families[0]}
		[ "$s" != 1 ] && fam=${families[$((RANDOM % ${#families[@]}))]}
		soak_run "$s" "$n" "$fam"
	done
}

# ---------------------------------------------------------------- disturber

# set_mtu MTU: both ends of the link.
set_mtu() {
	ip -n "$PAIR_NS1" link set veth1 mtu "$1" && ip -n "$PAIR_NS2" link set veth2 mtu "$1"
}

# end_ns SIDE: "NS DEV" of side 1 (h1, veth1) or 2.
end_ns() {
	if [ "$1" = 1 ]; then echo "$PAIR_NS1 veth1"; else echo "$PAIR_NS2 veth2"; fi
}

# disturb: one disturbance, drawn from RANDOM; counted in dist[KIND] and
# said in one comment line.
disturb() {
	local ns dev what d j l u o m s line victim sig
	read -r ns dev <<<"$(end_ns $((RANDOM % 2 + 1)))"
	what=$((RANDOM % 100))
	if [ $what -lt 30 ]; then
		d=$((RANDOM % 4)) j=$((RANDOM % 2)) l=$((RANDOM % 6)) u=$((RANDOM % 3)) o=$((RANDOM % 4 * 10))
		line="delay ${d}ms"
		[ $j -gt 0 ] && [ $d -gt 0 ] && line+=" ${j}ms"
		[ $o -gt 0 ] && [ $d -gt 0 ] && line+=" reorder ${o}% 50%"
		line+=" loss ${l}% duplicate ${u}%"
		# shellcheck disable=SC2086 # a word list
		ip netns exec "$ns" tc qdisc replace dev "$dev" root netem $line
		dist[netem]=$((dist[netem] + 1))
		echo "#   +$((SECONDS - pstart))s netem on $dev: $line"
	elif [ $what -lt 45 ]; then
		s=$((200 + RANDOM % 1300))
		ip -n "$ns" link set "$dev" down
		sleep "$((s / 1000)).$(printf %03d $((s % 1000)))"
		ip -n "$ns" link set "$dev" up
		dist[flap]=$((dist[flap] + 1))
		echo "#   +$((SECONDS - pstart))s $dev down for $s ms, up"
	elif [ $what -lt 70 ]; then
		if [ $((RANDOM % 8)) = 0 ]; then
			set_mtu 600
			sleep 1
			set_mtu 1500
			dist[mtu_low]=$((dist[mtu_low] + 1))
			echo "#   +$((SECONDS - pstart))s MTU 600 (below the path MTU) for 1 s, then 1500"
		else
			m=$(echo 1500 9000 1200 3000 4200 | cut -d' ' -f$((RANDOM % 5 + 1)))
			set_mtu "$m"
			dist[mtu]=$((dist[mtu] + 1))
			echo "#   +$((SECONDS - pstart))s MTU $m"
		fi
	else
		local cur run srv cli
		s=$((RANDOM % slots + 1))
		cur=$(cat "$pdir/cur.$s" 2>/dev/null)
		read -r run srv cli <<<"$cur"
		sig=$([ $((RANDOM % 2)) = 0 ] && echo KILL || echo TERM)
		victim=$(echo server client both | cut -d' ' -f$((RANDOM % 3 + 1)))
		[ -z "$cli" ] && victim=server
		if [ -z "$srv" ] || ! kill -0 "$srv" 2>/dev/null; then
			dist[kill_none]=$((dist[kill_none] + 1))
			return
		fi
		touch "$pdir/killed.$s.$run"
		case $victim in
		server) pkill -"$sig" -P "$srv" ;;
		client) pkill -"$sig" -P "$cli" ;;
		both) pkill -"$sig" -P "$srv"; pkill -"$sig" -P "$cli" ;;
		esac
		dist[kill]=$((dist[kill] + 1))
		echo "#   +$((SECONDS - pstart))s SIG$sig to the $victim of slot $s's run $run"
	fi
}

both_active() { port_active "$DEV1" && port_active "$DEV2"; }
both_gone() { gone "$DEV1" 100 && gone "$DEV2" 100; }

# undisturb: the wire as set up: no netem, MTU 1500, both ends up and the
# ports ACTIVE.
undisturb() {
	ip netns exec "$PAIR_NS1" tc qdisc del dev veth1 root 2>/dev/null
	ip netns exec "$PAIR_NS2" tc qdisc del dev veth2 root 2>/dev/null
	set_mtu 1500
	ip -n "$PAIR_NS1" link set veth1 up
	ip -n "$PAIR_NS2" link set veth2 up
	r check "$pair: phase $phase: both ports ACTIVE again" both_active
}

# ---------------------------------------------------------------- phases

# left DEV...: the QPs of the DEVs but their GSI QPs, and their MRs.
left() {
	local d pat=()
	for d in "$@"; do pat+=(-e "^link $d/" -e "^dev $d "); done
	rdma res show qp 2>/dev/null | awk '$4 != 1' | grep "${pat[@]}"
	rdma res show mr 2>/dev/null | grep "${pat[@]}"
}
none_left() { ! left "$@" >/dev/null; }

# no_procs: no process left in either namespace.
no_procs() { [ -z "$(ip netns pids "$PAIR_NS1")$(ip netns pids "$PAIR_NS2")" ]; }

# run_phase: one phase of the pairing; adds to the pairing's totals.
run_phase() {
	local s pids=() out nums
	pdir=$tmp/$pair.p$phase
	mkdir -p "$pdir"
	: >"$pdir/runs"
	: >"$pdir/notes"
	pstart=$SECONDS
	echo "# $pair: phase $phase ($((SECONDS - soak_start)) s into the soak), $DEV1 <-> $DEV2"
	for s in $(seq "$slots"); do
		slot "$s" &
		pids+=($!)
	done
	RANDOM=$((seed + phase * 1000))
	while [ $((SECONDS - pstart)) -lt "$phase_secs" ]; do
		s=$((RANDOM % 2500 + 500))
		sleep "$((s / 1000)).$(printf %03d $((s % 1000)))"
		disturb
	done
	touch "$pdir/stop"
	for s in "${pids[@]}"; do wait "$s"; done
	echo "#   traffic stopped $((SECONDS - pstart)) s into the phase"
	undisturb
	cat "$pdir/notes"
	out=$(awk '{ n[$3]++; f[$2 " " $3]++ } END {
		for (k in n) printf "%s %d, ", k, n[k]; printf "| "
		for (k in f) printf "%s %d, ", k, f[k] }' "$pdir/runs")
	echo "#   runs: $out"
	read -r -a nums < <(awk '{ n[$3]++; v += $5 } END { printf "%d %d %d %d %d %d %d %d\n", NR, n["ok"],
		n["failed"], n["killed"], n["hung"], n["stuck"], n["corrupt"], v }' "$pdir/runs")
	runs=$((runs + nums[0])) r_ok=$((r_ok + nums[1])) r_failed=$((r_failed + nums[2]))
	r_killed=$((r_killed + nums[3])) verified=$((verified + nums[7]))
	r check "$pair: phase $phase: no workload hung (${nums[4]}) or stuck (${nums[5]})" \
		test "${nums[4]}" = 0 -a "${nums[5]}" = 0
	r check "$pair: phase $phase: no tool found wrong data (${nums[6]} runs did)" test "${nums[6]}" = 0
	if wait_for 30 no_procs; then
		r ok "$pair: phase $phase: every process gone"
	else
		r not_ok "$pair: phase $phase: every process gone"
		ip netns pids "$PAIR_NS1" "$PAIR_NS2" 2>/dev/null | head -5 | sed 's/^/#   left: /'
		bad=1
	fi
	if wait_for 30 none_left "$DEV1" "$DEV2"; then
		r ok "$pair: phase $phase: no QP but the GSI QPs, no MR left"
	else
		r not_ok "$pair: phase $phase: no QP but the GSI QPs, no MR left"
		left "$DEV1" "$DEV2" | head -10 | sed 's/^/#   /'
	fi
	r check "$pair: phase $phase: pinned pages back to $pins0 (now $(pins))" test "$(pins)" = "$pins0"
	if run_traffic "$pair-p$phase-final" 150 "xfer: OK bytes=$((3 * xfer_bytes))" \
		"$xfer" -t 120 -- -b "$xfer_bytes" -s "$phase"; then
		r ok "$pair: phase $phase: a verified transfer on fresh QPs after it (${TRAFFIC_SECS}s)"
		verified=$((verified + 3 * xfer_bytes))
	else
		r not_ok "$pair: phase $phase: a verified transfer on fresh QPs after it"
	fi
	rm -rf "$pdir" "$TRAFFIC_TMP/$pair-p$phase-final".*
}

# drivers_of PAIR: the modules of a pairing's device types.
drivers_of() {
	local t
	for t in $(echo "${1%-*} ${1#*-}" | tr ' ' '\n' | sort -u); do
		if [ "$t" = rrxe ]; then echo rrxe; else echo rdma_rxe; fi
	done
}

# relink RELOAD: both links deleted (and with RELOAD the drivers unloaded
# and loaded), then added again on the same netdevs.
relink() {
	local m d
	topology_lock
	rdma link delete "$DEV1" 2>/dev/null
	rdma link delete "$DEV2" 2>/dev/null
	r check "$pair: rdma link delete of $DEV1 and $DEV2" both_gone
	if [ "$1" = 1 ]; then
		for m in $(drivers_of "$pair"); do
			r check "$pair: rmmod $m" rmmod "$m"
			reloads=$((reloads + 1))
		done
		load_drivers "$pair"
	fi
	for d in 1 2; do
		local t=${pair%-*} ns=$PAIR_NS1 dev=$DEV1
		[ $d = 2 ] && t=${pair#*-} ns=$PAIR_NS2 dev=$DEV2
		r check "$pair: rdma link add $dev again" setup rdma_dev_add "$ns" "veth$d" "$t" "$dev"
	done
	topology_unlock
	relinks=$((relinks + 1))
	if port_active "$DEV1" && port_active "$DEV2" && GID1=$(roce_v2_ipv4_gid "$DEV1") &&
		GID2=$(roce_v2_ipv4_gid "$DEV2"); then
		r ok "$pair: $DEV1 and $DEV2 ACTIVE again with RoCEv2 IPv4 GIDs"
	else
		r not_ok "$pair: $DEV1 and $DEV2 ACTIVE again with RoCEv2 IPv4 GIDs"
		bad=1
	fi
}

# soak PAIR INDEX: the whole soak of one pairing, between two snapshots.
soak() {
	local deadline=$secs min=2 k
	pair=$1
	control=1
	[[ " ${1//-/ } " == *" rrxe "* ]] && control=0
	[ $control = 1 ] && deadline=$control_secs min=1
	declare -gA dist=()
	runs=0 r_ok=0 r_failed=0 r_killed=0 verified=0 relinks=0 reloads=0 bad=0 phase=0
	echo "# --- $pair: client ${pair%-*} in h1, server ${pair#*-} in h2; ${deadline}s, at least $min phases$([ $control = 1 ] && echo '; the control: its assertions are comments')"
	pins0=$(pins)
	load_drivers "$pair"
	if ! pair_up "${pair%-*}" "${pair#*-}"; then
		r not_ok "$pair: setup"
		bad=1
	fi
	soak_start=$SECONDS
	while [ $bad = 0 ] && { [ $phase -lt $min ] || [ $((SECONDS - soak_start)) -lt "$deadline" ]; }; do
		phase=$((phase + 1))
		if [ $phase -gt 1 ]; then
			k=0
			[ $(((phase - 2) % reload_every)) = 0 ] && k=1
			relink $k
			[ $bad = 0 ] || break
		fi
		run_phase
	done
	local took=$((SECONDS - soak_start))
	pair_down
	unload_drivers
	r check "$pair: no RDMA device left" sh -c "! ls /sys/class/infiniband | grep -q ."
	r check "$pair: no driver loaded" sh -c "! lsmod | grep -Eq '^(rrxe|rdma_rxe) '"
	rm -rf "${TRAFFIC_TMP:?}"/*
	snapshot "$memdir/mem.$2"
	compare "$memdir/mem.$(($2 - 1))" "$memdir/mem.$2"
	fig[$2]="$pair|$phase|$took|$runs|$r_ok|$r_failed|$r_killed|${dist[netem]:-0}|${dist[flap]:-0}|$((${dist[mtu]:-0} + ${dist[mtu_low]:-0})) (${dist[mtu_low]:-0} < path)|${dist[kill]:-0} (+${dist[kill_none]:-0} idle)|$relinks|$reloads|$((verified / 1024))|$memfig"
}

# compare BEFORE AFTER: the memory checks of a pairing.
compare() {
	local k b a
	for k in Pins Mlocked Unevictable; do
		b=$(val "$1" $k) a=$(val "$2" $k)
		r check "$pair: $k back to where it was ($b -> $a$([ $k = Pins ] && echo ' pages' || echo ' kB'))" test "$a" -le "$b"
	done
	b=$(val "$1" SlabObjects) a=$(val "$2" SlabObjects)
	r check "$pair: live slab objects within $obj_tol_kb kB of the start ($b -> $a kB, $((a - b)))" \
		test $((a - b)) -le "$obj_tol_kb"
	b=$(val "$1" SUnreclaim) a=$(val "$2" SUnreclaim)
	r check "$pair: SUnreclaim within $unrecl_tol_kb kB of the start ($b -> $a kB, $((a - b)))" \
		test $((a - b)) -le "$unrecl_tol_kb"
	memfig="$(val "$1" Pins) -> $(val "$2" Pins)|$((a - $(val "$1" SUnreclaim)))|$(($(val "$2" SlabObjects) - $(val "$1" SlabObjects)))"
	for k in Slab SReclaimable DebugSlabObjects MemAvailable Percpu VmallocUsed SettleSecs; do
		echo "# $pair: $k $(val "$1" $k) -> $(val "$2" $k)"
	done
	echo "# $pair: the slab caches that grew most (live objects):"
	top_growth "$1" "$2" | sed 's/^/#   /'
}

declare -a fig
snapshot "$memdir/mem.0"
echo "# memory at the start (settled in $(val "$memdir/mem.0" SettleSecs) s): slab objects $(val "$memdir/mem.0" SlabObjects) kB," \
	"SUnreclaim $(val "$memdir/mem.0" SUnreclaim) kB, pinned pages $(val "$memdir/mem.0" Pins)"
i=0
for p in "${pairs[@]}"; do
	i=$((i + 1))
	soak "$p" "$i"
done

# The pairings side by side, a column each.
heads="pairing|phases|soak seconds|workload runs|runs ok|runs failed|runs killed|netem changes|link flaps|MTU changes|kills|relinks|reloads|verified KiB|pinned pages|SUnreclaim kB|slab objects kB"
echo "# --- figures (seed $seed)"
{
	echo "$heads"
	for i in "${!fig[@]}"; do echo "${fig[i]}"; done
} | awk -F'|' '{ for (i = 1; i <= NF; i++) c[NR, i] = $i; if (NF > nf) nf = NF }
	END { for (i = 1; i <= nf; i++) { printf "#   %-18s", c[1, i]
		for (r = 2; r <= NR; r++) printf " %-24s", c[r, i]; printf "\n" } }'
rm -rf "$tmp" "$memdir"
finish
