#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Systematic allocation failures in a device's verbs (vm/27-fault-inject.sh;
issue 17, "Fault injection").

  fault_inject.py --dev DEV --gid N [--cap N] [--only VERB,...]
                  [--no-type2-bind]
                  [--link-type TYPE --netdev NDEV --link-name NAME
                   [--add-points K] [--seed S]]

For each verb that allocates, the verb is called again and again, the Nth
fault armed for the Nth call, N = 1, 2, ...: N is written to
/proc/thread-self/fail-nth right before the call, which makes the Nth
should_fail() of this thread from then on fail (lib/fault-inject.c: every
should_fail() of the task counts the value down, whichever capability
asks, and the one that takes it to 0 fails). Read back after the call, the
file says whether the fault fired: 0 if it did, else N less the number of
should_fail() calls the call made (it is then written back to 0, so that
nothing after the call fails). A walk ends at the first call that succeeds
with its fault unreached: by then each should_fail() site the call passes
has failed once, in order. The arguments of a call are built before the
fault is armed, so that as little of Python as possible runs in between.

The caller sets the capabilities up (27-fault-inject.sh, fi_nth_mode):
failslab and fail_page_alloc with probability 0 (only fail-nth injects),
verbose 0 (an injected failure would print a stack trace, which the test
harness takes for a kernel splat), ignore-gfp-wait N (verbs allocate with
GFP_KERNEL, which the default leaves alone); fail_page_alloc with
min-order 0 (page tables, vmalloc pages) and ignore-gfp-highmem Y (user
pages never fail, so Python's own page faults and the pinning of an MR's
pages are left alone; a page-table allocation failing under a fault of
Python's is retried by the kernel, x86's pagefault_out_of_memory(), and
under a kernel access to user memory gives EFAULT: neither kills the
process); and, with the stack-trace filter, no failure under
__vmalloc_node_range_noprof: vmalloc reports each failure with
warn_alloc()'s stack dump (another splat), so vmalloc() and kvmalloc()'s
fallback never fail here. kmemleak's own object for each allocation is
allocated through failslab too: about every other site is kmemleak's,
which falls back to its pool; the call then succeeds with its fault fired
("tolerated"), and the walk goes on.

Verbs (--only takes these names, but create_cq for both CQ walks and
modify_qp_rc, modify_qp_ud for the walks of their transitions):

  open_device       ibv_open_device (the uverbs file, alloc_ucontext)
  alloc_pd          ... then an MR and two RC QPs on the PD pass a SEND
  create_comp_channel  ... a CQ on it raises an event for a completion
  create_cq         ... a QP pair on it passes a SEND
  create_cq_channel (on a completion channel) ... and raises an event
  resize_cq         (a new CQ for each call) ... a QP pair on it passes a
                    SEND, then it resizes again and passes another
  create_srq        ... an RC QP on it receives a SEND
  modify_srq        (max_wr 16 -> 64, a new SRQ for each call) ... query
                    says 64 or more and it receives
  reg_mr            (a buffer mapped once) ... a SEND from and to it
  alloc_mw_1, alloc_mw_2  ... bound (ibv_bind_mw; type 2 with a BIND_MW
                    work request, but for --no-type2-bind), an RDMA READ
                    through its rkey returns the bytes under it
  create_ah         ... a UD SEND through it arrives
  create_qp_rc, create_qp_uc, create_qp_ud, create_qp_rc_srq
                    ... connected (to a new peer, or the UD QPs), it sends
                    and receives
  modify_qp_rc_init, _rtr, _rts and modify_qp_ud_init, _rtr, _rts
                    one QP walked state by state; after each failed call
                    query_qp must give the state it was in; in RTS it sends
                    and receives
  attach_mcast      (ff0e::fa17:1, a UD QP made through libibverbs) the
                    netdev has joined 33:33:fa:17:00:01 once attached and
                    left it after the detach, and no failed attach leaves
                    it joined
  add_link          (with --link-type) `rdma link add NAME type TYPE
                    netdev NDEV` as RDMA_NLDEV_CMD_NEWLINK on a NETLINK_RDMA
                    socket of this thread: the kernel handles the message
                    in the sending thread, so the driver's newlink and
                    ib_register_device count for its fail-nth. One add
                    with an unreachable fault counts the sites (K); then
                    every site if K <= --add-points, else the first half
                    of the points and the rest drawn from the others
                    (--seed); after each failed add no device NAME exists;
                    last, an add with no fault must work. Each device that
                    was added (ACTIVE port, a context, a PD) is deleted
                    with `rdma link delete`.

A call must succeed or fail with an errno: pyverbs' PyverbsRDMAError with a
positive error code (OSError for the netlink socket); a MemoryError whose
fault fired met Python's own heap (an mmap), not the verb: it is counted,
not a failure. Failures: anything else (another exception, no errno), a
call failing with its fault
unreached (but EOPNOTSUPP: the verb is reported skipped), no
success within --cap faults, an object made at the end of a walk that does
not work, and, after each walk, resource counts of the device (`rdma res
show`: PDs, CQs, QPs, MRs, SRQs, contexts) other than before it.

Prints, for the test script:

  verb NAME sites=S faults=F tolerated=T ERRNO=N ... secs=X
                         sites: should_fail() calls of the successful call
  ok - DEV: NAME ...     (or `not ok - DEV: NAME: why`, more as comments)
  # ...                  comments
