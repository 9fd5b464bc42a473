#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The queue memory mapped into a process is hostile input: garbage indices
# and geometry, bad mmap offsets and lengths, use after destroy, exit with
# everything mapped, and device removal while rings are mapped. Then the
# security cases of a process against other users of the device (UD sends
# through another PD's or process's AH, predictable keys), on rrxe and on
# rdma_rxe side by side. The harness fails the run on any KASAN, lockdep or
# kmemleak report.
. "$RRXE_TOP/tools/testing/lib.sh"

py="$RRXE_TOP/tools/testing/hostile_rings.py"
veth_pair
load_rrxe
rdma link add rrxe0 type rrxe netdev a0

check "garbage in every ring, then resize, modify, destroy" python3 "$py" garbage rrxe0
check "bad mmap offsets and lengths refused, a second mapping works" python3 "$py" mmap rrxe0
check "rings used after their CQ and QP are destroyed" python3 "$py" stale rrxe0
check "exit with garbage rings and everything allocated" python3 "$py" exit rrxe0
check "loopback sends: SQD drains after their ACKs, then ERR flushes the receives" timeout 120 python3 "$py" pending rrxe0
check "flushes stay bounded while a process keeps moving the producer indices" timeout 120 python3 "$py" spin rrxe0

# Remove the device, then the module, under a process that has rings mapped
# and scribbles on them afterwards (the core destroys its objects; the
# pages it still maps are its own: see design.rst, "Lifetimes").
rm -f /tmp/rings-ready /tmp/rings-go
python3 -c "
import os, sys, time, ctypes
sys.path.insert(0, '$RRXE_TOP/tools/testing')
import hostile_rings as h
ctx, pd, cq, qp = h.objects('rrxe0')
maps = h.uverbs_maps()
open('/tmp/rings-ready', 'w').close()
for _ in range(600):
    if os.path.exists('/tmp/rings-go'):
        break
    time.sleep(0.1)
for start, end, _ in maps:
    ctypes.memset(start, 0xa5, end - start)
print('scribbled after removal')
sys.stdout.flush()
os._exit(0)
" &
holder=$!
for _ in $(seq 100); do [ -e /tmp/rings-ready ] && break; sleep 0.1; done
check "rdma link delete with rings mapped" timeout 30 rdma link delete rrxe0
check "rmmod while the process still maps its rings" timeout 30 rmmod rrxe
touch /tmp/rings-go
wait $holder
check "the process survives using its rings after removal and rmmod" test $? = 0

# Security cases (Documentation/testing.rst, "Security"): each runs on an
# rdma_rxe device too, the control, and both outcomes are printed side by
# side. Each driver in its own namespace (they cannot share UDP port 4791).
ip link del a0
ref=rxe0
dut=rrxe0
rxe_and_rrxe $ref $dut
declare -A ns=([$ref]=$REF_NS [$dut]=$DUT_NS) netdev=([$ref]=a0 [$dut]=b0) \
	type=([$ref]=rxe [$dut]=rrxe) out
for dev in $ref $dut; do
	port_active $dev || echo "# setup: $dev port 1 is not ACTIVE"
done
inns() { local dev=$1; shift; ip netns exec "${ns[$dev]}" "$@"; }

# UD sends through an AH of another PD of the process, and of another
# process's context: LOC_QP_OP_ERR and the QP in ERR (rxe_get_av).
for dev in $ref $dut; do
	out[$dev]=$(inns $dev timeout 120 python3 "$py" ah_pd $dev 2>&1)
	echo "# $dev: $(echo "${out[$dev]}" | grep '^ah_pd:' || echo "${out[$dev]}" | tail -3)"
done
printf '# %-28s | %-40s | %s\n' case $ref $dut
printf '# %-28s | %-40s | %s\n' "UD send, AH of another PD" \
	"$(echo "${out[$ref]}" | sed -n 's/^ah_pd: //p')" "$(echo "${out[$dut]}" | sed -n 's/^ah_pd: //p')"
check "UD send through an AH of another PD or process: LOC_QP_OP_ERR, QP in ERR" \
	grep -q '^ok - ah_pd' <<<"${out[$dut]}"
if [ "$(echo "${out[$ref]}" | grep '^ah_pd:')" = "$(echo "${out[$dut]}" | grep '^ah_pd:')" ]; then
	echo "# ah_pd: rdma_rxe does the same"
else
	echo "# ah_pd: rdma_rxe differs"
fi

# Keys of the first 8 MRs of a device, then of the device created again:
# predictable keys (a fixed function of the index) repeat.
declare -A first second
for dev in $ref $dut; do
	first[$dev]=$(inns $dev python3 "$py" keys $dev 2>&1 | sed -n 's/^keys: //p')
	inns $dev rdma link delete $dev
	gone $dev || echo "# setup: $dev still there"
	inns $dev rdma link add $dev type ${type[$dev]} netdev ${netdev[$dev]}
	port_active $dev || echo "# setup: $dev port 1 is not ACTIVE again"
	second[$dev]=$(inns $dev python3 "$py" keys $dev 2>&1 | sed -n 's/^keys: //p')
	echo "# $dev keys: ${first[$dev]}"
	echo "# $dev again: ${second[$dev]}"
done
# same_index_keys A B: "COMMON EQUAL", the number of key indices both lists
# have and how many of those have the same key in both.
same_index_keys() {
	local k common=0 equal=0
	declare -A at
	for k in $1; do at[$((k >> 8))]=$k; done
	for k in $2; do
		[ -n "${at[$((k >> 8))]}" ] || continue
		common=$((common + 1))
		[ "${at[$((k >> 8))]}" = "$k" ] && equal=$((equal + 1))
	done
	echo "$common $equal"
}
# The two instances may start at different indices (the core's own MRs),
# so keys are compared index by index: a key that is a function of its
# index repeats at every common index. Random variants all repeat with a
# chance of 255^-4 or less.
declare -A same
for dev in $ref $dut; do
	same[$dev]=$(same_index_keys "${first[$dev]}" "${second[$dev]}")
	echo "# $dev: of the indices both instances used, how many: same key: ${same[$dev]}"
done
set -- ${same[$dut]}
check "rrxe keys at the same index differ between two instances of a device (${same[$dut]})" \
	test "${1:-0}" -ge 4 -a "${2:-0}" -lt "${1:-0}"
set -- ${same[$ref]}
if [ "${1:-0}" -ge 4 ] && [ "${2:-0}" -lt "$1" ]; then
	echo "# keys: rdma_rxe's differ too (random key byte)"
else
	echo "# keys: rdma_rxe's repeat"
fi

rxe_and_rrxe_teardown $ref $dut
finish
