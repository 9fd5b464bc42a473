#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make run`: two hosts (network namespaces h1 and h2 joined by a veth
# pair), an rrxe device on each, shown as unmodified rdma-core sees them.
set -e
ip netns add h1
ip netns add h2
ip link add veth1 netns h1 type veth peer name veth2 netns h2
ip -n h1 addr add 198.18.1.1/24 dev veth1
ip -n h2 addr add 198.18.1.2/24 dev veth2
ip -n h1 link set veth1 up
ip -n h2 link set veth2 up
insmod "$RRXE_KO"
ip netns exec h1 rdma link add rrxe1 type rrxe netdev veth1
ip netns exec h2 rdma link add rrxe2 type rrxe netdev veth2
echo "== rdma link"
rdma link show
echo "== ibv_devices"
ibv_devices
echo "== ibv_devinfo -v -d rrxe1"
ibv_devinfo -v -d rrxe1
echo "(the data path arrives with issue 4; then this demo passes traffic)"
ip netns del h1
ip netns del h2
sleep 1
rmmod rrxe