"""
import argparse
import ctypes
import ctypes.util
import errno
import functools
import gc
import json
import mmap
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import time
from collections import Counter

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context
from pyverbs.mr import MR, MW, MWBind, MWBindInfo
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import RecvWR, SendWR, SGE

PORT = 1
QKEY = 0x11111111
BUF = 8192           # a registered buffer: sends from 0, receives at RECV_OFF
RECV_OFF = 4096
MSG = 256
GRH = 40             # what a UD receive gets before the data
WAIT = 10            # seconds for a completion, an event, a port, a device
MGID = bytes.fromhex('ff0e00000000000000000000fa170001')
MGID_MAC = '3333fa170001'    # its Ethernet group, as /proc/net/dev_mcast has it
RW = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
QPT_NAMES = {e.IBV_QPT_RC: 'rc', e.IBV_QPT_UC: 'uc', e.IBV_QPT_UD: 'ud'}

# Netlink (include/uapi/linux/netlink.h, include/uapi/rdma/rdma_netlink.h).
NETLINK_RDMA = 20
NLMSG_ERROR = 2
NLM_F_REQUEST = 1
NLM_F_ACK = 4
RDMA_NL_NLDEV = 5
RDMA_NLDEV_CMD_NEWLINK = 3
RDMA_NLDEV_ATTR_DEV_NAME = 2
RDMA_NLDEV_ATTR_NDEV_NAME = 51
RDMA_NLDEV_ATTR_LINK_TYPE = 65
NLMSG_HDR = struct.Struct('=IHHII')     # length, type, flags, seq, port id
NLA_HDR = struct.Struct('=HH')          # length, type


class Fail(Exception):
    """Something made at the end of a walk does not work."""


def need(cond, msg):
    if not cond:
        raise Fail(msg)


def errname(code):
    return errno.errorcode.get(code, f'E{code}')


def clean_errno(ex):
    """The errno of a clean failure, or None when ex is not one."""
    code = None
    if isinstance(ex, PyverbsRDMAError):
        code = ex.error_code
    elif isinstance(ex, OSError):
        code = ex.errno
    return code if code and code > 0 else None


def describe(ex):
    code = clean_errno(ex)
    if code:
        return errname(code)
    return f'{type(ex).__name__}: {ex}'


def pattern(seq):
    return bytes((seq * 7 + i) & 0xff for i in range(MSG))


def qp_state(qp):
    """The QP's state as the kernel has it (query_qp)."""
    return qp.query(e.IBV_QP_STATE)[0].qp_state


# ---------------------------------------------------------------- fail-nth

class FailNth:
    """This thread's fail-nth: call(n, fn) runs fn() with the nth fault
    armed and says what happened."""

    def __init__(self, cap):
        self.fd = os.open('/proc/thread-self/fail-nth', os.O_RDWR)
        # Built beforehand: nothing between arming and the call allocates.
        self.value = [str(n).encode() for n in range(cap + 1)]

    def call(self, n, fn):
        """(result, exception, left): left is 0 if the fault fired, else n
        less the should_fail() calls fn made."""
        fd, value = self.fd, self.value[n] if n < len(self.value) else str(n).encode()
        os.write(fd, value)
        try:
            res, exc = fn(), None
        except Exception as ex:    # judged by the caller, whatever it is
            res, exc = None, ex
        left = os.pread(fd, 32, 0)
        os.write(fd, b'0')
        return res, exc, int(left)

    def count(self, fn):
        """fn()'s result and its number of should_fail() calls (a fault
        too far to be reached)."""
        far = 1 << 30
        res, exc, left = self.call(far, fn)
        if exc is not None:
            raise exc
        return res, far - left


# ---------------------------------------------------------------- one walk

class Walk:
    """What the calls of one verb's walk did."""

    def __init__(self, name):
        self.name = name
        self.errnos = Counter()
        self.injected = 0      # calls refused on their fault
        self.tolerated = 0     # calls that succeeded although it fired
        self.sites = None
        self.problems = []
        self.skip = None
        self.t0 = time.monotonic()

    def problem(self, msg):
        self.problems.append(msg)

    def guard(self, what, fn, *args):
        """fn(*args); whatever it raises is a problem of the walk."""
        try:
            fn(*args)
        except Exception as ex:    # a check's Fail, or a verb's error
            self.problem(f'{what}: {ex if isinstance(ex, Fail) else describe(ex)}')

    def failed(self, n, exc, left):
        code = clean_errno(exc)
        if isinstance(exc, MemoryError) and left == 0:
            # The fault met Python's own memory (an mmap for its heap)
            # before or after the verb: not the device's doing.
            self.injected += 1
            self.errnos['MemoryError'] += 1
        elif code is None:
            self.problem(f'fault {n}: not an errno: {describe(exc)}')
        elif left == 0:
            self.injected += 1
            self.errnos[errname(code)] += 1
        elif code == errno.EOPNOTSUPP:
            self.skip = 'EOPNOTSUPP with no fault: the device has no such verb'
        else:
            self.problem(f'{errname(code)} with fault {n} unreached '
                         f'(after {n - left} sites)')

    def resources(self, before, after):
        if before is None or after is None or before == after:
            return
        moved = [f'{k} {before.get(k)} -> {after.get(k)}' for k in sorted(after)
                 if before.get(k) != after.get(k)]
        self.problem('the device\'s resources changed: ' + ', '.join(moved))

    def report(self, dev):
        secs = time.monotonic() - self.t0
        errs = ''.join(f' {k}={v}' for k, v in sorted(self.errnos.items()))
        sites = '-' if self.sites is None else self.sites
        print(f'verb {self.name} sites={sites} faults={self.injected} '
              f'tolerated={self.tolerated}{errs} secs={secs:.1f}', flush=True)
        if self.problems:
            more = f' (and {len(self.problems) - 1} more)' if len(self.problems) > 1 else ''
            print(f'not ok - {dev}: {self.name}: {self.problems[0]}{more}')
            for p in self.problems[1:8]:
                print(f'#   {p}')
        elif self.skip:
            print(f'ok - {dev}: {self.name} # SKIP {self.skip}')
        else:
            print(f'ok - {dev}: {self.name}: {self.injected} faults refused with an '
                  f'errno, {self.tolerated} tolerated, then it works')
        sys.stdout.flush()
        return not self.problems


