#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Seeded mutation fuzzing of a RoCEv2 device's receive path
(vm/25-fuzz-wire.sh).

  fuzz_wire.py dut --dev DEV --gid N --peer-ip A --out FILE --stop FILE
      (pyverbs; run in the DUT's namespace) Creates live QPs of every type
      connected to QPNs at the attacker's address (RC, UC), a UD QP, and a
      64 KiB MR open to remote reads, writes and atomics; writes their
      numbers as JSON to FILE; keeps receives posted (each one a buffer of
      its own, reposted as it completes) until the stop file appears. Then
      adds each QP's state and expected PSN to FILE ("phase": 2), watches
      for the attacker's probes (a SEND on each QP carrying PROBE_MAGIC)
      for 20 s, and adds what arrived and how the receives ended ("phase":
      3).

  fuzz_wire.py attack --info FILE --stop FILE --iface IF --src-ip A
                      --dst-ip B --dst-mac M --dev DEV --seed S --packets N
                      [--keep FILE]
      (run in the attacker's namespace, raw AF_PACKET socket) Sends N
      packets, each a valid packet of some opcode (every RC, UC and UD
      opcode rdma_rxe knows, FLUSH and ATOMIC WRITE included, plus MADs to
      QP1) to one of the DUT's QPs with one to three mutations: a header
      field set to a boundary or random value (opcode, pad, TVer, P_Key,
      QPN, AckReq, PSN, RETH/AtomicETH/AETH/DETH/IETH fields), bits
      flipped, the packet cut short or extended, a UDP length that lies;
      most have the ICRC recomputed, so that they pass the framing checks
      and reach the transport; now and then a burst of earlier packets is
      replayed in another order. The same seed sends the same packets.
      Then the stop file, and a probe on each QP the DUT still has in RTS.
      Prints `ok - ...` / `not ok - ...`: every QP either still works (its
      probe arrives, byte-exact) or is in the error state with every
      receive completed (flushed), and rcvd_pkts moved by no more than
      what was sent. --keep FILE: the last 64 packets sent, in hex, a line
      each, rewritten every 1000 packets (a splat's input, to replay).
"""
import argparse
import json
import os
import random
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostile_wire import ROCE_PORT, bth, counters, deth, icrc, reth  # noqa: E402

MR_LEN = 65536
RQ_PSN = 0x7000
SQ_PSN = 0x100
QKEY = 0x11111111
GSI_QKEY = 0x80010000
PEER_QPNS = {'rc': 0xa001, 'uc': 0xa002}
RECVS = 32
RECV_LEN = 4096
PROBE_MAGIC = b'rrxe-fuzz-probe:'
NAMES = ('rc', 'uc', 'ud')


# ---- dut (pyverbs) -------------------------------------------------------

def write_json(path, info):
    with open(path + '.tmp', 'w') as f:
        json.dump(info, f)
    os.rename(path + '.tmp', path)


def dut(args):
    from pyverbs.device import Context
    from pyverbs.pd import PD
    from pyverbs.cq import CQ
    from pyverbs.mr import MR
    from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
    from pyverbs.wr import RecvWR, SGE
    from pyverbs.addr import AHAttr, GlobalRoute, GID
    import pyverbs.enums as e

    ctx = Context(name=args.dev)
    pd = PD(ctx)
    mr = MR(pd, MR_LEN, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ |
            e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_ATOMIC)
    mr.write(bytes((i * 13 + 5) & 0xff for i in range(MR_LEN)), MR_LEN)
    # Receive buffers: RECVS of RECV_LEN bytes per QP.
    rmr = MR(pd, len(NAMES) * RECVS * RECV_LEN, e.IBV_ACCESS_LOCAL_WRITE)
    a, b, c, d = (int(x) for x in args.peer_ip.split('.'))
    peer_gid = f'0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}'
    qps, cqs = {}, {}
    types = {'rc': e.IBV_QPT_RC, 'uc': e.IBV_QPT_UC, 'ud': e.IBV_QPT_UD}

    def make_qp(name):
        t = types[name]
        cq = CQ(ctx, 2 * RECVS + 8)
        qp = QP(pd, QPInitAttr(qp_type=t, scq=cq, rcq=cq,
                               cap=QPCap(max_send_wr=4, max_recv_wr=RECVS)))
        attr = QPAttr(port_num=1)
        attr.qkey = QKEY
        attr.sq_psn = SQ_PSN
        init = e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT
        rtr = e.IBV_QP_STATE
        rts = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
        if t == e.IBV_QPT_UD:
            init |= e.IBV_QP_QKEY
        else:
            init |= e.IBV_QP_ACCESS_FLAGS
            attr.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE
            if t == e.IBV_QPT_RC:
                attr.qp_access_flags |= e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC
            attr.path_mtu = e.IBV_MTU_1024
            attr.dest_qp_num = PEER_QPNS[name]
            attr.rq_psn = RQ_PSN
            attr.ah_attr = AHAttr(gr=GlobalRoute(dgid=GID(peer_gid), sgid_index=args.gid),
                                  is_global=1, port_num=1)
            rtr |= e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN
        if t == e.IBV_QPT_RC:
            attr.max_dest_rd_atomic = attr.max_rd_atomic = 4
            attr.min_rnr_timer, attr.timeout, attr.retry_cnt, attr.rnr_retry = 12, 14, 7, 7
            rtr |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
            rts |= e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY | \
                e.IBV_QP_MAX_QP_RD_ATOMIC
        for state, mask in ((e.IBV_QPS_INIT, init), (e.IBV_QPS_RTR, rtr),
                            (e.IBV_QPS_RTS, rts)):
            attr.qp_state = state
            qp.modify(attr, mask)
        qps[name], cqs[name] = qp, cq

    def buf(name, i):
        return (NAMES.index(name) * RECVS + i) * RECV_LEN

    def post(name, i):
        qps[name].post_recv(RecvWR(wr_id=i, num_sge=1,
                                   sg=[SGE(rmr.buf + buf(name, i), RECV_LEN, rmr.lkey)]))

    posted = {n: 0 for n in NAMES}
    info = {}

    def post_all(name):
        for i in range(RECVS):
            post(name, i)
            posted[name] += 1

    for name in NAMES:
        make_qp(name)
        post_all(name)
    wcs = {n: {} for n in NAMES}
    probes = {}
    remade = {n: 0 for n in NAMES}

    def state_of(name):
        qattr, _ = qps[name].query(e.IBV_QP_STATE)
        return qattr.qp_state

    def remake(name):
        """A QP the fuzzing sent to ERR, once flushed, is replaced by a
        new one (a new QPN, which the attacker reads from --out): the
        transport keeps being fuzzed, not only the error state's drop."""
        qps[name].close()
        cqs[name].close()
        posted[name] = 0
        make_qp(name)
        post_all(name)
        remade[name] += 1
        info['qpns'][name] = qps[name].qp_num
        info['remade'] = remade
        write_json(args.out, info)

    def reap(repost, fuzzing=False):
        for name in NAMES:
            flushed = False
            while True:
                n, got = cqs[name].poll()
                if not n:
                    break
                wc = got[0]
                posted[name] -= 1
                key = str(wc.status)
                wcs[name][key] = wcs[name].get(key, 0) + 1
                if wc.status != e.IBV_WC_SUCCESS:
                    flushed = True
                    continue
                off = buf(name, wc.wr_id) + (40 if name == 'ud' else 0)
                data = rmr.read(min(64, RECV_LEN - 40), off)
                if data.startswith(PROBE_MAGIC + name.encode()):
                    probes[name] = True
                if repost:
                    try:
                        post(name, wc.wr_id)
                        posted[name] += 1
                    except Exception:   # the QP went to ERR meanwhile
                        pass
            if fuzzing and flushed and state_of(name) == e.IBV_QPS_ERR:
                remake(name)

    info.update({'qpns': {k: q.qp_num for k, q in qps.items()}, 'peer_qpns': PEER_QPNS,
                 'va': mr.buf, 'rkey': mr.rkey, 'len': MR_LEN, 'rq_psn': RQ_PSN,
                 'qkey': QKEY, 'remade': remade, 'phase': 1})
    write_json(args.out, info)
    print(f'fuzz-dut: QPs {info["qpns"]}, MR va 0x{mr.buf:x} rkey 0x{mr.rkey:x}', flush=True)
    deadline = time.time() + args.timeout
    while not os.path.exists(args.stop) and time.time() < deadline:
        reap(True, fuzzing=True)
        time.sleep(0.05)
    time.sleep(1)
    # No receive is posted from now on: one posted while the QP enters ERR
    # could miss the flush (a process's receives ring no doorbell).
    reap(False)
    names = {e.IBV_QPS_RESET: 'RESET', e.IBV_QPS_INIT: 'INIT', e.IBV_QPS_RTR: 'RTR',
             e.IBV_QPS_RTS: 'RTS', e.IBV_QPS_SQD: 'SQD', e.IBV_QPS_SQE: 'SQE',
             e.IBV_QPS_ERR: 'ERR'}

    def states():
        out, psns = {}, {}
        for k, q in qps.items():
            qattr, _ = q.query(e.IBV_QP_STATE | e.IBV_QP_RQ_PSN)
            out[k] = names.get(qattr.qp_state, str(qattr.qp_state))
            psns[k] = qattr.rq_psn
        return out, psns

    info['state'], info['rq_psns'] = states()
    info['phase'] = 2
    write_json(args.out, info)
    deadline = time.time() + 20
    while time.time() < deadline and len(probes) < len(NAMES):
        reap(False)
        time.sleep(0.05)
    # A QP in ERR flushes what is posted; a receive the loop above posted
    # while the QP entered ERR may have come after the flush, which a
    # modify to ERR runs again.
    st, _ = states()
    for k in NAMES:
        if st[k] == 'ERR':
            attr = QPAttr()
            attr.qp_state = e.IBV_QPS_ERR
            qps[k].modify(attr, e.IBV_QP_STATE)
    deadline = time.time() + 10
    while time.time() < deadline:
        reap(False)
        st, _ = states()
        if all(st[k] != 'ERR' or posted[k] == 0 for k in NAMES):
            break
        time.sleep(0.1)
    info['state'], _ = states()
    info['probes'] = probes
    info['posted'] = posted
    info['wcs'] = wcs
    info['phase'] = 3
    write_json(args.out, info)
    print(f'fuzz-dut: states {info["state"]}, receive completions by status {wcs}, '
          f'receives left posted {posted}, QPs remade after ERR {remade}', flush=True)
    for q in qps.values():
        q.close()
    for m in (mr, rmr):
        m.close()
    for cq in cqs.values():
        cq.close()
    pd.close()
    ctx.close()
    return 0


# ---- attack --------------------------------------------------------------

def ip_checksum(h):
    s = sum(struct.unpack(f'>{len(h) // 2}H', h))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


class Wire:
    """Ethernet/IPv4/UDP framing of RoCEv2 bodies (BTH onwards), sent on a
    raw socket: far cheaper than scapy per packet."""

    def __init__(self, args):
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.sock.bind((args.iface, 0))
        mac = self.sock.getsockname()[4]
        self.eth = bytes.fromhex(args.dst_mac.replace(':', '')) + mac + b'\x08\x00'
        self.src = socket.inet_aton(args.src_ip)
        self.dst = socket.inet_aton(args.dst_ip)
        self.ident = 0

    def frame(self, body, icrc_mode='good', udp_delta=0, sport=0xc123):
        """ICRC_MODE: good (computed over the final headers), bad (flipped)
        or none. UDP_DELTA: added to the UDP length field (a lie)."""
        payload = body + (b'' if icrc_mode == 'none' else b'\0\0\0\0')
        udp_len = 8 + len(payload)
        field = max(0, min(0xffff, udp_len + udp_delta))
        udp = struct.pack('>HHHH', sport, ROCE_PORT, field, 0)
        self.ident = (self.ident + 1) & 0xffff
        tot = 20 + udp_len
        iph = struct.pack('>BBHHHBBH4s4s', 0x45, 0, tot, self.ident, 0x4000, 64, 17, 0,
                          self.src, self.dst)
        iph = iph[:10] + struct.pack('>H', ip_checksum(iph)) + iph[12:]
        if icrc_mode != 'none':
            # The ICRC covers the payload the UDP length says: compute it
            # with the true length, then let the field lie.
            true = iph + struct.pack('>HHHH', sport, ROCE_PORT, udp_len, 0) + payload
            c = icrc(true)
            if icrc_mode == 'bad':
                c = bytes(x ^ 0xa5 for x in c)
            payload = body + c
        return self.eth + iph + udp + payload

    def send(self, frame):
        try:
            self.sock.send(frame)
        except OSError:
            # ENOBUFS and the like: the qdisc is full, a packet lost.
            time.sleep(0.001)


def aeth(syndrome, msn):
    return struct.pack('>I', (syndrome << 24) | (msn & 0xffffff))


def atomic_eth(va, rkey, swap, cmp):
    return struct.pack('>QIQQ', va, rkey, swap, cmp)


class Fuzzer:
    """Seeded generation and mutation of packets to the DUT's QPs."""

    RC = 0x00
    UC = 0x20

    def __init__(self, info, seed):
        self.rng = random.Random(seed)
        self.info = info
        self.va, self.rkey, self.len = info['va'], info['rkey'], info['len']
        self.qpns = info['qpns']

    def payload(self, lo, hi):
        r = self.rng
        n = r.randint(lo, hi)
        return bytes(r.getrandbits(8) for _ in range(min(n, 64))) + b'\x5a' * max(0, n - 64)

    def any_va(self):
        r = self.rng
        return r.choice([self.va, self.va + r.randrange(self.len), self.va + self.len - 8,
                         self.va + self.len, 0, 2 ** 64 - 8, r.getrandbits(64)])

    def any_len(self):
        r = self.rng
        return r.choice([0, 1, 8, 64, 1024, 1025, 4096, self.len, self.len + 1,
                         2 ** 31, 2 ** 32 - 1, r.getrandbits(32)])

    def any_rkey(self):
        r = self.rng
        return r.choice([self.rkey, self.rkey, self.rkey ^ 0xff, 0, 0xffffffff,
                         r.getrandbits(32)])

    def psn(self):
        r = self.rng
        base = self.info['rq_psn']
        return (base + r.choice([0, 0, 1, 2, -1, -2, r.randrange(-128, 128),
                                 r.getrandbits(24)])) & 0xffffff

    def seed_packet(self):
        """A valid packet of a random opcode to the QP of its type: (kind, body)."""
        r = self.rng
        kind = r.choice(['rc'] * 6 + ['uc'] * 3 + ['ud'] * 2 + ['gsi'])
        if kind == 'ud':
            op = r.choice([0x64, 0x65])
            body = bth(op, self.qpns['ud'], r.getrandbits(24), ack=0) + deth(QKEY, 0x77)
            if op == 0x65:
                body += struct.pack('>I', r.getrandbits(32))
            return kind, body + self.payload(0, 1100)
        if kind == 'gsi':
            mad = bytes([1, r.choice([1, 4, 7, 0x81]), r.choice([1, 2]), r.choice([1, 2, 3, 7])])
            mad += bytes(r.getrandbits(8) for _ in range(252))
            return kind, bth(0x64, 1, r.getrandbits(24), ack=0) + deth(GSI_QKEY, 1) + mad
        base = self.RC if kind == 'rc' else self.UC
        qpn = self.qpns[kind]
        if kind == 'rc':
            op = r.choice([0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
                           0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16,
                           0x17, 0x1c, 0x1d])
        else:
            op = base + r.choice(range(0x0c))
        rel = op - base
        hdr = bth(op, qpn, self.psn(), ack=r.getrandbits(1))
        if rel in (0x06, 0x0a, 0x0b, 0x0c) or op == 0x1d:
            hdr += reth(self.any_va(), self.any_rkey(), self.any_len())
        if op == 0x1c:
            hdr += struct.pack('>I', r.getrandbits(32)) + reth(self.any_va(), self.any_rkey(),
                                                               self.any_len())
        if kind == 'rc' and op in (0x13, 0x14):
            hdr += atomic_eth(self.va + 8 * r.randrange(self.len // 8) if r.random() < 0.7
                              else self.any_va(), self.any_rkey(), r.getrandbits(64),
                              r.getrandbits(64))
        if kind == 'rc' and op in (0x0d, 0x0f, 0x10, 0x11, 0x12):
            hdr += aeth(r.choice([0, 0x1f, 0x20, 0x60, 0x61, 0x62, 0x63, r.getrandbits(8)]),
                        r.getrandbits(24))
        if kind == 'rc' and op == 0x12:
            hdr += struct.pack('>Q', r.getrandbits(64))
        if rel in (0x03, 0x05, 0x09, 0x0b):
            hdr += struct.pack('>I', r.getrandbits(32))
        if kind == 'rc' and op in (0x16, 0x17):
            hdr += struct.pack('>I', self.any_rkey())
        if op == 0x1d:
            data = struct.pack('>Q', r.getrandbits(64))
        elif rel == 0x0c or (kind == 'rc' and op in (0x11, 0x12, 0x13, 0x14, 0x1c)):
            data = b''
        elif rel in (0x00, 0x01, 0x06, 0x07) or (kind == 'rc' and op in (0x0d, 0x0e)):
            data = self.payload(1024, 1024) if r.random() < 0.8 else self.payload(0, 1100)
        else:
            data = self.payload(0, 1100)
        return kind, hdr + data

    def mutate(self, body):
        """One to three mutations of BODY; returns (body, icrc_mode, udp_delta)."""
        r = self.rng
        b = bytearray(body)
        udp_delta = 0
        for _ in range(r.choice([1, 1, 2, 3])):
            m = r.randrange(9)
            if m == 0 and len(b) >= 1:          # opcode
                b[0] = r.getrandbits(8)
            elif m == 1 and len(b) >= 2:        # pad, TVer, SE, MigReq
                b[1] = r.getrandbits(8)
            elif m == 2 and len(b) >= 4:        # P_Key
                b[2:4] = struct.pack('>H', r.choice([0xffff, 0x7fff, 0, 0x8000,
                                                     r.getrandbits(16)]))
            elif m == 3 and len(b) >= 8:        # QPN (and resv8a)
                q = r.choice(list(self.qpns.values()) + [0, 1, 0xffffff, r.getrandbits(24)])
                b[4:8] = struct.pack('>I', (r.getrandbits(8) << 24 if r.random() < 0.2 else 0) | q)
            elif m == 4 and len(b) >= 12:       # AckReq, PSN
                b[8:12] = struct.pack('>I', (r.getrandbits(1) << 31) | self.psn())
            elif m == 5 and len(b) > 12:        # an extended header's word
                off = 12 + 4 * r.randrange(min(8, (len(b) - 12) // 4) or 1)
                if off + 4 <= len(b):
                    b[off:off + 4] = struct.pack('>I', r.choice([0, 0xffffffff, 0x80000000,
                                                                 r.getrandbits(32)]))
            elif m == 6 and b:                  # bit flips in the headers
                for _ in range(r.randint(1, 4)):
                    i = r.randrange(min(len(b), 48))
                    b[i] ^= 1 << r.randrange(8)
            elif m == 7:                        # cut short or extended
                if r.random() < 0.5:
                    del b[r.randrange(len(b) + 1):]
                else:
                    b += bytes(r.getrandbits(8) for _ in range(r.randint(1, 64)))
            else:                               # the UDP length lies
                udp_delta = r.choice([-4, -1, 1, 4, -16, 64, r.randrange(-200, 200)])
        x = r.random()
        mode = 'good' if x < 0.85 else ('bad' if x < 0.95 else 'none')
        return bytes(b), mode, udp_delta


def attack(args):
    with open(args.info) as f:
        info = json.load(f)
    wire = Wire(args)
    fz = Fuzzer(info, args.seed)
    before = counters(args.dev)
    last = []
    fails = 0
    sent = 0
    kinds = {}
    start = time.time()

    def report(good, desc, detail=''):
        nonlocal fails
        print(f'{"ok" if good else "not ok"} - {desc}')
        if not good:
            fails += 1
            if detail:
                print(f'#   {detail}')
        sys.stdout.flush()

    def keep():
        if args.keep:
            with open(args.keep + '.tmp', 'w') as f:
                f.write(f'# seed {args.seed}, packets {sent - len(last)}..{sent - 1}\n')
                for fr in last:
                    f.write(fr.hex() + '\n')
            os.rename(args.keep + '.tmp', args.keep)

    while sent < args.packets:
        if sent and fz.rng.random() < 0.01 and len(last) >= 8:
            # A replay: some of the last packets again, in another order.
            burst = fz.rng.sample(last, fz.rng.randint(2, 8))
            for fr in burst:
                wire.send(fr)
            sent += len(burst)
            kinds['replay'] = kinds.get('replay', 0) + len(burst)
            continue
        kind, body = fz.seed_packet()
        body, mode, delta = fz.mutate(body)
        fr = wire.frame(body, mode, delta)
        wire.send(fr)
        kinds[kind] = kinds.get(kind, 0) + 1
        last.append(fr)
        del last[:-64]
        sent += 1
        if sent % 1000 == 0:
            keep()
        if sent % 128 == 0:
            # Let the DUT keep up a little: its softirq drops what the
            # backlog cannot hold, which fuzzes nothing. And take the
            # numbers of the QPs it made anew after ERR.
            time.sleep(0.002)
            fresh = wait_phase(args.info, 1, 0)
            if fresh:
                fz.qpns = fresh['qpns']
    took = time.time() - start
    keep()
    report(True, f'{sent} mutated packets sent in {took:.0f} s ({sent / max(took, 0.001):.0f}/s), '
           f'seed {args.seed}: ' + ', '.join(f'{k} {v}' for k, v in sorted(kinds.items())))

    open(args.stop, 'w').close()
    state = wait_phase(args.info, 2, 60)
    if not state:
        report(False, 'the DUT helper reported its QPs after the fuzzing')
        return 1
    # A probe on each QP the DUT has in RTS: a SEND at its expected PSN.
    for name in NAMES:
        if state['state'].get(name) != 'RTS':
            continue
        data = PROBE_MAGIC + name.encode() + b'\0' * 16
        qpn = state['qpns'][name]
        if name == 'ud':
            body = bth(0x64, qpn, 0, ack=0) + deth(QKEY, 0x77) + data
        else:
            op = 0x04 if name == 'rc' else 0x24
            body = bth(op, qpn, state['rq_psns'][name], ack=1) + data
        for _ in range(3 if name == 'ud' else 1):
            wire.send(wire.frame(body))
            time.sleep(0.2)
    final = wait_phase(args.info, 3, 60)
    if not final:
        report(False, 'the DUT helper reported how its QPs ended')
        return 1
    for name in NAMES:
        st = final['state'].get(name)
        got = final['probes'].get(name, False)
        left = final['posted'].get(name)
        if st == 'RTS':
            report(got, f'{name}: the QP is in RTS and its probe arrived byte-exact',
                   f'completions {final["wcs"].get(name)}')
        else:
            report(st == 'ERR' and left == 0,
                   f'{name}: the QP is in ERR with every receive completed (flushed)',
                   f'state {st}, receives left posted {left}, completions {final["wcs"].get(name)}')
    print(f'# QPs the DUT made anew after the fuzzing sent them to ERR: {final.get("remade")}')
    after = counters(args.dev)
    moved = after.get('rcvd_pkts', 0) - before.get('rcvd_pkts', 0)
    report(0 <= moved <= sent + 8, f'rcvd_pkts moved by {moved}, no more than was sent ({sent} + probes)')
    return 1 if fails else 0


def wait_phase(path, phase, secs):
    """The helper's JSON once it reached PHASE, waiting up to SECS (0: a
    look, no wait); None if it did not."""
    deadline = time.time() + secs
    while True:
        try:
            with open(path) as f:
                info = json.load(f)
            if info.get('phase', 0) >= phase:
                return info
        except (OSError, ValueError):
            pass
        if time.time() >= deadline:
            return None
        time.sleep(0.2)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest='cmd', required=True)
    d = sub.add_parser('dut')
    d.add_argument('--dev', required=True)
    d.add_argument('--gid', type=int, required=True)
    d.add_argument('--peer-ip', required=True)
    d.add_argument('--out', required=True)
    d.add_argument('--stop', required=True)
    d.add_argument('--timeout', type=float, default=3600)
    a = sub.add_parser('attack')
    for opt in ('--info', '--stop', '--iface', '--src-ip', '--dst-ip', '--dst-mac', '--dev'):
        a.add_argument(opt, required=True)
    a.add_argument('--seed', type=int, required=True)
    a.add_argument('--packets', type=int, default=10000)
    a.add_argument('--keep')
    args = p.parse_args()
    return dut(args) if args.cmd == 'dut' else attack(args)


if __name__ == '__main__':
    sys.exit(main())
