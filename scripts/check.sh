#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make check`: every test, ending with one line `N passed, N failed`.
#
#   check.sh          host tests, lint, module build, VM tests
#   check.sh host     host tests only
#   check.sh vm [T…]  VM tests only (all, or the named scripts)
#
# Each VM test boots a fresh VM. Results are counted from `ok - …` /
# `not ok - …` lines (VM tests) and from cargo's summary (host tests).
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

build() {
	local out="$log_dir/build.log"
	# Always a full rebuild through clippy: a warning anywhere fails.
	inroot bash -c ". scripts/lib.sh; make -s -C \$(kernel_dir test) M=$RRXE_TOP LLVM=1 clean" >/dev/null 2>&1
	if bash scripts/build-module.sh CLIPPY=1 >"$out" 2>&1; then
		if grep -Eq '^(warning|error)' "$out"; then
			fail "module builds with CLIPPY=1 without warnings"
			grep -E -A8 '^(warning|error)' "$out" | head -60
		else
			pass "module builds with CLIPPY=1 without warnings"
		fi
	else
		fail "module build"
		grep -E -A8 '^(warning|error)|Error' "$out" | head -60
		summary
	fi
}

vm_tests() {
	local tests=("$@") t out name
	[ ${#tests[@]} = 0 ] && mapfile -t tests < <(ls tools/testing/vm/*.sh)
	for t in "${tests[@]}"; do
		name=$(basename "$t" .sh)
		out="$log_dir/vm-$name.log"
		echo "# $name"
		bash scripts/vm-run.sh "$t" >"$out" 2>&1
		local rc=$?
		grep -E '^(ok|not ok) - ' "$out" | sed 's/^/  /'
		passed=$((passed + $(grep -c '^ok - ' "$out")))
		failed=$((failed + $(grep -c '^not ok - ' "$out")))
		if [ $rc != 0 ] && ! grep -q '^not ok - ' "$out"; then
			fail "$name: exit $rc (see $out)"
			tail -30 "$out"
		fi
	done
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
