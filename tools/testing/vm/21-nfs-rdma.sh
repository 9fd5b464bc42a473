#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# NFS over RDMA (NFSv4.2 and NFSv3, RPC-over-RDMA version 1), the way
# blktests drives soft-RoCE: one RDMA device on a netdev of the initial
# namespace (the NFS client and knfsd make their rdma_cm IDs in the
# namespace of the process that mounts, or that starts nfsd), knfsd serving
# and the client mounting its own address, so every RPC and every chunk
# crosses the device's whole wire path. The server: rpcbind, rpc.mountd
# (NFSv3's MOUNT over TCP, and the answers to knfsd's export cache upcalls,
# which NFSv4 needs as well), a tmpfs exported with exportfs as the NFSv4
# root (fsid=0, below), NFSv4's grace and lease times at their minimum,
# rpc.nfsd with NFSv3 and NFSv4.0-4.2, then an RDMA listener on 20049
# added as the kernel's nfs-rdma.rst says (`echo rdma 20049 >
# /proc/fs/nfsd/portlist`), which must show as a listening rdma_cm ID. Then
# for each mount (NFSv3 with 1 MiB, NFSv4.2 with three rsize/wsize):
#   - mount -t nfs -o vers=4.2,proto=rdma,port=20049,sec=sys ADDR:/ (or
#     vers=3,...,mountproto=tcp,nolock ADDR:EXPORT: no rpc.statd, which
#     lockd would need), the negotiated rsize/wsize and version checked in
#     /proc/mounts, the transport (xprt: rdma) and the version in
#     /proc/self/mountstats, and for NFSv4.2 its session;
#   - before the first NFSv4 OPEN, the end of knfsd's grace period;
#   - a file of random bytes written (dd, fsync), found byte-exact in the
#     exported tmpfs (the data crossed), read back byte-exact through the
#     mount after drop_caches (the READs counted in mountstats: the client
#     cache did not answer);
#   - how the data moved: the client's chunk counts (mountstats) and the
#     server's RDMA READs and WRITEs (/proc/sys/sunrpc/svc_rdma):
#       1 MiB  read chunks for WRITE (the server RDMA READs the data) and
#              write chunks for READ (it RDMA WRITEs it), 256 pages each;
#       4 KiB  chunks too, of one page: the 4096-byte inline threshold
#              (RPC-over-RDMA's default, the client's cannot be changed
#              without SUNRPC_DEBUG) holds the RPC header as well;
#       2 KiB  inline: the data inside the SENDs, no read or write chunk,
#              no RDMA READ; RDMA WRITEs only into NFSv4 OPEN's reply
#              chunks (moved, below);
#   - unmount;
# then nfsd stopped, the export and the daemons gone, nfsd, nfs, nfsv4 and
# rpcrdma unloaded, the device deleted, the driver unloaded.
#
# It runs on rrxe first, then on rdma_rxe (the control); each case prints
# both results. A case fails if rrxe fails it; a control failure is shown
# next to it, so a bug of the ULP or of rdma_rxe is told apart from ours.
#
# Then across two hosts (pair_up: the client in h1, knfsd in h2), an rrxe
# client with an rdma_rxe server and the reverse, the NFSv4.2 1 MiB mount
# (the chunks: fast registration, RDMA READ and WRITE across the two
# drivers, and the reply chunks of NFSv4's OPEN; RRXE_NFS_XMOUNTS="1M 2K
# v3-1M" adds the inline one and NFSv3); each pairing has rrxe on one side
# and must pass. The server's rpcbind gets a mount namespace with a /run
# of its own (srv, below).
#
# NFSv4 on knfsd, as set up here (read in Linux 7.3 and nfs-utils 2.8.3):
#   - the path: NFSv4 clients walk from the server's NFSv4 root. With no
#     fsid=0 export, rpc.mountd makes a pseudo root of "/" and every
#     directory down to the export (v4root.c), and knfsd must be able to
#     decode file handles on each of their filesystems (check_export:
#     exportfs_may_export); the guest's "/" is 9p (no export operations)
#     and /tmp an overlay without nfs_export (file handles it cannot
#     decode), so that pseudo root is refused. The tmpfs is therefore the
#     NFSv4 root itself (fsid=0: rpc.mountd then makes no pseudo root):
#     NFSv4.2 mounts ADDR:/, NFSv3 mounts the export's path, as before.
#   - the grace period: knfsd answers OPEN and REMOVE with NFS4ERR_GRACE
#     for nfsv4gracetime seconds (90 by default) after nfsd starts, and the
#     client backs off up to 15 s between tries. nfsv4gracetime and
#     nfsv4leasetime go to 10, knfsd's minimum (nfsctl.c accepts 10-3600,
#     and only before the server exists); lockd's grace period
#     (nlm_grace_period, 50 s by default; knfsd hands out no delegation
#     while any grace period runs) to 10 as well, as rpc.nfsd -G does. The
#     first NFSv4 mount's first write waits for the end of the grace period
#     (v4_end_grace reads Y); with the NFSv3 mount first (the default) the
#     grace period is over by then.
#   - client tracking: there is no nfsdcld (and no rpc_pipefs for it), and
#     the kernel has no NFSD_LEGACY_CLIENT_TRACKING: at start knfsd polls
#     1 s for nfsdcld (nfsd4_cld_tracking_init, 10 times 100 ms, so that no
#     upcall waits for its 30 s timeout), logs "NFSD: Unable to initialize
#     client recovery tracking! (-110)" (pr_warn, not a WARN) and runs
#     without reboot records, which a server started afresh does not need.
#     The grace period then lasts its full 10 s.
#   - ids: sec=sys with numeric owner strings both ways (nfs and nfsd's
#     nfs4_disable_idmapping, Y by default, for AUTH_SYS; the client parses
#     a numeric string before any upcall): no rpc.idmapd, no nfsidmap.
#   - the NFSv4 client first makes its lease client with krb5i
#     (nfs4_alloc_client); with no rpc.gssd, gss_create refuses at once
#     (gssd_running) and the client uses AUTH_SYS, but rpcsec_gss_krb5 was
#     loaded for it and holds auth_rpcgss: modules_down unloads it.
#
# usage: 21-nfs-rdma.sh [DRIVER|PAIRING...]
#        (default: rrxe rxe rrxe-rxe rxe-rrxe; rxe-rxe runs the pairing
#        part on rdma_rxe alone)
# RRXE_NFS_TIMING=1 prints how long each case took; RRXE_NFS_MOUNTS and
# RRXE_NFS_XMOUNTS pick the mounts on one device and across two hosts, from
# v3-1M (NFSv3) and 1M 4K 2K (NFSv4.2), by default "v3-1M 1M 4K 2K" and
# "1M".
. "$RRXE_TOP/tools/testing/lib.sh"

