# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The frame of the kernel ULP tests that run on rrxe, then on rdma_rxe as
# the control, with every case's two results side by side (20-rnbd-srp,
# 24-iser): one RDMA device on a netdev of the initial namespace (the
# kernel's ULPs make their rdma_cm IDs there) talking to its own address,
# ADDR; the cases' results kept by `record`, printed by `ulp_report`; a
# memory-backed null_blk as the target's disk, an iblock backstore of LIO
# on it for the SCSI targets. Sourced after lib.sh and nvmeof.sh (the I/O:
# io_parallel, read_back, on_target, and `listening PORT`); the script
# sets IO_SETS, IO_BYTES and IO_WHAT, writes $tmp/pattern, runs
# `ulp_run DRV CASES...` for each driver, then `ulp_report`.

tmp=$(mktemp -d)
declare -A res
cases=()
lio=/sys/kernel/config/target

# record DRV CASE CMD...: runs CMD (in this shell: it may set variables) and
# keeps its result for the table; CMD's "# " lines are printed as they are
# (18-nvmeof's). RRXE_ULP_TIMING=1 prints how long each case took.
record() {
	local drv=$1 c=$2 rc t0=$SECONDS
	shift 2
	[[ " ${cases[*]} " == *" $c "* ]] || cases+=("$c")
	"$@" >"$tmp/out" 2>&1
	rc=$?
	grep '^# ' "$tmp/out"
	[ -z "${RRXE_ULP_TIMING:-}" ] || echo "# $drv: $c: $((SECONDS - t0)) s"
	if [ $rc = 0 ]; then
		res[$drv:$c]=ok
		return 0
	fi
	res[$drv:$c]="FAILED ($(grep -v '^# ' "$tmp/out" | tail -1 | tr -s '\t ' ' '))"
	grep -v '^# ' "$tmp/out" | tail -5 | awk -v p="# $drv: $c: " '{ print p $0 }'
	return 1
}

# have_modules ULP MODULE...: all exist in the kernel; if not, ULP's cases
# are skipped, and say why.
have_modules() {
	local ulp=$1 m missing=()
	shift
	for m; do modinfo -n "$m" >/dev/null 2>&1 || missing+=("$m"); done
	[ ${#missing[@]} = 0 ] && return 0
	echo "# $drv: $ulp skipped: the kernel has no ${missing[*]}"
	return 1
}

nullb_up() { modprobe null_blk nr_devices=1 memory_backed=1 gb=1 && wait_for 10 test -b /dev/nullb0; }

# No rdma_cm ID but listening ones: the ULP's connections are closed.
cm_closed() { ! rdma res show cm_id 2>/dev/null | grep -v 'state LISTEN' | grep -q 'state '; }
# The RC QPs of the device, for the log.
qp_count() { rdma res show qp link "$1/1" 2>/dev/null | grep -c 'type RC'; }

# lio_backstore_up SERIAL: null_blk, LIO's core and configfs, and the
# iblock backstore iblock_0/nullb0 on /dev/nullb0 (not the rd_mcp ramdisk:
# the null_blk is what on_target reads back), its unit serial SERIAL.
LIO_CORE=$lio/core/iblock_0/nullb0
lio_backstore_up() {
	nullb_up && modprobe -a target_core_mod target_core_iblock || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return 1
	mkdir -p $LIO_CORE && echo "udev_path=/dev/nullb0" >$LIO_CORE/control &&
		echo "$1" >$LIO_CORE/wwn/vpd_unit_serial && echo 1 >$LIO_CORE/enable
}

# lio_down MODULE...: the backstore removed, whatever of it exists (its
# fabric's configfs tree must be gone), then the fabric's MODULEs, LIO's
# and null_blk. LIO loads every backstore module it has by itself, at the
# first backstore made (transport_subsystem_check_init): all go before the
# core.
lio_down() {
	local m
	[ -d $LIO_CORE ] && rmdir $LIO_CORE
	[ -d $lio/core/iblock_0 ] && rmdir $lio/core/iblock_0
	for m in "$@" target_core_iblock target_core_file target_core_pscsi target_core_user \
		target_core_mod null_blk; do
		[ ! -d /sys/module/$m ] || modprobe -r $m || return 1
	done
}

# ulp_run DRV CASES...: a device of type DRV (rrxe or rxe), DEV=ulpDRV, on
# a0 of a veth pair in the initial namespace (ADDR, 198.18.0.1), then
# `CASES DRV` for each, then the device deleted and the driver unloaded.
ADDR=198.18.0.1
ulp_run() {
	local drv=$1 f
	shift
	DEV=ulp$drv
	echo "# --- $drv: $DEV on a0 ($ADDR), target and initiator on the same address"
	veth_pair
	case $drv in
	rxe) modprobe rdma_rxe ;;
	rrxe) load_rrxe ;;
	esac
	if record $drv "device" rdma link add $DEV type $drv netdev a0 &&
		record $drv "port ACTIVE" port_active $DEV; then
		for f; do
			"$f" $drv
		done
	fi
	rdma link delete $DEV 2>/dev/null
	record $drv "device deleted" gone $DEV 100
	case $drv in
	rxe) record $drv "driver unloaded" rmmod rdma_rxe ;;
	rrxe) record $drv "driver unloaded" unload_rrxe ;;
	esac
	ip link del a0
}

# ulp_report DRIVERS: a line for every case with both drivers' results,
# `ok` or `not ok` by rrxe's (comments if rrxe did not run); $tmp removed.
ulp_report() {
	local c line
	for c in "${cases[@]}"; do
		line="$c: rrxe ${res[rrxe:$c]:-not run}, rdma_rxe ${res[rxe:$c]:-not run}"
		if [[ " $1 " != *" rrxe "* ]]; then
			echo "# $line"
		elif [ "${res[rrxe:$c]:-}" = ok ]; then
			ok "$line"
		else
			not_ok "$line"
		fi
	done
	rm -rf "$tmp"
}
