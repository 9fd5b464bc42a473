#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Devices go away with their netdev, with `rdma link delete` and with rmmod;
# many add/delete and load/unload cycles leave nothing behind.
# $RRXE_LINK_CYCLES (default 10) add/delete and $RRXE_LOAD_CYCLES (default
# 4) rmmod/insmod cycles. Each takes seconds on the debug kernel under TCG
# (with 30 and 8 this script took 315 s of make check); longer runs are
# asked for with the variables.
. "$RRXE_TOP/tools/testing/lib.sh"

link_cycles=${RRXE_LINK_CYCLES:-10}
load_cycles=${RRXE_LOAD_CYCLES:-4}

veth_pair
load_rrxe
rdma link add rrxe0 type rrxe netdev a0
ip link del a0 # also removes b0
check "deleting the netdev removes the device" gone rrxe0

veth_pair
rdma link add rrxe0 type rrxe netdev a0
check "ibv_devinfo works before delete" ibv_devinfo -d rrxe0
check "rdma link delete" rdma link delete rrxe0
check "device gone after rdma link delete" gone rrxe0

fails=0
for i in $(seq "$link_cycles"); do
	rdma link add rrxe0 type rrxe netdev a0 && rdma link delete rrxe0 || fails=$((fails + 1))
done
check "$link_cycles link add/delete cycles" test $fails = 0

fails=0
for i in $(seq "$load_cycles"); do
	{ rmmod rrxe && insmod "$RRXE_KO" && rdma link add rrxe0 type rrxe netdev a0 &&
		rdma link add rrxe1 type rrxe netdev b0; } || fails=$((fails + 1))
done
check "$load_cycles rmmod/insmod cycles, each leaving two devices behind" test $fails = 0
check "rmmod removes both devices" unload_rrxe
check "no devices left" sh -c "! ls /sys/class/infiniband | grep -q ."

# A process holding the device open does not block removal.
load_rrxe
rdma link add rrxe0 type rrxe netdev a0
python3 -c "
from pyverbs.device import Context
import time
ctx = Context(name='rrxe0')
time.sleep(30)
" &
holder=$!
sleep 3
check "rdma link delete while a process has the device open" timeout 20 rdma link delete rrxe0
check "device gone with an open context" gone rrxe0
kill $holder 2>/dev/null
wait $holder 2>/dev/null
check "rmmod after the holder exits" unload_rrxe
ip link del a0
finish