drivers=() pairs=()
[ $# -gt 0 ] || set -- rrxe rxe rrxe-rxe rxe-rrxe
for a; do
	case $a in
	rrxe | rxe) drivers+=("$a") ;;
	rrxe-rxe | rxe-rrxe | rxe-rxe | rrxe-rrxe) pairs+=("$a") ;;
	*) echo "# unknown driver or pairing $a"; exit 2 ;;
	esac
done
# The mounts: NFS version, label, rsize and wsize, bytes written and read
# back, how the data must move (moved). RRXE_NFS_MOUNTS="1M 2K" picks some.
declare -A mount_def=(
	[v3-1M]="3 1MiB 1048576 $((2 << 20)) chunks"
	[1M]="4.2 1MiB 1048576 $((2 << 20)) chunks"
	[4K]="4.2 4KiB 4096 $((512 << 10)) chunks"
	[2K]="4.2 2KiB 2048 $((128 << 10)) inline")
mounts=() xmounts=()
for m in ${RRXE_NFS_MOUNTS:-v3-1M 1M 4K 2K}; do
	[ -n "${mount_def[$m]:-}" ] || { echo "# unknown mount $m (${!mount_def[*]})"; exit 2; }
	mounts+=("${mount_def[$m]}")
done
for m in ${RRXE_NFS_XMOUNTS:-1M}; do
	[ -n "${mount_def[$m]:-}" ] || { echo "# unknown mount $m (${!mount_def[*]})"; exit 2; }
	xmounts+=("${mount_def[$m]}")