# ---------------------------------------------------------------- libibverbs

class RawVerbs:
    """What pyverbs hides or lacks, from libibverbs through ctypes: opening
    a device of a list read once (pyverbs' Context reads the device list,
    sysfs, again for each open, which would put those reads in the walk),
    and ibv_attach_mcast/ibv_detach_mcast."""

    class QPInitAttr(ctypes.Structure):
        """struct ibv_qp_init_attr (its struct ibv_qp_cap flattened)."""
        _fields_ = [('qp_context', ctypes.c_void_p), ('send_cq', ctypes.c_void_p),
                    ('recv_cq', ctypes.c_void_p), ('srq', ctypes.c_void_p),
                    ('max_send_wr', ctypes.c_uint32), ('max_recv_wr', ctypes.c_uint32),
                    ('max_send_sge', ctypes.c_uint32), ('max_recv_sge', ctypes.c_uint32),
                    ('max_inline_data', ctypes.c_uint32), ('qp_type', ctypes.c_int),
                    ('sq_sig_all', ctypes.c_int)]

    def __init__(self):
        name = ctypes.util.find_library('ibverbs') or 'libibverbs.so.1'
        lib = ctypes.CDLL(name, use_errno=True)
        p, i = ctypes.c_void_p, ctypes.c_int
        for fn, res, args in (
                ('ibv_get_device_list', ctypes.POINTER(p), [ctypes.POINTER(i)]),
                ('ibv_free_device_list', None, [ctypes.POINTER(p)]),
                ('ibv_get_device_name', ctypes.c_char_p, [p]),
                ('ibv_open_device', p, [p]),
                ('ibv_close_device', i, [p]),
                ('ibv_query_device', i, [p, p]),
                ('ibv_alloc_pd', p, [p]),
                ('ibv_dealloc_pd', i, [p]),
                ('ibv_create_cq', p, [p, i, p, p, i]),
                ('ibv_destroy_cq', i, [p]),
                ('ibv_create_qp', p, [p, p]),
                ('ibv_destroy_qp', i, [p]),
                ('ibv_attach_mcast', i, [p, p, ctypes.c_uint16]),
                ('ibv_detach_mcast', i, [p, p, ctypes.c_uint16])):
            f = getattr(lib, fn)
            f.restype, f.argtypes = res, args
            setattr(self, fn[4:], f)
        self.list = None

    def find(self, dev):
        """The ibv_device of dev; the list stays until close()."""
        n = ctypes.c_int()
        self.list = self.get_device_list(ctypes.byref(n))
        for k in range(n.value if self.list else 0):
            if self.get_device_name(self.list[k]).decode() == dev:
                return self.list[k]
        raise Fail(f'no device {dev} in the device list')

    def open(self, device):
        """ibv_open_device, raising on failure."""
        ctx = self.open_device(device)
        if not ctx:
            raise PyverbsRDMAError('ibv_open_device', ctypes.get_errno())
        return ctx

    def works(self, ctx):
        """A context answers query_device and gives a PD."""
        attr = ctypes.create_string_buffer(1024)    # > struct ibv_device_attr
        rc = self.query_device(ctx, attr)
        need(rc == 0, f'query_device: {errname(rc)}')
        pd = self.alloc_pd(ctx)
        need(pd, f'alloc_pd: {errname(ctypes.get_errno())}')
        self.dealloc_pd(pd)

    def close(self):
        if self.list:
            self.free_device_list(self.list)
            self.list = None


# ---------------------------------------------------------------- netlink

def nla(kind, payload):
    """A netlink attribute, padded to 4 bytes."""
    n = NLA_HDR.size + len(payload)
    return NLA_HDR.pack(n, kind) + payload + b'\0' * (-n % 4)


