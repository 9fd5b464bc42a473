# SPDX-License-Identifier: GPL-2.0
# Client/server traffic between the two hosts of pair_up (tools/testing/
# lib.sh): the server in $PAIR_NS2 (h2) on $DEV2 (GID index $GID2, address
# $PAIR_IP2), the client in $PAIR_NS1 (h1) on $DEV1 ($GID1, $PAIR_IP1).
# Source after lib.sh.

TRAFFIC_PORT=${TRAFFIC_PORT:-19000}
TRAFFIC_TMP=$(mktemp -d /tmp/traffic.XXXXXX)
# A perftest result row: size, iterations, then numbers.
PERF_ROW='^ *[0-9]+ +[0-9]+ +[0-9.]+'

# parse_pairs [--words] DEFAULT [ARG...]: sets the array `pairs` to the
# pairings given (CLIENT-SERVER: rxe-rxe, rxe-rrxe, rrxe-rxe, rrxe-rrxe),
# else to $RRXE_PAIRS, else to DEFAULT. With --words, the arguments without
# a dash go to the array `words` (11-traffic's case names); otherwise they,
# like an unknown pairing, end the script (2).
parse_pairs() {
	local take_words= def a
	[ "$1" = --words ] && { take_words=1; shift; }
	def=$1
	shift
	pairs=() words=()
	for a in "$@"; do
		case $a in
		rxe-rxe | rxe-rrxe | rrxe-rxe | rrxe-rrxe) pairs+=("$a") ;;
		*)
			if [ -n "$take_words" ] && [[ $a != *-* ]]; then
				words+=("$a")
				continue
			fi
			echo "# unknown pairing $a (rxe-rxe, rxe-rrxe, rrxe-rxe, rrxe-rrxe)"
			exit 2
			;;
		esac
	done
	[ ${#pairs[@]} = 0 ] && read -ra pairs <<<"${RRXE_PAIRS:-$def}"
	return 0
}

# pairing_up PAIR N: says which pairing (CLIENT-SERVER) starts, then
# pair_up for it as the Nth of run_pairings, with what it would otherwise
# share with the pairings running at the same time made its own:
# namespaces h1_N and h2_N (veth1 and veth2 in them: interface names are
# per namespace), 198.18.N.0/24, devices named with the suffix _N (rrxe1_N,
# rxe2_N: RDMA device names are global), ports from TRAFFIC_PORT +
# 1000 * (N - 1) (the tools' TCP ports are per namespace, but `rdma res
# show cm_id`, which cm_listening reads, lists the rdma_cm listeners of
# every namespace), and a directory of its own under TRAFFIC_TMP (the
# same pairing may be given twice). Fails as pair_up does.
pairing_up() {
	local n=$2
	echo "# --- $1: client ${1%-*}1_$n in h1_$n, server ${1#*-}2_$n in h2_$n"
	TRAFFIC_PORT=$((TRAFFIC_PORT + 1000 * (n - 1)))
	TRAFFIC_TMP=$TRAFFIC_TMP/$n
	mkdir -p "$TRAFFIC_TMP"
	pair_up "${1%-*}" "${1#*-}" "h1_$n" "h2_$n" "$n" "_$n"
}

# need_xfer: sets `xfer` to rrxe_xfer's path, or fails and finishes.
need_xfer() {
	if ! xfer=$(xfer_bin); then
		not_ok "rrxe_xfer builds"
		finish
	fi
}

# traffic_opts ROLE PORT TOOL [ARGS...]: the device, GID, port and address
# options TOOL needs as ROLE (server or client).
traffic_opts() {
	local role=$1 port=$2 tool=$3 dev gid
	shift 3
	if [ "$role" = server ]; then dev=$DEV2 gid=$GID2; else dev=$DEV1 gid=$GID1; fi
	case $tool in
	ibv_*_pingpong | rrxe_xfer | */rrxe_xfer)
		echo "-d $dev -g $gid -p $port"
		[ "$role" = client ] && echo "$PAIR_IP2"
		;;
	ib_*)
		# With rdma_cm (-R) the address picks the device and GID.
		case " $* " in
		*" -R "*) echo "-d $dev -p $port -F" ;;
		*) echo "-d $dev -x $gid -p $port -F" ;;
		esac
		[ "$role" = client ] && echo "$PAIR_IP2"
		;;
	rping)
		if [ "$role" = server ]; then echo "-s -a $PAIR_IP2 -p $port"; else echo "-c -a $PAIR_IP2 -p $port"; fi
		;;
	ucmatose)
		if [ "$role" = server ]; then echo "-b $PAIR_IP2 -p $port"; else echo "-s $PAIR_IP2 -b $PAIR_IP1 -p $port"; fi
		;;
	*) echo "# traffic_opts: unknown tool $tool"; return 1 ;;
	esac
	return 0
}

