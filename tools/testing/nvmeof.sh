# SPDX-License-Identifier: GPL-2.0
# NVMe over Fabrics on RDMA for the VM tests (18-nvmeof, 19-dropin), as
# blktests' nvme group drives soft-RoCE: the target (nvmet-rdma, set up
# through configfs: an RDMA port on $NVMEOF_ADDR:4420, a memory-backed
# null_blk namespace) and the host (nvme-rdma, connected through
# /dev/nvme-fabrics as `nvme connect -t rdma` does) in the initial
# namespace on one RDMA device talking to its own address. Sourced after
# lib.sh; nvmeof_cases runs the cases of one or more variants (module
# parameters, connect options, port attributes, see nvmeof_variant)
# through the caller's record().
#
# The port's rdma_cm ID is destroyed under nvmet_config_sem when the port
# goes down, which with a racing connect makes the known lockdep report
# that turns lockdep off for the rest of the boot (testing.rst, "Known
# ULP bugs"): ports go down as late as possible. A variant with port
# attributes gets a second port, which stays up until the teardown; the
# link delete destroys the listening IDs without that lock (DEVICE_REMOVAL)
# before the ports are taken down and up again; the one variant that
# reloads nvmet-rdma, taking the ports down, comes last.

NVMEOF_ADDR=${NVMEOF_ADDR:-198.18.0.1}
NQN=nqn.2026-11.org.rrxe:nvmeof
PORT=4420 PORT2=4421
cfg=/sys/kernel/config/nvmet
ADDR=$NVMEOF_ADDR
NVME_IO=$RRXE_TOP/tools/testing/nvme_io.py

# The variants of 18-nvmeof, in the order they run: the host's first, on
# the target as blktests sets it up, then the port's (on port 2), the
# link delete, and use_srq=1, which reloads nvmet-rdma, last.
NVMEOF_VARIANTS=(base register_always=N nr_poll_queues=1
	param_inline_data_size=16384 link-delete use_srq=1)

# nvmeof_variant NAME: what variant NAME changes, in
#   V_LABEL    its cases' prefix (none for the base)
#   V_TARGET   nvmet-rdma's module parameters
#   V_PORT     attributes, ATTR=VALUE ... (configfs), of a second port
#              on $PORT2 the variant connects to (one variant only)
#   V_HOST     nvme-rdma's module parameters
#   V_CONNECT  more connect options (,OPT=VALUE...)
#   V_CHECK    a function that checks, once connected, that the variant
#              is in effect ("" for none), with its description V_WHAT
#   V_IO       the I/O: a dd set (full, small, inline, see io_set), poll,
#              or unplug
nvmeof_variant() {
	V_LABEL=$1 V_TARGET= V_PORT= V_HOST= V_CONNECT= V_CHECK= V_WHAT= V_IO=small
	case $1 in
	base)
		# blktests' setup, 4 MiB. A polled read fails with EOPNOTSUPP
		# without poll queues: what makes nr_poll_queues=1's polled
		# I/O proof that it went through a poll queue.
		V_LABEL= V_IO=full
		V_CHECK=poll_refused V_WHAT="a polled read is refused (no poll queue)" ;;
	register_always=N)
		# The host's PD gets the unsafe global rkey: a single-segment
		# read (the 4 KiB blocks) is described by it, not by a fast-
		# registered MR, so the target's RDMA WRITEs land through the
		# PD's DMA MR (nvme_rdma_map_sg_single).
		V_HOST=register_always=N
		V_CHECK=global_rkey V_WHAT="the host's PD has the unsafe global rkey" ;;
	nr_poll_queues=1)
		# A poll queue, its CQ IB_POLL_DIRECT: io_uring IOPOLL reads and
		# writes (nvme_io.py) complete only through nvme_rdma_poll
		# reaping that CQ (ib_process_cq_direct).
		V_CONNECT=,nr_poll_queues=1 V_IO=poll
		V_CHECK=poll_queue V_WHAT="the namespace has a poll queue (io_poll 1)" ;;
	param_inline_data_size=16384)
		# Writes of up to 16 KiB (at most 4 pages) travel inside the
		# command capsule's SEND (nvme_rdma_map_sg_inline) into the
		# target's 16 KiB receive buffers, instead of being read by the
		# target with RDMA READ.
		V_PORT=param_inline_data_size=16384 V_IO=inline
		V_CHECK=inline_size V_WHAT="the controller takes 16 KiB inline (IOCCSZ 1028)" ;;
	use_srq=1)
		# The target's queues receive from shared receive queues of the
		# device (one per completion vector) instead of their own.
		V_TARGET=use_srq=1
		V_CHECK=srq_used V_WHAT="the target's QPs receive from an SRQ" ;;
	link-delete)
		V_LABEL="rdma link delete" V_IO=unplug ;;
	*)
		echo "no variant $1"
		return 1 ;;
	esac
}

