# SPDX-License-Identifier: GPL-2.0
# NVMe over Fabrics on RDMA for the VM tests (18-nvmeof, 19-dropin), as
# blktests' nvme group drives soft-RoCE: the target (nvmet-rdma, set up
# through configfs: an RDMA port on $NVMEOF_ADDR:4420, a memory-backed
# null_blk namespace) and the host (nvme-rdma, connected through
# /dev/nvme-fabrics as `nvme connect -t rdma` does) in the initial
# namespace on one RDMA device talking to its own address. Sourced after
# lib.sh; nvmeof_cases runs the cases through the caller's record().

NVMEOF_ADDR=${NVMEOF_ADDR:-198.18.0.1}
NQN=nqn.2026-11.org.rrxe:nvmeof
PORT=4420
cfg=/sys/kernel/config/nvmet
ADDR=$NVMEOF_ADDR

# The target: a null_blk namespace behind an RDMA port on the device's address.
target_up() {
	modprobe null_blk nr_devices=1 memory_backed=1 gb=1 || return 1
	modprobe -a nvmet nvmet-rdma || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return 1
	local s=$cfg/subsystems/$NQN p=$cfg/ports/1
	mkdir "$s" && echo 1 >"$s/attr_allow_any_host" &&
		mkdir "$s/namespaces/1" && echo /dev/nullb0 >"$s/namespaces/1/device_path" &&
		echo 1 >"$s/namespaces/1/enable" || return 1
	mkdir "$p" && echo rdma >"$p/addr_trtype" && echo ipv4 >"$p/addr_adrfam" &&
		echo $ADDR >"$p/addr_traddr" && echo $PORT >"$p/addr_trsvcid" &&
		ln -s "$s" "$p/subsystems/$NQN" || return 1
	wait_for 20 listening || { echo "no rdma_cm ID listens on $PORT"; return 1; }
}
listening() { rdma res show cm_id 2>/dev/null | grep -Eq "state LISTEN.*:$PORT( |$)"; }

target_down() {
	local s=$cfg/subsystems/$NQN p=$cfg/ports/1
	rm -f "$p/subsystems/$NQN"
	rmdir "$p" 2>/dev/null
	[ -d "$s/namespaces/1" ] && echo 0 >"$s/namespaces/1/enable" && rmdir "$s/namespaces/1"
	rmdir "$s" 2>/dev/null
	modprobe -r nvmet-rdma nvmet null_blk
}

# The host: connect as `nvme connect` does; sets CTRL and BLK.
CTRL= BLK=
host_connect() {
	local line
	modprobe nvme-rdma || return 1
	exec 3<>/dev/nvme-fabrics || return 1
	echo "transport=rdma,traddr=$ADDR,trsvcid=$PORT,nqn=$NQN" >&3 || { exec 3>&-; return 1; }
	read -r line <&3
	exec 3>&-
	CTRL=nvme$(echo "$line" | sed -n 's/.*instance=\([0-9]*\).*/\1/p')
	[ "$CTRL" != nvme ] || { echo "no instance in '$line'"; return 1; }
	[ "$(cat /sys/class/nvme/$CTRL/transport)" = rdma ] || { echo "$CTRL is not on rdma"; return 1; }
	wait_for 30 namespace_ready || { echo "$CTRL has no namespace block device"; return 1; }
	echo "# $CTRL: $(cat /sys/class/nvme/$CTRL/address), block device $BLK"
}
namespace_ready() {
	local d
	for d in /sys/class/nvme/$CTRL/${CTRL}*n1 /sys/class/nvme/$CTRL/nvme*c*n1; do
		[ -e "$d" ] || continue
		BLK=/dev/$(basename "$d")
		[ -b "$BLK" ] && return 0
	done
	return 1
}

host_disconnect() {
	echo 1 >"/sys/class/nvme/$CTRL/delete_controller" || return 1
	wait_for 30 ctrl_gone || { echo "$CTRL still exists"; return 1; }
	modprobe -r nvme-rdma
}
ctrl_gone() { [ ! -e "/sys/class/nvme/$CTRL" ]; }

# Three regions of 1 MiB, 1 MiB and 2 MiB, each moved in its own block size
# by its own dd, the three at once (O_DIRECT: every block is one command).
io_parallel() {
	local dir=$1 pids=() rc=0 p
	local spec=("4k 256 0" "128k 8 8" "1M 2 2")
	for s in "${spec[@]}"; do
		set -- $s
		if [ "$dir" = write ]; then
			timeout 120 dd if="$tmp/pattern" of="$BLK" bs=$1 count=$2 skip=$3 seek=$3 \
				oflag=direct conv=notrunc status=none &
		else
			timeout 120 dd if="$BLK" of="$tmp/back" bs=$1 count=$2 skip=$3 seek=$3 \
				iflag=direct conv=notrunc status=none &
		fi
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	return $rc
}
read_back() { rm -f "$tmp/back" && io_parallel read && cmp "$tmp/pattern" "$tmp/back"; }
on_target() { cmp -n 4194304 "$tmp/pattern" /dev/nullb0; }

# nvmeof_cases DRV: the cases, in order, through `record DRV CASE CMD...`
# (the caller's), stopping at the first failure; the target is always torn
# down. Needs $tmp/pattern (4 MiB) and a device ACTIVE on $NVMEOF_ADDR.
nvmeof_cases() {
	local drv=$1 ok=1
	record $drv "target listens (nvmet-rdma, configfs)" target_up &&
		record $drv "host connects (nvme-rdma)" host_connect &&
		record $drv "concurrent O_DIRECT writes, 4K/128K/1M" io_parallel write &&
		record $drv "concurrent O_DIRECT reads, data intact" read_back &&
		record $drv "the target's null_blk holds the data" on_target &&
		record $drv "disconnect" host_disconnect || ok=0
	[ $ok = 1 ] || { [ -n "$CTRL" ] && echo 1 >"/sys/class/nvme/$CTRL/delete_controller" 2>/dev/null; }
	modprobe -r nvme-rdma 2>/dev/null
	record $drv "target torn down, modules removed" target_down
	CTRL= BLK=
	[ $ok = 1 ]
}
