#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# iSCSI over RDMA (iSER), as 20-rnbd-srp drives rnbd and SRP: one RDMA
# device on a netdev of the initial namespace (ib_isert and ib_iser make
# their rdma_cm IDs there) serving and connecting to its own address.
#   target     LIO through configfs (no targetcli): an iblock backstore on
#              a memory-backed null_blk, the iSCSI target $ISER_IQN with
#              TPG 1, LUN 0 on the backstore, an ACL for the initiator's
#              name, authentication off, and the network portal ADDR:3260
#              with iSER on (np/ADDR:3260/iser): ib_isert listens on
#              rdma_cm;
#   initiator  open-iscsi: iscsid started by hand (no systemd in the
#              guest) with the InitiatorName in /etc/iscsi (a tmpfs
#              overlay in the guest), SendTargets discovery over iSER
#              (iscsiadm -m discovery -t st -I iser) and the login over
#              iSER (ib_iser); the session's transport must be iser, its
#              LUN a SCSI disk;
# then, on the disk: 20-rnbd-srp's concurrent O_DIRECT writes of 4 KiB,
# 128 KiB and 1 MiB blocks to three regions, read back concurrently the
# same way, compared byte for byte with what was written and with what the
# target's null_blk holds; logout; iscsid stopped, the initiator's modules
# removed; the target torn down and its modules removed.
# It runs on rrxe first, then on rdma_rxe (the control); each case prints
# both results. A case fails if rrxe fails it; a control failure is shown
# next to it, so a bug of the ULP or of rdma_rxe is told apart from ours.
#
# usage: 24-iser.sh [DRIVER...]   (default: rrxe rxe)
# RRXE_ULP_TIMING=1 prints how long each case took.
. "$RRXE_TOP/tools/testing/lib.sh"
# The I/O of the NVMe-oF tests (io_parallel, read_back, on_target) and
# `listening PORT`; nothing of NVMe-oF is set up.
. "$RRXE_TOP/tools/testing/nvmeof.sh"
. "$RRXE_TOP/tools/testing/ulp.sh"

drivers=${*:-rrxe rxe}

# 20-rnbd-srp's I/O: 2 MiB from offset 0, 256 KiB in 4 KiB blocks, 768 KiB
# in 128 KiB, 1 MiB in one.
IO_SETS=("4k 64 0" "128k 6 2" "1M 1 1") IO_BYTES=2097152 IO_WHAT="4K/128K/1M, 2 MiB"

ISER_PORT=3260
ISER_IQN=iqn.2026-11.org.rrxe:iser
ISER_INITIATOR=iqn.2026-11.org.rrxe:initiator
TPG=$lio/iscsi/$ISER_IQN/tpgt_1
NP=$TPG/np/$ADDR:$ISER_PORT

# --- target
# The network portal is made for iSCSI over TCP (a TCP socket listens on
# ADDR:3260 too); `iser` adds the iSER portal on the same address and
# port, an rdma_cm ID of ib_isert (iscsi_target_mod loads ib_isert itself;
# loaded here first).
iser_target_up() {
	lio_backstore_up rrxe-iser && modprobe -a iscsi_target_mod ib_isert || return 1
	mkdir -p "$TPG" && mkdir "$NP" && echo 1 >"$NP/iser" || return 1
	[ "$(cat "$NP/iser")" = 1 ] || { echo "$NP/iser reads $(cat "$NP/iser")"; return 1; }
	mkdir "$TPG/lun/lun_0" && ln -s $LIO_CORE "$TPG/lun/lun_0/" &&
		mkdir -p "$TPG/acls/$ISER_INITIATOR/lun_0" &&
		ln -s "$TPG/lun/lun_0" "$TPG/acls/$ISER_INITIATOR/lun_0/" &&
		echo 0 >"$TPG/attrib/authentication" && echo 1 >"$TPG/enable" || return 1
	wait_for 20 listening $ISER_PORT || { echo "no rdma_cm ID listens on $ISER_PORT"; return 1; }
	echo "# $ISER_IQN, TPG 1, portal $ADDR:$ISER_PORT:" \
		"listening rdma_cm ID of $(rdma res show cm_id 2>/dev/null | grep -E "state LISTEN.*:$ISER_PORT( |\$)" |
			grep -o 'comm [^ ]*' | head -1)"
}

# LIO taken apart in the reverse order, whatever part of it exists, then
# the modules (lio_down).
iser_target_down() {
	if [ -d "$TPG" ]; then
		echo 0 >"$TPG/enable"
		rm -f "$TPG/acls/$ISER_INITIATOR/lun_0/lun_0"
		rmdir "$TPG/acls/$ISER_INITIATOR/lun_0" "$TPG/acls/$ISER_INITIATOR" 2>/dev/null
		rm -f "$TPG/lun/lun_0/nullb0"
		rmdir "$TPG/lun/lun_0" 2>/dev/null
		if [ -d "$NP" ]; then
			echo 0 >"$NP/iser"
			rmdir "$NP"
		fi
		rmdir "$TPG" "$lio/iscsi/$ISER_IQN" 2>/dev/null
	fi
	[ ! -d $lio/iscsi ] || rmdir $lio/iscsi || return 1
	lio_down ib_isert iscsi_target_mod
}