# The target: a null_blk namespace behind an RDMA port on the device's address.
target_up() {
	modprobe null_blk nr_devices=1 memory_backed=1 gb=1 || return 1
	modprobe -a nvmet nvmet-rdma || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return 1
	local s=$cfg/subsystems/$NQN p=$cfg/ports/1
	mkdir "$s" && echo 1 >"$s/attr_allow_any_host" &&
		mkdir "$s/namespaces/1" && echo /dev/nullb0 >"$s/namespaces/1/device_path" &&
		echo 1 >"$s/namespaces/1/enable" || return 1
	target_port 1 $PORT || return 1
	T_PARAMS= T_PORT2=
}

# target_port N SVCID [ATTR=VALUE...]: port N, RDMA on $ADDR:SVCID, with
# these attributes, serving the subsystem; it must listen.
target_port() {
	local p=$cfg/ports/$1 svcid=$2 a
	shift 2
	mkdir "$p" && echo rdma >"$p/addr_trtype" && echo ipv4 >"$p/addr_adrfam" &&
		echo $ADDR >"$p/addr_traddr" && echo $svcid >"$p/addr_trsvcid" || return 1
	for a; do
		echo "${a#*=}" >"$p/${a%%=*}" || return 1
		[ "$(cat "$p/${a%%=*}")" = "${a#*=}" ] || { echo "${a%%=*} reads $(cat "$p/${a%%=*}")"; return 1; }
	done
	ln -s "$cfg/subsystems/$NQN" "$p/subsystems/$NQN" || return 1
	wait_for 20 listening $svcid || { echo "no rdma_cm ID listens on $svcid"; return 1; }
}
# Port 2, with the variant's attributes (V_PORT), made once: a variant
# with other attributes would need a port of its own.
T_PORT2=
target_port2() {
	[ -z "$T_PORT2" ] || { echo "port 2 has $T_PORT2 already"; return 1; }
	target_port 2 $PORT2 $V_PORT && T_PORT2=$V_PORT
}
listening() { rdma res show cm_id 2>/dev/null | grep -Eq "state LISTEN.*:${1:-$PORT}( |$)"; }

