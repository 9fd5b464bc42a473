#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make check`: every test, ending with one line `N passed, N failed`.
#
#   check.sh          host tests, lint, module build, VM tests
#   check.sh host     host tests only
#   check.sh vm [T…]  VM tests only (all, or the named scripts)
#
# VM tests boot one VM per group of scripts (VM_GROUPS below). Results are
# counted from `ok - …` / `not ok - …` lines (VM tests) and from cargo's
# summary (host tests).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RRXE_TOP"

mode=${1:-all}
shift || true
passed=0
failed=0
log_dir="$RRXE_CACHE/check-logs"
mkdir -p "$log_dir"

pass() { passed=$((passed + 1)); echo "ok - $*"; }
fail() { failed=$((failed + 1)); echo "not ok - $*"; }
summary() {
	echo
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit
}

setup() {
	if ! bash scripts/mkroot.sh >/dev/null; then
		fail "toolchain root"
		summary
	fi
}

host_tests() {
	local out="$log_dir/cargo-test.log"
	if inroot env CARGO_HOME="$RRXE_CACHE/cargo" CARGO_TARGET_DIR="$RRXE_CACHE/target-proto" \
		cargo test --manifest-path tools/proto-tests/Cargo.toml >"$out" 2>&1; then :; fi
	local p f
	p=$(sed -n 's/^test result: .* \([0-9]*\) passed; \([0-9]*\) failed.*/\1/p' "$out" | paste -sd+ | bc)
	f=$(sed -n 's/^test result: .* \([0-9]*\) passed; \([0-9]*\) failed.*/\2/p' "$out" | paste -sd+ | bc)
	if [ -z "$p" ]; then
		fail "host unit tests did not run (see $out)"
		tail -20 "$out"
		return
	fi
	passed=$((passed + p))
	failed=$((failed + ${f:-0}))
	echo "host unit tests: $p passed, ${f:-0} failed (cargo test, tools/proto-tests)"
	[ "${f:-0}" = 0 ] || grep -E '^test .* FAILED|panicked' "$out" | head -20
}

lint() {
	if bash scripts/fmt.sh --check >"$log_dir/fmt.log" 2>&1; then
		pass "rustfmt --check"
	else
		fail "rustfmt --check (run make fmt)"
		head -30 "$log_dir/fmt.log"
	fi
}

# clippy_build WHAT LOG [VAR=VALUE...]: builds the module (build-module.sh
# CLIPPY=1, with the variables set) into LOG; a warning anywhere fails WHAT.
# Returns non-zero if the build itself failed.
clippy_build() {
	local what=$1 out=$2
	shift 2
	if env "$@" bash scripts/build-module.sh CLIPPY=1 >"$out" 2>&1; then
		if grep -Eq '^(warning|error)' "$out"; then
			fail "$what builds with CLIPPY=1 without warnings"
			grep -E -A8 '^(warning|error)' "$out" | head -60
		else
			pass "$what builds with CLIPPY=1 without warnings"
		fi
		return 0
	fi
	fail "$what build"
	grep -E -A8 '^(warning|error)|Error' "$out" | head -60
	return 1
}

build() {
	# Always a full rebuild through clippy: a warning anywhere fails.
	inroot bash -c ". scripts/lib.sh; make -s -C \$(kernel_dir test) M=$RRXE_TOP LLVM=1 clean" >/dev/null 2>&1
	clippy_build module "$log_dir/build.log" || summary
	# The drop-in rdma_rxe.ko (make DROPIN=1), from the same sources with
	# --cfg dropin: objects of its own next to rrxe.ko's, which it leaves
	# alone (tools/testing/vm/19-dropin.sh installs it in the guest).
	clippy_build "drop-in rdma_rxe.ko" "$log_dir/build-dropin.log" DROPIN=1
}

