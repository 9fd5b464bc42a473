#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Seeded fuzzing of a device's verbs from user space (vm/26-fuzz-verbs.sh).

  fuzz_verbs.py --dev DEV --gid N --seed S [--sequences N] [--steps K]
                [--timeout SECS]

Runs N sequences, each in a process of its own forked from this one (which
never opens the device, so the fork is clean), each seeded from S and its
number: the same seed gives the same sequences. A sequence opens a context
on DEV and makes K random calls among:

  create/destroy  PD, CQ (cqe 0, 1, small, huge, on a completion channel
                  or not), completion channel, SRQ (random max_wr, max_sge,
                  srq_limit), MR (access flags valid and not, lengths 0, 1,
                  unaligned, huge, addresses in the process's buffer, across
                  its guard pages, read-only, unmapped, kernel, not
                  canonical), MW (type 1 and 2), AH (GID index, destination
                  GIDs: the device's own, link-local, multicast, random),
                  QP (RC, UC, UD, with or without an SRQ, caps from zero to
                  above the device's limits, sq_sig_all), destroyed in any
                  order (pyverbs destroys an object's users first);
  busy            a second context through libibverbs directly (ctypes):
                  PD, CQ on a channel, SRQ, QP on them, MR; then the PD,
                  CQ, SRQ and channel destroyed while in use (EBUSY
                  expected), then in order, or the context left to the exit;
  modify_qp       a random state (illegal transitions and out-of-range
                  states too), a random attribute mask and random values
                  (timeouts, retry counts, PSNs, path MTU, dest QPN, P_Key
                  index, Q_Key, access flags, rd_atomic, RNR timer, port,
                  address vector); or a valid RESET->INIT->RTR->RTS walk
                  connecting two QPs of the device to each other (its own
                  RoCEv2 GID, so data flows over lo);
  post_send       every opcode (SEND, SEND_IMM, WRITE, WRITE_IMM, READ,
                  atomics, BIND_MW, LOCAL_INV, SEND_INV, TSO, FLUSH,
                  ATOMIC_WRITE ...) with random flags (inline, signaled,
                  fence, solicited), SGE lists (keys of live, dead and
                  other PDs' MRs, random keys; addresses and lengths in and
                  out of range), rkeys, remote addresses and immediate data;
                  about a third well formed; post_recv and SRQ post_recv
                  the same way;
  others          poll_cq, req_notify_cq, resize_cq (below the outstanding
                  completions too), query_qp, query_srq, modify_srq (arm,
                  resize), query_port, query_device, query_gid;
  fork            a child that queries, moves a QP to ERR and allocates a
                  PD through the inherited context, or just exits
                  (os._exit, never touching the rings the parent shares);
  exit            the sequence ends at once with its objects alive.

One sequence in 16 is hostile: at a random point it scribbles random bytes
over every ring mapped into it (as hostile_rings.py does) and from then on
only calls verbs that the provider forwards to the kernel (never post or
poll, which trust the ring: a crash of the provider is not what is tested).

Every verb failing with an errno is expected and counted, by verb and
errno. A sequence that has not ended after SEQ_SECS has its kernel stack
printed and is killed, and one that cannot be reaped after SIGKILL is reported
with its kernel stack. Prints, for the test script:

  verb NAME ok=N EINVAL=N ...     one line per verb (and `wc`, the
                                  completions polled, by status)
  fuzz-verbs: ...                 the totals: sequences, verbs, wall time
  ok - ... / not ok - ...         sequences ended by themselves, none hung
                                  or died of a signal, all reaped
"""
import argparse
import ctypes
import ctypes.util
import errno
import json
import mmap
import os
import random
import signal
import sys
import time
from collections import Counter

from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context
from pyverbs.mr import MR, MW, MWBind, MWBindInfo
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import RecvWR, SendWR, SGE
import pyverbs.enums as e

PORT = 1
BUF_LEN = 1 << 20
GUARD = 64 << 10
SEQ_SECS = 60        # a sequence's limit: then its kernel stack, SIGKILL
CHILD_SECS = 10      # a forked child's
QKEY = 0x11111111

# ibv_wr_opcode (verbs.h); the rxe provider indexes nothing by it.
WR = {'WRITE': 0, 'WRITE_IMM': 1, 'SEND': 2, 'SEND_IMM': 3, 'READ': 4,
      'CAS': 5, 'FAA': 6, 'LOCAL_INV': 7, 'BIND_MW': 8, 'SEND_INV': 9,
      'TSO': 10, 'DRIVER1': 11, 'FLUSH': 14, 'ATOMIC_WRITE': 15}
QPT = {e.IBV_QPT_RC: 'RC', e.IBV_QPT_UC: 'UC', e.IBV_QPT_UD: 'UD'}
ACCESS_BITS = [e.IBV_ACCESS_LOCAL_WRITE, e.IBV_ACCESS_REMOTE_WRITE,
               e.IBV_ACCESS_REMOTE_READ, e.IBV_ACCESS_REMOTE_ATOMIC,
               e.IBV_ACCESS_MW_BIND, e.IBV_ACCESS_ZERO_BASED,
               e.IBV_ACCESS_ON_DEMAND, 1 << 8, 1 << 9, 1 << 10, 1 << 20, 1 << 30]
REMOTE = (e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ |
          e.IBV_ACCESS_REMOTE_ATOMIC)
SEND_FLAGS = [e.IBV_SEND_FENCE, e.IBV_SEND_SIGNALED, e.IBV_SEND_SOLICITED,
              e.IBV_SEND_INLINE, e.IBV_SEND_IP_CSUM, 1 << 5]
QP_MASK_BITS = 26    # IBV_QP_STATE (1) .. IBV_QP_RATE_LIMIT (1 << 25)
WC_NAMES = {getattr(e, n): n[7:] for n in dir(e) if n.startswith('IBV_WC_')
            and n[7:] in ('SUCCESS', 'LOC_LEN_ERR', 'LOC_QP_OP_ERR',
                          'LOC_PROT_ERR', 'WR_FLUSH_ERR', 'MW_BIND_ERR',
                          'BAD_RESP_ERR', 'LOC_ACCESS_ERR', 'REM_INV_REQ_ERR',
                          'REM_ACCESS_ERR', 'REM_OP_ERR', 'RETRY_EXC_ERR',
                          'RNR_RETRY_EXC_ERR', 'REM_ABORT_ERR', 'GENERAL_ERR',
                          'FATAL_ERR', 'RESP_TIMEOUT_ERR', 'INV_EECN_ERR',
                          'INV_EEC_STATE_ERR', 'LOC_EEC_OP_ERR', 'REM_INV_RD_REQ_ERR')}


def errname(code):
    return errno.errorcode.get(code, f'E{code}') if code and code > 0 else f'E{code}'


class Obj:
    """A verbs object of the sequence and what the fuzzer knows of it."""

    def __init__(self, kind, o, **kw):
        self.kind, self.o, self.alive = kind, o, True
        self.__dict__.update(kw)


class Raw:
    """Just what `busy` needs of libibverbs, called directly."""

    class QPInit(ctypes.Structure):
        _fields_ = [('qp_context', ctypes.c_void_p), ('send_cq', ctypes.c_void_p),
                    ('recv_cq', ctypes.c_void_p), ('srq', ctypes.c_void_p),
                    ('cap', ctypes.c_uint32 * 5), ('qp_type', ctypes.c_int),
                    ('sq_sig_all', ctypes.c_int)]

    class SRQInit(ctypes.Structure):
        _fields_ = [('srq_context', ctypes.c_void_p), ('attr', ctypes.c_uint32 * 3)]

    def __init__(self):
        lib = ctypes.CDLL(ctypes.util.find_library('ibverbs') or 'libibverbs.so.1',
                          use_errno=True)
        vp = ctypes.c_void_p
        for name, res, args in (
                ('ibv_get_device_list', ctypes.POINTER(vp), [ctypes.POINTER(ctypes.c_int)]),
                ('ibv_free_device_list', None, [ctypes.POINTER(vp)]),
                ('ibv_get_device_name', ctypes.c_char_p, [vp]),
                ('ibv_open_device', vp, [vp]), ('ibv_close_device', ctypes.c_int, [vp]),
                ('ibv_alloc_pd', vp, [vp]), ('ibv_dealloc_pd', ctypes.c_int, [vp]),
                ('ibv_create_comp_channel', vp, [vp]),
                ('ibv_destroy_comp_channel', ctypes.c_int, [vp]),
                ('ibv_create_cq', vp, [vp, ctypes.c_int, vp, vp, ctypes.c_int]),
                ('ibv_destroy_cq', ctypes.c_int, [vp]),
                ('ibv_create_srq', vp, [vp, vp]), ('ibv_destroy_srq', ctypes.c_int, [vp]),
                ('ibv_create_qp', vp, [vp, vp]), ('ibv_destroy_qp', ctypes.c_int, [vp]),
                ('ibv_reg_mr', vp, [vp, vp, ctypes.c_size_t, ctypes.c_int]),
                ('ibv_dereg_mr', ctypes.c_int, [vp])):
            f = getattr(lib, name)
            f.restype, f.argtypes = res, args
            setattr(self, name[4:], f)

    def open(self, dev):
        n = ctypes.c_int()
        lst = self.get_device_list(ctypes.byref(n))
        if not lst:
            return None
        ctx = None
        for i in range(n.value):
            if self.get_device_name(lst[i]).decode() == dev:
                ctx = self.open_device(lst[i])
        self.free_device_list(lst)
        return ctx


class Sequence:
    def __init__(self, dev, gid, seed, steps, hostile, counts, no_type2_bind=False):
        self.dev, self.gid_index, self.steps = dev, gid, steps
        self.no_type2_bind = no_type2_bind
        self.rng = random.Random(seed)
        self.hostile_at = self.rng.randrange(steps) if hostile else None
        self.scribbled = False
        self.counts = counts
        self.objs = []
        self.dead_keys = [0, 0xffffffff]
        self.ctx = None

    # ---- bookkeeping -------------------------------------------------

    def call(self, verb, fn, *args, **kw):
        """fn(*args); counts the outcome by verb; returns its result or
        None when it failed."""
        try:
            r = fn(*args, **kw)
        except PyverbsRDMAError as ex:
            self.counts[f'{verb}|{errname(ex.error_code)}'] += 1
            return None
        except (PyverbsError, OverflowError, ValueError, TypeError) as ex:
            self.counts[f'{verb}|pyverbs:{type(ex).__name__}'] += 1
            return None
        self.counts[f'{verb}|ok'] += 1
        return r if r is not None else True

    def live(self, kind, pred=None):
        return [o for o in self.objs if o.alive and o.kind == kind and (pred is None or pred(o))]

    def pick(self, kind, pred=None):
        objs = self.live(kind, pred)
        return self.rng.choice(objs) if objs else None

    def add(self, kind, o, **kw):
        obj = Obj(kind, o, **kw)
        self.objs.append(obj)
        return obj

    def kill(self, obj):
        """obj and what pyverbs closes with it (its users) are gone."""
        if not obj.alive:
            return
        obj.alive = False
        if obj.kind == 'mr':
            self.dead_keys += [obj.lkey, obj.rkey]
        for o in self.objs:
            if o.alive and obj in getattr(o, 'deps', ()):
                self.kill(o)

    # ---- helpers -----------------------------------------------------

    def r32(self):
        return self.rng.choice([0, 1, 0x7fffffff, 0xffffffff, self.rng.getrandbits(32)])

    def addr_in_buf(self, length=0):
        off = self.rng.randrange(BUF_LEN)
        if self.rng.random() < 0.5:
            off &= ~0xfff
        return self.buf + off

    def buf_range(self):
        """(address, length) somewhere in or around the process's buffer,
        or elsewhere entirely."""
        r = self.rng.random()
        if r < 0.55:
            a = self.addr_in_buf()
            n = self.rng.choice([0, 1, 7, 4096, 4097, self.rng.randrange(1, 65536)])
            return a, min(n, self.buf + BUF_LEN - a)
        if r < 0.7:   # across a guard (pinning fails there)
            return self.buf + BUF_LEN - self.rng.randrange(1, 8192), self.rng.choice([8192, 1 << 20, 1 << 40])
        if r < 0.75:
            return self.buf, BUF_LEN
        if r < 0.82:
            return self.ro, self.rng.choice([1, 4096, 8192])
        return self.rng.choice([0x1000, 0xdead000, 1 << 46, 0xffff888000000000,
                                0x8000000000000000, self.rng.getrandbits(64)]), \
            self.rng.choice([1, 4096, 1 << 30, (1 << 64) - 1])

    def sges(self, pd, n, inline=False):
        """n SGEs: mostly in MRs of pd, else keys and ranges of anything."""
        out = []
        for _ in range(n):
            mr = self.pick('mr', lambda m: m.deps[0] is pd and m.length > 0 and m.in_buf)
            r = self.rng.random()
            if mr and r < 0.6:
                off = self.rng.randrange(mr.length)
                ln = self.rng.choice([0, 1, 8, 64, 4096, mr.length - off])
                a, key = mr.addr + off, mr.lkey
                if self.rng.random() < 0.1:
                    ln = mr.length - off + self.rng.choice([1, 4096])
            else:
                other = self.pick('mr')
                key = self.rng.choice([other.lkey if other else 0, self.rng.choice(self.dead_keys),
                                       self.r32()])
                a, ln = self.buf_range()
                ln &= 0xffffffff
            if inline and not (self.buf <= a and a + ln <= self.buf + BUF_LEN):
                a, ln = self.buf, min(ln, 256)
            out.append(SGE(a, ln, key))
        return out

    def remote(self):
        """(rkey, address) of a live MR or window, or random."""
        mr = self.pick('mr', lambda m: m.length > 0 and m.in_buf)
        if mr and self.rng.random() < 0.6:
            off = self.rng.randrange(mr.length) & ~7 if self.rng.random() < 0.8 else self.rng.randrange(mr.length)
            return mr.rkey, mr.addr + off
        mw = self.pick('mw')
        if mw and self.rng.random() < 0.3:
            return mw.o.rkey, self.addr_in_buf() & ~7
        return self.rng.choice([self.r32(), self.rng.choice(self.dead_keys)]), \
            self.rng.choice([self.addr_in_buf(), 0, self.rng.getrandbits(64)])

    def dgid(self):
        r = self.rng.random()
        if r < 0.75:
            return self.own_gid
        if r < 0.85:
            return str(self.ctx.query_gid(PORT, 0))
        if r < 0.9:
            return 'ff0e:0000:0000:0000:0000:0000:0000:0001'
        if r < 0.95:
            return '0000:0000:0000:0000:0000:ffff:c612:%02x%02x' % (
                self.rng.randrange(256), self.rng.randrange(256))
        return ':'.join('%04x' % self.rng.getrandbits(16) for _ in range(8))

    def ah_attr(self, good=True):
        gidx = self.gid_index if good or self.rng.random() < 0.7 else \
            self.rng.choice([0, 1, 2, 3, 255, self.rng.randrange(256)])
        gr = GlobalRoute(dgid=GID(self.own_gid if good else self.dgid()), sgid_index=gidx,
                         hop_limit=self.rng.choice([1, 64, 255]) if not good else 64,
                         flow_label=0 if good else self.rng.getrandbits(20),
                         traffic_class=0 if good else self.rng.getrandbits(8))
        return AHAttr(port_num=PORT if good or self.rng.random() < 0.8 else self.rng.randrange(4),
                      is_global=1 if good or self.rng.random() < 0.9 else 0,
                      gr=gr, sl=0 if good else self.rng.randrange(16))

    # ---- create / destroy ---------------------------------------------

    def v_create_pd(self):
        pd = self.call('create_pd', PD, self.ctx)
        if pd:
            self.add('pd', pd, deps=())

    def v_create_channel(self):
        ch = self.call('create_comp_channel', CompChannel, self.ctx)
        if ch:
            self.add('chan', ch, deps=())

    def v_create_cq(self):
        cqe = self.rng.choice([0, 1, 2, 16, 64, 255, 4096, self.attr.max_cqe,
                               self.attr.max_cqe + 1, 1 << 30, -1])
        ch = self.pick('chan') if self.rng.random() < 0.3 else None
        vec = 0 if self.rng.random() < 0.9 else self.rng.choice([1, 63, -1])
        cq = self.call('create_cq', CQ, self.ctx, cqe, None, ch.o if ch else None, vec)
        if cq:
            self.add('cq', cq, deps=(ch,) if ch else (), pollable=True)

    def v_create_srq(self):
        pd = self.pick('pd')
        if not pd:
            return
        a = SrqAttr(max_wr=self.rng.choice([0, 1, 4, 64, self.attr.max_srq_wr,
                                            self.attr.max_srq_wr + 1, 0xffffffff]),
                    max_sge=self.rng.choice([0, 1, 2, 4, self.attr.max_srq_sge,
                                             self.attr.max_srq_sge + 1]),
                    srq_limit=self.rng.choice([0, 0, 1, 3, 100]))
        srq = self.call('create_srq', SRQ, pd.o, SrqInitAttr(a))
        if srq:
            self.add('srq', srq, deps=(pd,), max_sge=a.max_sge, postable=True)

    def v_reg_mr(self):
        pd = self.pick('pd')
        if not pd:
            return
        if self.rng.random() < 0.6:
            access = self.rng.choice([e.IBV_ACCESS_LOCAL_WRITE, REMOTE | e.IBV_ACCESS_LOCAL_WRITE,
                                      REMOTE | e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_MW_BIND, 0])
        else:
            access = 0
            for b in ACCESS_BITS:
                if self.rng.random() < 0.25:
                    access |= b
        if self.rng.random() < 0.05:
            addr, length = None, self.rng.choice([0, 1, 100])  # pyverbs allocates
        else:
            addr, length = self.buf_range()
        if access & e.IBV_ACCESS_ON_DEMAND and addr is not None and \
                self.buf - GUARD <= addr < self.buf + BUF_LEN + GUARD:
            # No pinning: keep the range within the buffer and its guards.
            length = min(length, self.buf + BUF_LEN + GUARD - addr)
        mr = self.call('reg_mr', MR, pd.o, length, access, address=addr)
        if mr:
            a = addr if addr is not None else mr.buf
            self.add('mr', mr, deps=(pd,), addr=a, length=length, access=access,
                     lkey=mr.lkey, rkey=mr.rkey,
                     in_buf=addr is None or self.buf <= a and a + length <= self.buf + BUF_LEN)

    def v_alloc_mw(self):
        pd = self.pick('pd')
        if not pd:
            return
        t = self.rng.choice([e.IBV_MW_TYPE_1, e.IBV_MW_TYPE_2, e.IBV_MW_TYPE_2])
        mw = self.call('alloc_mw', MW, pd.o, t)
        if mw:
            self.add('mw', mw, deps=(pd,), type=t)

    def v_create_ah(self):
        pd = self.pick('pd')
        if not pd:
            return
        ah = self.call('create_ah', AH, pd.o, attr=self.ah_attr(self.rng.random() < 0.7))
        if ah:
            self.add('ah', ah, deps=(pd,))

    def v_create_qp(self):
        pd = self.pick('pd')
        scq, rcq = self.pick('cq'), self.pick('cq')
        if not (pd and scq and rcq):
            return
        qpt = self.rng.choice(list(QPT))
        srq = self.pick('srq') if self.rng.random() < 0.25 else None
        big = self.rng.random() < 0.15

        def cap(lim, small):
            if big:
                return self.rng.choice([0, lim, lim + 1, 0xffffffff])
            return self.rng.choice(small)
        c = QPCap(max_send_wr=cap(self.attr.max_qp_wr, [0, 1, 4, 16, 64]),
                  max_recv_wr=cap(self.attr.max_qp_wr, [0, 1, 4, 16, 64]),
                  max_send_sge=cap(self.attr.max_sge, [0, 1, 2, 3]),
                  max_recv_sge=cap(self.attr.max_sge, [0, 1, 2, 3]),
                  max_inline_data=cap(256, [0, 0, 16, 64, 256]))
        ia = QPInitAttr(qp_type=qpt, scq=scq.o, rcq=rcq.o, srq=srq.o if srq else None,
                        cap=c, sq_sig_all=self.rng.randrange(2))
        qp = self.call(f'create_qp_{QPT[qpt]}', QP, pd.o, ia)
        if qp:
            deps = (pd, scq, rcq) + ((srq,) if srq else ())
            return self.add('qp', qp, deps=deps, qpt=qpt, num=qp.qp_num, pd=pd, srq=srq, ready=False,
                     max_send_sge=c.max_send_sge, max_recv_sge=c.max_recv_sge,
                     max_inline=c.max_inline_data)

    def v_destroy(self):
        """Destroys a random object; pyverbs destroys its users first."""
        kind = self.rng.choice(['pd', 'cq', 'chan', 'srq', 'mr', 'mw', 'ah', 'qp', 'qp', 'mr'])
        obj = self.pick(kind)
        if not obj:
            return
        ok = self.call(f'destroy_{kind}', obj.o.close)
        if ok:
            self.kill(obj)
        else:
            # pyverbs closed the users before the failing destroy.
            for o in self.objs:
                if o.alive and obj in getattr(o, 'deps', ()):
                    self.kill(o)

    def v_busy(self):
        """Destroying what others still use, through libibverbs: EBUSY."""
        if self.raw is None:
            self.raw = Raw()
        raw = self.raw
        ctx = raw.open(self.dev)
        if not ctx:
            self.counts['busy_open|fail'] += 1
            return
        pd = raw.alloc_pd(ctx)
        ch = raw.create_comp_channel(ctx)
        cq = raw.create_cq(ctx, 16, None, ch, 0)
        srq_init = Raw.SRQInit(None, (ctypes.c_uint32 * 3)(8, 1, 0))
        srq = raw.create_srq(pd, ctypes.byref(srq_init)) if pd else None
        qi = Raw.QPInit(None, cq, cq, srq, (ctypes.c_uint32 * 5)(4, 4, 1, 1, 0),
                        self.rng.choice(list(QPT)), 0)
        qp = raw.create_qp(pd, ctypes.byref(qi)) if pd and cq else None
        mr = raw.reg_mr(pd, self.buf, 4096, e.IBV_ACCESS_LOCAL_WRITE) if pd else None
        self.counts['busy_create|' + ('ok' if all((pd, ch, cq, srq, qp, mr)) else 'partial')] += 1
        # In use: each must be refused (and stay usable).
        tries = [('dealloc_pd', raw.dealloc_pd, pd, qp or mr or srq),
                 ('destroy_cq', raw.destroy_cq, cq, qp),
                 ('destroy_srq', raw.destroy_srq, srq, qp and srq),
                 ('destroy_comp_channel', raw.destroy_comp_channel, ch, cq)]
        self.rng.shuffle(tries)
        for name, fn, obj, user in tries:
            if obj and user:
                rc = fn(obj)
                self.counts[f'busy_{name}|{errname(rc) if rc else "ok"}'] += 1
                if rc == 0:
                    # Wrongly destroyed: libibverbs freed it; leave the rest
                    # to the exit.
                    self.counts['busy_unexpected_destroy|' + name] += 1
                    return
        if self.rng.random() < 0.3:
            return   # the process's exit (or close of nothing) cleans up
        for fn, obj in ((raw.destroy_qp, qp), (raw.dereg_mr, mr), (raw.destroy_srq, srq),
                        (raw.destroy_cq, cq), (raw.destroy_comp_channel, ch), (raw.dealloc_pd, pd)):
            if obj:
                rc = fn(obj)
                self.counts[f'busy_teardown|{errname(rc) if rc else "ok"}'] += 1
        raw.close_device(ctx)

    # ---- QPs -----------------------------------------------------------

    def random_qp_attr(self):
        a = QPAttr(qp_state=self.rng.choice([e.IBV_QPS_RESET, e.IBV_QPS_INIT, e.IBV_QPS_RTR,
                                             e.IBV_QPS_RTS, e.IBV_QPS_SQD, e.IBV_QPS_SQE,
                                             e.IBV_QPS_ERR, 7, 99]))
        r = self.rng
        for field, val in (('cur_qp_state', r.randrange(8)), ('en_sqd_async_notify', r.randrange(2)),
                           ('sq_draining', r.randrange(2)), ('alt_pkey_index', r.randrange(2)),
                           ('alt_port_num', r.randrange(3)), ('alt_timeout', r.randrange(32)),
                           ('path_mig_state', r.randrange(4))):
            try:
                setattr(a, field, val)
            except AttributeError:
                pass   # read-only in this pyverbs
        a.qp_access_flags = r.getrandbits(8) if r.random() < 0.8 else r.getrandbits(32)
        a.pkey_index = r.choice([0, 0, 1, 0xffff])
        a.port_num = r.choice([1, 1, 1, 0, 2, 255])
        a.qkey = r.choice([QKEY, 0x80000000, r.getrandbits(32)])
        a.path_mtu = r.choice([1, 2, 3, 4, 5, 0, 6, 7])
        a.dest_qp_num = r.choice([1, 0, 0xffffff, 0x1000000, r.getrandbits(24)] +
                                 [q.num for q in self.live('qp')])
        a.rq_psn = r.getrandbits(24) if r.random() < 0.8 else r.getrandbits(32)
        a.sq_psn = r.getrandbits(24) if r.random() < 0.8 else r.getrandbits(32)
        a.max_rd_atomic = r.choice([0, 1, 4, 16, 128, 255])
        a.max_dest_rd_atomic = r.choice([0, 1, 4, 16, 128, 255])
        a.min_rnr_timer = r.choice([0, 1, 12, 31, 32, 255])
        a.timeout = r.choice([0, 1, 14, 31, 32, 255])
        a.retry_cnt = r.choice([0, 1, 7, 8, 255])
        a.rnr_retry = r.choice([0, 1, 6, 7, 8, 255])
        if r.random() < 0.5:
            a.ah_attr = self.ah_attr(r.random() < 0.6)
        return a

    def v_modify_qp(self):
        qp = self.pick('qp')
        if not qp:
            return
        a = self.random_qp_attr()
        mask = 0
        for b in range(QP_MASK_BITS):
            if self.rng.random() < 0.25:
                mask |= 1 << b
        if self.rng.random() < 0.8:
            mask |= e.IBV_QP_STATE
        if self.rng.random() < 0.02:
            mask |= 1 << self.rng.randrange(26, 32)
        if self.call('modify_qp', qp.o.modify, a, mask):
            qp.ready = False

    def connect(self, a, b):
        """The valid walk RESET->INIT->RTR->RTS of QP a, towards QP b."""
        good = 'modify_qp_valid'
        rc = a.qpt == e.IBV_QPT_RC
        i = QPAttr(qp_state=e.IBV_QPS_INIT)
        i.pkey_index, i.port_num, i.qkey = 0, PORT, QKEY
        i.qp_access_flags = REMOTE | e.IBV_ACCESS_LOCAL_WRITE
        if a.qpt == e.IBV_QPT_UD:
            m = e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_QKEY
        else:
            m = e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS
        self.call(good, a.o.modify, QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
        if not self.call(good, a.o.modify, i, m | e.IBV_QP_STATE):
            return
        r = QPAttr(qp_state=e.IBV_QPS_RTR)
        m = e.IBV_QP_STATE
        if a.qpt != e.IBV_QPT_UD:
            r.path_mtu = self.rng.choice([e.IBV_MTU_256, e.IBV_MTU_1024, e.IBV_MTU_4096])
            r.dest_qp_num = b.num
            r.rq_psn = 0x123
            r.ah_attr = self.ah_attr()
            m |= e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN
            if rc:
                r.max_dest_rd_atomic, r.min_rnr_timer = 4, 1
                m |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
        if not self.call(good, a.o.modify, r, m):
            return
        s = QPAttr(qp_state=e.IBV_QPS_RTS)
        s.sq_psn = 0x123
        m = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
        if rc:
            # Short timeouts and few retries: a peer gone away ends fast.
            s.timeout, s.retry_cnt, s.rnr_retry, s.max_rd_atomic = 8, 1, 1, 4
            m |= e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY | \
                e.IBV_QP_MAX_QP_RD_ATOMIC
        a.ready = bool(self.call(good, a.o.modify, s, m))

    def v_pair(self):
        """Two QPs of one type connected to each other, with an MR and
        receives: so that data flows (and keeps flowing for a while)."""
        pd = self.pick('pd') if self.rng.random() < 0.5 else None
        if not pd:
            pd = self.call('create_pd', PD, self.ctx)
            if not pd:
                return
            pd = self.add('pd', pd, deps=())
        cq = self.call('create_cq', CQ, self.ctx, 256, None, None, 0)
        if not cq:
            return
        cq = self.add('cq', cq, deps=(), pollable=True)
        a = self.buf + self.rng.randrange(BUF_LEN // 2) & ~0xfff
        mr = self.call('reg_mr', MR, pd.o, 65536, REMOTE | e.IBV_ACCESS_LOCAL_WRITE |
                       e.IBV_ACCESS_MW_BIND, address=a)
        if mr:
            self.add('mr', mr, deps=(pd,), addr=a, length=65536, access=REMOTE, lkey=mr.lkey,
                     rkey=mr.rkey, in_buf=True)
        qpt = self.rng.choice(list(QPT))
        if qpt == e.IBV_QPT_UD:
            ah = self.call('create_ah', AH, pd.o, attr=self.ah_attr())
            if ah:
                self.add('ah', ah, deps=(pd,))
        qps = []
        for _ in range(2):
            c = QPCap(max_send_wr=32, max_recv_wr=32, max_send_sge=2, max_recv_sge=2,
                      max_inline_data=64)
            qp = self.call(f'create_qp_{QPT[qpt]}', QP, pd.o,
                           QPInitAttr(qp_type=qpt, scq=cq.o, rcq=cq.o, cap=c,
                                      sq_sig_all=self.rng.randrange(2)))
            if not qp:
                return
            qps.append(self.add('qp', qp, deps=(pd, cq), qpt=qpt, num=qp.qp_num, pd=pd,
                                srq=None, ready=False, max_send_sge=2, max_recv_sge=2,
                                max_inline=64))
        self.connect(qps[0], qps[1])
        self.connect(qps[1], qps[0])
        for qp in qps:
            for _ in range(4):
                self.call('post_recv', qp.o.post_recv, self.recv_wr(qp.pd, 2))
        self.v_post_send(qps[0])

    def v_connect(self):
        a = self.pick('qp')
        if not a:
            return
        peers = self.live('qp', lambda q: q.qpt == a.qpt)
        b = self.rng.choice(peers)
        self.connect(a, b)
        if b is not a:
            self.connect(b, a)

    def v_query_qp(self):
        qp = self.pick('qp')
        if qp:
            self.call('query_qp', qp.o.query, self.rng.getrandbits(QP_MASK_BITS) | 1)

    def send_wr(self, qp):
        r = self.rng
        good = r.random() < 0.35
        if qp.qpt == e.IBV_QPT_UD:
            names = ['SEND', 'SEND_IMM'] if good else list(WR)
        elif qp.qpt == e.IBV_QPT_UC:
            names = ['SEND', 'SEND_IMM', 'WRITE', 'WRITE_IMM'] if good else list(WR)
        else:
            names = ['SEND', 'SEND_IMM', 'WRITE', 'WRITE_IMM', 'READ', 'CAS', 'FAA'] \
                if good else list(WR)
        name = r.choice(names)
        op = WR[name]
        ah = None
        ud = qp.qpt == e.IBV_QPT_UD
        if ud and name != 'BIND_MW':
            # The provider reads the AH of every WR of a UD QP (and its
            # pointer shares a union with the remote address: no RDMA or
            # atomic fields then); BIND_MW it refuses before.
            ah = self.pick('ah')
            if not ah:
                return None, name
        flags = 0
        for f in SEND_FLAGS:
            if r.random() < (0.1 if good and f != e.IBV_SEND_SIGNALED else 0.4):
                flags |= f
        if good:
            flags &= ~(e.IBV_SEND_IP_CSUM | (1 << 5))
        if name == 'BIND_MW':
            mw, mr = self.pick('mw'), self.pick('mr')
            if not (mw and mr):
                return None, name
            if self.no_type2_bind and mw.type == e.IBV_MW_TYPE_2:
                # rdma_rxe's bug (--no-type2-bind): no bind of a type 2
                # window on the control.
                return None, name
            wr = SendWR(wr_id=r.getrandbits(64), opcode=op, num_sge=1, sg=[SGE(self.buf, 0, 0)],
                        send_flags=flags & ~e.IBV_SEND_INLINE)
            wr.num_sge = 0
            off = r.randrange(max(mr.length, 1))
            info = MWBindInfo(mr.o, mr.addr + off if r.random() < 0.8 else r.getrandbits(64),
                              r.choice([0, 1, 4096, max(mr.length - off, 0), 1 << 40]),
                              r.choice([0, e.IBV_ACCESS_REMOTE_WRITE, e.IBV_ACCESS_REMOTE_READ,
                                        REMOTE, r.getrandbits(32)]))
            wr.set_bind_wr(mw.o, info)
            return wr, name
        n = r.choice([1, 1, 1, 2, 3] if good else [0, 1, 2, 3, 4, 30, 64])
        n = min(n, qp.max_send_sge) if good else n
        inline = bool(flags & e.IBV_SEND_INLINE)
        pd = qp.pd
        sg = self.sges(pd, n, inline)
        if good:
            sg = sg[:1] if name in ('CAS', 'FAA') else sg
            if name in ('CAS', 'FAA'):
                mr = self.pick('mr', lambda m: m.deps[0] is pd and m.length >= 8 and m.in_buf)
                if mr:
                    sg = [SGE(mr.addr, 8, mr.lkey)]
        # pyverbs wants an SGE but for the MW opcodes; none is valid too.
        wr = SendWR(wr_id=r.getrandbits(64), opcode=op, num_sge=max(len(sg), 1),
                    sg=sg or [SGE(self.buf, 0, 0)], send_flags=flags)
        if not sg:
            wr.num_sge = 0
        if name in ('SEND_IMM', 'WRITE_IMM', 'SEND_INV', 'LOCAL_INV') or r.random() < 0.1:
            key = self.pick('mr') or self.pick('mw')
            wr.imm_data = (key.o.rkey if key and name in ('SEND_INV', 'LOCAL_INV')
                           and r.random() < 0.7 else self.r32())
        if ud:
            peer = self.pick('qp', lambda q: q.qpt == e.IBV_QPT_UD)
            wr.set_wr_ud(ah.o, peer.num if peer and r.random() < 0.8 else r.getrandbits(24),
                         QKEY if r.random() < 0.8 else self.r32())
            return wr, name
        if name in ('WRITE', 'WRITE_IMM', 'READ', 'FLUSH', 'ATOMIC_WRITE') or \
                (not good and r.random() < 0.3):
            rkey, raddr = self.remote()
            wr.set_wr_rdma(rkey, raddr)
        if name in ('CAS', 'FAA'):
            rkey, raddr = self.remote()
            if good:
                raddr &= ~7
            wr.set_wr_atomic(rkey, raddr, r.getrandbits(64), r.getrandbits(64))
        return wr, name

    def pick_qp(self, pred=None):
        """A QP, in RTS by our account more often than not."""
        if self.rng.random() < 0.7:
            qp = self.pick('qp', lambda q: q.ready and (pred is None or pred(q)))
            if qp:
                return qp
        return self.pick('qp', pred)

    def v_post_send(self, qp=None):
        qp = qp or self.pick_qp()
        if not qp:
            return
        for _ in range(self.rng.choice([1, 1, 2, 4, 8])):
            wr, name = self.send_wr(qp)
            if wr is None:
                return
            self.call('post_send', qp.o.post_send, wr)
            self.counts[f'post_send_op|{name}'] += 1

    def recv_wr(self, pd, max_sge):
        r = self.rng
        good = r.random() < 0.5
        n = r.choice([1, 1, 2]) if good else r.choice([0, 1, 2, 3, 4, 30])
        if good:
            n = max(min(n, max_sge), 0)
        sg = self.sges(pd, n)
        # pyverbs wants an SGE; none is valid too.
        wr = RecvWR(wr_id=r.getrandbits(64), num_sge=max(len(sg), 1),
                    sg=sg or [SGE(self.buf, 0, 0)])
        if not sg:
            try:
                wr.num_sge = 0
            except AttributeError:
                pass   # read-only in this pyverbs: one empty SGE then
        return wr

    def v_post_recv(self):
        qp = self.pick_qp(lambda q: q.srq is None)
        if not qp:
            return
        for _ in range(self.rng.choice([1, 2, 4, 8])):
            self.call('post_recv', qp.o.post_recv, self.recv_wr(qp.pd, qp.max_recv_sge))

    def v_srq_post_recv(self):
        srq = self.pick('srq', lambda s: s.postable)
        if not srq:
            return
        for _ in range(self.rng.choice([1, 2, 4, 8])):
            self.call('post_srq_recv', srq.o.post_recv, self.recv_wr(srq.deps[0], srq.max_sge))

    # ---- CQs, SRQs, queries ---------------------------------------------

    def v_poll_cq(self):
        cq = self.pick('cq', lambda c: c.pollable)
        if not cq:
            return
        res = self.call('poll_cq', cq.o.poll, self.rng.choice([1, 4, 16, 64]))
        if res and res is not True:
            for wc in res[1]:
                self.counts[f'wc|{WC_NAMES.get(wc.status, wc.status)}'] += 1

    def v_req_notify(self):
        cq = self.pick('cq')
        if cq:
            self.call('req_notify_cq', cq.o.req_notify, self.rng.randrange(2))

    def v_resize_cq(self):
        cq = self.pick('cq')
        if not cq:
            return
        n = self.rng.choice([0, 1, 2, 8, 64, 1000, self.attr.max_cqe, self.attr.max_cqe + 1, -1])
        if not self.call('resize_cq', cq.o.resize, n):
            # The provider leaves a NULL ring if its new mapping failed.
            cq.pollable = False

    def v_srq_ops(self):
        srq = self.pick('srq')
        if not srq:
            return
        if self.rng.random() < 0.4:
            self.call('query_srq', srq.o.query)
            return
        a = SrqAttr(max_wr=self.rng.choice([0, 1, 16, 1000, self.attr.max_srq_wr + 1]),
                    max_sge=1, srq_limit=self.rng.choice([0, 1, 8, 100, 0xffffffff]))
        mask = self.rng.choice([e.IBV_SRQ_LIMIT, e.IBV_SRQ_LIMIT, e.IBV_SRQ_MAX_WR,
                                e.IBV_SRQ_MAX_WR | e.IBV_SRQ_LIMIT, 0, 4, 0xff])
        if not self.call('modify_srq', srq.o.modify, a, mask) and mask & e.IBV_SRQ_MAX_WR:
            srq.postable = False

    def v_query(self):
        which = self.rng.randrange(4)
        if which == 0:
            self.call('query_device', self.ctx.query_device)
        elif which == 1:
            self.call('query_port', self.ctx.query_port, self.rng.choice([1, 1, 1, 0, 2]))
        else:
            self.call('query_gid', self.ctx.query_gid, self.rng.choice([1, 1, 2]),
                      self.rng.choice([0, 1, self.gid_index, 5, 255, 1000]))

    # ---- processes -------------------------------------------------------

    def v_fork(self):
        """A child with the inherited objects: never the rings (shared with
        us), only what goes to the kernel, then os._exit."""
        pid = os.fork()
        if pid == 0:
            try:
                if self.rng.random() < 0.6:
                    self.ctx.query_device()
                    self.ctx.query_port(PORT)
                    for qp in self.live('qp')[:3]:
                        qp.o.query(e.IBV_QP_STATE)
                    if self.live('qp') and self.rng.random() < 0.5:
                        self.live('qp')[0].o.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
                    PD(self.ctx)
            except BaseException:
                pass
            os._exit(0)
        status = reap(pid, CHILD_SECS + 5)
        self.counts[f'fork|{status}'] += 1

    def scribble(self):
        """Random bytes over every ring of this process (all its own)."""
        maps = []
        with open('/proc/self/maps') as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and '/dev/infiniband/uverbs' in parts[5]:
                    start, end = (int(x, 16) for x in parts[0].split('-'))
                    maps.append((start, end))
        for start, end in maps:
            n = min(end - start, 8192)
            ctypes.memmove(start, bytes(self.rng.getrandbits(8) for _ in range(n)), n)
            for off in (0, 4, 128, 256):
                ctypes.c_uint32.from_address(start + off).value = self.rng.choice(
                    [0xffffffff, 0x80000000, 0x7fffffff, self.rng.getrandbits(32)])
        self.scribbled = True
        self.counts[f'scribble|{len(maps)} maps'] += 1

    # ---- the sequence ----------------------------------------------------

    ACTIONS = [('v_create_pd', 3), ('v_create_channel', 1), ('v_create_cq', 4),
               ('v_create_srq', 2), ('v_reg_mr', 6), ('v_alloc_mw', 2), ('v_create_ah', 2),
               ('v_create_qp', 6), ('v_destroy', 6), ('v_busy', 0.4), ('v_modify_qp', 8),
               ('v_connect', 3), ('v_pair', 2.5), ('v_query_qp', 2), ('v_post_send', 10), ('v_post_recv', 6),
               ('v_srq_post_recv', 2), ('v_poll_cq', 8), ('v_req_notify', 2),
               ('v_resize_cq', 2), ('v_srq_ops', 2), ('v_query', 2), ('v_fork', 0.3)]
    RING_USERS = ('v_post_send', 'v_post_recv', 'v_srq_post_recv', 'v_poll_cq', 'v_pair')

    def run(self, out):
        self.buf = guarded_buffer()
        self.ro = readonly_page()
        self.raw = None
        self.ctx = self.call('open_device', Context, name=self.dev)
        if not self.ctx:
            return
        self.attr = self.ctx.query_device()
        self.own_gid = str(self.ctx.query_gid(PORT, self.gid_index))
        names = [a for a, _ in self.ACTIONS]
        weights = [w for _, w in self.ACTIONS]
        exit_at = self.rng.randrange(self.steps) if self.rng.random() < 0.3 else None
        for step in range(self.steps):
            if step == self.hostile_at:
                self.scribble()
            if step == exit_at:
                self.counts['exit_with_objects|ok'] += 1
                out(len([o for o in self.objs if o.alive]))
                os._exit(0)
            act = self.rng.choices(names, weights)[0]
            if self.scribbled and act in self.RING_USERS:
                continue
            self.counts['steps|ok'] += 1
            try:
                getattr(self, act)()
            except (PyverbsError, OverflowError, ValueError, TypeError) as ex:
                # Not the device's answer: the fuzzer built something
                # pyverbs refuses (counted, and a failure of the run).
                self.counts[f'fuzzer_error|{act}: {type(ex).__name__}: {ex}'] += 1
        # Drain what completed, then destroy everything in an order pyverbs
        # allows, or leave it to the exit.
        if not self.scribbled:
            deadline = time.monotonic() + 2
            for cq in self.live('cq', lambda c: c.pollable):
                while time.monotonic() < deadline:
                    res = self.call('poll_cq', cq.o.poll, 64)
                    if not res or res is True or not res[0]:
                        break
                    for wc in res[1]:
                        self.counts[f'wc|{WC_NAMES.get(wc.status, wc.status)}'] += 1
        if self.rng.random() < 0.5:
            for kind in ('qp', 'mw', 'ah', 'mr', 'srq', 'cq', 'chan', 'pd'):
                for o in self.live(kind):
                    if self.call(f'destroy_{kind}', o.o.close):
                        self.kill(o)
            self.call('close_device', self.ctx.close)
        out(len([o for o in self.objs if o.alive]))


def guarded_buffer():
    """BUF_LEN bytes between two inaccessible guard regions: no MR of the
    process's other memory can be registered by running off its end."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    base = libc.mmap(None, BUF_LEN + 2 * GUARD, mmap.PROT_READ | mmap.PROT_WRITE,
                     mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    libc.mprotect(base, GUARD, 0)
    libc.mprotect(base + GUARD + BUF_LEN, GUARD, 0)
    ctypes.memset(base + GUARD, 0x5a, BUF_LEN)
    return base + GUARD


def readonly_page():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    return libc.mmap(None, 8192, mmap.PROT_READ, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)


def kernel_stack(pid):
    out = []
    for f in ('stat', 'wchan', 'stack'):
        try:
            with open(f'/proc/{pid}/{f}') as fh:
                out.append(f'{f}: {fh.read().strip()}')
        except OSError as ex:
            out.append(f'{f}: {ex}')
    return out


def reap(pid, secs):
    """Waits up to secs for pid; then SIGKILL and 30 s more. Returns how it
    ended: 'exit N', 'signal N', 'killed' (hung, then killed) or 'unreaped'
    (still there after SIGKILL: cannot exit)."""
    end = time.monotonic() + secs
    while True:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p:
            break
        if time.monotonic() > end:
            for line in kernel_stack(pid):
                print(f'# hung {pid}: {line}')
            os.kill(pid, signal.SIGKILL)
            end2 = time.monotonic() + 30
            while True:
                p, st = os.waitpid(pid, os.WNOHANG)
                if p:
                    return 'killed'
                if time.monotonic() > end2:
                    for line in kernel_stack(pid):
                        print(f'# cannot exit {pid}: {line}')
                    return 'unreaped'
                time.sleep(0.1)
        time.sleep(0.01)
    if os.WIFSIGNALED(st):
        return f'signal {os.WTERMSIG(st)}'
    return f'exit {os.WEXITSTATUS(st)}'


def run_one(args, i, seed, deadline):
    """Sequence i in a child; returns (how it ended, its counts)."""
    rd, wr = os.pipe()
    hostile = random.Random(seed).random() < 1 / 16
    pid = os.fork()
    if pid == 0:
        os.close(rd)
        counts = Counter()

        def out(alive):
            counts['objects_left_to_exit|' + ('none' if not alive else 'some')] += 1
            data = json.dumps(counts).encode()
            while data:
                data = data[os.write(wr, data):]
            os.close(wr)
        try:
            Sequence(args.dev, args.gid, seed, args.steps, hostile, counts,
                     args.no_type2_bind).run(out)
        except BaseException as ex:
            counts[f'fuzzer_error|{type(ex).__name__}: {ex}'] += 1
            out(1)
        os._exit(0)
    os.close(wr)
    status = reap(pid, SEQ_SECS)
    data = b''
    while True:
        chunk = os.read(rd, 65536)
        if not chunk:
            break
        data += chunk
    os.close(rd)
    counts = Counter(json.loads(data)) if data else Counter()
    return status, counts, hostile


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--dev', required=True)
    ap.add_argument('--gid', type=int, required=True, help='RoCEv2 IPv4 GID index')
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--sequences', type=int, default=20)
    ap.add_argument('--steps', type=int, default=60, help='verbs per sequence')
    ap.add_argument('--timeout', type=float, default=600)
    ap.add_argument('--no-type2-bind', action='store_true',
                    help='never bind a type 2 MW: rdma_rxe (7.3) frees a QP that a bound '
                    'type 2 window still references when the QP is destroyed (its '
                    '__rxe_cleanup times out, WARNs and frees), and the window\'s '
                    'dealloc then puts the freed QP (KASAN: use-after-free in '
                    '__rxe_put from rxe_mw_cleanup)')
    args = ap.parse_args()
    start = time.monotonic()
    deadline = start + args.timeout
    total = Counter()
    ends = Counter()
    bad = []
    hostile = done = 0
    for i in range(args.sequences):
        if time.monotonic() > deadline - 5:
            print(f'# time limit: {done} of {args.sequences} sequences run')
            break
        seed = args.seed * 1000003 + i
        status, counts, h = run_one(args, i, seed, deadline)
        done += 1
        hostile += h
        total.update(counts)
        ends[status] += 1
        if status != 'exit 0' or any(k.startswith(('fuzzer_error', 'busy_unexpected'))
                                     for k in counts):
            bad.append((i, seed, status, [k for k in counts if k.startswith(
                ('fuzzer_error', 'busy_unexpected'))]))
        if status == 'unreaped':
            break
    secs = time.monotonic() - start
    verbs = Counter()
    for key, n in total.items():
        verb, res = key.split('|', 1)
        verbs[verb] += n
    calls = sum(n for v, n in verbs.items() if v not in (
        'wc', 'post_send_op', 'steps', 'objects_left_to_exit', 'exit_with_objects', 'scribble'))
    for verb in sorted(verbs):
        res = sorted(((k.split('|', 1)[1], n) for k, n in total.items()
                      if k.split('|', 1)[0] == verb), key=lambda x: (x[0] != 'ok', -x[1]))
        print(f'verb {verb} ' + ' '.join(f'{r.replace(" ", "_")}={n}' for r, n in res))
    print(f'fuzz-verbs: {args.dev} seed {args.seed}: {done} sequences ({hostile} hostile, '
          f'{total["exit_with_objects|ok"]} ended early with objects alive, '
          f'{sum(n for k, n in total.items() if k.startswith("fork|"))} forks), '
          f'{calls} verbs, {total["wc|SUCCESS"]} successful completions, {secs:.1f} s; '
          f'ends: {dict(ends)}')
    for i, seed, status, what in bad:
        print(f'# sequence {i} (seed {seed}): {status} {what}')
    ok = f'{args.dev}: every sequence ended by itself ({done} sequences)'
    if any(s != 'exit 0' for s in ends):
        print(f'not ok - {ok}: {dict(ends)}')
    else:
        print(f'ok - {ok}')
    errs = [k for k in total if k.startswith(('fuzzer_error', 'busy_unexpected'))]
    if errs:
        print(f'not ok - {args.dev}: the fuzzer met no surprise: {errs[:5]}')
    else:
        print(f'ok - {args.dev}: the fuzzer met no surprise (no busy object destroyed, '
              f'no fuzzer error)')
    sys.stdout.flush()
    return 0 if all(s == 'exit 0' for s in ends) and not errs else 1


if __name__ == '__main__':
    sys.exit(main())
