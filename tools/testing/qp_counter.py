#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Two RC QPs of one device connected to each other, kept alive and made to
talk on demand, for 22-observability's per-QP counter case (`rdma
statistic qp`): the shell binds them to counters and reads the counters
and the port's totals between rounds of traffic.

Prints `qpns A B` once both QPs are in RTS (the core binds them in auto
mode on their move to INIT). Then reads commands, one a line, from stdin:

  send N   N messages of 64 bytes (one packet each) from A to B, each
           received and completed before the next; prints `sent N`, or
           `failed ...` and exits 1 on an error completion or a timeout
  exit     (or end of input) destroys the QPs and exits 0

usage: qp_counter.py DEVICE GID_INDEX
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
from pyverbs.wr import SGE, RecvWR, SendWR

dev, gidx = sys.argv[1], int(sys.argv[2])
ctx = Context(name=dev)
pd = PD(ctx)
cq = CQ(ctx, 64)
SIZE = 64


def rc_qp():
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=QPCap(8, 8, 1, 1)))


def connect(qp, dest):
    attr = QPAttr(port_num=1)
    attr.path_mtu = e.IBV_MTU_1024
    attr.dest_qp_num = dest
    attr.rq_psn = 0
    attr.sq_psn = 0
    attr.max_rd_atomic = 1
    attr.max_dest_rd_atomic = 1
    attr.min_rnr_timer = 1
    attr.timeout = 14
    attr.retry_cnt = 7
    attr.rnr_retry = 7
    gr = GlobalRoute(dgid=ctx.query_gid(1, gidx), sgid_index=gidx)
    attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
    qp.to_rts(attr)


def wait_completions(n):
    """Polls `n` completions within 10 s; the error, or None."""
    deadline = time.time() + 10
    while n and time.time() < deadline:
        got, wcs = cq.poll()
        for wc in wcs[:got]:
            if wc.status != e.IBV_WC_SUCCESS:
                return f"completion status {wc.status}"
        n -= got
        if not got:
            time.sleep(0.001)
    return f"{n} completions missing after 10 s" if n else None


def send(n, a, b, mr):
    for _ in range(n):
        b.post_recv(RecvWR(num_sge=1, sg=[SGE(mr.buf, SIZE, mr.lkey)]))
        wr = SendWR(opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(mr.buf, SIZE, mr.lkey)])
        a.post_send(wr)
        err = wait_completions(2)
        if err:
            return err
    return None


def main():
    a, b = rc_qp(), rc_qp()
    connect(a, b.qp_num)
    connect(b, a.qp_num)
    mr = MR(pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)
    print(f"qpns {a.qp_num} {b.qp_num}", flush=True)
    for line in sys.stdin:
        words = line.split()
        if words[:1] == ["send"] and len(words) == 2:
            err = send(int(words[1]), a, b, mr)
            if err:
                print(f"failed {err}", flush=True)
                return 1
            print(f"sent {words[1]}", flush=True)
        elif words[:1] == ["exit"]:
            break
    for o in (a, b, mr):
        o.close()
    return 0


sys.exit(main())
