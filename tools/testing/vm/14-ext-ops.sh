#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The IBA 1.5 operations and memory windows across the wire: rrxe_xfer
# (tools/testing/xfer) with `-o write,awrite,flush,mw` between two hosts
# (namespaces joined by a veth pair; the pairings run at the same time,
# run_pairings in lib.sh). The client sends ATOMIC
# WRITEs and FLUSHes (range and whole region) to the server's memory, and
# RDMA WRITEs and READs through a type 1 and a type 2B memory window the
# server binds; both sides check every byte, and a WRITE past the type 2B
# window must come back as a remote access error. With rrxe on either end
# and rdma_rxe on the other, this checks that both directions interoperate:
# opcodes, the FETH, the empty READ response that answers a FLUSH or an
# ATOMIC WRITE, and window keys.
#
# usage: 14-ext-ops.sh [PAIR...]   (PAIR as in 11-traffic.sh: CLIENT-SERVER,
#   default $RRXE_PAIRS, else rrxe-rrxe rrxe-rxe rxe-rrxe; rxe-rxe
#   validates the test)
. "$RRXE_TOP/tools/testing/lib.sh"
. "$RRXE_TOP/tools/testing/traffic.sh"

bytes=${RRXE_XFER_BYTES:-65536}

parse_pairs "rrxe-rrxe rrxe-rxe rxe-rrxe" "$@"
need_xfer

# ext_pairing PAIR N: the transfer over PAIR, the Nth pairing of
# run_pairings (the pairings run at the same time, each with namespaces,
# devices and ports of its own: pairing_up in traffic.sh).
# shellcheck disable=SC2317 # called by run_pairings
ext_pairing() {
	local pair=$1
	if ! pairing_up "$pair" "$2"; then
		not_ok "$pair: setup"
		pair_down
		return
	fi
	if run_traffic "$pair-ext" 240 "xfer: OK bytes=$bytes" \
		"$xfer" -t 220 -- -b "$bytes" -s 3 -o write,awrite,flush,mw; then
		ok "$pair: ATOMIC WRITE, FLUSH and memory windows, verified (${TRAFFIC_SECS}s)"
	else
		not_ok "$pair: ATOMIC WRITE, FLUSH and memory windows"
	fi
	grep '^xfer: ' "$TRAFFIC_TMP/$pair-ext.client" | sed 's/^/# /'
	pair_down
}

run_pairings ext_pairing "${pairs[@]}"

rm -rf "$TRAFFIC_TMP"
unload_drivers
echo "# 14-ext-ops took ${SECONDS}s"
finish
