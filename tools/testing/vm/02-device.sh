#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `rdma link add` on a veth: the device as unmodified rdma-core sees it.
. "$RRXE_TOP/tools/testing/lib.sh"

veth_pair
load_rrxe
check "rdma link add rrxe0 type rrxe netdev a0" rdma link add rrxe0 type rrxe netdev a0
check "ibv_devices lists rrxe0" sh -c "ibv_devices | grep -qw rrxe0"
check "the rxe provider binds (ibv_devinfo opens it)" ibv_devinfo -d rrxe0
check "transport InfiniBand" sh -c "ibv_devinfo -d rrxe0 | grep -Eq 'transport:[[:space:]]+InfiniBand \(0\)'"
check "link_layer Ethernet" sh -c "ibv_devinfo -d rrxe0 | grep -Eq 'link_layer:[[:space:]]+Ethernet'"
check "port PORT_ACTIVE" sh -c "ibv_devinfo -d rrxe0 | grep -Eq 'state:[[:space:]]+PORT_ACTIVE \(4\)'"
check "rdma link show names netdev a0" sh -c "rdma link show rrxe0/1 | grep -q 'netdev a0'"
check "rdma dev show: node type ca" sh -c "rdma dev show rrxe0 | grep -q 'node_type ca'"
check "IPv4 GID ::ffff:198.18.0.1 (RoCE v2)" \
	sh -c "ibv_devinfo -v -d rrxe0 | grep -q '::ffff:198.18.0.1, RoCE v2'"
# The link-local IPv6 address appears once DAD is done.
for _ in $(seq 20); do ibv_devinfo -v -d rrxe0 | grep -q 'fe80::' && break; sleep 0.5; done
check "IPv6 link-local GID (RoCE v2)" sh -c "ibv_devinfo -v -d rrxe0 | grep -Eq 'fe80::.*, RoCE v2'"
check "node GUID is the EUI-64 of a0's MAC" python3 - <<'PY'
mac = open("/sys/class/net/a0/address").read().strip().split(":")
b = [int(x, 16) for x in mac]
eui = [b[0] ^ 2, b[1], b[2], 0xff, 0xfe, b[3], b[4], b[5]]
want = ":".join("%02x%02x" % (eui[i], eui[i + 1]) for i in range(0, 8, 2))
got = open("/sys/class/infiniband/rrxe0/node_guid").read().strip()
assert got == want, (got, want)
PY
check "device attributes reported" sh -c "ibv_devinfo -v -d rrxe0 | grep -Eq 'max_qp:[[:space:]]+1048560'"

# Link state follows the netdev, and events reach user space.
ibv_asyncwatch -d rrxe0 >/tmp/async.log 2>&1 &
watch=$!
sleep 1
ip link set b0 down # a0 loses carrier
check "carrier down: PORT_DOWN" sh -c "ibv_devinfo -d rrxe0 | grep -Eq 'state:[[:space:]]+PORT_DOWN \(1\)'"
check "carrier down: phys_state POLLING" sh -c "ibv_devinfo -v -d rrxe0 | grep -Eq 'phys_state:[[:space:]]+POLLING'"
ip link set b0 up
sleep 1
check "carrier up: PORT_ACTIVE" sh -c "ibv_devinfo -d rrxe0 | grep -Eq 'state:[[:space:]]+PORT_ACTIVE \(4\)'"
ip link set a0 down
check "admin down: phys_state DISABLED" sh -c "ibv_devinfo -v -d rrxe0 | grep -Eq 'phys_state:[[:space:]]+DISABLED'"
ip link set a0 up
sleep 1
kill $watch 2>/dev/null
wait $watch 2>/dev/null
check "PORT_ERR event delivered to user space" grep -q 'IBV_EVENT_PORT_ERR' /tmp/async.log
check "PORT_ACTIVE event delivered to user space" grep -q 'IBV_EVENT_PORT_ACTIVE' /tmp/async.log

# Active MTU follows the netdev MTU (minus RoCEv2 headers), as in C rxe.
for pair in 9000:4096 4200:4096 4000:2048 1500:1024 1000:512 600:256; do
	ip link set a0 mtu "${pair%%:*}"
	check "netdev mtu ${pair%%:*}: active_mtu ${pair##*:}" \
		sh -c "ibv_devinfo -d rrxe0 | grep -Eq 'active_mtu:[[:space:]]+${pair##*:} '"
done
ip link set a0 mtu 1500

check "rdma link delete rrxe0" rdma link delete rrxe0
check "rrxe0 is gone" sh -c "! ibv_devices | grep -qw rrxe0"
check "rmmod rrxe" unload_rrxe
ip link del a0
finish
