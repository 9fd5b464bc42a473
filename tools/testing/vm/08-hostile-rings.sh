#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The queue memory mapped into a process is hostile input: garbage indices
# and geometry, bad mmap offsets and lengths, use after destroy, exit with
# everything mapped, and device removal while rings are mapped. The harness
# fails the run on any KASAN, lockdep or kmemleak report.
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
finish