# The ports taken down (their subsystem's link removed) and up again;
# each must listen again.
port_unlink() {
	local p
	for p in $cfg/ports/*; do rm "$p/subsystems/$NQN" || return 1; done
}
port_link() {
	local p
	for p in $cfg/ports/*; do
		ln -s "$cfg/subsystems/$NQN" "$p/subsystems/$NQN" || return 1
		wait_for 20 listening "$(cat "$p/addr_trsvcid")" ||
			{ echo "no rdma_cm ID listens on $(cat "$p/addr_trsvcid")"; return 1; }
	done
}

# target_reload PARAMS: nvmet-rdma loaded again with module parameters
# PARAMS; it only unloads with no port up: the ports go down and up again.
T_PARAMS=
target_reload() {
	port_unlink || return 1
	modprobe -r nvmet-rdma && modprobe nvmet-rdma $1 || return 1
	T_PARAMS=$1
	port_link
}

target_down() {
	local s=$cfg/subsystems/$NQN p
	for p in $cfg/ports/2 $cfg/ports/1; do
		[ -d "$p" ] || continue
		rm -f "$p/subsystems/$NQN"
		rmdir "$p"
	done
	[ -d "$s/namespaces/1" ] && echo 0 >"$s/namespaces/1/enable" && rmdir "$s/namespaces/1"
	rmdir "$s" 2>/dev/null
	modprobe -r nvmet-rdma nvmet null_blk
}

# The host: connect as `nvme connect` does; sets CTRL and BLK. nvme-rdma
# is loaded with the variant's parameters (again only if they changed:
# H_PARAMS), the variant's options added, to the variant's port.
# nvmet-rdma keeps one nvmet_rdma_device per RDMA device (found by node
# GUID) while a queue holds it, made with the inline data size of the
# port of its first queue: first wait for the last connection's to go
# (its PD with it), so that a connection to another port gets one of its
# own.
CTRL= BLK= H_PARAMS=-
host_connect() {
	local line svcid=$PORT
	[ -n "$V_PORT" ] && svcid=$PORT2
	if [ "$H_PARAMS" != "$V_HOST" ]; then
		host_unload && modprobe nvme-rdma $V_HOST || return 1
		H_PARAMS=$V_HOST
	fi
	wait_for 10 no_target_pd || { echo "nvmet-rdma still has a PD"; return 1; }
	exec 3<>/dev/nvme-fabrics || return 1
	echo "transport=rdma,traddr=$ADDR,trsvcid=$svcid,nqn=$NQN$V_CONNECT" >&3 || { exec 3>&-; return 1; }
	read -r line <&3
	exec 3>&-
	CTRL=nvme$(echo "$line" | sed -n 's/.*instance=\([0-9]*\).*/\1/p')
	[ "$CTRL" != nvme ] || { echo "no instance in '$line'"; return 1; }
	[ "$(cat /sys/class/nvme/$CTRL/transport)" = rdma ] || { echo "$CTRL is not on rdma"; return 1; }
	wait_for 30 namespace_ready || { echo "$CTRL has no namespace block device"; return 1; }
	echo "# $CTRL: $(cat /sys/class/nvme/$CTRL/address), block device $BLK," \
		"$(cat /sys/class/nvme/$CTRL/queue_count) queues"
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
}
host_unload() { modprobe -r nvme-rdma && H_PARAMS=-; }
ctrl_gone() { [ ! -e "/sys/class/nvme/$CTRL" ]; }
no_target_pd() { ! rdma res show pd 2>/dev/null | grep -q nvmet_rdma; }

# io_set NAME: the regions io_parallel moves, "BS COUNT SKIP" each as in
# dd (IO_SETS), IO_BYTES in all from offset 0, IO_WHAT for the case name.
#   full    1 MiB in 4 KiB blocks, 1 MiB in 128 KiB, 2 MiB in 1 MiB
#   small   64 KiB in 4 KiB blocks, 64 KiB in one, 128 KiB in one (the
#           variants: each path taken, the time spent on connections)
#   inline  32 KiB in 4 KiB, 32 KiB in 8 KiB, 64 KiB in 16 KiB: every
#           write fits 16 KiB of inline data
io_set() {
	case $1 in
	full) IO_SETS=("4k 256 0" "128k 8 8" "1M 2 2") IO_BYTES=4194304 IO_WHAT=4K/128K/1M ;;
	small) IO_SETS=("4k 16 0" "64k 1 1" "128k 1 1") IO_BYTES=262144 IO_WHAT="4K/64K/128K, 256 KiB" ;;
	inline) IO_SETS=("4k 8 0" "8k 4 4" "16k 4 4") IO_BYTES=131072 IO_WHAT="4K/8K/16K, 128 KiB" ;;
	esac
}
io_set full

