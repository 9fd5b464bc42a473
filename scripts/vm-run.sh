#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot the test kernel in QEMU (TCG by default) with the trixie toolchain root
# as the guest's root filesystem (9p, read-only, tmpfs overlays), and run a
# script in it as root.
#
# usage: vm-run.sh [SCRIPT [ARGS...]]   (no script: interactive shell)
#        vm-run.sh --group SCRIPT...      (several scripts in one boot; each
#                                         is checked and reported on its own)
#
# In the guest the repo is at the same path, $RRXE_KO names the built module
# and `modprobe rdma_rxe` loads the C reference driver. The run fails if the
# script fails, if the guest's kernel log shows any Oops/BUG/WARNING/KASAN/
# lockdep/refcount/kmemleak/hung-task report (scripts/guest-run.sh), or if
# the guest does not finish within $RRXE_VM_TIMEOUT seconds (default 1200).
#
# Environment: RRXE_KVM=1 uses KVM (nested KVM hangs on some hosts),
# RRXE_VM_CPU (the CPU model, max,la57=off: see below), RRXE_VM_CPUS (2),
# RRXE_VM_MEM (3G), RRXE_VM_APPEND (more kernel parameters, e.g.
# kmemleak=off to measure what a debug option costs),
# RRXE_FLAVOUR (test|bench), RRXE_KO (the module to test; default the
# worktree's build), RRXE_VM_OUT (a
# directory under the repo or $RRXE_CACHE, shared writable with the guest at
# the same path, for captures and traces; the guest's other writes are lost),
# RRXE_VM_PARALLEL=1 (do not wait for other VMs: by default one VM runs at a
# time per cache, as two TCG guests on a small host starve each other into
# RCU stalls). Every other RRXE_* variable (RRXE_PAIRS, RRXE_KILL_CYCLES,
# ...) is passed to the script in the guest.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

flavour=${RRXE_FLAVOUR:-test}
kdir=$(bash "$RRXE_TOP/scripts/build-kernel.sh" "$flavour") || exit 1
# RRXE_KO: another build of the module (scripts/bench.sh builds one per
# kernel flavour).
ko=${RRXE_KO:-"$RRXE_TOP/drivers/infiniband/sw/rrxe/rrxe.ko"}
[ -f "$ko" ] || die "$ko is not built: run make first"

# Install the kernel's modules once, next to the tree, for modprobe.
mods="$kdir.modules"
release=$(cat "$kdir/.rrxe-release")
# Under a lock: make check boots several guests at once (RRXE_VM_LANES).
exec {mods_lock}>"$kdir.modules.lock"
flock "$mods_lock"
if [ ! -f "$mods/lib/modules/$release/modules.dep" ]; then
	note "installing the $flavour kernel's modules into $mods"
	rm -rf "$mods"
	inroot make -s -C "$kdir" LLVM=1 INSTALL_MOD_PATH="$mods" modules_install >/dev/null ||
		die "modules_install failed"
fi
exec {mods_lock}>&-

accel=tcg,thread=multi
[ "${RRXE_KVM:-0}" = 1 ] && accel=kvm
# The optional writable share, at the same path in the guest.
share=()
out_arg=
if [ -n "${RRXE_VM_OUT:-}" ]; then
	mkdir -p "$RRXE_VM_OUT" || die "cannot create $RRXE_VM_OUT"
	RRXE_VM_OUT=$(realpath "$RRXE_VM_OUT")
	share=(-fsdev "local,id=out,path=$RRXE_VM_OUT,security_model=none"
		-device virtio-9p-pci,fsdev=out,mount_tag=rrxeout)
	out_arg="rrxe_out=$RRXE_VM_OUT"
fi

rundir="$RRXE_CACHE/run"
mkdir -p "$rundir"
cmdfile=$(mktemp "$rundir/cmd.XXXXXX")
out=$(mktemp "$rundir/out.XXXXXX")
trap 'rm -f "$cmdfile" "$out"' EXIT

