#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make run`: two hosts (network namespaces h1 and h2 joined by a veth
# pair), an rrxe device on each, shown as unmodified rdma-core sees them.
set -e
. "$RRXE_TOP/tools/testing/lib.sh"
two_hosts
insmod "$RRXE_KO"
ip netns exec h1 rdma link add rrxe1 type rrxe netdev veth1
ip netns exec h2 rdma link add rrxe2 type rrxe netdev veth2
echo "== rdma link"
rdma link show
echo "== ibv_devices"
ibv_devices
echo "== ibv_devinfo -v -d rrxe1"
ibv_devinfo -v -d rrxe1
# Traffic: each tool's server runs in h2, its client in h1, over GID 1
# (the IPv4 RoCEv2 GID). TCG is slow: small counts.
traffic() {
	echo "== $*"
	ip netns exec h2 timeout 120 "$@" -d rrxe2 >/tmp/demo-server.txt 2>&1 &
	local server=$!
	sleep 2
	ip netns exec h1 timeout 120 "$@" -d rrxe1 198.18.1.2
	wait $server
}
traffic ibv_rc_pingpong -g 1 -n 100
traffic ib_write_bw -x 1 -F -n 200 -s 4096
ip netns del h1
ip netns del h2
sleep 1
rmmod rrxe
