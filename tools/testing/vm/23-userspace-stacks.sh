#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Userspace RDMA stacks over rrxe, rdma_rxe as the control: what an
# application built on libfabric, UCX, rsockets or qperf does with the
# device, between two hosts (pair_up: network namespaces h1_N and h2_N
# joined by a veth pair, the server in h2_N, the client in h1_N), through
# rdma-core's rxe provider:
#   - qperf (server `qperf -lp PORT`): rc_bw, rc_lat, rc_rdma_read_bw,
#     rc_rdma_write_bw for 2 s each over rdma_cm (-cm1: without it qperf
#     sets no GRH, which RoCE needs); ud_lat and ud_bw must be refused:
#     qperf makes its UD address handles without a GRH, and ib_core
#     rejects such an AH on any RoCE device (EINVAL, rdma_check_ah_attr),
#     rdma_rxe's as well;
#   - rsockets: rstream -T v (each transfer's data verified) at 4 KiB and
#     64 KiB, riostream (RDMA writes through riowrite) at 4 KiB;
#   - libfabric (libfabric-bin): fi_info -p verbs lists the device for
#     msg endpoints and for verbs;ofi_rxm RDM ones; fi_pingpong with data
#     checks (-c) over verbs msg endpoints (RC through rdma_cm), each side
#     given its domain and the server its address;
#   - UCX (ucx-utils): ucx_info -d lists rc_verbs and ud_verbs on DEV:1;
#     ucx_perftest (-P 0: its socket RTE; PERFTEST), UCT am_lat and
#     put_bw on rc_verbs, 64 bytes, and get_bw, 4 KiB (zero-copy: 64
#     bytes is refused, "smaller than min supported (65)", on both
#     drivers), 20 iterations after 2 of warm-up;
#   - Open MPI 5 over UCX (openmpi-bin): rrxe_mpi (tools/testing/xfer),
#     two ranks that check what they exchange (ping-pongs of 1 B, 4 KiB
#     and 1 MiB, an allreduce), one per host: mpirun in h2_N, rank 0
#     there, rank 1 in h1_N. Two hosts for Open MPI: each side runs in a
#     UTS namespace of its own named after its namespace, h1-N and h2-N
#     (unshare --uts; with one host name for both, PRRTE counts one node
#     with one slot), and PRRTE's ssh launcher has a stand-in for its
#     agent (--prtemca plm_ssh_agent) that runs the command it is given
#     in the other host's namespace (ip netns exec); --host h2-N:1,h1-N:1;
#     PRRTE's out-of-band TCP (prte_if_include; oob_tcp_if_include is its
#     deprecated synonym) and btl tcp kept on the pairing's subnet;
#     OMPI_ALLOW_RUN_AS_ROOT and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM (root).
#     `mpi tcp`: pml ob1, btl tcp,self (the control: Open MPI and the
#     namespaces without RDMA); `mpi ucx TLS`: pml ucx with UCX_TLS=TLS
#     (tcp, rc_v, ud_v), --mca pml_ucx_devices any (pml ucx otherwise
#     takes itself out on any device that is not mlx*), UCX_NET_DEVICES
#     each rank's RDMA device port (its veth for tcp), set by a wrapper
#     (mpi-rank) from the host name; UCX_TLS passed on with -x. Each job
#     is bounded by RRXE_MPI_TIMEOUT (180 s), and what it leaves in the
#     namespaces is killed. First run (2026-11-27, with the UCT cases,
#     rrxe-rrxe and rxe-rxe at once: 461 s for the 8 cases): every case
#     ok on rrxe; on rdma_rxe the tcp controls ok, ucx rc_v and ud_v
#     abort (UCX and UD's sl, below). Marked + for their time.
# The UCT cases are marked + too (run when named): in a make check-like
# boot (2026-11-26, both pairings at once, the guest 86% busy) the
# ucx_perftest server did not listen within 30 s on either driver (its
# Open MPI start-up, "OFI call fail"), where they had passed in four runs;
# in a later full run the client's connect() was refused on both drivers
# after the server had listened: most likely the server's 40 s had run
# out while the client was still in its own Open MPI start-up. Servers
# now have twice the client's time (duo), and ucx_perftest's singleton
# opens only ob1 and btl self (PERFTEST): with both, the UCT cases passed
# (2026-11-27) on both drivers, but ud_verbs on rdma_rxe (the sl above).
# Cases marked + in `cases` run only when named: they fail on rdma_rxe as
# on rrxe, a limitation of the stack or of soft-RoCE (testing.rst,
# "Userspace stacks"): libfabric's RDM endpoints (verbs;ofi_rxm: the
# server's fi_enable fails with EINVAL; verbs;ofi_rxd: the server's
# fi_getinfo fails with ENODATA), and everything of UCX that uses
# ud_verbs on rdma_rxe, which hangs there: UCT on ud_verbs, UCP on ud_v,
# and UCP on rc_v, whose wire-up goes through UD. UCX 1.18 drops every UD
# datagram whose completion's sl does not say IPv4 (2, as mlx5 reports)
# while the GID it uses is an IPv4 one; rdma_rxe reports 0. rrxe reports
# mlx5's value, and UCP on ud_v and rc_v works on it (2026-11-26; not in
# the default cases for their time: about a minute a case on the debug
# kernel). With UCX_TLS=rc_verbs, or rc_verbs,tcp, ucp_ep_create finds no
# auxiliary transport on both drivers: those fail at once.
# Each case runs in every pairing; the table at the end prints each case
# with the result of every pairing side by side (and, as comments, the
# figure each tool printed). A case fails if a pairing with rrxe on
# either side fails it; a failure of rxe-rxe alone (the control) is
# shown next to it, a limitation of the stack or of rdma_rxe.
#
# Tiny runs: the test kernel (KASAN, lockdep, kmemleak) under TCG takes
# ~10 ms for a 64-byte round trip and moves ~1 MB/s, so a case is at most a
# few hundred kilobytes (rrxe_mpi's 1 MiB ping-pong: 6 MiB); every
# command has its own timeout.
#
# usage: 23-userspace-stacks.sh [PAIR...] [CASE...]
#   PAIR  CLIENT-SERVER device types (rrxe-rrxe, rxe-rxe, rrxe-rxe,
#         rxe-rrxe); default $RRXE_PAIRS, else rrxe-rrxe rxe-rxe.
#   CASE  the first word of case names (qperf, ucx, uct, mpi, ...: see
#         `cases`), or "all"; default all but those marked +.
# The pairings run at the same time (run_pairings); RRXE_SERIAL=1 runs
# them one after the other. RRXE_CASE_TIMEOUT (40) bounds each command.
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