done
ADDR=198.18.0.1
NFS_PORT=20049 MOUNTD_PORT=20048
svc=/proc/sys/sunrpc/svc_rdma
tmp=$(mktemp -d)
# The export, a tmpfs of its own, and the mount point. Not under /run: a
# server in a namespace of its own gets a /run of its own (server_up).
exp=$tmp/export mnt=$tmp/mnt
# Where the server and the client run: the initial namespaces (loopback),
# or the server in SRV_NS (its rpcbind in a mount namespace of its own)
# and the client in another (cross; CLI below).
SRV_NS=''
exec 9>&1
declare -A res
cases=() xcases=()

# record DRV CASE CMD...: runs CMD (in this shell: it may set variables) and
# keeps its result for the table; CMD's "# " lines are printed as they are.
record() {
	local drv=$1 c=$2 rc t0=$SECONDS
	shift 2
	if [[ $drv == *-* ]]; then
		[[ " ${xcases[*]} " == *" $c "* ]] || xcases+=("$c")
	else
		[[ " ${cases[*]} " == *" $c "* ]] || cases+=("$c")
	fi
	"$@" >"$tmp/out" 2>&1
	rc=$?
	grep '^# ' "$tmp/out"
	[ -z "${RRXE_NFS_TIMING:-}" ] || echo "# $drv: $c: $((SECONDS - t0)) s"
	if [ $rc = 0 ]; then
		res[$drv:$c]=ok
		return 0
	fi
	res[$drv:$c]="FAILED ($(grep -v '^# ' "$tmp/out" | tail -1 | tr -s '\t ' ' '))"
	grep -v '^# ' "$tmp/out" | tail -5 | sed "s/^/# $drv: $c: /"
	return 1
}

# --- The server.

# rpcbind and rpc.mountd in the foreground (-f, -F), as this script's
# children: their PIDs are known and nothing else is killed.
RPCBIND_PID='' MOUNTD_PID=''

# srv CMD...: CMD where the server runs (SRV, a command prefix, empty in
# the initial namespaces). knfsd, lockd and rpc.mountd take the network
# namespace of the process that starts them, and the nfsd filesystem the
# one of the process that mounts it; the kernel registers lockd and nfsd
# with rpcbind through /run/rpcbind.sock, a path, which reaches across
# network namespaces: a server in SRV_NS has its rpcbind in a mount
# namespace with a /run of its own (server_up), and everything of the
# server runs there (nsenter into rpcbind's namespaces).
SRV=()
srv() { "${SRV[@]}" "$@"; }
# CLI: the prefix that runs a command in the client's network namespace,
# in this mount namespace (the mount must outlive the command).
CLI=()

server_up() {
	mkdir -p "$exp" "$mnt" /run/rpcbind || return 1
	mount -t tmpfs -o size=32m rrxe-nfs "$exp" || return 1
	if [ -n "$SRV_NS" ]; then
		# ip netns exec gives the command a mount namespace of its own.
		ip netns exec "$SRV_NS" sh -c \
			'mount -t tmpfs rrxe-run /run && mkdir /run/rpcbind && exec rpcbind -f' \
			>"$tmp/rpcbind.log" 2>&1 &
	else
		rpcbind -f >"$tmp/rpcbind.log" 2>&1 &
	fi
	RPCBIND_PID=$!
	[ -z "$SRV_NS" ] || SRV=(nsenter -t "$RPCBIND_PID" -m -n)
	wait_for 10 srv rpcinfo -p 127.0.0.1 >/dev/null 2>&1 || { echo "rpcbind does not answer"; return 1; }
	modprobe -a nfsd rpcrdma || return 1
	srv mountpoint -q /proc/fs/nfsd || srv mount -t nfsd nfsd /proc/fs/nfsd || return 1
	# knfsd's largest READ/WRITE is 1/4096 of the memory per thread, at
	# most 1 MiB (nfsd_get_default_max_blksize): 512 KiB in the 3 GiB
	# guest. 1 MiB, set before the server exists.
	srv sh -c 'echo 1048576 >/proc/fs/nfsd/max_block_size' || return 1
	# NFSv4's grace and lease times at knfsd's minimum, also before the
	# server exists (EBUSY after), and lockd's grace period with them (a
	# sysctl of lockd, loaded with nfsd; rounded up to nlm_timeout, 10 s).
	srv sh -c 'echo 10 >/proc/fs/nfsd/nfsv4gracetime && echo 10 >/proc/fs/nfsd/nfsv4leasetime &&
		echo 10 >/proc/sys/fs/nfs/nlm_grace_period' || return 1
	# tmpfs has no UUID: an export of it needs an fsid. fsid=0 makes it
	# the NFSv4 root (the header: a pseudo root over this guest's "/" is
	# refused). The NFS/RDMA client uses no reserved port: insecure
	# (nfs-rdma.rst).
	srv exportfs -o rw,sync,no_root_squash,insecure,no_subtree_check,fsid=0 "198.18.0.0/16:$exp" ||
		return 1
	"${SRV[@]}" rpc.mountd -F -p $MOUNTD_PORT >"$tmp/mountd.log" 2>&1 &
	MOUNTD_PID=$!
	wait_for 10 registered mountd || { echo "rpc.mountd is not registered with rpcbind"; return 1; }
	# Two threads on TCP 2049 (the usual listener), rpc.nfsd's default
	# versions: 3 and 4 with its minor versions ("-2 +3 +4 +4.1 +4.2").
	# NFSv4's grace period starts with the threads.
	srv rpc.nfsd 2 || return 1
	NFSD_T0=$SECONDS GRACE=0
	registered nfs || { echo "nfsd is not registered with rpcbind"; return 1; }
	local v
	v=$(srv cat /proc/fs/nfsd/versions)
	echo "# nfsd versions $v, max_block_size $(srv cat /proc/fs/nfsd/max_block_size)," \
		"NFSv4 grace $(srv cat /proc/fs/nfsd/nfsv4gracetime) s, lease" \
		"$(srv cat /proc/fs/nfsd/nfsv4leasetime) s"
	[[ " $v " == *" +3 "* && " $v " == *" +4.1 "* && " $v " == *" +4.2 "* ]] ||
		{ echo "nfsd versions: $v, not +3 +4.1 +4.2"; return 1; }
}
registered() { srv rpcinfo -p 127.0.0.1 2>/dev/null | awk -v p="$1" '$5 == p { f = 1 } END { exit !f }'; }