def newlink_message(seq, name, link_type, netdev):
    """RDMA_NLDEV_CMD_NEWLINK, as `rdma link add NAME type TYPE netdev
    NETDEV` sends it: NUL-terminated strings (the policy's
    NLA_NUL_STRING), an acknowledgement asked for."""
    attrs = (nla(RDMA_NLDEV_ATTR_DEV_NAME, name.encode() + b'\0') +
             nla(RDMA_NLDEV_ATTR_LINK_TYPE, link_type.encode() + b'\0') +
             nla(RDMA_NLDEV_ATTR_NDEV_NAME, netdev.encode() + b'\0'))
    kind = (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_NEWLINK    # RDMA_NL_GET_TYPE
    return NLMSG_HDR.pack(NLMSG_HDR.size + len(attrs), kind,
                          NLM_F_REQUEST | NLM_F_ACK, seq, 0) + attrs


def ack_errno(data, seq):
    """The errno (0: success) in the NLMSG_ERROR answering seq among the
    messages of data, or None if there is none."""
    off = 0
    while off + NLMSG_HDR.size + 4 <= len(data):
        length, kind, _, s, _ = NLMSG_HDR.unpack_from(data, off)
        if length < NLMSG_HDR.size:
            return None
        if kind == NLMSG_ERROR and s == seq:
            return -struct.unpack_from('=i', data, off + NLMSG_HDR.size)[0]
        off += (length + 3) & ~3
    return None


class RdmaNetlink:
    """A NETLINK_RDMA socket for RDMA_NLDEV_CMD_NEWLINK."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)
        self.sock.bind((0, 0))
        self.sock.settimeout(60)
        self.seq = 0

    def message(self, name, link_type, netdev):
        self.seq += 1
        return newlink_message(self.seq, name, link_type, netdev)

    def answer(self):
        """The errno of the last message's acknowledgement; OSError
        (ENOBUFS) when the kernel could not allocate it."""
        while True:
            code = ack_errno(self.sock.recv(65536), self.seq)
            if code is not None:
                return code


# ---------------------------------------------------------------- the rig

def rdma_res(dev):
    """The device's resource counts from `rdma res show`, or None."""
    try:
        out = subprocess.run(['rdma', '-j', 'res', 'show'], capture_output=True,
                             text=True, timeout=30, check=True).stdout
        for d in json.loads(out):
            if d.get('ifname') == dev:
                return {k: v for k, v in d.items() if isinstance(v, int) and k != 'ifindex'}
    except (OSError, ValueError, subprocess.SubprocessError):
        pass
    return None


def dev_mcast(netdev):
    """The Ethernet groups netdev has joined (/proc/net/dev_mcast)."""
    with open('/proc/net/dev_mcast') as f:
        return {w[4] for w in (line.split() for line in f) if len(w) > 4 and w[1] == netdev}


class Rig:
    """The device's context and what the verbs under test need, all made
    with no fault armed: a PD, a CQ, a completion channel, an MR, an SRQ,
    an AH to the device's own GID, two RC QPs connected to each other and
    two UD QPs in RTS. Sends go to the device's own address."""

    def __init__(self, dev, gid_index):
        self.dev, self.gidx = dev, gid_index
        self.ctx = Context(name=dev)
        self.gid = self.ctx.query_gid(PORT, gid_index)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 64)
        self.chan = CompChannel(self.ctx)
        self.mr = MR(self.pd, BUF, RW | e.IBV_ACCESS_MW_BIND)
        self.srq = SRQ(self.pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1)))
        self.ah = AH(self.pd, attr=self.ah_attr())
        self.seq = 0
        self.rc = self.pair(e.IBV_QPT_RC)
        self.ud = (self.ready(self.qp(e.IBV_QPT_UD)), self.ready(self.qp(e.IBV_QPT_UD)))
        # A buffer for reg_mr, its pages touched: pinning it allocates none.
        self.ubuf = mmap.mmap(-1, BUF)
        self.ubuf.write(b'\xa5' * BUF)
        self.ubuf_addr = ctypes.addressof(ctypes.c_char.from_buffer(self.ubuf))

    def ah_attr(self):
        gr = GlobalRoute(dgid=self.gid, sgid_index=self.gidx, hop_limit=64)
        return AHAttr(port_num=PORT, is_global=1, gr=gr)

    # ---- QPs

    def qp(self, qpt, pd=None, cq=None, srq=None):
        cq = cq or self.cq
        cap = QPCap(max_send_wr=8, max_recv_wr=0 if srq else 8, max_send_sge=1,
                    max_recv_sge=1)
        return QP(pd or self.pd, QPInitAttr(qp_type=qpt, scq=cq, rcq=cq, srq=srq, cap=cap))

    def steps(self, qpt, dest=0):
        """(state name, attr, mask) of each transition RESET -> INIT -> RTR
        -> RTS of a QP of type qpt talking to QP dest of this device."""
        init = QPAttr(qp_state=e.IBV_QPS_INIT)
        init.pkey_index = 0
        init.port_num = PORT
        rtr = QPAttr(qp_state=e.IBV_QPS_RTR)
        rts = QPAttr(qp_state=e.IBV_QPS_RTS)
        rts.sq_psn = 0
        if qpt == e.IBV_QPT_UD:
            init.qkey = QKEY
            return [('init', init, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
                     e.IBV_QP_QKEY),
                    ('rtr', rtr, e.IBV_QP_STATE),
                    ('rts', rts, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN)]
        rc = qpt == e.IBV_QPT_RC
        # UC has no RDMA READ: its QPs allow remote writes only.
        init.qp_access_flags = RW if rc else (e.IBV_ACCESS_LOCAL_WRITE |
                                              e.IBV_ACCESS_REMOTE_WRITE)
        rtr.path_mtu = e.IBV_MTU_1024
        rtr.dest_qp_num = dest
        rtr.rq_psn = 0
        rtr.ah_attr = self.ah_attr()
        rtr_mask = (e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
                    e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN)
        rts_mask = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
        if rc:
            rtr.max_dest_rd_atomic = 1
            rtr.min_rnr_timer = 1
            rts.timeout = 14
            rts.retry_cnt = 7
            rts.rnr_retry = 7
            rts.max_rd_atomic = 1
            rtr_mask |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
            rts_mask |= (e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY |
                         e.IBV_QP_MAX_QP_RD_ATOMIC)
        return [('init', init, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
                 e.IBV_QP_ACCESS_FLAGS),
                ('rtr', rtr, rtr_mask), ('rts', rts, rts_mask)]

    def connect(self, qp, qpt, dest=0):
        for _, attr, mask in self.steps(qpt, dest):
            qp.modify(attr, mask)
        return qp

    def ready(self, qp):
        return self.connect(qp, e.IBV_QPT_UD)

    def pair(self, qpt, cq=None, srq=None, pd=None):
        """Two QPs of type qpt connected to each other (b on srq)."""
        a = self.qp(qpt, pd, cq)
        b = self.qp(qpt, pd, cq, srq)
        self.connect(a, qpt, b.qp_num)
        self.connect(b, qpt, a.qp_num)
        return a, b

    # ---- data

    def poll(self, cq, n):
        """n successful completions from cq within WAIT seconds."""
        deadline = time.monotonic() + WAIT
        while n > 0:
            got, wcs = cq.poll(n)
            for wc in wcs[:got]:
                need(wc.status == e.IBV_WC_SUCCESS, f'a completion with status {wc.status}')
            n -= got
            if n and time.monotonic() > deadline:
                raise Fail(f'{n} completions missing after {WAIT} s')
            if n and not got:
                time.sleep(0.001)

    def drain(self, cq):
        while cq.poll(16)[0]:
            pass

    def send(self, src, dst, cq=None, smr=None, rmr=None, srq=None, ah=None):
        """A SEND of MSG patterned bytes from src to dst (its receive on srq
        if given; through ah for UD); both completions polled, the bytes
        compared."""
        cq, smr, rmr = cq or self.cq, smr or self.mr, rmr or self.mr
        self.drain(cq)
        self.seq += 1
        data = pattern(self.seq)
        smr.write(data, MSG, 0)
        grh = GRH if ah else 0
        sge = SGE(rmr.buf + RECV_OFF, MSG + grh, rmr.lkey)
        (srq or dst).post_recv(RecvWR(wr_id=self.seq, num_sge=1, sg=[sge]))
        wr = SendWR(wr_id=self.seq, num_sge=1, sg=[SGE(smr.buf, MSG, smr.lkey)])
        if ah:
            wr.set_wr_ud(ah, dst.qp_num, QKEY)
        src.post_send(wr)
        self.poll(cq, 2)
        need(rmr.read(MSG, RECV_OFF + grh) == data, 'the bytes received differ from those sent')

    def read_through(self, rkey):
        """An RDMA READ by rc[0] of MSG bytes at the start of the MR,
        through rkey (rc[1]'s side), compared."""
        a = self.rc[0]
        self.seq += 1
        data = pattern(self.seq)
        self.mr.write(data, MSG, 0)
        wr = SendWR(wr_id=self.seq, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                    sg=[SGE(self.mr.buf + RECV_OFF, MSG, self.mr.lkey)])
        wr.set_wr_rdma(rkey, self.mr.buf)
        a.post_send(wr)
        self.poll(self.cq, 1)
        need(self.mr.read(MSG, RECV_OFF) == data, 'the bytes read through the window differ')

    def both_ways(self, qp, peer, srq=None):
        self.send(qp, peer)
        self.send(peer, qp, srq=srq)

    def event(self, chan, cq):
        """chan delivers an event for cq within WAIT seconds (acknowledged:
        destroying a CQ waits for its events to be). pyverbs' CompChannel
        shows no file descriptor to select on, so the blocking read is
        bounded by an alarm, whose signal interrupts it."""
        def expired(_sig, _frame):
            raise TimeoutError
        old = signal.signal(signal.SIGALRM, expired)
        signal.alarm(WAIT)
        try:
            chan.get_cq_event(cq)
        except (TimeoutError, PyverbsRDMAError):
            need(False, f'no completion event within {WAIT} s')
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        cq.ack_events(1)

    def close(self):
        for o in (*self.rc, *self.ud, self.ah, self.srq, self.mr, self.cq, self.chan,
                  self.pd, self.ctx):
            o.close()