T=${RRXE_CASE_TIMEOUT:-40}

# name | function and arguments (run in the pairing, after pairing_up).
cases=(
	"ucx_info|ucx_devices"
	"fi_info|fi_devices"
	"qperf rc_lat|qperf_case rc_lat"
	"qperf rc_bw|qperf_case rc_bw"
	"qperf rc_rdma_read_bw|qperf_case rc_rdma_read_bw"
	"qperf rc_rdma_write_bw|qperf_case rc_rdma_write_bw"
	"qperf ud_lat (refused)|qperf_ud ud_lat"
	"qperf ud_bw (refused)|qperf_ud ud_bw"
	"rstream -T v 4k|rsocket_case rstream 4096 10"
	"rstream -T v 64k|rsocket_case rstream 65536 4"
	"riostream 4k|rsocket_case riostream 4096 10"
	"fi_pingpong verbs msg|fi_case msg verbs"
	"+uct rc_verbs am_lat|uct_case rc_verbs am_lat 64"
	"+uct rc_verbs put_bw|uct_case rc_verbs put_bw 64"
	"+uct rc_verbs get_bw 4k|uct_case rc_verbs get_bw 4096 -D zcopy"
	"+fi_pingpong verbs;ofi_rxm rdm|fi_case rdm verbs;ofi_rxm"
	"+fi_pingpong verbs;ofi_rxd rdm|fi_case rdm verbs;ofi_rxd"
	"+ucx rc_v tag_lat|ucp_case rc_v tag_lat"
	"+ucx rc_v ucp_put_bw|ucp_case rc_v ucp_put_bw"
	"+ucx ud_v tag_lat|ucp_case ud_v tag_lat"
	"+ucx rc_verbs,tcp tag_lat|ucp_case rc_verbs,tcp tag_lat"
	"+ucx rc_verbs,tcp tag_bw|ucp_case rc_verbs,tcp tag_bw"
	"+ucx rc_verbs,tcp ucp_get|ucp_case rc_verbs,tcp ucp_get"
	"+uct ud_verbs am_lat|uct_case ud_verbs am_lat 64"
	"+mpi tcp|mpi_case ob1"
	"+mpi ucx tcp|mpi_case ucx tcp"
	"+mpi ucx rc_v|mpi_case ucx rc_v"
	"+mpi ucx ud_v|mpi_case ucx ud_v"
)

