#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# rrxe next to the C rdma_rxe: same user ABI, same answers, and removing one
# driver's devices leaves the other's alone.
. "$RRXE_TOP/tools/testing/lib.sh"

veth_pair
check "modprobe rdma_rxe" modprobe rdma_rxe
load_rrxe
check "rxe0 on b0" rdma link add rxe0 type rxe netdev b0
check "rrxe0 on a0" rdma link add rrxe0 type rrxe netdev a0
check "both listed" sh -c "ibv_devices | grep -qw rxe0 && ibv_devices | grep -qw rrxe0"

# Everything but identities must match what C rxe reports. On-demand paging
# is left out: rrxe does not claim it until its MRs support it.
filter='hca_id|node_guid|sys_image_guid|GID|fw_ver|port_lid|sm_lid'
no_odp() { awk '/odp_caps:/ { skip = 1; next } skip && /^\t\t\t\t\t/ { next } { skip = 0; print }'; }
ibv_devinfo -v -d rxe0 | grep -Ev "$filter" | no_odp >/tmp/rxe.txt
ibv_devinfo -v -d rrxe0 | grep -Ev "$filter" | no_odp >/tmp/rrxe.txt
check "ibv_devinfo -v matches C rxe (but names, GUIDs, GIDs, ODP)" diff -u /tmp/rxe.txt /tmp/rrxe.txt
check "rrxe does not claim on-demand paging" sh -c "ibv_devinfo -v -d rrxe0 | grep -A1 rc_odp_caps | grep -q 'NO SUPPORT'"

check_fails "rrxe refuses a netdev rdma_rxe serves" "File exists" rdma link add rrxe1 type rrxe netdev b0
check "rdma link delete rrxe0" rdma link delete rrxe0
check "rxe0 survives rrxe0's deletion" sh -c "ibv_devices | grep -qw rxe0"
rdma link add rrxe0 type rrxe netdev a0
check "rmmod rrxe" unload_rrxe
check "rxe0 survives rmmod rrxe" ibv_devinfo -d rxe0
load_rrxe
rdma link add rrxe0 type rrxe netdev a0
check "rdma link delete rxe0" rdma link delete rxe0
check "rrxe0 survives rxe0's deletion" ibv_devinfo -d rrxe0
# rdma_rxe's exit calls ib_unregister_driver(RDMA_DRIVER_RXE), which removes
# every device with that driver id, rrxe's too (see Documentation). It must
# at least be clean, and rrxe must work afterwards.
check "rmmod rdma_rxe" rmmod rdma_rxe
check "rrxe can add a link after rdma_rxe is gone" sh -c \
	"rdma link add rrxe0 type rrxe netdev a0 2>/dev/null || ibv_devinfo -d rrxe0"
check "rmmod rrxe" unload_rrxe
ip link del a0
finish