# The end of knfsd's NFSv4 grace period (nfsv4gracetime after nfsd
# started; nfsd4_end_grace from the laundromat): v4_end_grace reads Y.
# Before it, OPEN answers NFS4ERR_GRACE and the client backs off.
NFSD_T0=0 GRACE=0
grace_over() {
	local t0=$SECONDS
	wait_for 30 grace_ended ||
		{ echo "grace period not over: v4_end_grace $(srv cat /proc/fs/nfsd/v4_end_grace)"; return 1; }
	echo "# grace period over $((SECONDS - NFSD_T0)) s after nfsd started (waited $((SECONDS - t0)) s)"
}
grace_ended() { [ "$(srv cat /proc/fs/nfsd/v4_end_grace 2>/dev/null)" = Y ]; }

# The RDMA listener, added to the running server.
rdma_listener() {
	srv sh -c "echo rdma $NFS_PORT >/proc/fs/nfsd/portlist" || return 1
	srv grep -qx "rdma $NFS_PORT" /proc/fs/nfsd/portlist ||
		{ echo "portlist: $(srv cat /proc/fs/nfsd/portlist | tr '\n' ' ')"; return 1; }
	wait_for 20 listening || { echo "no rdma_cm ID listens on $NFS_PORT"; return 1; }
	echo "# portlist: $(srv cat /proc/fs/nfsd/portlist | tr '\n' ' ')"
}
listening() { rdma res show cm_id 2>/dev/null | grep -Eq "state LISTEN.*:$NFS_PORT( |$)"; }