if [ $# = 0 ]; then
	: >"$cmdfile"
	interactive=1
else
	group=()
	if [ "$1" = --group ]; then
		shift
		group=(--group)
		for s in "$@"; do group+=("$(realpath "$s")"); done
		script=group
		set --
	else
		script=$(realpath "$1")
		shift
		group=("$script")
	fi
	{
		for v in $(compgen -e | grep '^RRXE_'); do
			case $v in
			RRXE_ROOT | RRXE_IN_ROOT | RRXE_CACHE) ;;
			*) printf 'export %s=%q\n' "$v" "${!v}" ;;
			esac
		done
		printf 'cd %q\nexport RRXE_KO=%q RRXE_TOP=%q RRXE_VM_OUT=%q\nbash %q %s\n' "$RRXE_TOP" \
			"$ko" "$RRXE_TOP" "${RRXE_VM_OUT:-}" \
			"$RRXE_TOP/scripts/guest-run.sh" "$(printf '%q ' "${group[@]}" "$@")"
	} >"$cmdfile"
	interactive=0
fi

# Kernel messages at warning level and above still reach the console (and
# guest-run.sh reads the whole log), but routine boot chatter does not.
# kunit.stats_enabled=2: KUnit prints a suite's "pass:N fail:0" line even
# for a suite of one case (by default only from two cases on), which
# check_kunit (tools/testing/lib.sh) looks for. kasan_multi_shot: every
# KASAN report is printed, not only a boot's first (guest-run.sh lets a
# known ULP report of a control half pass; a later one must still show).
append="console=ttyS0 loglevel=4 panic=-1 kunit.stats_enabled=2 kasan_multi_shot root=rrxeroot rootfstype=9p
	rootflags=trans=virtio,version=9p2000.L,msize=512000,cache=loose ro
	init=$RRXE_TOP/scripts/guest-init.sh rrxe_cmd=$cmdfile rrxe_mods=$mods
	hung_task_timeout_secs=120 tsc=reliable $out_arg ${RRXE_VM_APPEND:-}"
# TCG's "max" CPU has what servers have (PCLMULQDQ for the kernel's CRC-32,
# ERMS/FSRM for memcpy): the tests run 1.7x faster than on qemu64 (11-traffic
# 72 s -> 40 s, 12-lossy 97 s -> 59 s, measured). Without la57: a KASAN
# kernel with 5-level paging reports a wild access in its first interrupt.
qemu=(qemu-system-x86_64 -machine q35 -accel "$accel"
	-cpu "${RRXE_VM_CPU:-max,la57=off}" -smp "${RRXE_VM_CPUS:-2}" -m "${RRXE_VM_MEM:-3G}" -nographic -no-reboot
	-kernel "$kdir/arch/x86/boot/bzImage" -append "$(echo $append)"
	-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap
	-device virtio-9p-pci,fsdev=root,mount_tag=rrxeroot
	-nic none "${share[@]}")

# One VM at a time on this host (see RRXE_VM_PARALLEL above).
if [ "${RRXE_VM_PARALLEL:-0}" != 1 ]; then
	exec {vm_lock}>"$RRXE_CACHE/vm.lock"
	if ! flock -n "$vm_lock"; then
		note "waiting for another VM using $RRXE_CACHE to finish"
		flock "$vm_lock"
	fi
fi

if [ $interactive = 1 ]; then
	inroot "${qemu[@]}"
	exit $?
fi
# A group gets the time of its scripts (each bounded in the guest).
vm_timeout=${RRXE_VM_TIMEOUT:-$((1200 * (${#group[@]} > 1 ? ${#group[@]} - 1 : 1)))}
timeout -k 15 "$vm_timeout" bash -c '. "$1/scripts/lib.sh"; shift; inroot "$@"' _ \
	"$RRXE_TOP" "${qemu[@]}" </dev/null 2>&1 | tee "$out"
vm_rc=${PIPESTATUS[0]}
rc=$(tr -d '\r' <"$out" | sed -n 's/^RRXE-EXIT: \([0-9]*\).*/\1/p' | tail -1)
if [ -z "$rc" ]; then
	if [ "$vm_rc" = 124 ]; then
		echo "not ok - $(basename "$script"): VM timed out after ${vm_timeout}s"
	else
		echo "not ok - $(basename "$script"): VM ended without a result (exit $vm_rc)"
	fi
	exit 1
fi
exit "$rc"
