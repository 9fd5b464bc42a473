#!/bin/bash
. "$RRXE_TOP/tools/testing/lib.sh"
veth_pair
load_rrxe
rdma link add rrxe0 type rrxe netdev a0
sleep 1
cd $RRXE_TOP/tools/testing
timeout 90 python3 -u hostile_rings.py pending rrxe0 2>&1 | tail -5
rdma statistic show link rrxe0/1 | tr -s ' \n' ' '
