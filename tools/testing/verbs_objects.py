#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Exercise the verbs control path of RDMA devices through pyverbs.

usage: verbs_objects.py [--summary FILE] [--cases A,B,...] [--timeout S] DEV...
       verbs_objects.py --list

Runs named cases against each DEV in turn (port 1, GID index 0) and prints
one line per case: `ok - DEV: CASE`, `not ok - DEV: CASE (REASON)`, or
`ok - DEV: CASE # SKIP EOPNOTSUPP` when the device refuses a verb the case
needs with EOPNOTSUPP, then a `# --- DEV: N cases in S s` comment; several
devices are run one after the other. Each case runs in a forked process of
its own, so a crash or hang in one case is reported as that case's failure
and the others still run. Every case releases what it creates (but
`process_exit`, whose point is to leave that to the kernel).

--summary FILE also writes a `# cases: CASE...` line naming the cases to run,
then `DEV<TAB>CASE<TAB>STATUS<TAB>REASON<TAB>VALUES<TAB>SECONDS` as each case
ends: STATUS is pass, skip or fail, REASON `-` when there is none, VALUES a
JSON object of deterministic values the device reported (CQ and QP sizes and
the like) and SECONDS the time the case took; so devices' results can be
compared case by case (tools/testing/vm/07-verbs-objects.sh).
"""
import argparse
import ctypes
import errno
import json
import os
import select
import signal
import subprocess
import sys
import time

from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context, get_device_list
from pyverbs.mr import MR, MW
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import RecvWR, SendWR, SGE
import pyverbs.enums as e
import pyverbs.mem_alloc as mem

PORT = 1
GID_INDEX = 0


class Fail(Exception):
    """A case's expectation did not hold."""


class Skip(Exception):
    """The device refused something the case needs with EOPNOTSUPP."""


def need(cond, msg):
    if not cond:
        raise Fail(msg)


def errname(code):
    if code is None or code < 0:
        return f'errno {code}'
    return errno.errorcode.get(code, str(code))


def expect_error(what, want, fn):
    """fn() must raise PyverbsRDMAError with an error code in want (a tuple).
    An EOPNOTSUPP nobody asked for means the device lacks the verb: the case
    is then skipped rather than failed."""
    try:
        obj = fn()
    except PyverbsRDMAError as ex:
        if ex.error_code in want:
            return
        if ex.error_code == errno.EOPNOTSUPP:
            raise
        raise Fail(f'{what}: wanted {"/".join(map(errname, want))}, '
                   f'got {errname(ex.error_code)}')
    if obj is not None and hasattr(obj, 'close'):
        obj.close()
    raise Fail(f'{what}: succeeded, wanted {"/".join(map(errname, want))}')


def qp_state(qp):
    """The state as the kernel reports it (not libibverbs' cached copy)."""
    attr, _ = qp.query(e.IBV_QP_STATE)
    return attr.qp_state


STATE_NAMES = {e.IBV_QPS_RESET: 'RESET', e.IBV_QPS_INIT: 'INIT',
               e.IBV_QPS_RTR: 'RTR', e.IBV_QPS_RTS: 'RTS',
               e.IBV_QPS_SQD: 'SQD', e.IBV_QPS_SQE: 'SQE',
               e.IBV_QPS_ERR: 'ERR'}


def need_state(qp, want, when):
    got = qp_state(qp)
    need(got == want, f'{when}: query_qp says {STATE_NAMES.get(got, got)}, '
         f'wanted {STATE_NAMES.get(want, want)}')


def modify(qp, attr, mask, what):
    """ibv_modify_qp, naming the transition in the error."""
    try:
        qp.modify(attr, mask | e.IBV_QP_STATE)
    except PyverbsRDMAError as ex:
        if ex.error_code == errno.EOPNOTSUPP:
            raise
        raise Fail(f'{what}: {errname(ex.error_code)}') from ex


def make_qp(ctx, pd, cq, qpt, srq=None, cap=None):
    cap = cap or QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1,
                       max_recv_sge=1, max_inline_data=0)
    return QP(pd, QPInitAttr(qp_type=qpt, scq=cq, rcq=cq, srq=srq, cap=cap))


def caps_of(qp):
    attr, init = qp.query(e.IBV_QP_STATE | e.IBV_QP_CAP)
    c = init.cap
    return {'max_send_wr': c.max_send_wr, 'max_recv_wr': c.max_recv_wr,
            'max_send_sge': c.max_send_sge, 'max_recv_sge': c.max_recv_sge,
            'max_inline_data': c.max_inline_data}


def global_ah_attr(ctx, gid_index=GID_INDEX):
    gid = ctx.query_gid(PORT, gid_index)
    gr = GlobalRoute(dgid=gid, sgid_index=gid_index, hop_limit=64)
    return AHAttr(port_num=PORT, is_global=1, gr=gr)


RC_INIT = e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS
RC_RTR = (e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN |
          e.IBV_QP_RQ_PSN | e.IBV_QP_MAX_DEST_RD_ATOMIC |
          e.IBV_QP_MIN_RNR_TIMER)
RC_RTS = (e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY |
          e.IBV_QP_SQ_PSN | e.IBV_QP_MAX_QP_RD_ATOMIC)
UC_INIT = RC_INIT
UC_RTR = e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN
UC_RTS = e.IBV_QP_SQ_PSN
UD_INIT = e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_QKEY
UD_RTS = e.IBV_QP_SQ_PSN

REMOTE_RW = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
             e.IBV_ACCESS_REMOTE_READ)


def init_attr(access=REMOTE_RW):
    a = QPAttr(qp_state=e.IBV_QPS_INIT)
    a.pkey_index = 0
    a.port_num = PORT
    a.qp_access_flags = access
    a.qkey = 0x11111111
    return a


