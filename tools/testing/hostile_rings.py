#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile use of the queue memory the rxe ABI maps into a process.

Creates a CQ and a QP on DEVICE, finds their rings in /proc/self/maps (the
mappings of /dev/infiniband/uverbsN), and then:

  garbage   fills every ring, header included, with random bytes (indices,
            index mask, element size), then resizes the CQ, walks the QP
            through its states and destroys everything;
  mmap      maps queue memory with bad offsets and lengths through the
            context's own file descriptor (must fail), and maps a ring a
            second time (must work);
  stale     destroys the CQ and QP and keeps reading and writing the
            mappings the provider still holds;
  exit      leaves everything allocated and mapped and exits;
  spin      a child process keeps moving the producer index of every
            ring while the parent takes the QP through INIT, ERR and RESET
            ten times: each flush and reset consumes at most a ring's worth
            (the kernel flushes with interrupts off) and returns;
  pending   (not hostile) posts sends that nothing processes yet (rrxe has
            no data path), then checks SQD's SQ_DRAINED event and that ERR
            flushes every send and receive with WR_FLUSH_ERR, in order.
  ah_pd     UD sends naming an address handle of another PD of the same
            process, and one of another process's context (the provider
            writes whatever handle number it is given into the ring): each
            must complete with LOC_QP_OP_ERR and move the QP to ERR, as a
            send through the QP's own handle before them succeeds. Prints
            the outcome ("ah_pd: ...") for the side-by-side with rdma_rxe.
  keys      registers 8 MRs and prints their keys ("keys: ..."), for the
            test script to compare across two instances of a device.

Never uses the provider's own ring functions (post, poll) after the rings
are scribbled on: a provider trusting its ring may crash in user space,
which is not what is tested here. Prints "ok - MODE" or raises.
"""

import ctypes
import errno
import mmap
import os
import random
import sys

from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
import pyverbs.enums as e


def uverbs_maps():
    """(start, end, offset) of every mapping of a uverbs device."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and "/dev/infiniband/uverbs" in parts[5]:
                start, end = (int(x, 16) for x in parts[0].split("-"))
                out.append((start, end, int(parts[2], 16)))
    return out


def uverbs_fd():
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "/dev/infiniband/uverbs" in os.readlink(f"/proc/self/fd/{fd}"):
                return int(fd)
        except OSError:
            pass
    raise SystemExit("no uverbs fd")


def objects(dev):
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq = CQ(ctx, 64)
    cap = QPCap(max_send_wr=32, max_recv_wr=32, max_send_sge=2, max_recv_sge=2)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
    return ctx, pd, cq, qp


def close(*objs):
    """Destroys pyverbs objects in the order given (children first)."""
    for obj in objs:
        obj.close()


def scribble(maps, rng):
    for start, end, _ in maps:
        size = end - start
        junk = bytes(rng.getrandbits(8) for _ in range(min(size, 8192)))
        ctypes.memmove(start, junk, len(junk))
        # Header words the kernel reads: producer/consumer indices, and the
        # geometry it must never trust.
        for off in (0, 4, 128, 256):
            ctypes.c_uint32.from_address(start + off).value = rng.choice(
                [0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, rng.getrandbits(32)])


def mode_garbage(dev):
    rng = random.Random(4791)
    ctx, pd, cq, qp = objects(dev)
    maps = uverbs_maps()
    assert len(maps) >= 3, f"expected CQ, SQ and RQ mappings, got {maps}"
    for _ in range(20):
        scribble(maps, rng)
        try:
            cq.resize(rng.choice([1, 64, 100, 4096]))
        except PyverbsRDMAError as err:
            assert err.error_code in (errno.EINVAL, errno.ENOMEM), err
        maps = uverbs_maps()
    for state in (e.IBV_QPS_INIT, e.IBV_QPS_ERR, e.IBV_QPS_RESET):
        attr = QPAttr(qp_state=state, port_num=1)
        mask = e.IBV_QP_STATE
        if state == e.IBV_QPS_INIT:
            mask |= e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS
        scribble(uverbs_maps(), rng)
        qp.modify(attr, mask)
    scribble(uverbs_maps(), rng)
    close(qp, cq, pd, ctx)


def mode_mmap(dev):
    ctx, pd, cq, qp = objects(dev)
    fd = uverbs_fd()
    maps = uverbs_maps()
    page = mmap.PAGESIZE
    used = {off for _, _, off in maps}
    for off in (0, 1 << 40, max(used) + 64 * page, (1 << 63) - page):
        if off in used:
            continue
        try:
            mmap.mmap(fd, page, offset=off)
        except (OSError, OverflowError, ValueError):
            pass
        else:
            raise SystemExit(f"mmap at unknown offset {off:#x} succeeded")
    start, end, off = maps[0]
    try:
        mmap.mmap(fd, end - start + 16 * page, offset=off)
    except OSError:
        pass
    else:
        raise SystemExit("mmap longer than the queue succeeded")
    again = mmap.mmap(fd, end - start, offset=off)
    assert again[:8] == ctypes.string_at(start, 8), "second mapping differs"
    again.close()
    close(qp, cq, pd, ctx)


