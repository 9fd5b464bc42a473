#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Two more kernel ULPs over RDMA, as blktests' rnbd and srp groups drive
# soft-RoCE: one RDMA device on a netdev of the initial namespace (rtrs and
# ib_srpt create their rdma_cm IDs there only) serving and connecting to
# its own address, so that every request and every data transfer crosses
# the device's whole wire path.
#   rnbd  rnbd_server (on rtrs_server, listening on 1234) exports a
#         memory-backed null_blk; rnbd_client maps it through sysfs
#         (map_device, sessname= path=ip:ADDR device_path=/dev/nullb0);
#   SRP   LIO through configfs (no targetcli): an iblock backstore on a
#         memory-backed null_blk, an ib_srpt target port of the device with
#         LUN 0 and an ACL for the initiator's address, listening through
#         rdma_cm on 5555 (discovery_auth/rdma_cm_port: this kernel's
#         ib_srpt has no rdma_cm_port module parameter); ib_srp logs in over
#         rdma_cm (add_target, dest=ADDR:5555) and scans the LUN, a SCSI disk;
# then, on the block device of each: concurrent O_DIRECT writes of 4 KiB,
# 128 KiB and 1 MiB blocks to three regions, read back concurrently the
# same way, compared byte for byte with what was written and with what the
# target's null_blk holds (so the data did cross); unmap or logout; the
# target torn down and every module removed.
# It runs on rrxe first, then on rdma_rxe (the control); each case prints
# both results. A case fails if rrxe fails it; a control failure is shown
# next to it, so a bug of the ULP or of rdma_rxe is told apart from ours.
#
# usage: 20-rnbd-srp.sh [DRIVER...]   (default: rrxe rxe)
# RRXE_ULPS="rnbd srp" picks the ULPs; RRXE_ULP_TIMING=1 prints how long
# each case took; RRXE_RNBD_CYCLES sets the number of map/unmap cycles
# (5, for make check's time budget; the issue's 20 with =20). The rnbd session runs with rtrs's round-robin multipath
# policy: with its default, min-inflight, an I/O can find no path on this
# preemptible kernel ("Known ULP bugs" in Documentation/testing.rst).
. "$RRXE_TOP/tools/testing/lib.sh"
# The NVMe-oF tests' I/O (io_parallel, read_back, on_target: three dd at
# once on $BLK, the target's /dev/nullb0 read back) and `listening PORT`
# (an rdma_cm ID listens on PORT); nothing of NVMe-oF is set up.
. "$RRXE_TOP/tools/testing/nvmeof.sh"
# The frame shared with 24-iser: record, ulp_run, ulp_report, the LIO
# backstore.
. "$RRXE_TOP/tools/testing/ulp.sh"

drivers=${*:-rrxe rxe}
read -r -a ulps <<<"${RRXE_ULPS:-rnbd srp}"

# 2 MiB a ULP and a driver, from offset 0: 256 KiB in 4 KiB blocks, 768 KiB
# in 128 KiB, 1 MiB in one (the debug kernel under TCG is slow).
IO_SETS=("4k 64 0" "128k 6 2" "1M 1 1") IO_BYTES=2097152 IO_WHAT="4K/128K/1M, 2 MiB"

RNBD_PORT=1234 # rtrs' default port (RTRS_PORT), rnbd_server's port_nr
RNBD_SESS=rrxe-rnbd
SRP_PORT=5555

# --- rnbd
rnbd_server_up() {
	nullb_up && modprobe rnbd_server || return 1
	wait_for 20 listening $RNBD_PORT || { echo "no rdma_cm ID listens on $RNBD_PORT"; return 1; }
}