def rtr_attr(ctx, dest_qpn, rc=True):
    a = QPAttr(qp_state=e.IBV_QPS_RTR)
    a.path_mtu = e.IBV_MTU_1024
    a.dest_qp_num = dest_qpn
    a.rq_psn = 0x123
    if rc:
        a.max_dest_rd_atomic = 1
        a.min_rnr_timer = 12
    a.ah_attr = global_ah_attr(ctx)
    return a


def rts_attr(rc=True):
    a = QPAttr(qp_state=e.IBV_QPS_RTS)
    a.sq_psn = 0x456
    if rc:
        a.timeout = 14
        a.retry_cnt = 7
        a.rnr_retry = 7
        a.max_rd_atomic = 1
    return a


def rc_to_rts(ctx, qp):
    modify(qp, init_attr(), RC_INIT, 'RESET->INIT')
    modify(qp, rtr_attr(ctx, qp.qp_num), RC_RTR, 'INIT->RTR')
    modify(qp, rts_attr(), RC_RTS, 'RTR->RTS')


# ---------------------------------------------------------------- cases

def case_context_query(dev, vals):
    """Open a context; query_device, query_port(1), query_gid(1, 0)."""
    with Context(name=dev) as ctx:
        attr = ctx.query_device()
        need(attr.phys_port_cnt == 1, f'phys_port_cnt {attr.phys_port_cnt}')
        for f in ('max_qp', 'max_qp_wr', 'max_sge', 'max_cq', 'max_cqe',
                  'max_mr', 'max_pd', 'max_srq', 'max_srq_wr', 'max_ah'):
            need(getattr(attr, f) > 0, f'query_device: {f} is 0')
        need(attr.max_mr_size > 0, 'query_device: max_mr_size is 0')
        port = ctx.query_port(PORT)
        need(port.state == e.IBV_PORT_ACTIVE, f'port state {port.state}')
        need(port.link_layer == e.IBV_LINK_LAYER_ETHERNET,
             f'port link_layer {port.link_layer}')
        need(port.gid_tbl_len > 0, 'port gid_tbl_len is 0')
        vals['port'] = {'state': port.state, 'max_mtu': port.max_mtu,
                        'gid_tbl_len': port.gid_tbl_len}
        gid = str(ctx.query_gid(PORT, GID_INDEX))
        need(gid.startswith('fe80:'), f'gid 0 is {gid}, not link-local')
        sysfs = f'/sys/class/infiniband/{dev}/ports/{PORT}/gids/{GID_INDEX}'
        with open(sysfs) as f:
            want = f.read().strip()
        need(gid == want, f'query_gid gives {gid}, sysfs {want}')
        gtype = ctx.query_gid_type(PORT, GID_INDEX)
        need(gtype == e.IBV_GID_TYPE_SYSFS_ROCE_V2, f'gid 0 type {gtype}')
        need(ctx.num_comp_vectors >= 1, 'no completion vectors')


def case_pd(dev, vals):
    """Allocate and free a PD; then 100 PDs, freed all together."""
    with Context(name=dev) as ctx:
        with PD(ctx):
            pass
        pds = []
        try:
            for _ in range(100):
                pds.append(PD(ctx))
        finally:
            for pd in pds:
                pd.close()


def case_cq(dev, vals):
    """CQs of 1, 100 and 4096 entries on a completion channel, vector 0:
    arm (solicited and not), poll while empty, destroy."""
    with Context(name=dev) as ctx:
        sizes = {}
        for cqe in (1, 100, 4096):
            with CompChannel(ctx) as cc, CQ(ctx, cqe, None, cc, 0) as cq:
                need(cq.cqe >= cqe, f'cqe {cqe} gave a CQ of {cq.cqe}')
                sizes[cqe] = cq.cqe
                cq.req_notify(False)
                cq.req_notify(True)
                n, wcs = cq.poll(4)
                need(n == 0 and not wcs, f'empty CQ polled {n} entries')
        with CQ(ctx, 16, None, None, 0) as cq:
            n, _ = cq.poll()
            need(n == 0, f'empty CQ without a channel polled {n}')
        vals['cqe'] = sizes


def case_cq_resize(dev, vals):
    """Resize a 100-entry CQ to 200 and back down to 50; still empty."""
    with Context(name=dev) as ctx, CQ(ctx, 100, None, None, 0) as cq:
        cq.resize(200)
        need(cq.cqe >= 200, f'resize to 200 gave {cq.cqe}')
        vals['cqe_after_resize_200'] = cq.cqe
        cq.resize(50)
        need(cq.cqe >= 50, f'resize to 50 gave {cq.cqe}')
        vals['cqe_after_resize_50'] = cq.cqe
        n, _ = cq.poll()
        need(n == 0, f'resized empty CQ polled {n}')


def case_cq_too_large(dev, vals):
    """cqe > max_cqe and a comp_vector out of range fail with EINVAL."""
    with Context(name=dev) as ctx:
        max_cqe = ctx.query_device().max_cqe
        with CQ(ctx, 1, None, None, 0):
            pass  # the device creates CQs at all
        expect_error(f'create_cq(cqe={max_cqe + 1})', (errno.EINVAL,),
                     lambda: CQ(ctx, max_cqe + 1, None, None, 0))
        expect_error('create_cq(cqe=-1)', (errno.EINVAL,),
                     lambda: CQ(ctx, -1, None, None, 0))
        nvec = ctx.num_comp_vectors
        expect_error(f'create_cq(comp_vector={nvec})', (errno.EINVAL,),
                     lambda: CQ(ctx, 16, None, None, nvec))


