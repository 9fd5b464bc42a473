#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot the test kernel in QEMU (virtme-ng, TCG) with the trixie root as the
# guest's root filesystem, and run a script in it as root.
#
# usage: vm-run.sh [SCRIPT [ARGS...]]   (no script: interactive shell)
#
# The repo is at the same path in the guest, $RRXE_KO names the built
# module, and the C reference driver loads with `modprobe rdma_rxe`.
# The run fails if the script fails, if the guest's kernel log shows any
# Oops/BUG/WARNING/KASAN/lockdep/refcount/kmemleak/hung-task report, or if
# the guest does not finish within $RRXE_VM_TIMEOUT seconds (default 900).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

flavour=${RRXE_FLAVOUR:-test}
kdir=$(bash "$RRXE_TOP/scripts/build-kernel.sh" "$flavour") || exit 1
ko="$RRXE_TOP/drivers/infiniband/sw/rrxe/rrxe.ko"
[ -f "$ko" ] || die "$ko is not built: run make first"

accel=(--disable-kvm)
[ "${RRXE_KVM:-0}" = 1 ] && accel=()
vng_args=(--run "$kdir" "${accel[@]}" --cpus "${RRXE_VM_CPUS:-2}" --memory "${RRXE_VM_MEM:-3G}"
	--user root --cwd "$RRXE_TOP" --append "panic_on_warn=0 hung_task_timeout_secs=60")

if [ $# = 0 ]; then
	exec_in=(inroot env RRXE_KO="$ko" vng "${vng_args[@]}")
	"${exec_in[@]}"
	exit $?
fi

script=$(realpath "$1")
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
cmd="RRXE_KO=$ko RRXE_TOP=$RRXE_TOP bash $RRXE_TOP/scripts/guest-run.sh $(printf '%q ' "$script" "$@")"
timeout -k 15 "${RRXE_VM_TIMEOUT:-900}" \
	bash -c '. "$1/scripts/lib.sh"; shift; inroot vng "$@"' _ "$RRXE_TOP" "${vng_args[@]}" --exec "$cmd" \
	</dev/null 2>&1 | tee "$out"
vm_rc=${PIPESTATUS[0]}
rc=$(sed -n 's/^RRXE-EXIT: \([0-9]*\).*/\1/p' "$out" | tail -1)
if [ -z "$rc" ]; then
	[ "$vm_rc" = 124 ] && echo "not ok - $(basename "$script"): VM timed out after ${RRXE_VM_TIMEOUT:-900}s"
	[ "$vm_rc" != 124 ] && echo "not ok - $(basename "$script"): VM ended without a result (exit $vm_rc)"
	exit 1
fi
exit "$rc"