# nfsd stopped (no thread: the server and its listeners go), the export
# and the daemons gone, the modules unloaded.
server_down() {
	local rc=0
	[ -n "$RPCBIND_PID" ] || return 1
	timeout 60 "${SRV[@]}" sh -c 'echo 0 >/proc/fs/nfsd/threads' || { echo "no nfsd thread left: failed"; rc=1; }
	! listening || { echo "an rdma_cm ID still listens on $NFS_PORT"; rc=1; }
	srv exportfs -ua || rc=1
	stop_daemon "$MOUNTD_PID"
	MOUNTD_PID=''
	if srv mountpoint -q /proc/fs/nfsd; then srv umount /proc/fs/nfsd || rc=1; fi
	stop_daemon "$RPCBIND_PID"
	RPCBIND_PID='' SRV=()
	mountpoint -q "$exp" && { umount "$exp" || rc=1; }
	modprobe -r nfsd || rc=1
	return $rc
}
# stop_daemon PID: the daemon PID ended (TERM).
stop_daemon() {
	[ -n "$1" ] || return 0
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# The client's modules and rpcrdma gone (rpcrdma serves both sides); its
# transports are freed after the unmount, from a work item: wait for them.
# nfsv4 too: the NFSv4 client's state manager thread holds it until it
# ends. rpcsec_gss_krb5: loaded by the NFSv4 client's krb5i attempt (the
# header), it holds auth_rpcgss and sunrpc.
modules_down() {
	local left m
	wait_for 30 unload nfsv4 || { echo "nfsv4 still in use: $(cat /sys/module/nfsv4/refcnt)"; return 1; }
	for m in nfsv3 nfs rpcsec_gss_krb5 lockd; do unload $m; done
	wait_for 30 unload rpcrdma || { echo "rpcrdma still in use: $(cat /sys/module/rpcrdma/refcnt)"; return 1; }
	left=$(lsmod | awk '$1 ~ /^(nfsd|nfsv4|nfsv3|nfs|rpcrdma|lockd|sunrpc|auth_rpcgss|rpcsec_gss_krb5|grace|nfs_acl)$/ { print $1 }' | tr '\n' ' ')
	[ -z "$left" ] || { echo "still loaded: $left"; return 1; }
}
unload() { [ ! -d "/sys/module/$1" ] || modprobe -r "$1" 2>/dev/null; }

# --- The client.

# nfs_mount SIZE: mounted with rsize and wsize SIZE (bytes) over RDMA, as
# NFS version MVERS: NFSv4 from the NFSv4 root (the export, fsid=0; no
# mountproto or nolock: NFSv4 has neither MOUNT nor NLM), NFSv3 by the
# export's path.
MVERS=''
nfs_mount() {
	local o opts path
	if [ "$MVERS" = 3 ]; then
		opts=vers=3,proto=rdma,port=$NFS_PORT,mountproto=tcp,nolock path=$exp
	else
		opts=vers=$MVERS,proto=rdma,port=$NFS_PORT,sec=sys path=/
	fi
	timeout -k 5 60 "${CLI[@]}" mount -t nfs -o "$opts,rsize=$1,wsize=$1" "$ADDR:$path" "$mnt" ||
		return 1
	o=$(awk -v m="$mnt" '$2 == m { print $4 }' /proc/mounts)
	echo "# options: $o"
	[[ ",$o," == *",proto=rdma,"* ]] || { echo "not on rdma: $o"; return 1; }
	[[ ",$o," == *",vers=$MVERS,"* ]] || { echo "not vers=$MVERS: $o"; return 1; }
	[[ ",$o," == *",rsize=$1,"* ]] && [[ ",$o," == *",wsize=$1,"* ]] ||
		{ echo "rsize/wsize not $1: $o"; return 1; }
}

# mstats KEY: the words of the last line of the mount's block in
# /proc/self/mountstats whose first word is KEY (e.g. "opts:"), in the
# array MS, or fails. Read in this shell: the counters are taken around
# every transfer, and on the debug kernel each awk cost a fifth of a
# second (testing.rst, "Where the time goes").
mstats() {
	local line f on=0 found=1
	MS=()
	while IFS= read -r line; do
		read -ra f <<<"$line"
		if [ "${f[0]:-}" = device ]; then
			on=0
			[ "${f[4]:-}" = "$mnt" ] && on=1
		elif [ $on = 1 ] && [ "${f[0]:-}" = "$1" ]; then
			MS=("${f[@]}")
			found=0
		fi
	done </proc/self/mountstats
	return $found
}
# xprt_line: the RPC-over-RDMA transport line (xprt_rdma_print_stats) in
# MS: after "xprt: rdma", 10 generic counters, then read, write and reply
# chunks.
xprt_line() { mstats xprt: && [ "${MS[1]}" = rdma ]; }
# The transport, the version in the "opts:" line and, for NFSv4, the
# "nfsv4:" line (nfs_show_stats): an NFSv4.1+ session, and the lease time
# the server gave (nfsv4leasetime).
mountstats_rdma() {
	local x o v4
	xprt_line || { echo "no xprt: rdma line: $(mstats xprt: && echo "${MS[*]}")"; return 1; }
	x="${MS[*]}"
	mstats opts:
	o=${MS[1]:-}
	[[ ",$o," == *",vers=$MVERS,"* ]] || { echo "mountstats opts: not vers=$MVERS: $o"; return 1; }
	echo "# mountstats: vers=$MVERS, $x"
	[ "$MVERS" != 3 ] || return 0
	mstats nfsv4:
	v4=" ${MS[*]:1}"
	[[ ",${v4# }," == *",sessions,"* ]] || { echo "no NFSv4 session in mountstats: nfsv4:$v4"; return 1; }
	[[ $v4 =~ lease_time=[0-9]* ]]
	echo "# mountstats nfsv4: sessions, ${BASH_REMATCH[0]}"
}
# counters: "READ-ops WRITE-ops read-chunks write-chunks reply-chunks
# server-RDMA-READs server-RDMA-WRITEs", all counted since boot or mount.
counters() {
	local r=0 w=0 x="" sr sw
	mstats READ: && r=${MS[1]}
	mstats WRITE: && w=${MS[1]}
	xprt_line && x="${MS[12]} ${MS[13]} ${MS[14]}"
	read -r sr <$svc/rdma_stat_read
	read -r sw <$svc/rdma_stat_write
	echo "$r $w $x $sr $sw"
}

# bounded CMD...: CMD, given 120 s. An NFS client waiting for its server
# waits for ever (a hard mount; and a page under writeback cannot be
# killed): if CMD is still running then, what the RPCs and the QPs are
# stuck on is printed (stuck), CMD is killed, and the case fails without
# waiting for it; STUCK=1 then skips the driver's remaining mounts.
STUCK=0
bounded() {
	local pid
	"$@" &
	pid=$!
	# By the clock: a wait_for of 600 polls takes far longer than 120 s
	# in a busy guest.
	local end=$((SECONDS + 120))
	while ! ended $pid && [ $SECONDS -lt $end ]; do sleep 1; done
	if ! ended $pid; then
		STUCK=1
		echo "still running after 120 s: $1"
		stuck
		kill -KILL $pid
		wait_for 10 ended $pid || { echo "$1 cannot be killed"; return 1; }
	fi
	wait $pid
}
ended() { ! kill -0 "$1" 2>/dev/null; }

# stuck: as comments, the client's RPC tasks and transport, the mount's
# RPC-over-RDMA counters, the device's QPs and non-zero counters, and the
# kernel stacks of every task in D state.
stuck() {
	# Each look bounded (a stuck transport may hold what it reads) and
	# shown at once too, on the script's own output (fd 9), not only when
	# the case ends.
	stuck_looks 2>&1 | tee /dev/fd/9
}
stuck_looks() {
	local f p d
	for f in /sys/kernel/debug/sunrpc/rpc_xprt/*/info; do timeout 5 sed 's/^/# xprt: /' "$f"; done
	for f in /sys/kernel/debug/sunrpc/rpc_clnt/*/tasks; do timeout 5 head -20 "$f" | sed 's/^/# rpc task: /'; done
	echo "# mountstats: $(timeout 5 cat /proc/self/mountstats | grep 'xprt:' | tr -s '\t ' ' ')"
	echo "# server: RDMA READs $(cat $svc/rdma_stat_read), WRITEs $(cat $svc/rdma_stat_write)," \
		"receives $(cat $svc/rdma_stat_recv), SQ starved $(cat $svc/rdma_stat_sq_starve)"
	timeout 10 rdma res show qp 2>&1 | grep -v 'type GSI' | sed 's/^/# /'
	timeout 10 rdma res show cm_id 2>&1 | sed 's/^/# /'
	for d in $DEV; do
		timeout 10 grep -H . "/sys/class/infiniband/$d/ports/1/hw_counters/"* 2>/dev/null |
			awk -F: -v d="$d" '$NF != 0 { sub(".*/", "", $1); print "# " d " counter " $1 " " $NF }'
	done
	for p in /proc/[0-9]*; do
		[ "$(awk '{ print $3 }' "$p/stat" 2>/dev/null)" = D ] || continue
		echo "# D state: $(cat "$p/comm") ${p#/proc/}"
		timeout 5 sed 's/^/#   /' "$p/stack"
	done
}

# nfs_write BYTES: the pattern's first BYTES written to a new file, fsynced.
nfs_write() {
	C0=$(counters)
	bounded dd if="$tmp/pattern" of="$mnt/data" bs=1M count="$1" \
		iflag=count_bytes conv=fsync status=none
}
on_server() { cmp -n "$1" "$tmp/pattern" "$exp/data" && [ "$(stat -c %s "$exp/data")" = "$1" ]; }
# nfs_read BYTES: the client's caches dropped, the file read back.
nfs_read() {
	local c r n
	sync
	echo 3 >/proc/sys/vm/drop_caches
	c=$(counters)
	read -r r _ <<<"$c"
	bounded cmp -n "$1" "$tmp/pattern" "$mnt/data" || return 1
	[ "$(stat -c %s "$mnt/data")" = "$1" ] || { echo "size $(stat -c %s "$mnt/data"), not $1"; return 1; }
	C1=$(counters)
	read -r n _ <<<"$C1"
	[ "$n" -gt "$r" ] || { echo "no READ went to the server"; return 1; }
	echo "# $((n - r)) READs"
}
# moved HOW: how the data between nfs_write and the end of nfs_read went:
# chunks (read and write chunks, the server's RDMA READs and WRITEs) or
# inline (no read or write chunk, no RDMA READ; the server's RDMA WRITEs
# only into reply chunks, one each). NFSv4's OPEN always offers a reply
# chunk: its largest reply (NFS4_dec_open_sz, with a LAYOUTGET of up to
# 4 KiB) is over the inline threshold, and knfsd then sends the reply
# through the chunk (svc_rdma_sendto: an RDMA WRITE, then an RDMA_NOMSG
# SEND). NFSv3 uses none there.
moved() {
	local a b d=()
	read -ra a <<<"$C0"
	read -ra b <<<"$C1"
	for i in 0 1 2 3 4 5 6; do d[i]=$((b[i] - a[i])); done
	echo "# ${d[1]} WRITEs, ${d[0]} READs; client: ${d[2]} read chunks, ${d[3]} write chunks," \
		"${d[4]} reply chunks; server: ${d[5]} RDMA READs, ${d[6]} RDMA WRITEs"
	case $1 in
	chunks)
		[ "${d[2]}" -gt 0 ] && [ "${d[3]}" -gt 0 ] && [ "${d[5]}" -gt 0 ] && [ "${d[6]}" -gt 0 ] ||
			{ echo "not moved by RDMA READ and WRITE"; return 1; } ;;
	inline)
		[ "${d[2]}" = 0 ] && [ "${d[3]}" = 0 ] && [ "${d[5]}" = 0 ] && [ "${d[6]}" -le "${d[4]}" ] ||
			{ echo "chunks used"; return 1; } ;;
	esac
}
nfs_umount() {
	timeout -k 5 60 umount "$mnt" || return 1
	! mountpoint -q "$mnt" || { echo "$mnt still mounted"; return 1; }
}