def case_qp_rc(dev, vals):
    """RC QP: create, query, RESET->INIT->RTR->RTS checking every state and
    the attributes set, then ERR, RESET, destroy."""
    with Context(name=dev) as ctx, PD(ctx) as pd, \
            CQ(ctx, 64, None, None, 0) as cq, \
            make_qp(ctx, pd, cq, e.IBV_QPT_RC) as qp:
        need(qp.qp_num > 1, f'qp_num {qp.qp_num}')
        need_state(qp, e.IBV_QPS_RESET, 'after create')
        caps = caps_of(qp)
        need(caps['max_send_wr'] >= 16 and caps['max_recv_wr'] >= 16 and
             caps['max_send_sge'] >= 1 and caps['max_recv_sge'] >= 1,
             f'query_qp caps {caps}')
        vals['caps'] = caps

        modify(qp, init_attr(), RC_INIT, 'RESET->INIT')
        need_state(qp, e.IBV_QPS_INIT, 'after INIT')
        a, _ = qp.query(e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS |
                        e.IBV_QP_PKEY_INDEX)
        need(a.port_num == PORT and a.pkey_index == 0 and
             a.qp_access_flags == REMOTE_RW,
             f'INIT attrs port {a.port_num} pkey_index {a.pkey_index} '
             f'access {a.qp_access_flags:#x}')

        modify(qp, rtr_attr(ctx, qp.qp_num), RC_RTR, 'INIT->RTR')
        need_state(qp, e.IBV_QPS_RTR, 'after RTR')
        a, _ = qp.query(RC_RTR)
        need(a.path_mtu == e.IBV_MTU_1024 and a.dest_qp_num == qp.qp_num and
             a.rq_psn == 0x123 and a.max_dest_rd_atomic == 1 and
             a.min_rnr_timer == 12,
             f'RTR attrs mtu {a.path_mtu} dqpn {a.dest_qp_num} rq_psn '
             f'{a.rq_psn:#x} max_dest_rd_atomic {a.max_dest_rd_atomic} '
             f'min_rnr_timer {a.min_rnr_timer}')
        ah = a.ah_attr
        need(ah.is_global and ah.port_num == PORT,
             f'RTR ah_attr is_global {ah.is_global} port {ah.port_num}')
        need(ah.dgid == str(ctx.query_gid(PORT, GID_INDEX)),
             f'RTR ah_attr dgid {ah.dgid}')

        modify(qp, rts_attr(), RC_RTS, 'RTR->RTS')
        need_state(qp, e.IBV_QPS_RTS, 'after RTS')
        a, _ = qp.query(RC_RTS)
        need(a.sq_psn == 0x456 and a.timeout == 14 and a.retry_cnt == 7 and
             a.rnr_retry == 7 and a.max_rd_atomic == 1,
             f'RTS attrs sq_psn {a.sq_psn:#x} timeout {a.timeout} retry '
             f'{a.retry_cnt} rnr_retry {a.rnr_retry} max_rd_atomic '
             f'{a.max_rd_atomic}')

        modify(qp, QPAttr(qp_state=e.IBV_QPS_ERR), 0, 'RTS->ERR')
        need_state(qp, e.IBV_QPS_ERR, 'after ERR')
        modify(qp, QPAttr(qp_state=e.IBV_QPS_RESET), 0, 'ERR->RESET')
        need_state(qp, e.IBV_QPS_RESET, 'after RESET')
        # A reset QP can be brought up again.
        rc_to_rts(ctx, qp)
        need_state(qp, e.IBV_QPS_RTS, 'after a second bring-up')


def case_qp_ud(dev, vals):
    """UD QP: create, RESET->INIT(qkey)->RTR->RTS, destroy."""
    with Context(name=dev) as ctx, PD(ctx) as pd, \
            CQ(ctx, 64, None, None, 0) as cq, \
            make_qp(ctx, pd, cq, e.IBV_QPT_UD) as qp:
        need_state(qp, e.IBV_QPS_RESET, 'after create')
        vals['caps'] = caps_of(qp)
        modify(qp, init_attr(), UD_INIT, 'RESET->INIT')
        need_state(qp, e.IBV_QPS_INIT, 'after INIT')
        a, _ = qp.query(e.IBV_QP_QKEY)
        need(a.qkey == 0x11111111, f'qkey {a.qkey:#x}')
        modify(qp, QPAttr(qp_state=e.IBV_QPS_RTR), 0, 'INIT->RTR')
        need_state(qp, e.IBV_QPS_RTR, 'after RTR')
        modify(qp, rts_attr(rc=False), UD_RTS, 'RTR->RTS')
        need_state(qp, e.IBV_QPS_RTS, 'after RTS')
        a, _ = qp.query(e.IBV_QP_SQ_PSN)
        need(a.sq_psn == 0x456, f'sq_psn {a.sq_psn:#x}')


def case_qp_uc(dev, vals):
    """UC QP: create, RESET->INIT->RTR->RTS with UC's attributes, destroy
    from RTS."""
    with Context(name=dev) as ctx, PD(ctx) as pd, \
            CQ(ctx, 64, None, None, 0) as cq, \
            make_qp(ctx, pd, cq, e.IBV_QPT_UC) as qp:
        need_state(qp, e.IBV_QPS_RESET, 'after create')
        vals['caps'] = caps_of(qp)
        uc_access = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
        modify(qp, init_attr(uc_access), UC_INIT, 'RESET->INIT')
        need_state(qp, e.IBV_QPS_INIT, 'after INIT')
        a, _ = qp.query(e.IBV_QP_ACCESS_FLAGS)
        need(a.qp_access_flags == uc_access, f'access {a.qp_access_flags:#x}')
        modify(qp, rtr_attr(ctx, qp.qp_num, rc=False), UC_RTR, 'INIT->RTR')
        need_state(qp, e.IBV_QPS_RTR, 'after RTR')
        modify(qp, rts_attr(rc=False), UC_RTS, 'RTR->RTS')
        need_state(qp, e.IBV_QPS_RTS, 'after RTS')
        a, _ = qp.query(e.IBV_QP_SQ_PSN | e.IBV_QP_RQ_PSN)
        need(a.sq_psn == 0x456 and a.rq_psn == 0x123,
             f'sq_psn {a.sq_psn:#x} rq_psn {a.rq_psn:#x}')