parse_pairs --words "rrxe-rrxe rxe-rxe" "$@"
selected=()
for c in "${cases[@]}"; do
	name=${c%%|*}
	if [ ${#words[@]} = 0 ]; then
		[ "${name:0:1}" = + ] || selected+=("$c")
	elif [[ " ${words[*]} " == *" all "* ]] || [[ " ${words[*]} " == *" ${name#+}"* ]] ||
		{ n=${name#+} && [[ " ${words[*]} " == *" ${n%% *} "* ]]; }; then
		selected+=("${c#+}")
	fi
done
[ ${#selected[@]} = 0 ] && { echo "# no case matches: ${words[*]}"; exit 2; }
RES=$(mktemp -d /tmp/stacks.XXXXXX)
echo "# pairings (client-server): ${pairs[*]}; ${#selected[@]} cases, ${T}s per command at most"

# --- Running a server and its client.

# in1 CMD... / in2 CMD...: CMD in the client's (h1) namespace, bounded by
# T, or in the server's (h2), bounded by 2 T: a server lives through its
# own start-up and its client's whole run.
in1() { ip netns exec "$PAIR_NS1" timeout -k 5 "$T" "$@"; }
in2() { ip netns exec "$PAIR_NS2" timeout -k 5 $((2 * T)) "$@"; }

# duo NAME WAIT PORT SERVER... -- CLIENT...: SERVER in h2 (its output in
# $TRAFFIC_TMP/NAME.server), once it listens (WAIT: tcp, a TCP socket on
# PORT; cm, an rdma_cm ID on PORT), then CLIENT in h1 (NAME.client). Both
# must exit 0. On failure, the reason and both outputs' last lines. The
# server is bounded by 2 T (in2): bounded by T as the client is, a
# server slow to start (ucx_perftest's Open MPI start-up: over 30 s in a
# busy guest) was killed while its client was still starting, and the
# client's connect() was refused although the server had listened.
duo() {
	local name=$1 wait=$2 port=$3 srv=() cli=() pid crc src why=''
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	local so=$TRAFFIC_TMP/$name.server co=$TRAFFIC_TMP/$name.client
	in2 "${srv[@]}" >"$so" 2>&1 &
	pid=$!
	if [ "$wait" = tcp ]; then
		wait_for 30 tcp_listening "$PAIR_NS2" "$port"
	else
		wait_for 30 cm_listening "$PAIR_NS2" "$port"
	fi || echo "# $name: the server does not listen on $port after 30 s"
	in1 "${cli[@]}" >"$co" 2>&1
	crc=$?
	stop_after $pid $((crc == 0 ? 20 : 5))
	src=$?
	if [ $crc = 124 ] || [ $crc = 137 ]; then
		why="client timed out after ${T}s"
	elif [ $crc != 0 ]; then
		why="client exit $crc"
	elif [ $src = 124 ] || [ $src = 137 ]; then
		why="server did not finish"
	elif [ $src != 0 ]; then
		why="server exit $src"
	fi
	[ -z "$why" ] && return 0
	say_why "$why" "$so" "$co" "${srv[*]}" "${cli[*]}"
	return 1
}

# say_why WHY SERVER_OUT CLIENT_OUT SERVER_CMD CLIENT_CMD: a failure's
# reason (on stdout: the table's cell) and, as comments, the commands and
# the last lines of their outputs.
say_why() {
	echo "$1"
	echo "#   server: $4"
	[ -n "$2" ] && tail -6 "$2" | sed 's/^/#     /'
	echo "#   client: $5"
	tail -6 "$3" | sed 's/^/#     /'
}

# --- The cases. Each prints the figure for the table (FIGURE: ...), and
# on failure its reason last.

# ucx_info -d (UCX_NET_DEVICES=DEV1:1): rc_verbs and ud_verbs on DEV1:1.
ucx_devices() {
	local o=$TRAFFIC_TMP/ucx_info tl missing=
	in1 env UCX_NET_DEVICES="$DEV1:1" ucx_info -d >"$o" 2>&1 || { echo "ucx_info -d failed: $(tail -1 "$o")"; return 1; }
	for tl in rc_verbs ud_verbs; do
		awk -v tl="$tl" -v d="$DEV1:1" '
			$2 == "Transport:" { t = $3 }
			$2 == "Device:" && t == tl && $3 == d { f = 1 }
			END { exit !f }' "$o" || missing+=" $tl"
	done
	echo "FIGURE: rc_verbs, ud_verbs"
	[ -z "$missing" ] || { echo "no$missing on $DEV1:1"; return 1; }
}

# fi_info: the device as a verbs msg domain and a verbs;ofi_rxm RDM one.
fi_devices() {
	local o=$TRAFFIC_TMP/fi_info
	in1 fi_info -p verbs -d "$DEV1" >"$o" 2>&1 || { echo "fi_info -p verbs failed: $(tail -1 "$o")"; return 1; }
	fi_has "$o" verbs FI_EP_MSG || { echo "no verbs FI_EP_MSG on $DEV1"; return 1; }
	in1 fi_info -p 'verbs;ofi_rxm' -d "$DEV1" >"$o" 2>&1 || { echo "fi_info -p 'verbs;ofi_rxm' failed: $(tail -1 "$o")"; return 1; }
	fi_has "$o" 'verbs;ofi_rxm' FI_EP_RDM || { echo "no verbs;ofi_rxm FI_EP_RDM on $DEV1"; return 1; }
	echo "FIGURE: msg, rdm"
}
# fi_has FILE PROVIDER TYPE: fi_info's output lists DEV1 for PROVIDER
# with endpoint type TYPE.
fi_has() {
	awk -v p="$2" -v t="$3" -v d="$DEV1" '
		$1 == "provider:" { prov = $2 } $1 == "domain:" { dom = $2 }
		$1 == "type:" && prov == p && dom == d && $2 == t { f = 1 }
		END { exit !f }' "$1"
}

# qperf's server: one per pairing, for all its tests (it serves one
# client after another until it is killed).
QPERF_PID=
qperf_server() {
	[ -n "$QPERF_PID" ] && return 0
	ip netns exec "$PAIR_NS2" qperf -lp "$QPERF_PORT" >"$TRAFFIC_TMP/qperf.server" 2>&1 &
	QPERF_PID=$!
	wait_for 30 tcp_listening "$PAIR_NS2" "$QPERF_PORT" "$QPERF_PID" || { echo "qperf's server does not listen"; return 1; }
}
qperf_stop() {
	[ -n "$QPERF_PID" ] || return 0
	kill "$QPERF_PID" 2>/dev/null
	wait "$QPERF_PID" 2>/dev/null
	QPERF_PID=
}
# qperf_case TEST: 2 s of TEST over rdma_cm; its latency or bandwidth.
qperf_case() {
	local o=$TRAFFIC_TMP/qperf.$1 cmd=(qperf -lp "$QPERF_PORT" -t 2 -cm1 "$PAIR_IP2" "$1")
	qperf_server || return 1
	if ! in1 "${cmd[@]}" >"$o" 2>&1 || ! grep -Eq '(latency|bw) +=' "$o"; then
		say_why "$(tail -1 "$o")" "" "$o" "qperf -lp $QPERF_PORT" "${cmd[*]}"
		return 1
	fi
	echo "FIGURE: $(awk '$2 == "=" { print $3, $4 }' "$o")"
}
# qperf_ud TEST: refused with EINVAL when qperf makes its address handle
# (no GRH), on whichever side gets there first: the client fails, and its
# output or the server's log (since the test started) says so.
qperf_ud() {
	local o=$TRAFFIC_TMP/qperf.$1 cmd=(qperf -lp "$QPERF_PORT" -t 2 "$PAIR_IP2" "$1") from
	qperf_server || return 1
	from=$(($(wc -c <"$TRAFFIC_TMP/qperf.server") + 1))
	if ! in1 "${cmd[@]}" >"$o" 2>&1 &&
		{ tail -c +"$from" "$TRAFFIC_TMP/qperf.server"; cat "$o"; } |
		grep -q 'failed to create address handle: Invalid argument'; then
		echo "FIGURE: AH refused"
		return 0
	fi
	say_why "not refused as on any RoCE device: $(tail -1 "$o")" "$TRAFFIC_TMP/qperf.server" "$o" \
		"qperf -lp $QPERF_PORT" "${cmd[*]}"
	return 1
}

# rsocket_case TOOL SIZE COUNT: TOOL (rstream -T v, or riostream) with
# COUNT transfers of SIZE bytes each way; the client's usec/xfer.
rsocket_case() {
	local tool=$1 port=$((TRAFFIC_PORT + 10)) opts=(-S "$2" -C "$3")
	TRAFFIC_PORT=$((TRAFFIC_PORT + 1))
	[ "$tool" = rstream ] && opts+=(-T v)
	duo "$tool-$2" cm "$port" "$tool" "${opts[@]}" -b "$PAIR_IP2" -p "$port" -- \
		"$tool" "${opts[@]}" -s "$PAIR_IP2" -p "$port" || return 1
	echo "FIGURE: $(awk '$1 == "custom" { print $NF " us/xfer" }' "$TRAFFIC_TMP/$tool-$2.client")"
}

# fi_case EP PROVIDER: fi_pingpong, 10 iterations of 64 and 4096 bytes,
# checked (-c); the device and address named on both sides (the verbs
# provider's first domain is not always the namespace's).
fi_case() {
	local ep=$1 prov=$2 port=$((TRAFFIC_PORT + 10)) name=fi-$1-${2//;/-} opts
	TRAFFIC_PORT=$((TRAFFIC_PORT + 1))
	opts=(-p "$prov" -e "$ep" -I 10 -S 64 -c)
	local dom1=$DEV1 dom2=$DEV2
	[[ $prov == *ofi_rxd ]] && dom1=$DEV1-dgram dom2=$DEV2-dgram
	duo "$name" tcp "$port" fi_pingpong "${opts[@]}" -B "$port" -d "$dom2" -s "$PAIR_IP2" -- \
		fi_pingpong "${opts[@]}" -P "$port" -d "$dom1" "$PAIR_IP2" || return 1
	echo "FIGURE: $(awk '$1 == "64" { print $(NF - 1) " us/xfer" } ' "$TRAFFIC_TMP/$name.client")"
}

# PERFTEST: ucx_perftest with its socket RTE (-P 0). Debian builds it with
# Open MPI, and it calls MPI_Init_thread whenever its stdin is not a
# terminal, -P 0 or not (UCX 1.18, perftest.c's main, before it parses
# its options): a singleton whose start-up opens every pml and btl,
# libfabric's providers ("OFI call fail") and UCX's devices among them.
# ob1 and btl self only: the singleton is not used, and starts about
# twice as fast (0.52 s and 0.23 s on a host without RDMA devices).
PERFTEST=(env OMPI_MCA_pml=ob1 OMPI_MCA_btl=self ucx_perftest -P 0)

# ucp_case TLS TEST: ucx_perftest's UCP TEST, 64 bytes, 20 iterations (2
# of warm-up), with UCX_TLS=TLS on each side's device.
ucp_case() {
	local tls=$1 t=$2 port=$((TRAFFIC_PORT + 10)) name=ucp-$1-$2
	TRAFFIC_PORT=$((TRAFFIC_PORT + 1))
	duo "$name" tcp "$port" env UCX_TLS="$tls" UCX_NET_DEVICES="$DEV2:1" "${PERFTEST[@]}" -p "$port" -- \
		env UCX_TLS="$tls" UCX_NET_DEVICES="$DEV1:1" \
		"${PERFTEST[@]}" -p "$port" -t "$t" -n 20 -w 2 -s 64 -f "$PAIR_IP2" || return 1
	echo "FIGURE: $(ucx_figure "$TRAFFIC_TMP/$name.client")"
}
# uct_case TL TEST SIZE [ARGS...]: ucx_perftest's UCT TEST on transport
# TL, messages of SIZE bytes (ARGS: -D zcopy for get, which has no short
# layout, and whose zero-copy wants more than 64 bytes).
uct_case() {
	local tl=$1 t=$2 size=$3 port=$((TRAFFIC_PORT + 10)) name=uct-$1-$2
	shift 3
	TRAFFIC_PORT=$((TRAFFIC_PORT + 1))
	duo "$name" tcp "$port" "${PERFTEST[@]}" -p "$port" -d "$DEV2:1" -x "$tl" -- \
		"${PERFTEST[@]}" -p "$port" -d "$DEV1:1" -x "$tl" -t "$t" -n 20 -w 2 -s "$size" -f "$@" "$PAIR_IP2" ||
		return 1
	echo "FIGURE: $(ucx_figure "$TRAFFIC_TMP/$name.client")"
}
# ucx_figure FILE: from ucx_perftest -f's final line, the average latency
# or overhead and the bandwidth.
ucx_figure() {
	grep -aE '^ *(Final:)? *[0-9]+ +[0-9.]+ +[0-9.]+' "$1" | tail -1 |
		awk '{ if ($1 == "Final:") $1 = ""; $0 = $0; print $3 " us, " $5 " MB/s" }'
}

# --- Open MPI: two hosts of one job (see the header).

# mpi_hosts: the pairing's two MPI hosts (its namespaces' names, "_" made
# "-": h1-N and h2-N), as MPI_HOST1 and MPI_HOST2, and, written into
# $TRAFFIC_TMP once, MPI_AGENT (PRRTE's ssh stand-in) and MPI_RANK (the
# ranks' wrapper: each rank's UCX_NET_DEVICES from its host name).
mpi_hosts() {
	MPI_HOST1=${PAIR_NS1//_/-} MPI_HOST2=${PAIR_NS2//_/-}
	MPI_AGENT=$TRAFFIC_TMP/mpi-ssh MPI_RANK=$TRAFFIC_TMP/mpi-rank
	[ -x "$MPI_AGENT" ] && return 0
	# ssh [OPTION...] HOST COMMAND...: COMMAND (a shell command line, as
	# ssh gives it to the remote shell) in HOST's network namespace, in a
	# UTS namespace of its own named HOST.
	cat >"$MPI_AGENT" <<-EOF
		#!/bin/sh
		while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
		case \$1 in
		$MPI_HOST1) ns=$PAIR_NS1 ;;
		$MPI_HOST2) ns=$PAIR_NS2 ;;
		*) echo "mpi-ssh: no host \$1" >&2; exit 255 ;;
		esac
		host=\$1
		shift
		exec ip netns exec "\$ns" unshare --uts sh -c 'hostname "\$1" && exec sh -c "\$2"' sh "\$host" "\$*"
	EOF
	# mpi-rank PROGRAM...: PROGRAM with UCX_NET_DEVICES set to
	# MPI_DEVS1 on host 1, MPI_DEVS2 on host 2 (both -x'd by mpi_case),
	# if not empty.
	cat >"$MPI_RANK" <<-EOF
		#!/bin/sh
		case \$(hostname) in
		$MPI_HOST1) d=\$MPI_DEVS1 ;;
		$MPI_HOST2) d=\$MPI_DEVS2 ;;
		*) echo "mpi-rank: on an unknown host, \$(hostname)" >&2; exit 2 ;;
		esac
		[ -z "\$d" ] || export UCX_NET_DEVICES="\$d"
		exec "\$@"
	EOF
	chmod +x "$MPI_AGENT" "$MPI_RANK"
}

# mpi_case PML [TLS]: rrxe_mpi (tools/testing/xfer; its ping-pongs and
# allreduces check their data) as two ranks, one per host: mpirun in h2
# (host h2-N, in a UTS namespace of its own), rank 0 there and rank 1 in
# h1 through PRRTE's ssh launcher, whose agent is mpi_hosts' stand-in. PML
# ob1: btl tcp,self over the pairing's veth (the control: Open MPI and the
# namespaces without RDMA); PML ucx: UCX_TLS=TLS, UCX_NET_DEVICES each
# host's RDMA device port (TLS tcp: each host's veth). Bounded by MPI_T.
MPI_T=${RRXE_MPI_TIMEOUT:-180}
mpi_case() {
	local pml=$1 tls=${2:-} mpi net=${PAIR_IP1%.*}.0/24 o name rc why='' cmd opts
	name=mpi-$pml${tls:+-$tls}
	o=$TRAFFIC_TMP/$name.out
	mpi=$(xfer_bin rrxe_mpi) || { echo "rrxe_mpi does not build"; return 1; }
	mpi_hosts
	opts=(-n 2 --host "$MPI_HOST2:1,$MPI_HOST1:1"
		--prtemca plm_ssh_agent "$MPI_AGENT" --prtemca prte_if_include "$net")
	local envs=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
	if [ "$pml" = ob1 ]; then
		opts+=(--mca pml ob1 --mca btl "tcp,self" --mca btl_tcp_if_include "$net")
		envs+=(MPI_DEVS1= MPI_DEVS2=)
	else
		# pml ucx takes itself out unless a device matches
		# pml_ucx_devices (mlx* by default) with one of pml_ucx_tls's
		# transports (rc_verbs is one); tcp: any transport, so the
		# control does not depend on the RDMA devices.
		opts+=(--mca pml ucx --mca pml_ucx_devices any --mca btl self)
		[ "$tls" = tcp ] && opts+=(--mca pml_ucx_tls any)
		opts+=(-x UCX_TLS)
		envs+=(UCX_TLS="$tls")
		if [ "$tls" = tcp ]; then
			envs+=(MPI_DEVS1=veth1 MPI_DEVS2=veth2)
		else
			envs+=(MPI_DEVS1="$DEV1:1" MPI_DEVS2="$DEV2:1")
		fi
	fi
	opts+=(-x MPI_DEVS1 -x MPI_DEVS2)
	cmd=(mpirun "${opts[@]}" "$MPI_RANK" "$mpi")
	ip netns exec "$PAIR_NS2" timeout -k 5 "$MPI_T" unshare --uts sh -c 'hostname "$1" && shift && exec "$@"' \
		sh "$MPI_HOST2" env "${envs[@]}" "${cmd[@]}" >"$o" 2>&1
	rc=$?
	mpi_leftovers
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		why="mpirun timed out after ${MPI_T}s"
	elif [ $rc != 0 ]; then
		why="mpirun exit $rc"
	elif ! grep -q '^rrxe_mpi: ok$' "$o"; then
		why="no 'rrxe_mpi: ok'"
	elif ! grep -q "^hosts: rank 0 on $MPI_HOST2, rank 1 on $MPI_HOST1\$" "$o"; then
		why="the ranks are not on $MPI_HOST2 and $MPI_HOST1"
	fi
	if [ -n "$why" ]; then
		echo "$why"
		echo "#   ${envs[*]} ${cmd[*]}"
		grep -av '^ *$' "$o" | tail -12 | sed 's/^/#     /'
		return 1
	fi
	grep -a -e '^hosts: ' -e '^pingpong ' -e '^allreduce ' "$o" | sed 's/^/# /'
	echo "FIGURE: $(awk '$1 == "pingpong" && $2 == "4096:" { l = $7 " us" }
		$1 == "pingpong" && $2 == "1048576:" { b = $10 " MB/s" } END { print l ", " b }' "$o")"
}
# mpi_leftovers: kills what an MPI job left in the pairing's namespaces
# but qperf's server (a daemon or rank of a job that timed out keeps a
# namespace alive).
mpi_leftovers() {
	local pids
	pids=$( (ip netns pids "$PAIR_NS1"; ip netns pids "$PAIR_NS2") 2>/dev/null | grep -vx "${QPERF_PID:-none}")
	[ -z "$pids" ] && return 0
	echo "# killing what the job left: $(ps -o comm= -p "$(echo $pids | tr ' ' ,)" | sort | uniq -c | xargs)"
	# shellcheck disable=SC2086 # a list of pids
	kill -KILL $pids 2>/dev/null
	sleep 1
}

# stacks_pairing PAIR N: every selected case over PAIR (the Nth pairing of
# run_pairings), each result a line of $RES/PAIR: case, tab, result,
# tab, figure.
# shellcheck disable=SC2317 # called by run_pairings
stacks_pairing() {
	local pair=$1 skip='' c name fn r out fig
	QPERF_PORT=
	if ! pairing_up "$pair" "$2"; then
		skip="setup failed"
	fi
	QPERF_PORT=$((TRAFFIC_PORT + 500))
	for c in "${selected[@]}"; do
		name=${c%%|*}
		read -ra fn <<<"${c#*|}"
		if [ -n "$skip" ]; then
			printf '%s\tnot run (%s)\t\n' "$name" "$skip" >>"$RES/$pair"
			continue
		fi
		# In this shell: the cases move TRAFFIC_PORT on and start
		# qperf's server.
		"${fn[@]}" >"$TRAFFIC_TMP/case.out" 2>&1
		r=$?
		out=$(cat "$TRAFFIC_TMP/case.out")
		grep -a '^# ' <<<"$out"
		fig=$(sed -n 's/^FIGURE: //p' <<<"$out" | tail -1)
		if [ $r = 0 ]; then
			r=ok
		else
			r="FAILED ($(grep -av -e '^# ' -e '^FIGURE: ' <<<"$out" | head -1))"
			echo "# $pair: $name: $r"
		fi
		printf '%s\t%s\t%s\n' "$name" "$r" "$fig" >>"$RES/$pair"
	done
	qperf_stop
	pair_down
}

run_pairings stacks_pairing "${pairs[@]}"
unload_drivers

# The table: a line per case, every pairing's result side by side.
declare -A res fig
for p in "${pairs[@]}"; do
	while IFS=$'\t' read -r c r f; do
		res[$p:$c]=$r fig[$p:$c]=$f
	done <"$RES/$p"
done
for c in "${selected[@]}"; do
	c=${c%%|*}
	line="$c:" any=0 bad=0
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
# What each tool measured, pairing by pairing (debug kernel under TCG:
# for comparing the two drivers, not absolute).
w=32
printf '# %-*s' $w case
for p in "${pairs[@]}"; do printf ' | %-22s' "$p"; done
echo
for c in "${selected[@]}"; do
	c=${c%%|*}
	printf '# %-*s' $w "$c"
	for p in "${pairs[@]}"; do
		f=${fig[$p:$c]:-}
		[ "${res[$p:$c]:-}" = ok ] || f=${res[$p:$c]:-not run}
		printf ' | %-22.40s' "$f"
	done
	echo
done
rm -rf "$RES" "$TRAFFIC_TMP"
echo "# 23-userspace-stacks took ${SECONDS}s"
finish
