#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Data-path traffic with unmodified tools between two hosts: network
# namespaces h1_N and h2_N joined by a veth pair, an RDMA device on each
# side, for each pairing N.
# libibverbs' pingpongs (RC, UC, UD, SRQ; buffers checked with -c),
# perftest (send/write/read/atomic bandwidth and latency over RC, UC and
# UD; over rdma_cm with -R) and rdma_cm's rping (-V checks the data) and
# ucmatose. Every command has its own timeout; servers run in h2_N and are
# waited for (listening socket or rdma_cm ID) before the client starts in
# h1_N.
#
# usage: 11-traffic.sh [PAIR...] [CASE...]
#   PAIR  CLIENT-SERVER device types: rrxe-rrxe, rrxe-rxe (rrxe requests,
#         rdma_rxe responds), rxe-rrxe, or rxe-rxe (rdma_rxe on both sides:
#         validates the harness). Default: $RRXE_PAIRS, else the first three.
#   CASE  case names (see `cases` below; default $RRXE_CASES, else all
#         but those marked +).
# e.g. make vm-run SCRIPT=tools/testing/vm/11-traffic.sh ARGS="rxe-rxe rc_pingpong rping"
#
# The pairings run at the same time (run_pairings in lib.sh), each with
# namespaces h1_N and h2_N, devices and ports of its own (pairing_up in
# traffic.sh), their outputs shown one after the other once they end;
# RRXE_SERIAL=1 runs them one at a time.
#
# In a pairing whose rc_pingpong fails, the other cases are reported as
# failed without running (they would only wait for their timeouts), and no
# case starts after $RRXE_BUDGET seconds (default 1000; the script's clock,
# i.e. each pairing's when they run at once) so that the VM's own time
# limit is not hit.
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

budget=${RRXE_BUDGET:-1000}
T=${RRXE_CASE_TIMEOUT:-90}
perf_row=$PERF_ROW

# name | what the client's output must show | tool and arguments (both
# sides; after `--`: the client's only). Cases marked + run only when
# named: they add little to the others, and the three default pairings
# must fit in the VM's 20 minutes under TCG.
cases=(
	"rc_pingpong|[0-9]+ iters in|ibv_rc_pingpong -n 5 -e -c"
	"uc_pingpong|[0-9]+ iters in|ibv_uc_pingpong -n 5 -e -c"
	"ud_pingpong|[0-9]+ iters in|ibv_ud_pingpong -n 5 -e -c -s 512"
	"srq_pingpong|[0-9]+ iters in|ibv_srq_pingpong -n 5 -e -c -q 4"
	"send_bw|$perf_row|ib_send_bw -n 5"
	"send_bw_uc|$perf_row|ib_send_bw -n 5 -c UC"
	"send_bw_ud|$perf_row|ib_send_bw -n 5 -c UD -s 512"
	"write_bw|$perf_row|ib_write_bw -n 5"
	"write_bw_uc|$perf_row|ib_write_bw -n 5 -c UC"
	"write_bw_imm|$perf_row|ib_write_bw -n 5 --write_with_imm"
	"read_bw|$perf_row|ib_read_bw -n 5"
	"atomic_bw|$perf_row|ib_atomic_bw -n 5"
	"atomic_bw_cas|$perf_row|ib_atomic_bw -n 5 -A CMP_AND_SWAP"
	"send_lat|$perf_row|ib_send_lat -n 10"
	"send_lat_uc|$perf_row|ib_send_lat -n 10 -c UC"
	"send_lat_ud|$perf_row|ib_send_lat -n 10 -c UD"
	"write_lat|$perf_row|ib_write_lat -n 10"
	"write_lat_uc|$perf_row|ib_write_lat -n 10 -c UC"
	"read_lat|$perf_row|ib_read_lat -n 10"
	"+atomic_lat|$perf_row|ib_atomic_lat -n 10"
	"send_bw_cm|$perf_row|ib_send_bw -n 5 -R"
	"+write_lat_cm|$perf_row|ib_write_lat -n 10 -R"
	"rping|ping data: rdma-ping-4|rping -v -V -C 5"
	"ucmatose|return status 0|ucmatose -C 10"
)

parse_pairs --words "rrxe-rrxe rrxe-rxe rxe-rrxe" "$@"
want=("${words[@]}")
[ ${#want[@]} = 0 ] && read -ra want <<<"${RRXE_CASES:-}"
selected=()
for c in "${cases[@]}"; do
	name=${c%%|*}
	if [ ${#want[@]} = 0 ]; then
		[ "${name:0:1}" = + ] || selected+=("$c")
	elif [[ " ${want[*]} " == *" ${name#+} "* ]]; then
		selected+=("${c#+}")
	fi
done
[ ${#selected[@]} = 0 ] && { echo "# no case matches: ${want[*]}"; exit 2; }
echo "# pairings (client-server): ${pairs[*]}; ${#selected[@]} cases, ${T}s each at most"

# traffic_pairing PAIR N: every selected case over PAIR, the Nth pairing
# of run_pairings.
# shellcheck disable=SC2317 # called by run_pairings
traffic_pairing() {
	local pair=$1 client=${1%-*} server=${1#*-} passed=0 failed=0 skip= c name rest expect cmd
	if ! pairing_up "$pair" "$2"; then
		not_ok "$pair: setup (two hosts, ${client}1 and ${server}2)"
		skip="setup failed"
	else
		echo "# $DEV1 GID $GID1 $(cat /sys/class/infiniband/$DEV1/ports/1/gids/$GID1)," \
			"$DEV2 GID $GID2 $(cat /sys/class/infiniband/$DEV2/ports/1/gids/$GID2)"
	fi
	for c in "${selected[@]}"; do
		name=${c%%|*}
		rest=${c#*|}
		expect=${rest%%|*}
		read -ra cmd <<<"${rest#*|}"
		# The script's clock: the pairings started together (or, with
		# RRXE_SERIAL, one after the other), and the budget is about the
		# VM's time limit.
		if [ -z "$skip" ] && [ $SECONDS -ge "$budget" ]; then
			skip="no time left (${budget}s budget)"
		fi
		if [ -n "$skip" ]; then
			not_ok "$pair: $name (not run: $skip)"
			failed=$((failed + 1))
			continue
		fi
		if run_traffic "$pair-$name" "$T" "$expect" "${cmd[@]}"; then
			ok "$pair: $name (${TRAFFIC_SECS}s)"
			passed=$((passed + 1))
		else
			not_ok "$pair: $name"
			failed=$((failed + 1))
			[ "$name" = rc_pingpong ] && skip="rc_pingpong failed in this pairing"
		fi
	done
	echo "# $pair: $passed passed, $failed failed"
	pair_down
}

run_pairings traffic_pairing "${pairs[@]}"

rm -rf "$TRAFFIC_TMP"
unload_drivers
echo "# 11-traffic took ${SECONDS}s"
finish