def case_qp_bad_transition(dev, vals):
    """Transitions IBA forbids, or without their required attributes, fail
    with EINVAL and leave the QP where it was."""
    with Context(name=dev) as ctx, PD(ctx) as pd, \
            CQ(ctx, 64, None, None, 0) as cq:
        with make_qp(ctx, pd, cq, e.IBV_QPT_RC) as qp:
            expect_error('RC RESET->RTR', (errno.EINVAL,), lambda: qp.modify(
                rtr_attr(ctx, qp.qp_num), RC_RTR | e.IBV_QP_STATE))
            need_state(qp, e.IBV_QPS_RESET, 'after a refused RESET->RTR')
            expect_error('RC RESET->RTS', (errno.EINVAL,), lambda: qp.modify(
                rts_attr(), RC_RTS | e.IBV_QP_STATE))
            expect_error('RC RESET->INIT without pkey/port/access',
                         (errno.EINVAL,), lambda: qp.modify(
                             init_attr(), e.IBV_QP_STATE))
            expect_error('RC RESET->INIT with a qkey (UD only)',
                         (errno.EINVAL,), lambda: qp.modify(
                             init_attr(), RC_INIT | e.IBV_QP_QKEY |
                             e.IBV_QP_STATE))
            bad_port = init_attr()
            bad_port.port_num = 2
            expect_error('RC RESET->INIT on port 2', (errno.EINVAL,),
                         lambda: qp.modify(bad_port, RC_INIT | e.IBV_QP_STATE))
            need_state(qp, e.IBV_QPS_RESET, 'after refused RESET->INITs')
            modify(qp, init_attr(), RC_INIT, 'RESET->INIT')
            expect_error('RC INIT->RTS', (errno.EINVAL,), lambda: qp.modify(
                rts_attr(), RC_RTS | e.IBV_QP_STATE))
            expect_error('RC INIT->RTR without the AV', (errno.EINVAL,),
                         lambda: qp.modify(rtr_attr(ctx, qp.qp_num),
                                           (RC_RTR & ~e.IBV_QP_AV) |
                                           e.IBV_QP_STATE))
            need_state(qp, e.IBV_QPS_INIT, 'after refused INIT->RTS/RTR')
        with make_qp(ctx, pd, cq, e.IBV_QPT_UD) as qp:
            expect_error('UD RESET->INIT without qkey', (errno.EINVAL,),
                         lambda: qp.modify(init_attr(), e.IBV_QP_PKEY_INDEX |
                                           e.IBV_QP_PORT | e.IBV_QP_STATE))
            need_state(qp, e.IBV_QPS_RESET, 'UD after a refused RESET->INIT')


def case_qp_caps_too_large(dev, vals):
    """QP creation with caps beyond the device's limits fails with EINVAL."""
    with Context(name=dev) as ctx, PD(ctx) as pd, \
            CQ(ctx, 64, None, None, 0) as cq:
        attr = ctx.query_device()
        with make_qp(ctx, pd, cq, e.IBV_QPT_RC):
            pass  # the device creates QPs at all
        over = {'max_send_wr': attr.max_qp_wr + 1,
                'max_recv_wr': attr.max_qp_wr + 1,
                'max_send_sge': attr.max_sge + 1,
                'max_recv_sge': attr.max_sge + 1,
                'max_inline_data': 1 << 16}
        for field, value in over.items():
            cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1,
                        max_recv_sge=1, max_inline_data=0)
            setattr(cap, field, value)
            expect_error(f'create_qp({field}={value})', (errno.EINVAL,),
                         lambda: make_qp(ctx, pd, cq, e.IBV_QPT_RC, cap=cap))


def case_mr(dev, vals):
    """reg_mr with local and remote access, 4 KiB and 1 MiB; remote write
    without local write is EINVAL; the same buffer twice gets two keys."""
    with Context(name=dev) as ctx, PD(ctx) as pd:
        with MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE) as mr:
            need(mr.lkey != 0, 'LOCAL_WRITE MR: lkey 0')
            need(mr.length == 4096, f'length {mr.length}')
        with MR(pd, 4096, REMOTE_RW) as mr:
            need(mr.lkey != 0 and mr.rkey != 0,
                 f'remote MR: lkey {mr.lkey:#x} rkey {mr.rkey:#x}')
        with MR(pd, 1 << 20, REMOTE_RW) as mr:
            need(mr.lkey != 0 and mr.rkey != 0, '1 MiB MR: a zero key')
        expect_error('REMOTE_WRITE without LOCAL_WRITE', (errno.EINVAL,),
                     lambda: MR(pd, 4096, e.IBV_ACCESS_REMOTE_WRITE))
        expect_error('REMOTE_ATOMIC without LOCAL_WRITE', (errno.EINVAL,),
                     lambda: MR(pd, 4096, e.IBV_ACCESS_REMOTE_ATOMIC))
        buf = mem.posix_memalign(8192, 4096)
        try:
            with MR(pd, 8192, REMOTE_RW, address=buf) as a, \
                    MR(pd, 8192, REMOTE_RW, address=buf) as b:
                need(a.lkey != b.lkey and a.rkey != b.rkey,
                     f'same buffer twice: lkeys {a.lkey:#x}/{b.lkey:#x}, '
                     f'rkeys {a.rkey:#x}/{b.rkey:#x}')
        finally:
            mem.free(buf)