# nfs_cases DRV VERS LABEL SIZE BYTES HOW: one mount's cases, NFS version
# VERS. Before the first NFSv4 write after nfsd started, the end of its
# grace period (the first OPEN would wait for it).
nfs_cases() {
	local drv=$1 l="NFSv$2 $3" size=$4 bytes=$5 how=$6 ok=1
	MVERS=$2
	record $drv "$l: mounted over RDMA, rsize/wsize $size" nfs_mount $size &&
		record $drv "$l: mountstats shows xprt: rdma, vers=$MVERS" mountstats_rdma &&
		grace_once $drv &&
		record $drv "$l: $((bytes >> 10)) KiB written (dd, fsync)" nfs_write $bytes &&
		record $drv "$l: the export holds the bytes" on_server $bytes &&
		record $drv "$l: read back after drop_caches, byte-exact" nfs_read $bytes &&
		record $drv "$l: data moved $how" moved $how || ok=0
	if [ $STUCK = 0 ] && mountpoint -q "$mnt"; then
		rm -f "$mnt/data"
		record $drv "$l: unmounted" nfs_umount || ok=0
	fi
	# Stuck: detached, whatever waits in it.
	mountpoint -q "$mnt" && umount -f -l "$mnt"
	rm -f "$exp/data"
	[ $ok = 1 ]
}
# grace_once DRV: for an NFSv4 mount, the grace period's end, once a server.
grace_once() {
	[ "$MVERS" != 3 ] && [ $GRACE = 0 ] || return 0
	GRACE=1
	record "$1" "knfsd's NFSv4 grace period over" grace_over
}

