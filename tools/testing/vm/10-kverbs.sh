#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Kernel consumers of the verbs (what NVMe-oF, NFS/RDMA and rdma_cm use):
# tools/testing/kverbs/rrxe_kverbs_test.ko drives a device through the
# kernel API (PD, CQ, RC/UD QPs, posting and its checks, flushing, fast
# registration, AHs, an SRQ) and logs one line per check; its "frwr"
# checks move data between two RC QPs of the device as NVMe-oF and
# NFS/RDMA do (REG_MR, WRITE and READ through the registered rkey,
# LOCAL_INV and a new key, SEND_WITH_INV, a WRITE with the invalidated
# rkey refused), and its "burst" checks post 201 local operations (REG_MR,
# then LOCAL_INV and REG_MR again, as rtrs does at each login) in one
# chain, more than rrxe's requester keeps started, which must all complete
# and a SEND after them. It runs on rdma_rxe and on rrxe; every check must pass
# on both. Its security cases (SEND_WITH_INV naming another PD's fast
# MR, LOCAL_INV of another PD's fast MR, a UD send through another PD's
# AH) must give the outcome expected of rrxe; rdma_rxe's is printed next
# to it. The GSI QP the MAD layer creates on every device (a kernel
# consumer too) and the port's counters are compared as well.
. "$RRXE_TOP/tools/testing/lib.sh"

ko="$RRXE_TOP/tools/testing/kverbs/rrxe_kverbs_test.ko"
rxe_and_rrxe rxe0 rrxe0
for dev in rxe0 rrxe0; do
	port_active $dev || echo "# setup: $dev port 1 is not ACTIVE"
done

declare -A sec
for dev in rxe0 rrxe0; do
	dmesg -C
	if ! insmod "$ko" dev=$dev; then
		not_ok "$dev: insmod of the kernel verbs test"
		continue
	fi
	rmmod rrxe_kverbs_test
	out=$(dmesg | sed -n 's/.*kverbs: //p')
	echo "$out" | grep '^#' | sed "s/^/# $dev: /"
	echo "$out" | grep -q '^done on' || not_ok "$dev: the kernel verbs test did not finish"
	while read -r line; do
		case $line in
		"ok - "*) ok "$dev: ${line#ok - }" ;;
		"not ok - "*) not_ok "$dev: ${line#not ok - }" ;;
		"sec - "*)
			set -- ${line#sec - }
			sec[$dev,$1]=$2
			;;
		esac
	done <<<"$out"
done

# Security cases (Documentation/testing.rst, "Security"): rrxe's outcome is
# the one expected, rdma_rxe's is shown next to it.
#   send_inv_other_pd: the receive's status / a WRITE through the MR after it
#   local_inv_other_pd: LOCAL_INV status / a WRITE through the MR after it
#   ud_ah_other_pd: UD send status / QP state afterwards
declare -A want=([send_inv_other_pd]=REM_INV_REQ_ERR/SUCCESS
	[local_inv_other_pd]=LOC_QP_OP_ERR/SUCCESS [ud_ah_other_pd]=LOC_QP_OP_ERR/ERR)
printf '# %-20s | %-26s | %s\n' case rxe0 rrxe0
for c in send_inv_other_pd local_inv_other_pd ud_ah_other_pd; do
	r=${sec[rxe0,$c]:-missing} d=${sec[rrxe0,$c]:-missing}
	printf '# %-20s | %-26s | %s\n' $c "$r" "$d"
	check "rrxe0: $c gives ${want[$c]}" test "$d" = "${want[$c]}"
	[ "$r" = "$d" ] || echo "# $c: rdma_rxe differs ($r)"
done

# The MAD layer's GSI QP (QP1) exists on both, in RTS.
for dev in rxe0 rrxe0; do
	check "$dev: the MAD layer's GSI QP is in RTS" \
		sh -c "rdma res show qp link $dev/1 | grep -q 'lqpn 1 type GSI state RTS'"
done

# Same counters, through both interfaces (hw_counters and the PMA).
names() { ls "/sys/class/infiniband/$1/ports/1/hw_counters" | sort; }
check "hw_counters: the same names as rdma_rxe" test "$(names rxe0)" = "$(names rrxe0)"
check "rdma statistic shows rrxe0" sh -c "rdma statistic show link rrxe0/1 | grep -q sent_pkts"
for c in link_downed port_xmit_data port_rcv_packets; do
	check "PMA counter $c readable" cat "/sys/class/infiniband/rrxe0/ports/1/counters/$c"
done
before=$(cat /sys/class/infiniband/rrxe0/ports/1/hw_counters/link_downed)
ip -n $DUT_NS link set b0 down
sleep 0.5
ip -n $DUT_NS link set b0 up
sleep 0.5
after=$(cat /sys/class/infiniband/rrxe0/ports/1/hw_counters/link_downed)
pma=$(cat /sys/class/infiniband/rrxe0/ports/1/counters/link_downed)
check "link_downed counts a link loss ($before -> $after, PMA $pma)" \
	test "$after" = $((before + 1)) -a "$pma" = "$after"

rdma link delete rrxe0
rdma link delete rxe0
check "rmmod rrxe" unload_rrxe
rmmod rdma_rxe
ip netns del $REF_NS
ip netns del $DUT_NS
finish