def case_srq(dev, vals):
    """SRQ: create (max_wr 64, max_sge 1), query, modify srq_limit, reject a
    limit above max_wr and an SRQ above max_srq_wr, destroy."""
    with Context(name=dev) as ctx, PD(ctx) as pd:
        max_srq_wr = ctx.query_device().max_srq_wr
        with SRQ(pd, SrqInitAttr(SrqAttr(max_wr=64, max_sge=1))) as srq:
            q = srq.query()
            need(q.max_wr >= 64 and q.max_sge >= 1 and q.srq_limit == 0,
                 f'query: max_wr {q.max_wr} max_sge {q.max_sge} '
                 f'srq_limit {q.srq_limit}')
            vals['query'] = {'max_wr': q.max_wr, 'max_sge': q.max_sge}
            srq.modify(SrqAttr(srq_limit=16), e.IBV_SRQ_LIMIT)
            q = srq.query()
            need(q.srq_limit == 16, f'srq_limit {q.srq_limit} after modify')
            expect_error(f'srq_limit {q.max_wr + 1} > max_wr {q.max_wr}',
                         (errno.EINVAL,),
                         lambda: srq.modify(SrqAttr(srq_limit=q.max_wr + 1),
                                            e.IBV_SRQ_LIMIT))
            q = srq.query()
            need(q.srq_limit == 16, f'srq_limit {q.srq_limit} after a '
                 'refused modify')
        expect_error(f'create_srq(max_wr={max_srq_wr + 1})', (errno.EINVAL,),
                     lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=max_srq_wr + 1,
                                                         max_sge=1))))


def case_ah(dev, vals):
    """AH to the port's own RoCE v2 GID (index 0), destroyed again."""
    with Context(name=dev) as ctx, PD(ctx) as pd:
        gtype = ctx.query_gid_type(PORT, GID_INDEX)
        need(gtype == e.IBV_GID_TYPE_SYSFS_ROCE_V2, f'gid 0 type {gtype}')
        with AH(pd, attr=global_ah_attr(ctx)):
            pass
        ahs = []
        try:
            for _ in range(16):
                ahs.append(AH(pd, attr=global_ah_attr(ctx)))
        finally:
            for ah in ahs:
                ah.close()


def post_recvs(qp, mr, wr_ids):
    """Posts one single-SGE receive per id (straight into the user ring)."""
    for wr_id in wr_ids:
        qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1,
                            sg=[SGE(mr.buf, 64, mr.lkey)]))


def poll_all(cq, want, tries=200):
    """Polls until `want` completions arrived (or gives up); returns them."""
    wcs = []
    for _ in range(tries):
        n, got = cq.poll(want - len(wcs))
        wcs.extend(got[:n])
        if len(wcs) >= want:
            break
        time.sleep(0.01)
    return wcs


def case_flush_recv(dev, vals):
    """Receives posted in INIT and RTR are completed with WR_FLUSH_ERR, in
    order and with their wr_ids, when the QP enters ERR; none after RESET."""
    with Context(name=dev) as ctx, PD(ctx) as pd, \
            MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE) as mr, \
            CQ(ctx, 64, None, None, 0) as cq, \
            make_qp(ctx, pd, cq, e.IBV_QPT_RC) as qp:
        modify(qp, init_attr(), RC_INIT, 'RESET->INIT')
        post_recvs(qp, mr, range(100, 105))
        modify(qp, rtr_attr(ctx, qp.qp_num), RC_RTR, 'INIT->RTR')
        post_recvs(qp, mr, range(105, 108))
        n, _ = cq.poll(1)
        need(n == 0, f'{n} completions before ERR')
        modify(qp, QPAttr(qp_state=e.IBV_QPS_ERR), 0, 'RTR->ERR')
        wcs = poll_all(cq, 8)
        got = [(wc.wr_id, wc.status, wc.qp_num) for wc in wcs]
        want = [(i, e.IBV_WC_WR_FLUSH_ERR, qp.qp_num) for i in range(100, 108)]
        need(got == want, f'completions {got}')
        modify(qp, QPAttr(qp_state=e.IBV_QPS_RESET), 0, 'ERR->RESET')
        modify(qp, init_attr(), RC_INIT, 'RESET->INIT again')
        modify(qp, QPAttr(qp_state=e.IBV_QPS_ERR), 0, 'INIT->ERR')
        n, _ = cq.poll(4)
        need(n == 0, f'{n} completions from an empty queue')
        vals['flushed'] = len(wcs)


def case_post_state(dev, vals):
    """post_send before RTS is refused (EINVAL), as on every IB device."""
    with Context(name=dev) as ctx, PD(ctx) as pd, \
            MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE) as mr, \
            CQ(ctx, 64, None, None, 0) as cq, \
            make_qp(ctx, pd, cq, e.IBV_QPT_RC) as qp:
        wr = SendWR(wr_id=1, num_sge=1, sg=[SGE(mr.buf, 64, mr.lkey)])
        expect_error('post_send in RESET', (errno.EINVAL,),
                     lambda: qp.post_send(wr))
        modify(qp, init_attr(), RC_INIT, 'RESET->INIT')
        expect_error('post_send in INIT', (errno.EINVAL,),
                     lambda: qp.post_send(wr))


def case_cq_overflow(dev, vals):
    """Flushing more receives than the CQ holds reports IBV_EVENT_CQ_ERR
    and loses the rest, as rxe does."""
    with Context(name=dev) as ctx, PD(ctx) as pd, \
            MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE) as mr, \
            CQ(ctx, 1, None, None, 0) as cq, \
            make_qp(ctx, pd, cq, e.IBV_QPT_RC) as qp:
        modify(qp, init_attr(), RC_INIT, 'RESET->INIT')
        post_recvs(qp, mr, range(16))
        modify(qp, QPAttr(qp_state=e.IBV_QPS_ERR), 0, 'INIT->ERR')
        r, _, _ = select.select([ctx.cmd_fd], [], [], 5)
        need(r, 'no async event within 5 s')
        event = ctx.get_async_event()
        event.ack()
        need(event.event_type == e.IBV_EVENT_CQ_ERR,
             f'event {event.event_type}')
        wcs = poll_all(cq, 16, tries=20)
        need(0 < len(wcs) < 16, f'{len(wcs)} completions kept')
        vals['kept'] = len(wcs)