# The client maps the server's /dev/nullb0 as blktests' _start_rnbd_client
# does; sets BLK.
rnbd_map() {
	modprobe rnbd_client || return 1
	echo "sessname=$RNBD_SESS path=ip:$ADDR device_path=/dev/nullb0" \
		>/sys/devices/virtual/rnbd-client/ctl/map_device || return 1
	wait_for 30 rnbd_mapped || { echo "no rnbd block device of session $RNBD_SESS"; return 1; }
	# rtrs's default multipath policy, min-inflight, can find no path for
	# an I/O on a preemptible kernel (testing.rst, "Known ULP bugs"): the
	# session uses round-robin, whose choice has no such window.
	echo 0 >"/sys/class/rtrs-client/$RNBD_SESS/mpath_policy" || return 1
	echo "# $BLK: session $RNBD_SESS, $(cat /sys/block/${BLK#/dev/}/rnbd/mapping_path)," \
		"$(($(cat /sys/block/${BLK#/dev/}/size) / 2048)) MiB, $(qp_count "$DEV") RC QPs on $DEV"
}
rnbd_mapped() {
	local d
	for d in /sys/block/rnbd*; do
		[ -e "$d/rnbd/session" ] && [ "$(cat "$d/rnbd/session")" = $RNBD_SESS ] || continue
		BLK=/dev/${d##*/}
		[ -b "$BLK" ] && return 0
	done
	return 1
}

rnbd_unmap() {
	local d=/sys/block/${BLK#/dev/}
	echo normal >"$d/rnbd/unmap_device" || return 1
	wait_for 30 absent "$d" || { echo "$BLK still exists"; return 1; }
	# The session goes with its last device.
	wait_for 30 cm_closed || { echo "rtrs connections still open"; rdma res show cm_id; return 1; }
}

# rnbd_cycles N: N times the map, a small I/O checked, the unmap: 64 KiB
# written (O_DIRECT, 16 KiB blocks) at 4 MiB, past the 2 MiB of the cases
# above, a slice of the pattern that changes with every cycle (so that no
# cycle passes on an earlier one's bytes), read back in one block through
# the client and from the server's null_blk, both compared with it.
RNBD_CYCLES=${RRXE_RNBD_CYCLES:-5}
# secs US: microseconds US in seconds, to a tenth.
secs() { printf '%d.%d' $(($1 / 1000000)) $(($1 / 100000 % 10)); }
rnbd_cycles() {
	local i n=$1 t0=$SECONDS sl=65536 at=64 t tmap=0 tio=0 tunmap=0
	for ((i = 1; i <= n; i++)); do
		t=${EPOCHREALTIME/./}
		rnbd_map >"$tmp/cycle" 2>&1 || { echo "cycle $i: map: $(grep -v '^# ' "$tmp/cycle" | tail -1)"; return 1; }
		tmap=$((tmap + ${EPOCHREALTIME/./} - t)) t=${EPOCHREALTIME/./}
		dd if="$tmp/pattern" of="$tmp/slice" bs=$sl skip=$(((i - 1) % (IO_BYTES / sl))) count=1 status=none &&
			dd if="$tmp/slice" of="$BLK" bs=16k seek=$((at * 4)) oflag=direct conv=notrunc status=none ||
			{ echo "cycle $i: the write to $BLK failed"; return 1; }
		dd if="$BLK" of="$tmp/back" bs=$sl skip=$at count=1 iflag=direct status=none &&
			cmp "$tmp/slice" "$tmp/back" || { echo "cycle $i: $BLK read back differs"; return 1; }
		dd if=/dev/nullb0 of="$tmp/target" bs=$sl skip=$at count=1 iflag=direct status=none &&
			cmp "$tmp/slice" "$tmp/target" || { echo "cycle $i: the server's null_blk differs"; return 1; }
		tio=$((tio + ${EPOCHREALTIME/./} - t)) t=${EPOCHREALTIME/./}
		rnbd_unmap || { echo "cycle $i: unmap failed"; return 1; }
		tunmap=$((tunmap + ${EPOCHREALTIME/./} - t))
		BLK=
	done
	echo "# rnbd: $n cycles in $((SECONDS - t0)) s: maps $(secs $tmap) s, I/O $(secs $tio) s," \
		"unmaps $(secs $tunmap) s"
}

rnbd_unload() { modprobe -r rnbd_client rtrs_client rnbd_server rtrs_server rtrs_core null_blk; }

# rnbd_cases DRV: the rnbd cases, stopping at the first failure; whatever
# was set up is taken down.
rnbd_cases() {
	local drv=$1 ok=1
	have_modules rnbd rnbd_server rnbd_client null_blk || return 0
	BLK=
	record $drv "rnbd: server listens (rnbd_server, port $RNBD_PORT)" rnbd_server_up &&
		record $drv "rnbd: client maps the server's null_blk (rnbd_client)" rnbd_map &&
		record $drv "rnbd: concurrent O_DIRECT writes, $IO_WHAT" io_parallel write &&
		record $drv "rnbd: concurrent O_DIRECT reads, data intact" read_back &&
		record $drv "rnbd: the server's null_blk holds the data" on_target &&
		record $drv "rnbd: unmap, session closed" rnbd_unmap &&
		record $drv "rnbd: $RNBD_CYCLES cycles of map, 64 KiB written and read back, unmap" \
			rnbd_cycles "$RNBD_CYCLES" || ok=0
	if [ $ok = 0 ] && [ -n "$BLK" ] && [ -e "/sys/block/${BLK#/dev/}" ]; then
		echo force >"/sys/block/${BLK#/dev/}/rnbd/unmap_device"
		wait_for 30 cm_closed
	fi
	record $drv "rnbd: modules removed" rnbd_unload || ok=0
	BLK=
	[ $ok = 1 ]
}

# --- SRP
# The target port: the device's port by its GUID name (the interface ID of
# GID 0, xxxx:xxxx:xxxx:xxxx, as blktests names a RoCE port), one TPG with
# LUN 0 on the iblock backstore of /dev/nullb0 (lio_backstore_up), and an
# ACL for the initiator. An rdma_cm login's session is named after the
# source address of the target's new rdma_cm ID (srpt_rdma_cm_req_recv),
# the device's own here, so that is the ACL's name. ib_srpt listens on rdma_cm once
# discovery_auth/rdma_cm_port is set.
SRP_TPORT=
srp_target_up() {
	local gid tp
	lio_backstore_up rrxe-srp && modprobe ib_srpt || return 1
	gid=$(cat "/sys/class/infiniband/$DEV/ports/1/gids/0") || return 1
	case $gid in
	fe80:0000:0000:0000:*) SRP_TPORT=${gid#fe80:0000:0000:0000:} ;;
	*) echo "GID 0 of $DEV is $gid, not link-local"; return 1 ;;
	esac
	mkdir -p $lio/srpt && echo $SRP_PORT >$lio/srpt/discovery_auth/rdma_cm_port || return 1
	tp=$lio/srpt/$SRP_TPORT/$SRP_TPORT
	mkdir -p "$tp/lun/lun_0" && ln -s $LIO_CORE "$tp/lun/lun_0/" &&
		mkdir -p "$tp/acls/$ADDR/lun_0" && ln -s "$tp/lun/lun_0" "$tp/acls/$ADDR/lun_0/" &&
		echo 1 >"$tp/enable" || return 1
	wait_for 20 listening $SRP_PORT || { echo "no rdma_cm ID listens on $SRP_PORT"; return 1; }
	echo "# target port $SRP_TPORT of $DEV, ioc_guid $(cat /sys/module/ib_srpt/parameters/srpt_service_guid)"
}

# The initiator logs in over rdma_cm as blktests' do_rdma_cm_login does:
# id_ext and ioc_guid are ib_srpt's service GUID (its target port ID),
# dest the target's address and rdma_cm port. add_target returns once the
# login is done and the target scanned; sets SRP_HOST and BLK.
SRP_HOST=
srp_login() {
	local guid add=/sys/class/infiniband_srp/srp-$DEV-1/add_target
	modprobe ib_srp || return 1
	wait_for 10 test -e "$add" || { echo "no $add"; return 1; }
	guid=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid) || return 1
	echo "id_ext=$guid,ioc_guid=$guid,dest=$ADDR:$SRP_PORT" >"$add" || return 1
	wait_for 30 srp_disk || { echo "no SCSI disk behind an SRP remote port"; return 1; }
	echo "# SCSI host $SRP_HOST: $(cat /sys/class/scsi_host/host$SRP_HOST/proc_name 2>/dev/null)," \
		"$BLK $(cat /sys/block/${BLK#/dev/}/device/vendor) $(cat /sys/block/${BLK#/dev/}/device/model)," \
		"$(($(cat /sys/block/${BLK#/dev/}/size) / 2048)) MiB, $(qp_count "$DEV") RC QPs on $DEV"
}
srp_disk() {
	local p d
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p" ] || continue
		SRP_HOST=${p##*/port-}
		SRP_HOST=${SRP_HOST%%:*}
		for d in /sys/class/scsi_device/"$SRP_HOST":*/device/block/*; do
			[ -e "$d" ] || continue
			BLK=/dev/${d##*/}
			[ -b "$BLK" ] && return 0
		done
	done
	return 1
}

