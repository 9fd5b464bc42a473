#!/bin/bash
. "$RRXE_TOP/tools/testing/lib.sh"
veth_pair
load_rrxe
rdma link add rrxe0 type rrxe netdev a0
sleep 1
cd $RRXE_TOP/tools/testing
timeout 60 python3 hostile_rings.py pending rrxe0; echo "pending rc=$?"
rdma statistic show link rrxe0/1
echo w > /proc/sysrq-trigger
dmesg | tail -60