def case_mw(dev, vals):
    """Memory windows of type 1 and 2 with distinct R_Keys; type 3 refused."""
    with Context(name=dev) as ctx, PD(ctx) as pd:
        with MW(pd, e.IBV_MW_TYPE_1) as one, MW(pd, e.IBV_MW_TYPE_2) as two:
            need(one.rkey != two.rkey, f'rkeys {one.rkey:#x} {two.rkey:#x}')
            with MR(pd, 4096, REMOTE_RW) as mr:
                need(mr.rkey not in (one.rkey, two.rkey),
                     'an MR got an MW key')
        expect_error('MW type 3', (errno.EINVAL, errno.EOPNOTSUPP),
                     lambda: MW(pd, 3))


def case_ud_oversize(dev, vals):
    """A UD send longer than the port MTU is not sent and not an error
    either (IBA C10-93.1.1): it completes successfully, the receiver gets
    nothing, and the next send arrives."""
    with Context(name=dev) as ctx, PD(ctx) as pd, \
            MR(pd, 16384, e.IBV_ACCESS_LOCAL_WRITE) as mr, \
            CQ(ctx, 64, None, None, 0) as cq, \
            make_qp(ctx, pd, cq, e.IBV_QPT_UD) as qp, \
            AH(pd, attr=global_ah_attr(ctx)) as ah:
        mtu = 128 << ctx.query_port(PORT).active_mtu
        modify(qp, init_attr(), UD_INIT, 'RESET->INIT')
        modify(qp, QPAttr(qp_state=e.IBV_QPS_RTR), 0, 'INIT->RTR')
        modify(qp, rts_attr(rc=False), UD_RTS, 'RTR->RTS')
        qp.post_recv(RecvWR(wr_id=7, num_sge=1,
                            sg=[SGE(mr.buf + 8192, 8192, mr.lkey)]))
        for wr_id, length in ((1, mtu + 1), (2, 64)):
            wr = SendWR(wr_id=wr_id, num_sge=1,
                        sg=[SGE(mr.buf, length, mr.lkey)])
            wr.set_wr_ud(ah, qp.qp_num, 0x11111111)
            qp.post_send(wr)
        wcs = poll_all(cq, 3)
        got = sorted((wc.wr_id, wc.status, wc.byte_len if wc.wr_id == 7
                      else 0) for wc in wcs)
        # The receive holds the 64-byte send behind its 40-byte GRH.
        want = [(1, e.IBV_WC_SUCCESS, 0), (2, e.IBV_WC_SUCCESS, 0),
                (7, e.IBV_WC_SUCCESS, 40 + 64)]
        need(got == want, f'completions {got}, want {want}')
        vals['completions'] = got
        # query_qp reports where the send queue's PSN stands now.
        a, _ = qp.query(e.IBV_QP_SQ_PSN)
        need(a.sq_psn != 0x456, 'sq_psn still as set after two sends')
        vals['sq_psn'] = a.sq_psn


def leak_everything(dev):
    """Create one of each object, then exit without releasing any."""
    ctx = Context(name=dev)
    pd = PD(ctx)
    cc = CompChannel(ctx)
    cq = CQ(ctx, 64, None, cc, 0)
    cq.req_notify()
    srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=64, max_sge=1)))
    mr = MR(pd, 1 << 16, REMOTE_RW)
    qp = make_qp(ctx, pd, cq, e.IBV_QPT_RC)
    rc_to_rts(ctx, qp)
    qp2 = make_qp(ctx, pd, cq, e.IBV_QPT_RC, srq=srq)
    ud = make_qp(ctx, pd, cq, e.IBV_QPT_UD)
    modify(ud, init_attr(), UD_INIT, 'RESET->INIT')
    ah = AH(pd, attr=global_ah_attr(ctx))
    return [ctx, pd, cc, cq, srq, mr, qp, qp2, ud, ah]


def res_counts(dev):
    """The device's restrack counts from `rdma res`, or None if unknown."""
    try:
        out = subprocess.run(['rdma', '-j', 'resource', 'show'],
                             capture_output=True, text=True, timeout=10)
        for ent in json.loads(out.stdout or '[]'):
            if ent.get('ifname') == dev:
                return {k: v for k, v in ent.items()
                        if isinstance(v, int) and k != 'ifindex'}
    except (OSError, ValueError, subprocess.SubprocessError):
        pass
    return None


def case_process_exit(dev, vals):
    """A process creates PD, CQ (with a channel), SRQ, MR, QPs and an AH and
    exits without releasing them: it exits 0, the kernel releases all of
    it, and the device keeps working."""
    before = res_counts(dev)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code, msg = 0, 'created everything'
        try:
            leak_everything(dev)
        except PyverbsRDMAError as ex:
            code = 3 if ex.error_code == errno.EOPNOTSUPP else 1
            msg = str(ex)
        except BaseException as ex:  # noqa: B902 - report anything
            code, msg = 1, repr(ex)
        os.write(w, msg.encode())
        os._exit(code)
    os.close(w)
    with os.fdopen(r) as f:
        msg = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        raise Fail(f'child killed by signal {os.WTERMSIG(status)}')
    code = os.WEXITSTATUS(status)
    if code == 3:
        raise Skip(msg)
    need(code == 0, f'child exited {code}: {msg}')
    need(before is not None, f'`rdma -j resource show` has no {dev}')
    after = None
    for _ in range(50):
        after = res_counts(dev)
        if after == before:
            break
        time.sleep(0.1)
    need(after == before, f'rdma resource counts {before} before, {after} '
         'after the child exited')
    with Context(name=dev) as ctx, PD(ctx) as pd, \
            CQ(ctx, 16, None, None, 0) as cq, \
            make_qp(ctx, pd, cq, e.IBV_QPT_RC) as qp:
        rc_to_rts(ctx, qp)