# Logout: the remote port deleted (srp_rport_delete), which removes the
# SCSI host and its disk and disconnects.
srp_logout() {
	echo 1 >"/sys/class/srp_remote_ports/port-$SRP_HOST:1/delete" || return 1
	wait_for 30 absent "/sys/class/scsi_host/host$SRP_HOST" ||
		{ echo "SCSI host $SRP_HOST still exists"; return 1; }
	[ ! -e "$BLK" ] || { echo "$BLK still exists"; return 1; }
	wait_for 30 cm_closed || { echo "ib_srp's connection still open"; rdma res show cm_id; return 1; }
}

srp_initiator_unload() { modprobe -r ib_srp scsi_transport_srp; }

# LIO taken apart in the reverse order, whatever part of it exists, then
# the modules (lio_down).
srp_target_down() {
	local tp=$lio/srpt/$SRP_TPORT/$SRP_TPORT
	if [ -n "$SRP_TPORT" ] && [ -d "$tp" ]; then
		echo 0 >"$tp/enable"
		rm -f "$tp/acls/$ADDR/lun_0/lun_0"
		rmdir "$tp/acls/$ADDR/lun_0" "$tp/acls/$ADDR" 2>/dev/null
		rm -f "$tp/lun/lun_0/nullb0"
		rmdir "$tp/lun/lun_0" "$tp" "$lio/srpt/$SRP_TPORT" 2>/dev/null
	fi
	if [ -d $lio/srpt ]; then
		echo 0 >$lio/srpt/discovery_auth/rdma_cm_port
		rmdir $lio/srpt
	fi
	lio_down ib_srpt
}