# The VM tests boot one guest per group (vm-run.sh --group): a boot costs
# about 50 s under TCG, and between two scripts of a group the guest is put
# back as booted (scripts/guest-run.sh), each script's kernel log and
# kmemleak report checked on their own. Groups are separated by "|"; a
# script named alone on the command line boots alone.
#
# A word with "=" in a group is a kernel parameter for that group's boot.
# kmemleak halves the debug kernel's speed (every allocation and free takes
# a stack trace more, and KASAN records kmemleak's own objects too), so it
# runs where leaks are made: one boot, the second group, holds the scripts
# that create and destroy every object type and unwind every error path,
# with kmemleak on: 01-load (the KUnit suites), 03-errors, 04-lifecycle
# (link delete, netdev removal, rmmod, under open devices), 07-verbs-
# objects, 08-hostile-rings, 10-kverbs (a kernel consumer's objects),
# 25-fuzz-wire (every drop path of a hostile packet), 26-fuzz-verbs
# (random verbs, every WR opcode, random attributes), 28-odp, 17-kill-storm
# (every workload's process killed mid-flight: uverbs' cleanup of every
# object) and 27-fault-inject (every allocation of every verb failed in
# turn). The other boots pass kmemleak=off: their scripts (interop,
# netdev events, multicast traffic, the ULPs, userspace stacks, lossy
# wires) drive the same objects and data paths again, each already run
# above under kmemleak; KASAN, lockdep and the other checks stay on in
# every boot (Documentation/testing.rst, "Where kmemleak runs").
# 18-nvmeof and 19-dropin run NVMe-oF, whose target can trip a known
# lockdep report that leaves lockdep off for the rest of the boot
# (guest-run.sh): they come last in theirs, after the other kernel ULPs
# (20-rnbd-srp, 21-nfs-rdma, 24-iser) and 23-userspace-stacks, so that
# lockdep still checks those. 27-fault-inject puts failslab and
# fail_page_alloc back as booted (but for their verbose 0); it comes last
# in its boot all the same, so that nothing runs after its injected
# failures. The longest boot comes first, so that two lanes
# (RRXE_VM_LANES) end close together.
VM_GROUPS=${RRXE_VM_GROUPS:-"09 20 21 24 23 18 19 kmemleak=off | 01 03 04 07 08 10 25 26 28 17 27 | 13 14 15 16 kmemleak=off | 02 05 06 22 11 12 kmemleak=off"}

# RRXE_VM_LANES: how many guests boot at once. A debug-kernel guest keeps
# about one of its two vCPUs busy (each script's "CPUs N% busy" line): the
# scripts are shell, one step after the other. With two lanes each guest
# gets one vCPU (RRXE_VM_CPUS, default 1 then), so two guests never ask for
# more than the host's two cores (testing.rst, "The VM harness").
lanes=${RRXE_VM_LANES:-1}