class IbvQPCap(ctypes.Structure):
    _fields_ = [('max_send_wr', ctypes.c_uint32),
                ('max_recv_wr', ctypes.c_uint32),
                ('max_send_sge', ctypes.c_uint32),
                ('max_recv_sge', ctypes.c_uint32),
                ('max_inline_data', ctypes.c_uint32)]


class IbvQPInitAttr(ctypes.Structure):
    _fields_ = [('qp_context', ctypes.c_void_p),
                ('send_cq', ctypes.c_void_p),
                ('recv_cq', ctypes.c_void_p),
                ('srq', ctypes.c_void_p),
                ('cap', IbvQPCap),
                ('qp_type', ctypes.c_int),
                ('sq_sig_all', ctypes.c_int)]


def libibverbs():
    lib = ctypes.CDLL('libibverbs.so.1', use_errno=True)
    vp = ctypes.c_void_p
    sigs = {'ibv_get_device_list': (ctypes.POINTER(vp),
                                    [ctypes.POINTER(ctypes.c_int)]),
            'ibv_free_device_list': (None, [ctypes.POINTER(vp)]),
            'ibv_get_device_name': (ctypes.c_char_p, [vp]),
            'ibv_open_device': (vp, [vp]),
            'ibv_close_device': (ctypes.c_int, [vp]),
            'ibv_alloc_pd': (vp, [vp]),
            'ibv_dealloc_pd': (ctypes.c_int, [vp]),
            'ibv_reg_mr': (vp, [vp, vp, ctypes.c_size_t, ctypes.c_int]),
            'ibv_dereg_mr': (ctypes.c_int, [vp]),
            'ibv_create_cq': (vp, [vp, ctypes.c_int, vp, vp, ctypes.c_int]),
            'ibv_destroy_cq': (ctypes.c_int, [vp]),
            'ibv_create_qp': (vp, [vp, ctypes.POINTER(IbvQPInitAttr)]),
            'ibv_destroy_qp': (ctypes.c_int, [vp])}
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


def raw_destroy_order(dev):
    """With plain libibverbs (pyverbs always destroys dependents first):
    a PD with a QP and an MR, and a CQ with a QP, are busy."""
    lib = libibverbs()
    n = ctypes.c_int()
    devs = lib.ibv_get_device_list(ctypes.byref(n))
    need(bool(devs), 'ibv_get_device_list failed')
    try:
        found = [devs[i] for i in range(n.value)
                 if lib.ibv_get_device_name(devs[i]).decode() == dev]
        need(found, f'{dev} not in ibv_get_device_list')
        ctx = lib.ibv_open_device(found[0])
        need(ctx, f'ibv_open_device: {errname(ctypes.get_errno())}')
    finally:
        lib.ibv_free_device_list(devs)

    live = []  # (destroy function, object), destroyed in reverse on exit

    def create(what, ptr):
        if not ptr:
            err = ctypes.get_errno()
            if err == errno.EOPNOTSUPP:
                raise Skip(f'{what}: EOPNOTSUPP')
            raise Fail(f'{what}: {errname(err)}')
        return ptr

    def destroy(what, fn, obj, want=0):
        rc = fn(obj)
        if rc == 0:
            live.remove((fn, obj))
        need(rc == want, f'{what}: got {errname(rc) if rc else "success"}, '
             f'wanted {errname(want) if want else "success"}')

    buf = ctypes.create_string_buffer(8192)
    try:
        pd = create('alloc_pd', lib.ibv_alloc_pd(ctx))
        live.append((lib.ibv_dealloc_pd, pd))
        mr = create('reg_mr', lib.ibv_reg_mr(pd, ctypes.addressof(buf), 8192,
                                             e.IBV_ACCESS_LOCAL_WRITE))
        live.append((lib.ibv_dereg_mr, mr))
        cq = create('create_cq', lib.ibv_create_cq(ctx, 16, None, None, 0))
        live.append((lib.ibv_destroy_cq, cq))
        attr = IbvQPInitAttr(send_cq=cq, recv_cq=cq, qp_type=e.IBV_QPT_RC,
                             cap=IbvQPCap(4, 4, 1, 1, 0))
        qp = create('create_qp', lib.ibv_create_qp(pd, ctypes.byref(attr)))
        live.append((lib.ibv_destroy_qp, qp))

        destroy('dealloc_pd with a QP and an MR', lib.ibv_dealloc_pd, pd,
                errno.EBUSY)
        destroy('destroy_cq with a QP', lib.ibv_destroy_cq, cq, errno.EBUSY)
        destroy('destroy_qp', lib.ibv_destroy_qp, qp)
        destroy('dealloc_pd with an MR', lib.ibv_dealloc_pd, pd, errno.EBUSY)
        destroy('dereg_mr', lib.ibv_dereg_mr, mr)
        destroy('dealloc_pd', lib.ibv_dealloc_pd, pd)
        destroy('destroy_cq', lib.ibv_destroy_cq, cq)
    finally:
        for fn, obj in reversed(live):
            fn(obj)
        rc = lib.ibv_close_device(ctx)
    need(rc == 0, f'close_device: {errname(rc)}')