def mode_stale(dev):
    ctx, pd, cq, qp = objects(dev)
    fd = uverbs_fd()
    # Map the rings a second time ourselves: the provider unmaps its own
    # mappings when the objects are destroyed, ours stay.
    mine = []
    for start, end, off in uverbs_maps():
        # /proc/self/maps may show two adjacent rings as one mapping, whose
        # length then matches no single queue: the kernel refuses it.
        try:
            mine.append(mmap.mmap(fd, end - start, offset=off))
        except OSError as err:
            assert err.errno == errno.EINVAL, err
    assert mine, "could not map any ring a second time"
    close(qp, cq)
    for m in mine:
        m[0:4096] = os.urandom(4096)
        _ = m[-4096:]
        m.close()
    close(pd, ctx)


def mode_exit(dev):
    ctx, pd, cq, qp = objects(dev)
    scribble(uverbs_maps(), random.Random(1))
    os._exit(0)


PRODUCER_INDEX_OFFSET = 128
CONSUMER_INDEX_OFFSET = 256


def mode_spin(dev):
    """Only the kernel flushes here: the provider's own post would trust
    the scribbled index and crash in user space (it does)."""
    import signal
    import time
    import verbs_objects as v
    ctx, pd, cq, qp = objects(dev)
    maps = uverbs_maps()
    child = os.fork()
    if child == 0:
        # Dies with the parent, never holds the test's output open, and
        # stops by itself.
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        # The mappings are shared with the parent: keep every ring looking
        # full, the producer index one behind whatever consumer index the
        # kernel publishes. Adjacent rings may show as one mapping, so
        # every page is taken for a ring's header.
        idx = [(ctypes.c_uint32.from_address(page + PRODUCER_INDEX_OFFSET),
                ctypes.c_uint32.from_address(page + CONSUMER_INDEX_OFFSET))
               for start, end, _ in maps
               for page in range(start, end, mmap.PAGESIZE)]
        end = time.monotonic() + 90
        while time.monotonic() < end:
            for _ in range(10000):
                for prod, cons in idx:
                    prod.value = (cons.value - 1) & 0xffffffff
        os._exit(0)
    try:
        time.sleep(0.5)

        def too_late(*_):
            raise TimeoutError("a flush did not return within 60 s")
        signal.signal(signal.SIGALRM, too_late)
        signal.alarm(60)
        # Each entry into ERR flushes both queues, each RESET drops what
        # they hold; the child moves the indices all along.
        for _ in range(10):
            v.modify(qp, v.init_attr(), v.RC_INIT, 'RESET->INIT')
            qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
            qp.modify(QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
        signal.alarm(0)
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    close(qp, cq, pd, ctx)


def mode_pending(dev):
    """A QP connected to itself (loopback, matching PSNs): sends complete
    against its own receives, SQD reports SQ_DRAINED once they are
    acknowledged, and ERR flushes the receives left."""
    import signal
    import verbs_objects as v
    from pyverbs.mr import MR
    from pyverbs.wr import RecvWR, SendWR, SGE
    ctx, pd, cq, qp = objects(dev)
    mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    sge = [SGE(mr.buf, 64, mr.lkey)]
    v.modify(qp, v.init_attr(), v.RC_INIT, 'RESET->INIT')
    v.modify(qp, v.rtr_attr(ctx, qp.qp_num), v.RC_RTR, 'INIT->RTR')
    rts = v.rts_attr()
    rts.sq_psn = 0x123  # the PSN its own responder expects (rtr_attr)
    v.modify(qp, rts, v.RC_RTS, 'RTR->RTS')
    for i in range(7):
        qp.post_recv(RecvWR(wr_id=200 + i, num_sge=1, sg=sge))
    for i in range(5):
        qp.post_send(SendWR(wr_id=100 + i, num_sge=1, sg=sge))
    attr = QPAttr(qp_state=e.IBV_QPS_SQD)
    attr.en_sqd_async_notify = 1
    qp.modify(attr, e.IBV_QP_STATE | e.IBV_QP_EN_SQD_ASYNC_NOTIFY)

    def too_late(*_):
        raise TimeoutError("no SQ_DRAINED event within 30 s")
    signal.signal(signal.SIGALRM, too_late)
    signal.alarm(30)
    event = ctx.get_async_event()
    signal.alarm(0)
    event.ack()
    assert event.event_type == e.IBV_EVENT_SQ_DRAINED, event.event_type
    wcs = v.poll_all(cq, 10, tries=2000)
    got = sorted((wc.wr_id, wc.status) for wc in wcs)
    want = [(i, e.IBV_WC_SUCCESS) for i in [*range(100, 105), *range(200, 205)]]
    assert got == want, got
    qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
    wcs = v.poll_all(cq, 2)
    got = sorted((wc.wr_id, wc.status) for wc in wcs)
    assert got == [(205, e.IBV_WC_WR_FLUSH_ERR), (206, e.IBV_WC_WR_FLUSH_ERR)], got
    # A send posted in ERR is flushed at once.
    qp.post_send(SendWR(wr_id=300, num_sge=1, sg=sge))
    wcs = v.poll_all(cq, 1)
    assert [(w.wr_id, w.status) for w in wcs] == [(300, e.IBV_WC_WR_FLUSH_ERR)], wcs
    close(qp, mr, cq, pd, ctx)


WC_NAMES = {e.IBV_WC_SUCCESS: "SUCCESS", e.IBV_WC_LOC_QP_OP_ERR: "LOC_QP_OP_ERR",
            e.IBV_WC_WR_FLUSH_ERR: "WR_FLUSH_ERR", e.IBV_WC_LOC_PROT_ERR: "LOC_PROT_ERR",
            e.IBV_WC_LOC_LEN_ERR: "LOC_LEN_ERR"}
QPS_NAMES = {e.IBV_QPS_RTS: "RTS", e.IBV_QPS_ERR: "ERR", e.IBV_QPS_SQE: "SQE"}


def ud_send_outcome(ctx, pd, cq, ah, wr_id, mr):
    """A UD QP of pd in RTS posts one send through ah (to itself); returns
    'STATUS/STATE': the send's completion status and the QP's state."""
    import verbs_objects as v
    from pyverbs.wr import SendWR, SGE
    qp = v.make_qp(ctx, pd, cq, e.IBV_QPT_UD)
    v.modify(qp, v.init_attr(), v.UD_INIT, "RESET->INIT")
    v.modify(qp, QPAttr(qp_state=e.IBV_QPS_RTR), 0, "INIT->RTR")
    v.modify(qp, v.rts_attr(rc=False), v.UD_RTS, "RTR->RTS")
    wr = SendWR(wr_id=wr_id, num_sge=1, sg=[SGE(mr.buf, 64, mr.lkey)])
    wr.set_wr_ud(ah, qp.qp_num, 0x11111111)
    qp.post_send(wr)
    wcs = v.poll_all(cq, 1, tries=1000)
    assert [w.wr_id for w in wcs] == [wr_id], [(w.wr_id, w.status) for w in wcs]
    status = WC_NAMES.get(wcs[0].status, str(wcs[0].status))
    state = v.qp_state(qp)
    qp.close()
    return f"{status}/{QPS_NAMES.get(state, state)}"


def mode_ah_pd(dev):
    import verbs_objects as v
    from pyverbs.addr import AH
    from pyverbs.mr import MR
    ctx = Context(name=dev)
    pd, other_pd = PD(ctx), PD(ctx)
    cq = CQ(ctx, 64)
    mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    own = AH(pd, attr=v.global_ah_attr(ctx))
    foreign = AH(other_pd, attr=v.global_ah_attr(ctx))
    # Another context on the device: another process's handles, whose
    # numbers this process can only name.
    ctx2 = Context(name=dev)
    pd2 = PD(ctx2)
    elsewhere = AH(pd2, attr=v.global_ah_attr(ctx2))
    got = {
        "own": ud_send_outcome(ctx, pd, cq, own, 1, mr),
        "other_pd": ud_send_outcome(ctx, pd, cq, foreign, 2, mr),
        "other_ctx": ud_send_outcome(ctx, pd, cq, elsewhere, 3, mr),
    }
    print("ah_pd: " + " ".join(f"{k}={val}" for k, val in got.items()))
    want = {"own": "SUCCESS/RTS", "other_pd": "LOC_QP_OP_ERR/ERR",
            "other_ctx": "LOC_QP_OP_ERR/ERR"}
    close(elsewhere, pd2, ctx2, foreign, own, mr, cq, other_pd, pd, ctx)
    assert got == want, f"wanted {want}"


def mode_keys(dev):
    from pyverbs.mr import MR
    ctx = Context(name=dev)
    pd = PD(ctx)
    mrs = [MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE) for _ in range(8)]
    print("keys: " + " ".join(f"{mr.rkey:#x}" for mr in mrs))
    close(*mrs, pd, ctx)


def main():
    mode, dev = sys.argv[1], sys.argv[2]
    {"garbage": mode_garbage, "mmap": mode_mmap, "stale": mode_stale,
     "exit": mode_exit, "pending": mode_pending, "spin": mode_spin,
     "ah_pd": mode_ah_pd, "keys": mode_keys}[mode](dev)
    print(f"ok - {mode}")


if __name__ == "__main__":
    main()
