#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Devices on netdevs inside network namespaces: visible there, and removed
# cleanly when the namespaces are deleted, including back to back (the veth
# peer's device goes away with the first namespace while the second is being
# dismantled). The harness fails the run on any KASAN report.
. "$RRXE_TOP/tools/testing/lib.sh"

both_gone() { gone rrxe1 100 && gone rrxe2 100; }

load_rrxe
for round in 1 2 3; do
	two_hosts
	check "round $round: add a device inside h1" ip netns exec h1 rdma link add rrxe1 type rrxe netdev veth1
	check "round $round: add a device inside h2" ip netns exec h2 rdma link add rrxe2 type rrxe netdev veth2
	check "round $round: h1 sees its device" sh -c "ip netns exec h1 ibv_devices | grep -q rrxe1"
	ip netns del h1
	ip netns del h2
	check "round $round: both devices gone with the namespaces" both_gone
done

# Only one namespace goes; its netdev's peer stays in the initial namespace.
ip netns add h1
ip link add veth1 netns h1 type veth peer name b1
ip link set b1 up
ip -n h1 link set veth1 up
rdma link add rrxe3 type rrxe netdev b1
ip netns exec h1 rdma link add rrxe1 type rrxe netdev veth1
ip netns del h1
check "deleting h1 removes the device in h1" gone rrxe1 100
check "and the device on the peer in the initial namespace" gone rrxe3 100
check "rmmod afterwards" unload_rrxe
finish