def case_destroy_order(dev, vals):
    """Destroying a PD or CQ still in use is EBUSY (plain libibverbs);
    pyverbs' close() of a parent releases its dependents first without
    error, whether the parent is a PD, a CQ or the context."""
    raw_destroy_order(dev)
    for parent in ('pd', 'cq', 'ctx'):
        ctx = Context(name=dev)
        try:
            pd = PD(ctx)
            cq = CQ(ctx, 16, None, None, 0)
            srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1)))
            mr = MR(pd, 4096, REMOTE_RW)
            qp = make_qp(ctx, pd, cq, e.IBV_QPT_RC, srq=srq)
            rc_to_rts(ctx, qp)
            ah = AH(pd, attr=global_ah_attr(ctx))
            # Keep the dependents referenced: pyverbs only holds weak
            # references, and dropping ours would release them right here.
            keep = [srq, mr, qp, ah]
            {'pd': pd, 'cq': cq, 'ctx': ctx}[parent].close()
            keep.clear()
        except PyverbsRDMAError as ex:
            if ex.error_code == errno.EOPNOTSUPP:
                raise
            raise Fail(f'closing the {parent} first: {ex}') from ex
        finally:
            ctx.close()


CASES = [
    ('context_query', case_context_query),
    ('pd', case_pd),
    ('cq', case_cq),
    ('cq_resize', case_cq_resize),
    ('cq_too_large', case_cq_too_large),
    ('qp_rc', case_qp_rc),
    ('qp_ud', case_qp_ud),
    ('qp_uc', case_qp_uc),
    ('qp_bad_transition', case_qp_bad_transition),
    ('qp_caps_too_large', case_qp_caps_too_large),
    ('mr', case_mr),
    ('srq', case_srq),
    ('ah', case_ah),
    ('flush_recv', case_flush_recv),
    ('post_state', case_post_state),
    ('cq_overflow', case_cq_overflow),
    ('mw', case_mw),
    ('ud_oversize', case_ud_oversize),
    ('process_exit', case_process_exit),
    ('destroy_order', case_destroy_order),
]


def run_case(fn, dev):
    """Returns (status, reason, values) for one case, in this process."""
    vals = {}
    try:
        fn(dev, vals)
        return 'pass', '', vals
    except Skip as ex:
        return 'skip', str(ex), vals
    except Fail as ex:
        return 'fail', str(ex), vals
    except PyverbsRDMAError as ex:
        if ex.error_code == errno.EOPNOTSUPP:
            return 'skip', str(ex), vals
        return 'fail', str(ex), vals
    except PyverbsError as ex:
        return 'fail', str(ex), vals
    except Exception as ex:  # noqa: B902 - a bug here or in pyverbs
        return 'fail', f'{type(ex).__name__}: {ex}', vals


def run_isolated(fn, dev, timeout):
    """run_case() in a forked process, surviving its crash or hang."""
    r, w = os.pipe()
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            res = run_case(fn, dev)
        except BaseException as ex:  # noqa: B902
            res = ('fail', f'helper error: {ex!r}', {})
        os.write(w, json.dumps(res).encode())
        os._exit(0)
    os.close(w)
    data = b''
    deadline = time.monotonic() + timeout
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        ready, _, _ = select.select([r], [], [], left)
        if ready:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return 'fail', f'timed out after {timeout}s', {}
    if data:
        try:
            return tuple(json.loads(data))
        except ValueError:
            pass
    if os.WIFSIGNALED(status):
        return 'fail', f'killed by signal {os.WTERMSIG(status)}', {}
    return 'fail', f'exited {os.WEXITSTATUS(status)} without a result', {}


def process_age():
    """Seconds since this process started."""
    try:
        with open('/proc/self/stat') as f:
            start = int(f.read().rsplit(')', 1)[1].split()[19])
        with open('/proc/uptime') as f:
            up = float(f.read().split()[0])
        return up - start / os.sysconf('SC_CLK_TCK')
    except (OSError, ValueError, IndexError):
        return 0.0


def one_line(text):
    return ' '.join(str(text).split())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('devs', nargs='*', metavar='DEV',
                    help='RDMA devices, e.g. rxe0')
    ap.add_argument('--list', action='store_true', help='list the cases')
    ap.add_argument('--cases', help='comma-separated cases to run (all)')
    ap.add_argument('--summary', help='also write machine-readable results')
    ap.add_argument('--timeout', type=float, default=60,
                    help='seconds one case may take (60)')
    args = ap.parse_args()
    if args.list:
        for name, _ in CASES:
            print(name)
        return 0
    if not args.devs:
        ap.error('a device name is required')
    cases = CASES
    if args.cases:
        want = args.cases.split(',')
        unknown = set(want) - {n for n, _ in CASES}
        if unknown:
            ap.error(f'unknown cases: {", ".join(sorted(unknown))}')
        cases = [(n, f) for n, f in CASES if n in want]

    # Load libibverbs' providers once, here, rather than in every case's
    # process: under TCG that takes seconds.
    try:
        get_device_list()
    except PyverbsError:
        pass

    summary = open(args.summary, 'w') if args.summary else None
    if summary:
        summary.write(f'# cases: {" ".join(n for n, _ in cases)}\n')
        summary.flush()
    failed = 0
    startup = process_age()
    for dev in args.devs:
        if len(args.devs) > 1:
            print(f'# --- {dev}')
        dev_start = time.monotonic()
        for name, fn in cases:
            start = time.monotonic()
            status, reason, vals = run_isolated(fn, dev, args.timeout)
            took = time.monotonic() - start
            reason = one_line(reason)
            if status == 'pass':
                print(f'ok - {dev}: {name}')
            elif status == 'skip':
                print(f'ok - {dev}: {name} # SKIP EOPNOTSUPP')
            else:
                failed += 1
                print(f'not ok - {dev}: {name} ({reason})')
            sys.stdout.flush()
            if summary:
                summary.write(f'{dev}\t{name}\t{status}\t{reason or "-"}\t'
                              f'{json.dumps(vals, sort_keys=True)}\t'
                              f'{took:.1f}\n')
                summary.flush()
        print(f'# --- {dev}: {len(cases)} cases in '
              f'{time.monotonic() - dev_start:.0f}s (starting Python and '
              f'pyverbs took {startup:.0f}s)')
    if summary:
        summary.close()
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