# srp_cases DRV: the SRP cases, stopping at the first failure; whatever was
# set up is taken down.
srp_cases() {
	local drv=$1 ok=1 p
	have_modules SRP ib_srpt ib_srp target_core_mod target_core_iblock null_blk || return 0
	BLK='' SRP_HOST='' SRP_TPORT=''
	record $drv "SRP: target listens (LIO, ib_srpt, rdma_cm port $SRP_PORT)" srp_target_up &&
		record $drv "SRP: initiator logs in over rdma_cm, LUN 0 a SCSI disk (ib_srp)" srp_login &&
		record $drv "SRP: concurrent O_DIRECT writes, $IO_WHAT" io_parallel write &&
		record $drv "SRP: concurrent O_DIRECT reads, data intact" read_back &&
		record $drv "SRP: the target's null_blk holds the data" on_target &&
		record $drv "SRP: logout (remote port deleted), SCSI host gone" srp_logout || ok=0
	if [ $ok = 0 ]; then
		for p in /sys/class/srp_remote_ports/port-*; do
			[ -e "$p" ] && echo 1 >"$p/delete"
		done
		wait_for 30 cm_closed
	fi
	record $drv "SRP: initiator removed (ib_srp)" srp_initiator_unload || ok=0
	record $drv "SRP: LIO taken apart, target modules removed" srp_target_down || ok=0
	BLK=
	[ $ok = 1 ]
}

head -c $IO_BYTES /dev/urandom >"$tmp/pattern"
for drv in $drivers; do ulp_run $drv "${ulps[@]/%/_cases}"; done
ulp_report "$drivers"
finish
