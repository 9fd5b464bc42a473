#!/bin/bash
. "$RRXE_TOP/tools/testing/lib.sh"
two_hosts
load_rrxe
ip netns exec h1 rdma link add d1 type rrxe netdev veth1
ip netns exec h2 rdma link add d2 type rrxe netdev veth2
sleep 2
X=$RRXE_TOP/tools/testing/xfer/rrxe_xfer
for sz in 65536 1048576; do
ip netns exec h2 timeout 40 ib_read_bw -d d2 -x 1 -F -n 5 -s $sz > /tmp/s.txt 2>&1 &
sleep 2
ip netns exec h1 timeout 40 ib_read_bw -d d1 -x 1 -F -n 5 -s $sz 198.18.1.2 | tail -2; echo "read_bw $sz rc=$?"
wait
for d in d1 d2; do echo "$d: $(rdma statistic show link $d/1 | tr -s ' \n' ' ')"; done
done
ip netns exec h2 timeout 60 $X -t 50 -d d2 -g 1 -p 19000 > /tmp/s.txt 2>&1 &
sleep 2
ip netns exec h1 timeout 60 $X -t 50 -b 1048576 -s 1 -o read -d d1 -g 1 -p 19000 198.18.1.2; echo "xfer rc=$?"
wait; cat /tmp/s.txt
for d in d1 d2; do echo "$d: $(rdma statistic show link $d/1 | tr -s ' \n' ' ')"; done
