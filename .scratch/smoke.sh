#!/bin/bash
. "$RRXE_TOP/tools/testing/lib.sh"
two_hosts
modprobe udp_tunnel; modprobe ip6_udp_tunnel
insmod "$RRXE_KO" || exit 1
A=${A:-rrxe}; B=${B:-rrxe}
[ $A = rxe -o $B = rxe ] && modprobe rdma_rxe
ip netns exec h1 rdma link add d1 type $A netdev veth1
ip netns exec h2 rdma link add d2 type $B netdev veth2
sleep 2
stats() { for d in d1 d2; do echo "$d: $(rdma statistic show link $d/1 | tr -s ' \n' ' ')"; done; }
pair() { # name server-cmd client-cmd
	local name=$1 s=$2 c=$3
	ip netns exec h2 timeout 60 $s > /tmp/srv.txt 2>&1 &
	sleep 2
	ip netns exec h1 timeout 60 $c > /tmp/cli.txt 2>&1; local crc=$?
	wait %1; local src=$?
	echo "== $name: client=$crc server=$src"; tail -3 /tmp/cli.txt; [ $src != 0 ] && tail -3 /tmp/srv.txt
	stats
}
#pair rc-20k "ibv_rc_pingpong -d d2 -g 1 -n 20 -s 20000" "ibv_rc_pingpong -d d1 -g 1 -n 20 -s 20000 198.18.1.2"
#pair uc "ibv_uc_pingpong -d d2 -g 1 -n 20" "ibv_uc_pingpong -d d1 -g 1 -n 20 198.18.1.2"
#pair ud "ibv_ud_pingpong -d d2 -g 1 -n 20" "ibv_ud_pingpong -d d1 -g 1 -n 20 198.18.1.2"
#pair srq "ibv_srq_pingpong -d d2 -g 1 -n 20" "ibv_srq_pingpong -d d1 -g 1 -n 20 198.18.1.2"
pair write_bw "ib_write_bw -d d2 -x 1 -F -n 200 -s 65536" "ib_write_bw -d d1 -x 1 -F -n 200 -s 65536 198.18.1.2"
pair read_bw "ib_read_bw -d d2 -x 1 -F -n 200 -s 65536" "ib_read_bw -d d1 -x 1 -F -n 200 -s 65536 198.18.1.2"
pair atomic_bw "ib_atomic_bw -d d2 -x 1 -F -n 200" "ib_atomic_bw -d d1 -x 1 -F -n 200 198.18.1.2"
pair send_lat "ib_send_lat -d d2 -x 1 -F -n 200" "ib_send_lat -d d1 -x 1 -F -n 200 198.18.1.2"
#pair rping "rping -s -a 198.18.1.2 -C 5 -v" "rping -c -a 198.18.1.2 -C 5 -v"
#pair ucmatose "ucmatose -b 198.18.1.2 -c 2 -C 5" "ucmatose -s 198.18.1.2 -c 2 -C 5"
ip netns exec h1 rdma link delete d1
ip netns exec h2 rdma link delete d2
rmmod rrxe
echo done