def closing(*objs):
    """Closes objs (the ones not None), last first."""
    for o in reversed(objs):
        if o is not None:
            o.close()


# ---------------------------------------------------------------- the walks

class Injector:
    """The walks over one device."""

    def __init__(self, args):
        self.args = args
        self.dev, self.cap = args.dev, args.cap
        self.nth = FailNth(args.cap)
        self.rig = Rig(args.dev, args.gid)
        self.ok = True

    def walk(self, name, call, done, failed=None, fresh=None):
        """call() (call(fresh()) with fresh) with the nth fault armed, n =
        1, 2, ...; done(result, final, made) after each success (final:
        the fault was unreached; done checks the object then), failed(made)
        after each failure; both close what was made."""
        w = Walk(name)
        before = rdma_res(self.dev)
        for n in range(1, self.cap + 1):
            made = fresh() if fresh else None
            fn = functools.partial(call, made) if fresh else call
            res, exc, left = self.nth.call(n, fn)
            if exc is None:
                final = left != 0
                if final:
                    w.sites = n - left
                else:
                    w.tolerated += 1
                w.guard('the object made' if final else f'made with fault {n}',
                        done, res, final, made)
                if final:
                    break
                continue
            w.failed(n, exc, left)
            if failed:
                w.guard(f'after fault {n}', failed, made)
            if left:
                break
        else:
            w.problem(f'no call succeeded within {self.cap} faults')
        gc.collect()
        w.resources(before, rdma_res(self.dev))
        self.ok &= w.report(self.dev)

    def creator(self, name, call, check):
        """A walk of a verb that makes an object: check(obj) at the end,
        then it is closed."""
        def done(obj, final, _):
            try:
                if final:
                    check(obj)
            finally:
                obj.close()
        self.walk(name, call, done)

    # ---- contexts, PDs, channels, CQs

    def open_device(self):
        raw = RawVerbs()
        device = raw.find(self.dev)

        def done(ctx, final, _):
            try:
                if final:
                    raw.works(ctx)
            finally:
                raw.close_device(ctx)
        self.walk('open_device', functools.partial(raw.open, device), done)
        raw.close()

    def alloc_pd(self):
        r = self.rig

        def check(pd):
            mr = MR(pd, BUF, RW)
            a = b = None
            try:
                a, b = r.pair(e.IBV_QPT_RC, pd=pd)
                r.send(a, b, smr=mr, rmr=mr)
            finally:
                closing(mr, a, b)
        self.creator('alloc_pd', functools.partial(PD, r.ctx), check)

    def cq_works(self, cq, chan=None):
        r = self.rig
        a, b = r.pair(e.IBV_QPT_RC, cq=cq)
        try:
            if chan:
                cq.req_notify()
            r.send(a, b, cq=cq)
            if chan:
                r.event(chan, cq)
        finally:
            closing(a, b)

    def create_comp_channel(self):
        r = self.rig

        def check(chan):
            cq = CQ(r.ctx, 16, None, chan, 0)
            try:
                self.cq_works(cq, chan)
            finally:
                cq.close()
        self.creator('create_comp_channel', functools.partial(CompChannel, r.ctx), check)

    def create_cq(self):
        r = self.rig
        self.creator('create_cq', functools.partial(CQ, r.ctx, 16), self.cq_works)
        self.creator('create_cq_channel', functools.partial(CQ, r.ctx, 16, None, r.chan, 0),
                     lambda cq: self.cq_works(cq, r.chan))

    def resize_cq(self):
        r = self.rig

        def done(_, final, cq):
            # A failed resize may have resized the kernel's CQ and failed
            # to map the new ring (rdma-core's rxe provider unmaps the old
            # one first): the CQ is then unusable in this process, only
            # destroyed. Each call gets a new CQ.
            try:
                if final:
                    self.cq_works(cq)
                    cq.resize(512)
                    self.cq_works(cq)
            finally:
                cq.close()
        self.walk('resize_cq', lambda cq: cq.resize(256), done, failed=lambda cq: cq.close(),
                  fresh=functools.partial(CQ, r.ctx, 16))

    # ---- SRQs, MRs, MWs, AHs

    def srq_receives(self, srq):
        r = self.rig
        a, b = r.pair(e.IBV_QPT_RC, srq=srq)
        try:
            r.send(a, b, srq=srq)
        finally:
            closing(a, b)

    def create_srq(self):
        r = self.rig
        attr = SrqInitAttr(SrqAttr(max_wr=16, max_sge=1))
        self.creator('create_srq', functools.partial(SRQ, r.pd, attr), self.srq_receives)

    def modify_srq(self):
        r = self.rig
        attr = SrqAttr(max_wr=64)
        init = SrqInitAttr(SrqAttr(max_wr=16, max_sge=1))

        def done(_, final, srq):
            # As with resize_cq, a failed call may leave the SRQ's ring
            # unmapped in this process: each call gets a new SRQ.
            try:
                if final:
                    got = srq.query().max_wr
                    need(got >= 64, f'query_srq says max_wr {got} after the resize to 64')
                    self.srq_receives(srq)
            finally:
                srq.close()
        self.walk('modify_srq', lambda srq: srq.modify(attr, e.IBV_SRQ_MAX_WR), done,
                  failed=lambda srq: srq.close(), fresh=functools.partial(SRQ, r.pd, init))

    def reg_mr(self):
        r = self.rig
        self.creator('reg_mr', functools.partial(MR, r.pd, BUF, RW, address=r.ubuf_addr),
                     lambda mr: r.send(r.rc[0], r.rc[1], smr=mr, rmr=mr))

    def alloc_mw(self, mw_type):
        r = self.rig
        info = MWBindInfo(r.mr, r.mr.buf, MSG, e.IBV_ACCESS_REMOTE_READ)

        def check(mw):
            r.drain(r.cq)
            if mw_type == e.IBV_MW_TYPE_1:
                r.rc[1].bind_mw(mw, MWBind(info, e.IBV_SEND_SIGNALED))
                r.poll(r.cq, 1)
                r.read_through(mw.rkey)
            elif not self.args.no_type2_bind:
                wr = SendWR(opcode=e.IBV_WR_BIND_MW)
                wr.set_bind_wr(mw, info)
                r.rc[1].post_send(wr)
                r.poll(r.cq, 1)
                r.read_through(wr.rkey)
        name = 'alloc_mw_1' if mw_type == e.IBV_MW_TYPE_1 else 'alloc_mw_2'
        self.creator(name, functools.partial(MW, r.pd, mw_type), check)

    def create_ah(self):
        r = self.rig
        self.creator('create_ah', functools.partial(AH, r.pd, attr=r.ah_attr()),
                     lambda ah: r.send(r.ud[0], r.ud[1], ah=ah))

    # ---- QPs

    def qp_works(self, qp, qpt, srq=None):
        """qp (just made, in RESET) connected; it sends and receives."""
        r = self.rig
        if qpt == e.IBV_QPT_UD:
            r.ready(qp)
            r.send(qp, r.ud[1], ah=r.ah)
            r.send(r.ud[0], qp, ah=r.ah)
            return
        peer = r.qp(qpt)
        try:
            r.connect(qp, qpt, peer.qp_num)
            r.connect(peer, qpt, qp.qp_num)
            r.both_ways(qp, peer, srq)
        finally:
            peer.close()

    def create_qp(self, qpt, srq=None):
        r = self.rig
        cap = QPCap(max_send_wr=8, max_recv_wr=0 if srq else 8, max_send_sge=1, max_recv_sge=1)
        attr = QPInitAttr(qp_type=qpt, scq=r.cq, rcq=r.cq, srq=srq, cap=cap)
        name = f'create_qp_{QPT_NAMES[qpt]}' + ('_srq' if srq else '')
        self.creator(name, functools.partial(QP, r.pd, attr),
                     lambda qp: self.qp_works(qp, qpt, srq))

    def modify_qp(self, qpt):
        """One QP walked through RESET -> INIT -> RTR -> RTS, a walk per
        transition; after a failed call the QP must be where it was."""
        r = self.rig
        qp = r.qp(qpt)
        peer = None if qpt == e.IBV_QPT_UD else r.qp(qpt)
        steps = r.steps(qpt, peer.qp_num if peer else 0)
        try:
            for i, (label, attr, mask) in enumerate(steps):
                name = f'modify_qp_{QPT_NAMES[qpt]}_{label}'
                was = steps[i - 1][1].qp_state if i else e.IBV_QPS_RESET
                self.walk(name, functools.partial(qp.modify, attr, mask),
                          functools.partial(self.moved, qp, steps[:i]),
                          failed=functools.partial(self.stayed, qp, was))
                if qp_state(qp) != attr.qp_state:
                    self.ok = False
                    print(f'not ok - {self.dev}: {name}: the QP is not in {label.upper()} '
                          f'after the walk')
                    return
            self.modified_works(qp, qpt, peer)
        finally:
            closing(qp, peer)

    @staticmethod
    def moved(qp, before, _, final, __):
        """After a modify that succeeded with its fault fired: the QP back
        where it was (RESET, then the transitions before), so that the
        walk goes on."""
        if final:
            return
        qp.modify(QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
        for _, attr, mask in before:
            qp.modify(attr, mask)

    @staticmethod
    def stayed(qp, was, _):
        now = qp_state(qp)
        need(now == was, f'the QP is in state {now}, not {was} as before the call')

    def modified_works(self, qp, qpt, peer):
        """The QP the modify_qp walks took to RTS sends and receives."""
        r = self.rig
        w = Walk(f'modify_qp_{QPT_NAMES[qpt]}_works')
        if qpt == e.IBV_QPT_UD:
            w.guard('in RTS', lambda: (r.send(qp, r.ud[1], ah=r.ah),
                                       r.send(r.ud[0], qp, ah=r.ah)))
        else:
            w.guard('in RTS', lambda: (r.connect(peer, qpt, qp.qp_num),
                                       r.both_ways(qp, peer)))
        if w.problems:
            self.ok = False
            print(f'not ok - {self.dev}: modify_qp_{QPT_NAMES[qpt]}: {w.problems[0]}')
        else:
            print(f'ok - {self.dev}: modify_qp_{QPT_NAMES[qpt]}: in RTS it sends and receives')

    # ---- multicast

    def attach_mcast(self):
        raw = RawVerbs()
        ctx = raw.open(raw.find(self.dev))
        pd = cq = qp = None
        netdev = self.netdev()
        try:
            pd = raw.alloc_pd(ctx)
            cq = raw.create_cq(ctx, 16, None, None, 0)
            init = RawVerbs.QPInitAttr(send_cq=cq, recv_cq=cq, max_send_wr=4, max_recv_wr=4,
                                       max_send_sge=1, max_recv_sge=1,
                                       qp_type=e.IBV_QPT_UD)
            qp = raw.create_qp(pd, ctypes.byref(init))
            if not (pd and cq and qp):
                raise Fail(f'a UD QP through libibverbs: {errname(ctypes.get_errno())}')
            gid = ctypes.create_string_buffer(MGID, 16)
            self.walk_mcast(raw, qp, gid, netdev)
        finally:
            for fn, o in ((raw.destroy_qp, qp), (raw.destroy_cq, cq), (raw.dealloc_pd, pd)):
                if o:
                    fn(o)
            raw.close_device(ctx)
            raw.close()

    def netdev(self):
        path = f'/sys/class/infiniband/{self.dev}/ports/{PORT}/gid_attrs/ndevs/0'
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            print(f'# attach_mcast: no netdev in {path}: its groups are not checked')
            return None

    def walk_mcast(self, raw, qp, gid, netdev):
        def attach():
            rc = raw.attach_mcast(qp, gid, 0)
            if rc:
                raise PyverbsRDMAError('ibv_attach_mcast', rc)

        def joined(want):
            if netdev is not None:
                have = MGID_MAC in dev_mcast(netdev)
                need(have == want, f'{netdev} has {"" if have else "not "}joined '
                     f'{MGID_MAC} with the QP {"" if want else "not "}attached')

        def done(_, final, __):
            joined(True)
            rc = raw.detach_mcast(qp, gid, 0)
            need(rc == 0, f'detach_mcast: {errname(rc)}')
            joined(False)
        self.walk('attach_mcast', attach, done, failed=lambda _: joined(False))

    # ---- device add

    def add_link(self):
        a = self.args
        nl = RdmaNetlink()
        w = Walk('add_link')
        name, path = a.link_name, f'/sys/class/infiniband/{a.link_name}'
        w.guard('before the walk', self.gone, name, path)

        def add(n):
            """One add, fault n armed (None: no fault, the sites counted):
            (exception or None, left, sites)."""
            msg = nl.message(name, a.link_type, a.netdev)
            send = functools.partial(nl.sock.send, msg)
            if n is None:
                sites = self.nth.count(send)[1]
                exc, left = None, 1
            else:
                _, exc, left = self.nth.call(n, send)
                sites = None
            return exc or self.acknowledged(nl, n, path), left, sites

        try:
            exc, _, sites = add(None)
            if exc is not None:
                w.problem(f'an add with no fault: {describe(exc)}')
            else:
                w.guard('the device added with no fault', self.link_works, name)
                w.guard('its delete', self.delete, name, path)
                points = self.points(sites)
                print(f'# add_link: {sites} sites, faults at {self.span(points)}')
                for n in points:
                    self.add_at(w, n, add, name, path)
                exc, _, w.sites = add(None)
                if exc is not None:
                    w.problem(f'an add with no fault after the walk: {describe(exc)}')
                else:
                    w.guard('the device added after the walk', self.link_works, name)
                    w.guard('its delete', self.delete, name, path)
        finally:
            nl.sock.close()
        self.ok &= w.report(self.dev)

    @staticmethod
    def acknowledged(nl, n, path):
        """None if the kernel acknowledged the add, else the exception."""
        try:
            code = nl.answer()
        except TimeoutError as ex:
            return ex
        except OSError as ex:
            # The acknowledgement itself could not be allocated
            # (netlink_ack() sets ENOBUFS on the socket): only the device
            # tells what happened.
            added = os.path.exists(path)
            print(f'# add_link: fault {n}: no acknowledgement ({describe(ex)}), '
                  f'{"added" if added else "not added"}')
            return None if added else ex
        return OSError(code, os.strerror(code)) if code else None

    def add_at(self, w, n, add, name, path):
        exc, left, _ = add(n)
        if exc is not None:
            w.failed(n, exc, left)
            w.guard(f'after fault {n}', self.gone, name, path, 2)
            return
        if left:
            print(f'# add_link: fault {n} unreached')
        else:
            w.tolerated += 1
        w.guard(f'the device added with fault {n}', self.delete, name, path)

    def points(self, sites):
        """The faults of the add_link walk: every site, or --add-points of
        them, the first half in order and the rest drawn (--seed)."""
        k = self.args.add_points
        if sites <= k:
            return list(range(1, sites + 1))
        first = list(range(1, k // 2 + 1))
        rest = random.Random(self.args.seed).sample(range(k // 2 + 1, sites + 1), k - len(first))
        return first + sorted(rest)

    @staticmethod
    def span(points):
        return ' '.join(map(str, points)) if len(points) < 40 else \
            f'1..{points[-1]} ({len(points)})'

    def gone(self, name, path, secs=WAIT):
        """No device name, waiting up to secs for one being removed."""
        deadline = time.monotonic() + secs
        while os.path.exists(path):
            need(time.monotonic() < deadline, f'device {name} still there after {secs} s')
            time.sleep(0.1)

    def delete(self, name, path):
        out = subprocess.run(['rdma', 'link', 'delete', name], capture_output=True, text=True,
                             timeout=60)
        need(out.returncode == 0, f'rdma link delete {name}: {out.stderr.strip()}')
        self.gone(name, path)

    def link_works(self, name):
        """The added device's port comes up, a context on it gives a PD."""
        with Context(name=name) as ctx:
            deadline = time.monotonic() + WAIT
            while ctx.query_port(PORT).state != e.IBV_PORT_ACTIVE:
                need(time.monotonic() < deadline, f'port {PORT} of {name} not ACTIVE')
                time.sleep(0.1)
            PD(ctx).close()

    # ---- all of them

    def run(self, only):
        r = self.rig
        verbs = {
            'open_device': self.open_device,
            'alloc_pd': self.alloc_pd,
            'create_comp_channel': self.create_comp_channel,
            'create_cq': self.create_cq,
            'resize_cq': self.resize_cq,
            'create_srq': self.create_srq,
            'modify_srq': self.modify_srq,
            'reg_mr': self.reg_mr,
            'alloc_mw_1': functools.partial(self.alloc_mw, e.IBV_MW_TYPE_1),
            'alloc_mw_2': functools.partial(self.alloc_mw, e.IBV_MW_TYPE_2),
            'create_ah': self.create_ah,
            'create_qp_rc': functools.partial(self.create_qp, e.IBV_QPT_RC),
            'create_qp_uc': functools.partial(self.create_qp, e.IBV_QPT_UC),
            'create_qp_ud': functools.partial(self.create_qp, e.IBV_QPT_UD),
            'create_qp_rc_srq': functools.partial(self.create_qp, e.IBV_QPT_RC, r.srq),
            'modify_qp_rc': functools.partial(self.modify_qp, e.IBV_QPT_RC),
            'modify_qp_ud': functools.partial(self.modify_qp, e.IBV_QPT_UD),
            'attach_mcast': self.attach_mcast,
        }
        if self.args.link_type:
            verbs['add_link'] = self.add_link
        for name, fn in verbs.items():
            if only and name not in only:
                continue
            try:
                fn()
            except Exception as ex:    # the set-up of a walk, not its calls
                self.ok = False
                print(f'not ok - {self.dev}: {name}: could not run: '
                      f'{ex if isinstance(ex, Fail) else describe(ex)}')
        r.close()
        return self.ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--dev', required=True)
    ap.add_argument('--gid', type=int, required=True, help='GID index: the own RoCEv2 GID')
    ap.add_argument('--cap', type=int, default=400, help='faults at most per verb')
    ap.add_argument('--only', default='', help='comma-separated verbs (see the docstring)')
    ap.add_argument('--no-type2-bind', action='store_true',
                    help='alloc_mw_2: allocate and free only (rdma_rxe, 26-fuzz-verbs)')
    ap.add_argument('--link-type', help='add_link: the link type (rxe, rrxe); none: no add_link')
    ap.add_argument('--netdev', help='add_link: the netdev, in this network namespace')
    ap.add_argument('--link-name', help='add_link: the device name')
    ap.add_argument('--add-points', type=int, default=8, help='add_link: faults at most')
    ap.add_argument('--seed', type=int, default=1, help='add_link: draws the faults')
    args = ap.parse_args()
    if args.link_type and not (args.netdev and args.link_name):
        ap.error('--link-type needs --netdev and --link-name')
    # Each line as it comes: a run the caller's timeout ends still shows
    # how far it got.
    sys.stdout.reconfigure(line_buffering=True)
    if not os.path.exists('/proc/thread-self/fail-nth'):
        print(f'not ok - {args.dev}: /proc/thread-self/fail-nth exists '
              '(CONFIG_FAULT_INJECTION: scripts/kernel/test.config)')
        return 1
    # No collection while a fault is armed: a collected object's close
    # would call into the kernel then.
    gc.disable()
    t0 = time.monotonic()
    try:
        injector = Injector(args)
    except Exception as ex:    # the device is not there, or not working
        print(f'not ok - {args.dev}: the objects the walks need: {describe(ex)}')
        return 1
    ok = injector.run({v for v in args.only.split(',') if v})
    print(f'# fault-inject: {args.dev} in {time.monotonic() - t0:.0f} s')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