# group_log SCRIPT...: the log file of the group of these scripts.
group_log() {
	local t names=() gname
	for t in "$@"; do names+=("$(basename "$t" .sh)"); done
	gname=${names[0]}
	[ ${#names[@]} -gt 1 ] && gname="${names[0]}..${names[-1]}"
	echo "$log_dir/vm-$gname.log"
}

# vm_boot PARAMS SCRIPT...: runs the scripts in one boot with the extra
# kernel parameters PARAMS; the log and its exit status go to group_log.
vm_boot() {
	local params=$1 out
	shift
	out=$(group_log "$@")
	RRXE_VM_APPEND="${RRXE_VM_APPEND:-} $params" \
		bash scripts/vm-run.sh --group "$@" >"$out" 2>&1
	echo $? >"$out.rc"
}

# vm_count PARAMS SCRIPT...: prints and counts the results of a boot.
vm_count() {
	local params=$1 out gname rc n
	shift
	out=$(group_log "$@")
	gname=$(basename "$out" .log)
	gname=${gname#vm-}
	rc=$(cat "$out.rc" 2>/dev/null || echo 1)
	rm -f "$out.rc"
	[ -n "$params" ] && echo "# $gname: booted with $params"
	local names=() t
	for t in "$@"; do names+=("$(basename "$t" .sh)"); done
	# The serial console ends lines with \r\n. One cleaned copy, read from a
	# variable: `tr … | grep -q` under pipefail fails whenever grep's early
	# exit kills tr with SIGPIPE (a log over a pipe's worth), which once
	# counted six scripts that ran and passed as missing.
	# Terminal escapes (the firmware's and the kernel's console resets) can
	# start the first script's line: they go too.
	local text
	text=$(tr -d '\r' <"$out" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g')
	# Each script's results, under its name, in the order they ran, and a
	# "not run" line for each script the VM never reached: what is counted.
	local results
	results=$(awk -v names="${names[*]}" '
		BEGIN { n = split(names, want, " ") }
		/^RRXE-SCRIPT: / { cur = $2; sub(/\.sh$/, "", cur); print "# " cur; seen[cur] = 1; next }
		/^(ok|not ok) - / { print "  " $0 }
		/^# [^ ]*\.sh took / { print "  " $0 }
		END { for (i = 1; i <= n; i++) if (!(want[i] in seen)) print "  not ok - " want[i] ": not run (the VM ended before it)" }' <<<"$text")
	echo "$results"
	n=$(grep -c '^  ok - ' <<<"$results")
	passed=$((passed + n))
	n=$(grep -c '^  not ok - ' <<<"$results")
	failed=$((failed + n))
	if [ $rc != 0 ] && ! grep -q '^not ok - ' <<<"$text"; then
		fail "$gname: exit $rc (see $out)"
		tail -30 "$out"
	fi
}

# vm_tests [TEST...]: the named scripts, each in a boot of its own, or every
# group of VM_GROUPS (then every script no group names, alone), $lanes
# boots at a time; results are printed in VM_GROUPS' order.
vm_tests() {
	local tests=("$@") t g group=() params= boots=() i
	if [ ${#tests[@]} != 0 ]; then
		for t in "${tests[@]}"; do boots+=("|$t"); done
	else
		for g in $VM_GROUPS "|"; do
			if [ "$g" = "|" ]; then
				[ ${#group[@]} != 0 ] && boots+=("$params|${group[*]}")
				group=()
				params=
				continue
			fi
			if [[ $g == *=* ]]; then
				params="${params:+$params }$g"
				continue
			fi
			for t in tools/testing/vm/"$g"-*.sh; do
				[ -f "$t" ] && group+=("$t")
			done
		done
		# A script no group names still runs, in a boot of its own.
		for t in tools/testing/vm/*.sh; do
			g=$(basename "$t" | cut -d- -f1)
			[[ " $VM_GROUPS " == *" $g "* ]] || boots+=("|$t")
		done
	fi
	if [ "$lanes" -le 1 ]; then
		for i in "${boots[@]}"; do
			# shellcheck disable=SC2086 # script paths have no spaces
			vm_boot "${i%%|*}" ${i#*|}
			# shellcheck disable=SC2086
			vm_count "${i%%|*}" ${i#*|}
		done
		return
	fi
	# Several guests at once: this run holds the one-VM lock for all of
	# them, so nothing else boots beside it.
	local vm_lock
	exec {vm_lock}>"$RRXE_CACHE/vm.lock"
	flock -n "$vm_lock" || { echo "# waiting for another VM using $RRXE_CACHE to finish"; flock "$vm_lock"; }
	export RRXE_VM_PARALLEL=1 RRXE_VM_CPUS=${RRXE_VM_CPUS:-1}
	echo "# $lanes guests at a time, $RRXE_VM_CPUS vCPU each; results when all have ended"
	for i in "${boots[@]}"; do
		while [ "$(jobs -rp | wc -l)" -ge "$lanes" ]; do wait -n; done
		# shellcheck disable=SC2086
		vm_boot "${i%%|*}" ${i#*|} &
	done
	wait
	for i in "${boots[@]}"; do
		# shellcheck disable=SC2086
		vm_count "${i%%|*}" ${i#*|}
	done
	exec {vm_lock}>&-
}

setup
case "$mode" in
host) host_tests ;;
vm) vm_tests "$@" ;;
all)
	host_tests
	lint
	build
	vm_tests
	;;
*) echo "usage: check.sh [all|host|vm [TEST...]]" >&2; exit 2 ;;
esac
summary
