#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# rrxe next to the C rdma_rxe: same user ABI, same answers, and removing one
# driver's devices leaves the other's alone. The two drivers cannot both own
# UDP port 4791 in one network namespace, so rdma_rxe's device lives in
# namespace "ref" (a0) and rrxe's in "dut" (b0); RDMA devices themselves are
# visible from every namespace.
. "$RRXE_TOP/tools/testing/lib.sh"

ns_veth_pair
check "modprobe rdma_rxe" modprobe rdma_rxe
load_rrxe
check "rxe0 on a0 (namespace ref)" ip netns exec ref rdma link add rxe0 type rxe netdev a0
check "rrxe0 on b0 (namespace dut)" ip netns exec dut rdma link add rrxe0 type rrxe netdev b0
check "both listed" sh -c "ibv_devices | grep -qw rxe0 && ibv_devices | grep -qw rrxe0"

# Everything but identities must match what C rxe reports. On-demand paging
# is left out: rrxe does not claim it until its MRs support it.
filter='hca_id|node_guid|sys_image_guid|GID|fw_ver|port_lid|sm_lid'
no_odp() { awk '/odp_caps:/ { skip = 1; next } skip && /^\t\t\t\t\t/ { next } { skip = 0; print }'; }
ibv_devinfo -v -d rxe0 | grep -Ev "$filter" | no_odp >/tmp/rxe.txt
ibv_devinfo -v -d rrxe0 | grep -Ev "$filter" | no_odp >/tmp/rrxe.txt
check "ibv_devinfo -v matches C rxe (but names, GUIDs, GIDs, ODP)" diff -u /tmp/rxe.txt /tmp/rrxe.txt
check "rrxe does not claim on-demand paging" sh -c "ibv_devinfo -v -d rrxe0 | grep -A1 rc_odp_caps | grep -q 'NO SUPPORT'"

# The netdev rdma_rxe serves is refused: because it has an RDMA device
# (EEXIST) or, with rrxe's data path, because rdma_rxe owns UDP port 4791 in
# its namespace (EADDRINUSE); whichever rrxe checks first.
check_fails "rrxe refuses a netdev rdma_rxe serves" 'File exists\|Address already in use' \
	ip netns exec ref rdma link add rrxe1 type rrxe netdev a0
check "nothing registered on a0 for rrxe" sh -c "! rdma link show | grep -q '^link rrxe1/'"

# DATA PATH: passes only once rrxe opens its UDP 4791 tunnel sockets. A
# netdev nobody serves, in a namespace where rdma_rxe owns port 4791.
echo "# [data path] the next check needs rrxe's UDP sockets (issue 4)"
ip link add c0 netns ref type veth peer name c1 netns ref
ip -n ref link set c0 up
ip -n ref link set c1 up
check_fails "[data path] rrxe link add where rdma_rxe owns UDP 4791: EADDRINUSE" \
	"Address already in use" ip netns exec ref rdma link add rrxe1 type rrxe netdev c0
rdma link delete rrxe1 2>/dev/null
check "rdma_rxe still serves a0 after the refusals" sh -c "ip netns exec ref rdma link show | grep -q '^link rxe0/1 .* netdev a0'"
ip -n ref link del c0

check "rdma link delete rrxe0" rdma link delete rrxe0
check "rxe0 survives rrxe0's deletion" sh -c "ibv_devices | grep -qw rxe0"
ip netns exec dut rdma link add rrxe0 type rrxe netdev b0
check "rmmod rrxe" unload_rrxe
check "rxe0 survives rmmod rrxe" ibv_devinfo -d rxe0
load_rrxe
ip netns exec dut rdma link add rrxe0 type rrxe netdev b0
check "rdma link delete rxe0" rdma link delete rxe0
check "rrxe0 survives rxe0's deletion" ibv_devinfo -d rrxe0
# rdma_rxe's exit calls ib_unregister_driver(RDMA_DRIVER_RXE), which removes
# every device with that driver id, rrxe's too (see Documentation). It must
# at least be clean, and rrxe must work afterwards.
check "rmmod rdma_rxe" rmmod rdma_rxe
check "rrxe can add a link after rdma_rxe is gone" sh -c \
	"ip netns exec dut rdma link add rrxe0 type rrxe netdev b0 2>/dev/null || ibv_devinfo -d rrxe0"
check "rmmod rrxe" unload_rrxe
ip netns del ref
ip netns del dut
finish
