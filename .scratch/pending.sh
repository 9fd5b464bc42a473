#!/bin/bash
. "$RRXE_TOP/tools/testing/lib.sh"
veth_pair
load_rrxe
rdma link add rrxe0 type rrxe netdev a0
sleep 1
cd $RRXE_TOP/tools/testing
timeout 90 python3 -u hostile_rings.py pending rrxe0 > /tmp/py.txt 2>&1 &
sleep 25
P=$(pgrep -f "hostile_rings.py pending" | tail -1)
echo "pid $P"; cat /proc/$P/stack; cat /proc/$P/status | grep State
for t in /proc/$P/task/*; do echo "== $t"; cat $t/stack; done
cat /tmp/py.txt
wait
echo "python done"; cat /tmp/py.txt
rdma statistic show link rrxe0/1 | tr -s ' \n' ' '