# run DRV: the whole sequence on an RDMA device of type DRV.
run() {
	local drv=$1 dev=nfs$1 c
	DEV=$dev STUCK=0
	echo "# --- $drv: $dev on a0 ($ADDR), knfsd and the client on the same address"
	veth_pair
	case $drv in
	rxe) modprobe rdma_rxe ;;
	rrxe) load_rrxe ;;
	esac
	if record $drv "device" rdma link add $dev type $drv netdev a0 &&
		record $drv "port ACTIVE" port_active $dev &&
		record $drv "knfsd, rpc.mountd, rpcbind up, tmpfs exported" server_up &&
		record $drv "knfsd listens on rdma $NFS_PORT" rdma_listener; then
		for c in "${mounts[@]}"; do
			[ $STUCK = 0 ] || break
			# shellcheck disable=SC2086 # the mount's words
			nfs_cases $drv $c
		done
	fi
	record $drv "nfsd stopped, export and daemons gone" server_down
	record $drv "nfs, nfsd, rpcrdma unloaded" modules_down
	rdma link delete $dev 2>/dev/null
	record $drv "device deleted" gone $dev 100
	case $drv in
	rxe) record $drv "driver unloaded" rmmod rdma_rxe ;;
	rrxe) record $drv "driver unloaded" unload_rrxe ;;
	esac
	ip link del a0
}

