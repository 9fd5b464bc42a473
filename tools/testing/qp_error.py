#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""An RC QP the data path puts into ERR, two ways (22-observability checks
the kernel log line and the trace events that go with them):

  retry  connected to a QP number nobody has on the device's own GID, with
         a short timeout and one retry, a SEND goes unanswered until the
         retries run out: IBV_WC_RETRY_EXC_ERR.
  rnr    connected to a second QP of the device that has no receive
         posted, with one RNR retry: the responder answers RNR NAKs, the
         requester waits, then gives up: IBV_WC_RNR_RETRY_EXC_ERR.

Prints the completion's status and exits 0 when it is the expected one.

usage: qp_error.py DEVICE GID_INDEX [retry|rnr]
"""
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

dev, gidx = sys.argv[1], int(sys.argv[2])
mode = sys.argv[3] if len(sys.argv) > 3 else "retry"
ctx = Context(name=dev)
pd = PD(ctx)
cq = CQ(ctx, 16)


def rc_qp():
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=QPCap(4, 4, 1, 1)))


def connect(qp, dest):
    attr = QPAttr(port_num=1)
    attr.path_mtu = e.IBV_MTU_1024
    attr.dest_qp_num = dest
    attr.rq_psn = 0
    attr.sq_psn = 0
    attr.max_rd_atomic = 1
    attr.max_dest_rd_atomic = 1
    attr.min_rnr_timer = 1  # 0.01 ms
    attr.timeout = 10  # 4 ms
    attr.retry_cnt = 1
    attr.rnr_retry = 1
    gr = GlobalRoute(dgid=ctx.query_gid(1, gidx), sgid_index=gidx)
    attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
    qp.to_rts(attr)


qp = rc_qp()
if mode == "rnr":
    peer = rc_qp()
    connect(qp, peer.qp_num)
    connect(peer, qp.qp_num)
    want = e.IBV_WC_RNR_RETRY_EXC_ERR
else:
    connect(qp, 0xfedcb)  # no such QP
    want = e.IBV_WC_RETRY_EXC_ERR
mr = MR(pd, 64, e.IBV_ACCESS_LOCAL_WRITE)
qp.post_send(SendWR(opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(mr.buf, 64, mr.lkey)]))
deadline = time.time() + 30
while time.time() < deadline:
    n, wcs = cq.poll()
    if n:
        status = wcs[0].status
        print(f"completion status {status}")
        sys.exit(0 if status == want else 1)
    time.sleep(0.01)
print("no completion in 30 s")
sys.exit(1)
