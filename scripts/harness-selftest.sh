#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Shows that the VM harness fails a script on every kind of kernel report it
# watches for: one boot runs a script per kind, each loading
# tools/testing/splat/rrxe_splat.ko with that kind, and each must come out
# "not ok" for the right reason; a script that loads it with kind=none must
# come out clean. Run by hand after changing scripts/guest-run.sh (or the
# debug options of the test kernel); make check does not run it.
#
#   bash scripts/harness-selftest.sh     ends with "N passed, N failed"
#                                        (the guest's log: check-logs/harness-selftest.log)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RRXE_TOP"

bash scripts/build-module.sh RRXE_SPLAT=m >/dev/null || die "module build failed"
ko=$RRXE_TOP/tools/testing/splat/rrxe_splat.ko
[ -f "$ko" ] || die "$ko was not built"

dir=$(mktemp -d "$RRXE_CACHE/selftest.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# kind:what the harness must say about the script. lockdep comes first: it
# turns itself off at the first report that leaves the kernel unreliable
# (KASAN's does), so a lockdep report after one cannot happen. The Oops
# comes last: it leaves the kernel tainted for whatever runs after it.
cases="none:ok - splat-none.sh: kernel log clean
lockdep:not ok - splat-lockdep.sh: kernel log has a splat
warn:not ok - splat-warn.sh: kernel log has a splat
atomic:not ok - splat-atomic.sh: kernel log has a splat
leak:not ok - splat-leak.sh: kmemleak found leaks
hung:not ok - splat-hung.sh: kernel log has a splat
kasan:not ok - splat-kasan.sh: kernel log has a splat
kasan-known:ok - splat-kasan-known.sh: kernel log clean
oops:not ok - splat-oops.sh: kernel log has a splat"
scripts=()
while IFS=: read -r kind _; do
	s=$dir/splat-$kind.sh
	{
		echo "# rrxe_splat kind=${kind%-known}"
		[ "$kind" = hung ] && echo "echo 10 >/proc/sys/kernel/hung_task_timeout_secs"
		# A KASAN report in a function of RRXE_KNOWN_ULP_KASAN after the
		# test library's "rrxe unloaded" mark is a known ULP bug's: a note.
		# Without the mark (kind=kasan) it fails, as any KASAN report.
		[ "$kind" = kasan-known ] && echo "echo 'rrxe-test: rrxe unloaded' >/dev/kmsg"
		echo "insmod $ko kind=${kind%-known}"
		echo "[ -d /sys/module/rrxe_splat ] && rmmod rrxe_splat"
		[ "$kind" = hung ] && echo "echo 120 >/proc/sys/kernel/hung_task_timeout_secs"
		echo "exit 0"
	} >"$s"
	scripts+=("$s")
done <<<"$cases"

out=$RRXE_CACHE/check-logs/harness-selftest.log
mkdir -p "${out%/*}"
RRXE_KNOWN_ULP_KASAN='isert_cma_handler|splat_kasan' \
	bash scripts/vm-run.sh --group "${scripts[@]}" >"$out" 2>&1
text=$(tr -d '\r' <"$out")
passed=0 failed=0
while IFS=: read -r kind want; do
	if grep -qxF "$want" <<<"$text"; then
		passed=$((passed + 1))
		echo "ok - kind=$kind: the harness says \"$want\""
	else
		failed=$((failed + 1))
		echo "not ok - kind=$kind: the harness did not say \"$want\""
		grep -A3 "^RRXE-SCRIPT: splat-$kind.sh" <<<"$text" | sed 's/^/#   /'
	fi
done <<<"$cases"
echo
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
