#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""NVMe-oF helpers for tools/testing/nvmeof.sh that dd cannot do.

  poll write|read BLK PATTERN SPEC...
        polled O_DIRECT I/O through io_uring with IORING_SETUP_IOPOLL
        (liburing's liburing-ffi.so.2, which the guest root has as a
        dependency of QEMU). Each SPEC is BS:COUNT:SKIP as in dd (COUNT
        blocks of BS bytes at block SKIP), all SPECs' blocks in flight
        together, at most 8 at a time. `write` writes PATTERN's bytes at
        the same offsets; `read` reads them back and compares them with
        PATTERN. Such a request carries REQ_POLLED: blk-mq queues it on a
        poll queue (HCTX_TYPE_POLL), whose completions nvme-rdma reaps
        from its CQ when io_uring polls it, or ends it with EOPNOTSUPP if
        the device has no poll queue (blk_mq_submit_bio). So a success
        says the I/O went through a polled queue.
  ioccsz CTRL
        prints the I/O queue command capsule size (IOCCSZ, in 16-byte
        units) of the controller's Identify Controller data, read through
        the admin passthrough ioctl of /dev/CTRL: 4 for a bare 64-byte
        command, (64 + inline data size) / 16 with inline data.

Exits 0 on success; on failure prints why and exits 1.
"""

import ctypes
import fcntl
import mmap
import os
import sys

IORING_SETUP_IOPOLL = 1
DEPTH = 8


class Cqe(ctypes.Structure):
    """struct io_uring_cqe (without the big-CQE tail)."""

    _fields_ = [("user_data", ctypes.c_uint64), ("res", ctypes.c_int32), ("flags", ctypes.c_uint32)]


def uring():
    """liburing-ffi, with the prototypes used here."""
    lib = ctypes.CDLL("liburing-ffi.so.2", use_errno=True)
    vp, u, i, u64 = ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_uint64
    lib.io_uring_queue_init.argtypes = [u, vp, u]
    lib.io_uring_get_sqe.argtypes = [vp]
    lib.io_uring_get_sqe.restype = vp
    for f in (lib.io_uring_prep_read, lib.io_uring_prep_write):
        f.argtypes = [vp, i, vp, u, u64]
        f.restype = None
    lib.io_uring_sqe_set_data64.argtypes = [vp, u64]
    lib.io_uring_sqe_set_data64.restype = None
    lib.io_uring_submit.argtypes = [vp]
    lib.io_uring_wait_cqe.argtypes = [vp, ctypes.POINTER(ctypes.POINTER(Cqe))]
    lib.io_uring_cqe_seen.argtypes = [vp, ctypes.POINTER(Cqe)]
    lib.io_uring_cqe_seen.restype = None
    lib.io_uring_queue_exit.argtypes = [vp]
    lib.io_uring_queue_exit.restype = None
    return lib


def fail(msg):
    print(msg)
    sys.exit(1)


def size(s):
    """A dd size: 4k, 128k, 1M or bytes."""
    mult = {"k": 1024, "K": 1024, "M": 1 << 20}
    return int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s)


def poll(mode, blk, pattern, specs):
    with open(pattern, "rb") as f:
        want = f.read()
    # (offset, length) of every block, the SPECs' blocks interleaved so
    # that the block sizes are in flight together.
    lists = []
    for spec in specs:
        bs, count, skip = spec.split(":")
        bs = size(bs)
        lists.append([((int(skip) + n) * bs, bs) for n in range(int(count))])
    blocks = []
    while any(lists):
        for lst in lists:
            if lst:
                blocks.append(lst.pop(0))
    lib = uring()
    ring = ctypes.create_string_buffer(1024)  # struct io_uring is ~220 bytes
    ret = lib.io_uring_queue_init(DEPTH, ring, IORING_SETUP_IOPOLL)
    if ret < 0:
        fail(f"io_uring_queue_init(IOPOLL): {os.strerror(-ret)}")
    fd = os.open(blk, (os.O_WRONLY if mode == "write" else os.O_RDONLY) | os.O_DIRECT)
    # Page-aligned buffers (O_DIRECT), one per slot.
    maxbs = max(length for _, length in blocks)
    bufs = [mmap.mmap(-1, maxbs) for _ in range(DEPTH)]
    addrs = [ctypes.addressof(ctypes.c_char.from_buffer(b)) for b in bufs]
    free = list(range(DEPTH))
    inflight = {}
    nxt = done = 0
    cqe = ctypes.POINTER(Cqe)()
    while done < len(blocks):
        while free and nxt < len(blocks):
            slot = free.pop()
            off, length = blocks[nxt]
            sqe = lib.io_uring_get_sqe(ring)
            if mode == "write":
                bufs[slot][:length] = want[off : off + length]
                lib.io_uring_prep_write(sqe, fd, addrs[slot], length, off)
            else:
                lib.io_uring_prep_read(sqe, fd, addrs[slot], length, off)
            lib.io_uring_sqe_set_data64(sqe, slot)
            inflight[slot] = nxt
            nxt += 1
        ret = lib.io_uring_submit(ring)
        if ret < 0:
            fail(f"io_uring_submit: {os.strerror(-ret)}")
        ret = lib.io_uring_wait_cqe(ring, ctypes.byref(cqe))
        if ret < 0:
            fail(f"io_uring_wait_cqe: {os.strerror(-ret)}")
        slot, res = cqe.contents.user_data, cqe.contents.res
        lib.io_uring_cqe_seen(ring, cqe)
        off, length = blocks[inflight.pop(slot)]
        if res < 0:
            fail(f"polled {mode} of {length} bytes at {off}: error {-res} ({os.strerror(-res)})")
        if res != length:
            fail(f"polled {mode} of {length} bytes at {off}: {res} bytes")
        if mode == "read" and bufs[slot][:length] != want[off : off + length]:
            fail(f"polled read of {length} bytes at {off}: data differs from the pattern")
        free.append(slot)
        done += 1
    lib.io_uring_queue_exit(ring)
    os.close(fd)
    print(f"# polled {mode}: {len(blocks)} blocks, {sum(n for _, n in blocks)} bytes")


def ioccsz(ctrl):
    # struct nvme_passthru_cmd (72 bytes), NVME_IOCTL_ADMIN_CMD =
    # _IOWR('N', 0x41, struct nvme_admin_cmd).
    class Cmd(ctypes.Structure):
        _fields_ = [
            ("opcode", ctypes.c_uint8),
            ("flags", ctypes.c_uint8),
            ("rsvd1", ctypes.c_uint16),
            ("nsid", ctypes.c_uint32),
            ("cdw2", ctypes.c_uint32),
            ("cdw3", ctypes.c_uint32),
            ("metadata", ctypes.c_uint64),
            ("addr", ctypes.c_uint64),
            ("metadata_len", ctypes.c_uint32),
            ("data_len", ctypes.c_uint32),
            ("cdw10", ctypes.c_uint32 * 6),
            ("timeout_ms", ctypes.c_uint32),
            ("result", ctypes.c_uint32),
        ]

    assert ctypes.sizeof(Cmd) == 72
    data = ctypes.create_string_buffer(4096)
    cmd = Cmd(opcode=0x06, addr=ctypes.addressof(data), data_len=4096)
    cmd.cdw10[0] = 1  # CNS 1: Identify Controller
    with open(f"/dev/{ctrl}", "rb") as f:
        fcntl.ioctl(f.fileno(), 0xC0484E41, cmd)
    # IOCCSZ: bytes 1792-1795 (the fabrics fields of Identify Controller).
    print(int.from_bytes(data.raw[1792:1796], "little"))


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "poll" and sys.argv[2] in ("write", "read"):
        poll(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    elif len(sys.argv) == 3 and sys.argv[1] == "ioccsz":
        ioccsz(sys.argv[2])
    else:
        fail(__doc__)


if __name__ == "__main__":
    main()