# cross CLIENT-SERVER: the client on a device of type CLIENT in h1, knfsd
# on one of type SERVER in h2 (pair_up), the mounts of xmounts.
cross() {
	local p=$1 c
	STUCK=0
	echo "# --- $p: client on ${p%-*}1 in h1 (198.18.1.1), knfsd on ${p#*-}2 in h2 (198.18.1.2)"
	if record "$p" "devices on both hosts, ports ACTIVE" pair_up "${p%-*}" "${p#*-}"; then
		SRV_NS=$PAIR_NS2 ADDR=$PAIR_IP2 DEV="$DEV1 $DEV2"
		CLI=(nsenter --net="/run/netns/$PAIR_NS1")
		if record "$p" "knfsd, rpc.mountd, rpcbind up, tmpfs exported" server_up &&
			record "$p" "knfsd listens on rdma $NFS_PORT" rdma_listener; then
			for c in "${xmounts[@]}"; do
				[ $STUCK = 0 ] || break
				# shellcheck disable=SC2086 # the mount's words
				nfs_cases "$p" $c
			done
		fi
		record "$p" "nfsd stopped, export and daemons gone" server_down
		record "$p" "nfs, nfsd, rpcrdma unloaded" modules_down
	fi
	# The namespace where knfsd ran does not exit (in 90 s, whichever driver
	# served: testing.rst, "Namespaces that would not go"): a reference
	# left behind, not slow work; there is no exit to wait for.
	NETNS_WAIT_S=15 pair_down
	SRV_NS='' CLI=() ADDR=198.18.0.1
}

head -c $((4 << 20)) /dev/urandom >"$tmp/pattern"
for drv in "${drivers[@]}"; do run "$drv"; done
if [ ${#pairs[@]} -gt 0 ]; then
	load_drivers "${pairs[@]}"
	for p in "${pairs[@]}"; do cross "$p"; done
	unload_drivers
fi

for c in "${cases[@]}"; do
	line="$c: rrxe ${res[rrxe:$c]:-not run}, rdma_rxe ${res[rxe:$c]:-not run}"
	if [[ " ${drivers[*]} " != *" rrxe "* ]]; then
		echo "# $line"
	elif [ "${res[rrxe:$c]:-}" = ok ]; then
		ok "$line"
	else
		not_ok "$line"
	fi
done
# Across two hosts: both pairings have rrxe on one side, each must pass.
for c in "${xcases[@]}"; do
	line="client-server, $c:" any=0 bad=0
	for p in "${pairs[@]}"; do
		r=${res[$p:$c]:-not run}
		line+=" $p $r,"
		[[ $p == *rrxe* ]] || continue
		any=1
		[ "$r" = ok ] || bad=1
	done
	line=${line%,}
	if [ $any = 0 ]; then
		echo "# $line"
	elif [ $bad = 0 ]; then
		ok "$line"
	else
		not_ok "$line"
	fi
done
rm -rf "$tmp"
finish
