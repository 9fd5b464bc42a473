#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What tearing objects down costs a process: 100 ibv_dereg_mr of 4 KiB MRs
# and 30 ibv_destroy_qp of RC QPs from pyverbs, timed, on an rdma_rxe and
# an rrxe device, twice each. Not a test (timings are not asserted): run it
# to compare,
#
#   bash scripts/vm-run.sh tools/testing/teardown-cost.sh
#
# (Documentation/testing.rst, 20-rnbd-srp's teardown figures).
. "$RRXE_TOP/tools/testing/lib.sh"
rxe_and_rrxe rxe0 rrxe0
prog=$(mktemp /tmp/teardown-XXXXXX.py)
cat >"$prog" <<'PY'
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPCap, QPInitAttr

dev = sys.argv[1]
ctx = Context(name=dev)
pd = PD(ctx)
mrs = [MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE) for _ in range(100)]
t = time.monotonic()
for m in mrs:
    m.close()
mr_ms = (time.monotonic() - t) * 1000 / len(mrs)
cq = CQ(ctx, 16)
attr = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=QPCap(4, 4, 1, 1))
qps = [QP(pd, attr) for _ in range(30)]
t = time.monotonic()
for q in qps:
    q.close()
qp_ms = (time.monotonic() - t) * 1000 / len(qps)
print(f"# {dev}: dereg_mr {mr_ms:.1f} ms each, destroy_qp {qp_ms:.1f} ms each")
PY
for _ in 1 2; do
	ip netns exec "$REF_NS" python3 "$prog" rxe0
	ip netns exec "$DUT_NS" python3 "$prog" rrxe0
done
rm -f "$prog"
rxe_and_rrxe_teardown rxe0 rrxe0