# --- initiator
# iscsid in the foreground, in a session of its own (it signals its
# process group when it stops); iscsiadm finds it through its abstract
# socket.
ISCSID=
iser_initiator_up() {
	modprobe ib_iser || return 1
	echo "InitiatorName=$ISER_INITIATOR" >/etc/iscsi/initiatorname.iscsi || return 1
	mkdir -p /run/lock/iscsi || return 1
	setsid iscsid -f >"$tmp/iscsid.log" 2>&1 &
	ISCSID=$!
	wait_for 10 grep -q ISCSIADM_ABSTRACT_NAMESPACE /proc/net/unix ||
		{ echo "iscsid does not listen"; cat "$tmp/iscsid.log"; return 1; }
}

# SendTargets discovery through the iser interface: the target and its
# portal must be found.
iser_discover() {
	local out
	out=$(timeout 60 iscsiadm -m discovery -t st -p $ADDR:$ISER_PORT -I iser 2>&1) ||
		{ echo "$out"; return 1; }
	echo "$out" | sed 's/^/# /'
	echo "$out" | grep -q "^$ADDR:$ISER_PORT,1 $ISER_IQN\$" ||
		{ echo "$ISER_IQN at $ADDR:$ISER_PORT not discovered"; return 1; }
}

# The login: the session's transport must be iser, its LUN a disk; sets
# SESSION (iscsi_session's sysfs name) and BLK.
SESSION=
iser_login() {
	local out
	out=$(timeout 90 iscsiadm -m node -T $ISER_IQN -p $ADDR:$ISER_PORT -I iser --login 2>&1) ||
		{ echo "$out"; return 1; }
	wait_for 30 iser_disk || { echo "no SCSI disk behind an iSCSI session of $ISER_IQN"; return 1; }
	out=$(iscsiadm -m session -P 1 2>&1)
	echo "$out" | grep -q "Iface Transport: iser" ||
		{ echo "$out" | tail -5; echo "the session's transport is not iser"; return 1; }
	echo "# $SESSION: $(cat /sys/class/iscsi_session/$SESSION/targetname)," \
		"transport $(echo "$out" | sed -n 's/.*Iface Transport: //p' | head -1)," \
		"$BLK $(cat /sys/block/${BLK#/dev/}/device/vendor) $(cat /sys/block/${BLK#/dev/}/device/model)," \
		"$(($(cat /sys/block/${BLK#/dev/}/size) / 2048)) MiB, $(qp_count "$DEV") RC QPs on $DEV"
}
iser_disk() {
	local s d
	for s in /sys/class/iscsi_session/session*; do
		[ -e "$s" ] && [ "$(cat "$s/targetname")" = $ISER_IQN ] || continue
		SESSION=${s##*/}
		for d in "$s"/device/target*/*/block/*; do
			[ -e "$d" ] || continue
			BLK=/dev/${d##*/}
			[ -b "$BLK" ] && return 0
		done
	done
	return 1
}

# Logout: the session, its disk and the connection must go.
iser_logout() {
	local out
	out=$(timeout 60 iscsiadm -m node -T $ISER_IQN -p $ADDR:$ISER_PORT -I iser --logout 2>&1) ||
		{ echo "$out"; return 1; }
	wait_for 30 absent "/sys/class/iscsi_session/$SESSION" ||
		{ echo "$SESSION still exists"; return 1; }
	[ ! -e "$BLK" ] || { echo "$BLK still exists"; return 1; }
	wait_for 30 cm_closed || { echo "iSER's connection still open"; rdma res show cm_id; return 1; }
}

# The node and discovery records deleted, iscsid stopped, the initiator's
# modules removed.
iser_initiator_down() {
	iscsiadm -m node -o delete >/dev/null 2>&1
	iscsiadm -m discoverydb -t st -p $ADDR:$ISER_PORT -I iser -o delete >/dev/null 2>&1
	if [ -n "$ISCSID" ]; then
		kill "$ISCSID" && wait "$ISCSID"
		ISCSID=
	fi
	modprobe -r ib_iser libiscsi scsi_transport_iscsi
}

# iser_cases DRV: the cases, stopping at the first failure; whatever was
# set up is taken down.
iser_cases() {
	local drv=$1 ok=1
	have_modules iSER iscsi_target_mod ib_isert ib_iser target_core_iblock null_blk || return 0
	command -v iscsiadm >/dev/null || { echo "# $drv: iSER skipped: no iscsiadm (open-iscsi)"; return 0; }
	BLK='' SESSION=''
	record $drv "iSER: target listens (LIO, iSCSI portal $ADDR:$ISER_PORT with iser)" iser_target_up &&
		record $drv "iSER: iscsid runs (open-iscsi, ib_iser)" iser_initiator_up &&
		record $drv "iSER: SendTargets discovery over iSER" iser_discover &&
		record $drv "iSER: login over iSER, transport iser, LUN 0 a SCSI disk" iser_login &&
		record $drv "iSER: concurrent O_DIRECT writes, $IO_WHAT" io_parallel write &&
		record $drv "iSER: concurrent O_DIRECT reads, data intact" read_back &&
		record $drv "iSER: the target's null_blk holds the data" on_target &&
		record $drv "iSER: logout, session and disk gone" iser_logout || ok=0
	if [ $ok = 0 ] && [ -n "$SESSION" ] && [ -e "/sys/class/iscsi_session/$SESSION" ]; then
		timeout 60 iscsiadm -m session -u >/dev/null 2>&1
		wait_for 30 cm_closed
	fi
	record $drv "iSER: iscsid stopped, initiator removed (ib_iser)" iser_initiator_down || ok=0
	record $drv "iSER: LIO taken apart, target modules removed" iser_target_down || ok=0
	BLK=
	[ $ok = 1 ]
}

head -c $IO_BYTES /dev/urandom >"$tmp/pattern"
for drv in $drivers; do ulp_run $drv iser_cases; done
ulp_report "$drivers"
finish
