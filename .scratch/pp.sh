#!/bin/bash
. "$RRXE_TOP/tools/testing/lib.sh"
two_hosts
modprobe udp_tunnel; modprobe ip6_udp_tunnel
insmod "$RRXE_KO" || exit 1
ip netns exec h1 rdma link add rrxe1 type rrxe netdev veth1
ip netns exec h2 rdma link add rrxe2 type rrxe netdev veth2
sleep 2
cat /sys/class/infiniband/rrxe1/ports/1/gids/1
ip netns exec h2 timeout 60 ibv_rc_pingpong -d rrxe2 -g 1 -n 10 > /tmp/srv.txt 2>&1 &
sleep 3
ip netns exec h1 timeout 60 ibv_rc_pingpong -d rrxe1 -g 1 -n 10 198.18.1.2
echo "client rc=$?"
wait %1; echo "server rc=$?"; cat /tmp/srv.txt
rdma statistic show link rrxe1/1 | head -3
rdma statistic show link rrxe2/1 | head -3
ip netns exec h2 timeout 60 ibv_rc_pingpong -d rrxe2 -g 1 -n 200 -s 20000 > /tmp/srv.txt 2>&1 &
sleep 3
ip netns exec h1 timeout 60 ibv_rc_pingpong -d rrxe1 -g 1 -n 200 -s 20000 198.18.1.2
echo "client2 rc=$?"
wait %1; echo "server2 rc=$?"; cat /tmp/srv.txt
ip netns exec h1 rdma link delete rrxe1
ip netns exec h2 rdma link delete rrxe2
rmmod rrxe
echo done