# traffic_listening [-p PID] TOOL PORT [ARGS...]: the server of TOOL
# listens. PID, a process in $PAIR_NS2 (the server's), makes the TCP check
# start no process (tcp_listening).
traffic_listening() {
	local pid=
	[ "$1" = -p ] && { pid=$2; shift 2; }
	local tool=$1 port=$2
	shift 2
	case "$tool $* " in
	rping* | ucmatose* | *" -R "*) cm_listening "$PAIR_NS2" "$port" ;;
	*) tcp_listening "$PAIR_NS2" "$port" $pid ;;
	esac
}

# stop_after PID SECONDS: waits up to SECONDS for PID to exit, then kills
# it; returns its exit status (124 when it had to be killed).
stop_after() {
	local pid=$1 i
	for ((i = 0; i < $2 * 5; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null
		sleep 1
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return 124
	fi
	wait "$pid"
}

# run_traffic NAME TIMEOUT EXPECT TOOL [ARGS...] [-- CLIENT_ARGS...]:
# starts `TOOL ARGS` as the server in $PAIR_NS2, waits until it listens,
# runs `TOOL ARGS CLIENT_ARGS` as the client in $PAIR_NS1; each bounded by TIMEOUT
# seconds. Succeeds when both exit 0 and the client's output matches the
# extended regex EXPECT (if not empty). On failure the reason and the
# outputs' last lines are printed as comments. Outputs stay in
# $TRAFFIC_TMP/NAME.server and NAME.client; the client's elapsed seconds
# are in TRAFFIC_SECS.
run_traffic() {
	local name=$1 timeout=$2 expect=$3 tool=$4
	shift 4
	local args=() cargs=() port=$TRAFFIC_PORT srv src crc start why=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ "${1:-}" = -- ] && { shift; cargs=("$@"); }
	TRAFFIC_PORT=$((TRAFFIC_PORT + 1))
	local so=$TRAFFIC_TMP/$name.server co=$TRAFFIC_TMP/$name.client
	local sopts copts
	sopts=$(traffic_opts server "$port" "$tool" "${args[@]}") || { echo "$sopts"; return 1; }
	copts=$(traffic_opts client "$port" "$tool" "${args[@]}") || { echo "$copts"; return 1; }

	# shellcheck disable=SC2086 # the options are word lists
	ip netns exec "$PAIR_NS2" timeout -k 5 "$timeout" "$tool" "${args[@]}" $sopts >"$so" 2>&1 &
	srv=$!
	if ! wait_for 30 traffic_listening -p $srv "$tool" "$port" "${args[@]}"; then
		echo "# $name: the server does not listen after 30 s; starting the client anyway"
	fi
	start=$SECONDS
	# shellcheck disable=SC2086
	ip netns exec "$PAIR_NS1" timeout -k 5 "$timeout" "$tool" "${args[@]}" "${cargs[@]}" $copts >"$co" 2>&1
	crc=$?
	TRAFFIC_SECS=$((SECONDS - start))
	# A server whose client is done has little left to do.
	stop_after $srv $((crc == 0 ? 20 : 5))
	src=$?
	if [ $crc = 124 ] || [ $crc = 137 ]; then
		why="client timed out after ${timeout}s"
	elif [ $crc != 0 ]; then
		why="client exit $crc"
	elif [ $src = 124 ] || [ $src = 137 ]; then
		why="server did not finish"
	elif [ $src != 0 ]; then
		why="server exit $src"
	elif [ -n "$expect" ] && ! matches "$expect" "$co"; then
		why="client output lacks /$expect/"
	fi
	[ -z "$why" ] && return 0
	echo "# $name: $why"
	echo "#   server: ${tool} ${args[*]} $(echo $sopts)"
	tail -8 "$so" | sed 's/^/#     /'
	echo "#   client: ${tool} ${args[*]} ${cargs[*]} $(echo $copts)"
	tail -8 "$co" | sed 's/^/#     /'
	return 1
}