# Three regions, each moved in its own block size by its own dd, the three
# at once (O_DIRECT: every block is one command). Before writing, the
# target's null_blk is zeroed (directly, on the target's side), so that
# on_target sees what this variant wrote, not an earlier one's bytes.
io_parallel() {
	local dir=$1 pids=() rc=0 p s
	[ "$dir" = write ] && { nullb_zero || return 1; }
	for s in "${IO_SETS[@]}"; do
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
read_back() { rm -f "$tmp/back" && io_parallel read && cmp -n $IO_BYTES "$tmp/pattern" "$tmp/back"; }
nullb_zero() { dd if=/dev/zero of=/dev/nullb0 bs=1M count=4 oflag=direct status=none; }
# The target's null_blk, read past the page cache (nvmet's writes bypass it).
on_target() {
	dd if=/dev/nullb0 of="$tmp/target" bs=64k count=$((IO_BYTES / 65536)) iflag=direct status=none &&
		cmp -n $IO_BYTES "$tmp/pattern" "$tmp/target"
}

# poll_io write|read: the small set's regions moved by polled I/O
# (io_uring IOPOLL, nvme_io.py), the reads compared with the pattern.
poll_io() {
	[ "$1" = write ] && { nullb_zero || return 1; }
	python3 "$NVME_IO" poll "$1" "$BLK" "$tmp/pattern" 4k:16:0 64k:1:1 128k:1:1
}

# The variants' checks (V_CHECK), once the host is connected.
poll_refused() {
	local out
	out=$(python3 "$NVME_IO" poll read "$BLK" "$tmp/pattern" 4k:1:0) &&
		{ echo "a polled read worked without a poll queue"; return 1; }
	echo "$out" | grep -q "error 95 " || { echo "$out"; return 1; }
	echo "# $out"
}
global_rkey() {
	local pd
	pd=$(rdma res show pd | grep 'nvme_rdma')
	echo "$pd" | sed 's/^/# /'
	echo "$pd" | grep -q unsafe_global_rkey
}
poll_queue() {
	local d=/sys/block/${BLK#/dev/}/queue/io_poll
	[ "$(cat "$d")" = 1 ] || { echo "$d reads $(cat "$d")"; return 1; }
}
inline_size() {
	local n
	n=$(python3 "$NVME_IO" ioccsz "$CTRL") || { echo "$n"; return 1; }
	[ "$n" = 1028 ] || { echo "IOCCSZ $n, not 1028"; return 1; }
}
srq_used() {
	local srq
	srq=$(rdma res show srq)
	echo "$srq" | sed 's/^/# /'
	! dmesg | grep -q 'SRQ requested but not supported' || { echo "nvmet-rdma: SRQ not supported"; return 1; }
	echo "$srq" | grep -q lqpn
}

# The link-delete variant: the RDMA device (NVMEOF_DEV, of link type
# NVMEOF_TYPE on NVMEOF_NETDEV) deleted under I/O in flight. nvme-rdma's
# and nvmet-rdma's ib_clients tear their controllers and queues down in
# the device's unregistration (nvme_rdma_remove_one deletes every
# controller on it and waits); the host's I/O must end, not hang; the
# target's listening IDs are destroyed (DEVICE_REMOVAL) and not made
# again by nvmet-rdma when a device comes back, so the ports are taken
# down and up again. Then a new connection must work on the new device.
UNPLUG_PIDS=()
unplug() {
	local d=${BLK#/dev/} t0=$SECONDS
	UNPLUG_PIDS=()
	# Seconds of I/O under the debug kernel: 4 MiB in 4 KiB writes, 4
	# MiB in 128 KiB reads, at once.
	timeout -k 5 90 dd if="$tmp/pattern" of="$BLK" bs=4k oflag=direct conv=notrunc \
		status=none 2>"$tmp/unplug.write" &
	UNPLUG_PIDS+=($!)
	timeout -k 5 90 dd if="$BLK" of=/dev/null bs=128k count=32 iflag=direct \
		status=none 2>"$tmp/unplug.read" &
	UNPLUG_PIDS+=($!)
	wait_for 10 in_flight "$d" || { echo "no request in flight on $d"; return 1; }
	echo "# in flight on $d (read, write): $(cat /sys/block/$d/inflight | tr -s ' ')"
	timeout 60 rdma link delete "$NVMEOF_DEV" || { echo "rdma link delete: exit $?"; return 1; }
	echo "# rdma link delete $NVMEOF_DEV returned after $((SECONDS - t0)) s"
}
in_flight() {
	local r w
	read -r r w <"/sys/block/$1/inflight" && [ $((r + w)) -gt 0 ]
}
# The dds ended by themselves (with an error or complete), not by timeout.
unplug_io_ended() {
	local p rc bad=0 what=(write read) i=0
	wait_for 60 unplug_dd_gone || { echo "dd still running 60 s after the link delete"; return 1; }
	for p in "${UNPLUG_PIDS[@]}"; do
		wait "$p"
		rc=$?
		echo "# dd ${what[$i]}: exit $rc $(head -1 "$tmp/unplug.${what[$i]}")"
		[ $rc -lt 124 ] || bad=1
		i=$((i + 1))
	done
	[ $bad = 0 ] || { echo "a dd was ended by its timeout"; return 1; }
}
unplug_dd_gone() {
	local p
	for p in "${UNPLUG_PIDS[@]}"; do ! kill -0 "$p" 2>/dev/null || return 1; done
}
unplug_ctrl_gone() {
	wait_for 30 ctrl_gone || { echo "$CTRL still exists"; return 1; }
	[ ! -e "$BLK" ] || { echo "$BLK still exists"; return 1; }
	gone "$NVMEOF_DEV" || { echo "$NVMEOF_DEV still exists"; return 1; }
}
replug() {
	rdma link add "$NVMEOF_DEV" type "$NVMEOF_TYPE" netdev "$NVMEOF_NETDEV" &&
		port_active "$NVMEOF_DEV"
}
# The ports back: nvmet-rdma does not listen again by itself.
port_back() {
	if listening; then
		echo "# port 1 listens again by itself"
		return 0
	fi
	port_unlink && port_link
}

# nvmeof_variant_cases DRV: the current variant's cases through `record DRV
# CASE CMD...`, stopping at the first failure; the host is always taken
# down.
nvmeof_variant_cases() {
	local drv=$1 p=${V_LABEL:+$V_LABEL: } ok=1
	{
		if [ "$V_TARGET" != "$T_PARAMS" ]; then
			record $drv "${p}nvmet-rdma reloaded (${V_TARGET:-no parameters})" target_reload "$V_TARGET"
		elif [ -n "$V_PORT" ] && [ "$V_PORT" != "$T_PORT2" ]; then
			record $drv "${p}port 2 listens on $PORT2 with it" target_port2
		fi
	} && record $drv "${p}host connects (nvme-rdma)" host_connect &&
		{ [ -z "$V_CHECK" ] || record $drv "$p$V_WHAT" $V_CHECK; } &&
		case $V_IO in
		poll)
			io_set small
			record $drv "${p}polled O_DIRECT writes (io_uring IOPOLL)" poll_io write &&
				record $drv "${p}polled O_DIRECT reads, data intact" poll_io read &&
				record $drv "${p}the target's null_blk holds the data" on_target
			;;
		unplug)
			io_set small
			record $drv "${p}deleted under O_DIRECT I/O in flight" unplug &&
				record $drv "${p}the I/O ended (error or complete), no hang" unplug_io_ended &&
				record $drv "${p}controller, block device and RDMA device gone" unplug_ctrl_gone &&
				record $drv "${p}device added again, port ACTIVE" replug &&
				record $drv "${p}the target listens again (ports down and up)" port_back &&
				record $drv "${p}host connects again" host_connect &&
				record $drv "${p}concurrent O_DIRECT writes, $IO_WHAT" io_parallel write &&
				record $drv "${p}concurrent O_DIRECT reads, data intact" read_back &&
				record $drv "${p}the target's null_blk holds the data" on_target
			;;
		*)
			io_set $V_IO
			record $drv "${p}concurrent O_DIRECT writes, $IO_WHAT" io_parallel write &&
				record $drv "${p}concurrent O_DIRECT reads, data intact" read_back &&
				record $drv "${p}the target's null_blk holds the data" on_target
			;;
		esac &&
		record $drv "${p}disconnect" host_disconnect || ok=0
	if [ $ok = 0 ]; then
		[ -n "$CTRL" ] && echo 1 >"/sys/class/nvme/$CTRL/delete_controller" 2>/dev/null
		wait_for 30 ctrl_gone
		host_unload 2>/dev/null
	fi
	CTRL= BLK=
	[ $ok = 1 ]
}

# nvmeof_cases DRV [VARIANT...]: the target set up, each variant's cases
# (nvmeof_variant; default: the base alone) through `record DRV CASE
# CMD...` (the caller's), the target torn down. A variant that fails does
# not stop the next one. Needs $tmp/pattern (4 MiB) and a device ACTIVE on
# $NVMEOF_ADDR; the link-delete variant needs NVMEOF_DEV, NVMEOF_TYPE and
# NVMEOF_NETDEV.
nvmeof_cases() {
	local drv=$1 ok=1 v t0
	shift
	[ $# -gt 0 ] || set -- base
	if record $drv "target listens (nvmet-rdma, configfs)" target_up; then
		for v; do
			t0=$SECONDS
			nvmeof_variant "$v" && nvmeof_variant_cases $drv || ok=0
			echo "# $drv: variant $v took $((SECONDS - t0)) s"
		done
	else
		ok=0
	fi
	record $drv "host module removed (nvme-rdma)" host_unload
	record $drv "target torn down, modules removed" target_down
	[ $ok = 1 ]
}
