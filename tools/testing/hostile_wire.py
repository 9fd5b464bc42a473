#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile RoCEv2 packets against a device under test (vm/13-hostile-wire.sh).

  hostile_wire.py icrc-check PCAP
      Recomputes the ICRC of every RoCEv2 packet (IPv4, UDP port 4791) in a
      tcpdump capture and compares it with the packet's. Prints one summary
      line per opcode and `icrc-check: N packets, M bad`; exits 1 if any
      ICRC differs or the capture holds no RoCEv2 packet.

  hostile_wire.py dut --dev DEV --gid N --peer-ip A --out FILE --stop FILE
      (pyverbs; run in the DUT's namespace) Creates an RC QP connected to a
      peer that does not exist (the attacker, A, QPN 0xabcd) and a 4 KiB MR
      allowing remote reads, writes their numbers as JSON to FILE, waits for
      the stop file, then adds the QP's final state to FILE.

  hostile_wire.py attack --info FILE --iface IF --src-ip A --dst-ip B
                         --dst-mac M --dev DEV
      (scapy; run in the attacker's namespace) Sends malformed and hostile
      packets to the DUT's QP, sniffs what comes back, and prints `ok - ...`
      / `not ok - ...` lines:
        - truncated BTHs, headers cut short, UDP lengths past the end of the
          packet and short of it, a bad ICRC, bad P_Keys, unknown and
          reserved QPNs, a bad transport version, unknown opcodes, a wrong
          source address: all dropped, no answer, no `rcvd_pkts`;
        - a READ request ahead of the expected PSN: one NAK (PSN sequence
          error) carrying the expected PSN;
        - valid READ requests (one packet and three packets of response):
          the MR's bytes come back with good ICRCs;
        - a READ request past the end of the MR: a NAK (remote access
          error), and the QP goes to the error state.

The ICRC is computed as RoCEv2 defines it (and rdma_rxe does): CRC-32 over
8 bytes of 0xff (the masked LRH), the IPv4 header with TOS, TTL and checksum
set to all ones, the UDP header with its checksum set to all ones, the BTH
with its reserved byte (resv8a, with FECN/BECN) set to all ones, and the
rest of the packet up to the ICRC; it travels least significant byte first.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import threading
import time
import zlib

ROCE_PORT = 4791
FAKE_QPN = 0xabcd
DUT_RQ_PSN = 0x5000
DUT_SQ_PSN = 0x100
MR_LEN = 4096

OPCODES = {
    0x00: 'RC SEND_FIRST', 0x01: 'RC SEND_MIDDLE', 0x02: 'RC SEND_LAST',
    0x03: 'RC SEND_LAST_IMM', 0x04: 'RC SEND_ONLY', 0x05: 'RC SEND_ONLY_IMM',
    0x06: 'RC WRITE_FIRST', 0x07: 'RC WRITE_MIDDLE', 0x08: 'RC WRITE_LAST',
    0x09: 'RC WRITE_LAST_IMM', 0x0a: 'RC WRITE_ONLY', 0x0b: 'RC WRITE_ONLY_IMM',
    0x0c: 'RC READ_REQUEST', 0x0d: 'RC READ_RESPONSE_FIRST',
    0x0e: 'RC READ_RESPONSE_MIDDLE', 0x0f: 'RC READ_RESPONSE_LAST',
    0x10: 'RC READ_RESPONSE_ONLY', 0x11: 'RC ACKNOWLEDGE',
    0x12: 'RC ATOMIC_ACKNOWLEDGE', 0x13: 'RC COMPARE_SWAP', 0x14: 'RC FETCH_ADD',
    0x16: 'RC SEND_LAST_INV', 0x17: 'RC SEND_ONLY_INV',
    0x20: 'UC SEND_FIRST', 0x21: 'UC SEND_MIDDLE', 0x22: 'UC SEND_LAST',
    0x23: 'UC SEND_LAST_IMM', 0x24: 'UC SEND_ONLY', 0x25: 'UC SEND_ONLY_IMM',
    0x26: 'UC WRITE_FIRST', 0x27: 'UC WRITE_MIDDLE', 0x28: 'UC WRITE_LAST',
    0x29: 'UC WRITE_LAST_IMM', 0x2a: 'UC WRITE_ONLY', 0x2b: 'UC WRITE_ONLY_IMM',
    0x64: 'UD SEND_ONLY', 0x65: 'UD SEND_ONLY_IMM',
}
OP_READ_REQ = 0x0c
OP_READ_FIRST, OP_READ_MIDDLE, OP_READ_LAST, OP_READ_ONLY = 0x0d, 0x0e, 0x0f, 0x10
OP_ACK = 0x11
NAK_PSN_SEQ = 0x60
NAK_REM_ACCESS = 0x62


def icrc(ip_packet):
    """The ICRC (4 bytes, as on the wire) of IP_PACKET: IPv4 header, UDP
    header, BTH and the rest, up to and not including the last 4 bytes of
    the UDP payload (where the ICRC goes). The UDP length field says where
    the payload ends."""
    ihl = (ip_packet[0] & 0x0f) * 4
    ip = bytearray(ip_packet[:20])
    ip[1] = 0xff                    # TOS
    ip[8] = 0xff                    # TTL
    ip[10:12] = b'\xff\xff'         # header checksum
    udp = bytearray(ip_packet[ihl:ihl + 8])
    udp_len = struct.unpack('>H', udp[4:6])[0]
    udp[6:8] = b'\xff\xff'          # UDP checksum
    body = bytearray(ip_packet[ihl + 8:ihl + udp_len - 4])
    if len(body) > 4:
        body[4] = 0xff              # BTH resv8a (and FECN/BECN)
    crc = zlib.crc32(b'\xff' * 8 + bytes(ip) + bytes(udp) + bytes(body))
    return struct.pack('<I', crc & 0xffffffff)


# ---- icrc-check ----------------------------------------------------------

def pcap_frames(path):
    """(linktype, frame bytes) of each record of a classic pcap file."""
    with open(path, 'rb') as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = data[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
        end = '<'
    elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
        end = '>'
    else:
        raise SystemExit(f'{path}: not a pcap file')
    linktype = struct.unpack(end + 'I', data[20:24])[0]
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(end + 'I', data[off + 8:off + 12])[0]
        yield linktype, data[off + 16:off + 16 + incl]
        off += 16 + incl


def roce_ip_packets(frame, linktype):
    """The IPv4 packet inside FRAME if it is RoCEv2 over IPv4, else None."""
    if linktype == 1:               # Ethernet
        if len(frame) < 14 or frame[12:14] != b'\x08\x00':
            return None
        ip = frame[14:]
    elif linktype == 113:           # Linux cooked capture
        if len(frame) < 16 or frame[14:16] != b'\x08\x00':
            return None
        ip = frame[16:]
    else:
        return None
    if len(ip) < 28 or ip[0] >> 4 != 4 or ip[9] != 17:
        return None
    ihl = (ip[0] & 0x0f) * 4
    dport = struct.unpack('>H', ip[ihl + 2:ihl + 4])[0]
    if dport != ROCE_PORT:
        return None
    return ip


def icrc_check(args):
    counts = {}
    bad = 0
    total = 0
    for linktype, frame in pcap_frames(args.pcap):
        ip = roce_ip_packets(frame, linktype)
        if ip is None:
            continue
        ihl = (ip[0] & 0x0f) * 4
        udp_len = struct.unpack('>H', ip[ihl + 4:ihl + 6])[0]
        if udp_len < 8 + 12 + 4 or ihl + udp_len > len(ip):
            print(f'# short RoCEv2 packet ({udp_len} bytes of UDP)')
            bad += 1
            continue
        total += 1
        src = '.'.join(str(b) for b in ip[12:16])
        op = ip[ihl + 8]
        key = (src, OPCODES.get(op, f'opcode 0x{op:02x}'))
        good, n = counts.get(key, (0, 0))
        have = ip[ihl + udp_len - 4:ihl + udp_len]
        want = icrc(ip)
        if have == want:
            good += 1
        else:
            bad += 1
            if bad <= 5:
                print(f'# bad ICRC from {src}, {key[1]}: packet has {have.hex()}, '
                      f'computed {want.hex()}')
        counts[key] = (good, n + 1)
    for (src, name), (good, n) in sorted(counts.items()):
        print(f'# {src:15} {name:28} {n:5} packets, {good:5} ICRCs match')
    print(f'icrc-check: {total} packets, {bad} bad')
    return 0 if total and not bad else 1


# ---- dut (pyverbs) -------------------------------------------------------

def dut(args):
    from pyverbs.device import Context
    from pyverbs.pd import PD
    from pyverbs.cq import CQ
    from pyverbs.mr import MR
    from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
    from pyverbs.addr import AHAttr, GlobalRoute, GID
    import pyverbs.enums as e

    ctx = Context(name=args.dev)
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                           cap=QPCap(max_send_wr=4, max_recv_wr=4)))
    mr = MR(pd, MR_LEN, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ |
            e.IBV_ACCESS_REMOTE_WRITE)
    mr.write(bytes((i * 7 + 3) & 0xff for i in range(MR_LEN)), MR_LEN)
    a, b, c, d = (int(x) for x in args.peer_ip.split('.'))
    peer_gid = f'0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}'
    attr = QPAttr(port_num=1)
    attr.qp_access_flags = e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_WRITE
    attr.path_mtu = e.IBV_MTU_1024
    attr.dest_qp_num = FAKE_QPN
    attr.rq_psn = DUT_RQ_PSN
    attr.sq_psn = DUT_SQ_PSN
    attr.max_dest_rd_atomic = attr.max_rd_atomic = 4
    attr.min_rnr_timer, attr.timeout, attr.retry_cnt, attr.rnr_retry = 12, 14, 7, 7
    attr.ah_attr = AHAttr(gr=GlobalRoute(dgid=GID(peer_gid), sgid_index=args.gid),
                          is_global=1, port_num=1)
    qp.to_rts(attr)
    info = {'qpn': qp.qp_num, 'rkey': mr.rkey, 'va': mr.buf, 'len': MR_LEN,
            'rq_psn': DUT_RQ_PSN, 'peer_qpn': FAKE_QPN}
    with open(args.out + '.tmp', 'w') as f:
        json.dump(info, f)
    os.rename(args.out + '.tmp', args.out)
    print(f'dut: QP {qp.qp_num} in RTS, MR va 0x{mr.buf:x} rkey 0x{mr.rkey:x}', flush=True)
    deadline = time.time() + args.timeout
    while not os.path.exists(args.stop) and time.time() < deadline:
        time.sleep(0.2)
    qattr, _ = qp.query(e.IBV_QP_STATE)
    names = {e.IBV_QPS_RESET: 'RESET', e.IBV_QPS_INIT: 'INIT', e.IBV_QPS_RTR: 'RTR',
             e.IBV_QPS_RTS: 'RTS', e.IBV_QPS_SQD: 'SQD', e.IBV_QPS_SQE: 'SQE',
             e.IBV_QPS_ERR: 'ERR'}
    info['state'] = names.get(qattr.qp_state, str(qattr.qp_state))
    with open(args.out + '.tmp', 'w') as f:
        json.dump(info, f)
    os.rename(args.out + '.tmp', args.out)
    print(f'dut: QP state at the end: {info["state"]}', flush=True)
    qp.close()
    mr.close()
    cq.close()
    pd.close()
    ctx.close()
    return 0


# ---- attack (scapy) ------------------------------------------------------

def bth(opcode, qpn, psn, pkey=0xffff, tver=0, pad=0, ack=1, resv8a=0):
    return struct.pack('>BBHII', opcode, (pad << 4) | tver, pkey,
                       (resv8a << 24) | (qpn & 0xffffff), (ack << 31) | (psn & 0xffffff))


def reth(va, rkey, length):
    return struct.pack('>QII', va, rkey, length)


def counters(dev):
    """rdma statistic's counters of DEV port 1 as a dict."""
    out = subprocess.run(['rdma', 'statistic', 'show', 'link', f'{dev}/1'],
                         capture_output=True, text=True).stdout.split()
    vals = {}
    for k, v in zip(out, out[1:]):
        if v.isdigit():
            vals[k] = int(v)
    return vals


class Attacker:
    def __init__(self, args, info):
        from scapy.layers.l2 import Ether
        from scapy.layers.inet import IP, UDP
        from scapy.packet import Raw
        from scapy.sendrecv import sendp, AsyncSniffer
        from scapy.arch import get_if_hwaddr
        self.Ether, self.IP, self.UDP, self.Raw, self.sendp = Ether, IP, UDP, Raw, sendp
        self.args = args
        self.info = info
        self.src_mac = get_if_hwaddr(args.iface)
        self.got = []
        self.fails = 0
        started = threading.Event()
        self.sniffer = AsyncSniffer(iface=args.iface, store=False, prn=self.got.append,
                                    lfilter=self.from_dut, started_callback=started.set)
        self.sniffer.start()
        # The sniffer's socket must be open before anything is sent.
        if not started.wait(60):
            raise SystemExit('the sniffer did not start')

    def from_dut(self, p):
        IP, UDP = self.IP, self.UDP
        return IP in p and UDP in p and p[IP].src == self.args.dst_ip and \
            p[UDP].dport == ROCE_PORT

    def frame(self, body, bad_icrc=False, src_ip=None, udp_len=None, with_icrc=True,
              dst_ip=None):
        """An Ethernet frame to the DUT carrying BODY (BTH onwards) and an
        ICRC computed over the final headers (flipped if BAD_ICRC)."""
        def build(payload):
            return self.Ether(src=self.src_mac, dst=self.args.dst_mac) / \
                self.IP(src=src_ip or self.args.src_ip, dst=dst_ip or self.args.dst_ip, id=7,
                        flags='DF', ttl=64, tos=0) / \
                self.UDP(sport=49999, dport=ROCE_PORT, chksum=0, len=udp_len) / \
                self.Raw(payload)
        if not with_icrc:
            return build(body)
        ip = bytes(build(body + b'\0\0\0\0')[self.IP])
        if udp_len is not None:
            return build(body + b'\0\0\0\0')
        c = icrc(ip)
        if bad_icrc:
            c = bytes(x ^ 0x5a for x in c)
        return build(body + c)

    def send(self, frames):
        self.sendp(frames, iface=self.args.iface, verbose=False)

    def report(self, good, desc, detail=''):
        if good:
            print(f'ok - {desc}')
        else:
            self.fails += 1
            print(f'not ok - {desc}')
            if detail:
                print(f'#   {detail}')
        sys.stdout.flush()

    def answers(self, wait, want=0, until=None):
        """The DUT's packets after up to WAIT seconds (sooner once WANT
        packets have arrived, or one that UNTIL accepts), parsed; then
        forgets them."""
        deadline = time.time() + wait
        while time.time() < deadline:
            if until is not None:
                if any(until(self.parse(p)) for p in list(self.got)):
                    break
            elif want and len(self.got) >= want:
                break
            time.sleep(0.1)
        if want or until is not None:
            time.sleep(0.3)        # anything extra
        got = [self.parse(p) for p in list(self.got)]
        del self.got[:len(got)]
        return got

    def parse(self, p):
        """One captured packet of the DUT's: its BTH fields and the rest."""
        ip = bytes(p[self.IP])
        ihl = (ip[0] & 0x0f) * 4
        udp_len = struct.unpack('>H', ip[ihl + 4:ihl + 6])[0]
        body = ip[ihl + 8:ihl + udp_len]
        if len(body) < 16:
            return {'opcode': None, 'raw': body}
        op, _, _, qpn, psn = struct.unpack('>BBHII', body[:12])
        return {'opcode': op, 'qpn': qpn & 0xffffff, 'psn': psn & 0xffffff,
                'rest': body[12:-4], 'icrc_ok': body[-4:] == icrc(ip), 'raw': body}


def describe(pkts):
    return ', '.join(f'{OPCODES.get(p["opcode"], p["opcode"])} psn 0x{p.get("psn", 0):x}'
                     for p in pkts) or 'nothing'


def attack(args):
    with open(args.info) as f:
        info = json.load(f)
    qpn, va, rkey, psn = info['qpn'], info['va'], info['rkey'], info['rq_psn']
    mr = bytes((i * 7 + 3) & 0xff for i in range(info['len']))
    a = Attacker(args, info)
    read = bth(OP_READ_REQ, qpn, psn) + reth(va, rkey, 64)

    # 1. Garbage: nothing may answer, nothing may count as received.
    before = counters(args.dev)
    cases = {
        'BTH cut short (0 to 11 bytes of UDP payload)':
            [a.frame(read[:n], with_icrc=False) for n in range(12)],
        'BTH only, no ICRC': [a.frame(read[:12], with_icrc=False)],
        'READ request with its RETH cut short': [a.frame(read[:20])],
        'UDP length past the end of the packet': [a.frame(read, udp_len=8 + len(read) + 4 + 64)],
        'UDP length short of the packet (cuts the RETH)': [a.frame(read, udp_len=8 + 12 + 8)],
        'bad ICRC': [a.frame(read, bad_icrc=True)],
        'bad P_Key (0x1234, 0x8000, 0x0000)':
            [a.frame(bth(OP_READ_REQ, qpn, psn, pkey=k) + reth(va, rkey, 64))
             for k in (0x1234, 0x8000, 0x0000)],
        'unknown and reserved destination QPNs (QPN+7, 0, 1)':
            [a.frame(bth(OP_READ_REQ, q, psn) + reth(va, rkey, 64))
             for q in (qpn + 7, 0, 1)],
        'bad transport version (TVer 1)': [a.frame(bth(OP_READ_REQ, qpn, psn, tver=1) + reth(va, rkey, 64))],
        'unknown opcodes (0x15, 0x1f, 0x40, 0x81, 0xff)':
            [a.frame(bth(op, qpn, psn) + reth(va, rkey, 64)) for op in (0x15, 0x1f, 0x40, 0x81, 0xff)],
        'UD opcode to an RC QP': [a.frame(bth(0x64, qpn, psn) + struct.pack('>II', 0x11111111, 5) + b'x' * 8)],
        'READ request from an address the QP is not connected to':
            [a.frame(read, src_ip=args.stray_ip)],
        'pad count larger than the payload': [a.frame(bth(0x04, qpn, psn, pad=3))],
    }
    # All of them at once, then one wait (each alone cost 2 s of waiting
    # on the debug kernel): none may be answered. If anything is, each
    # case again alone, to say which.
    for frames in cases.values():
        a.send(frames)
    if not a.answers(2):
        for desc in cases:
            a.report(True, f'dropped without an answer: {desc}')
    else:
        for desc, frames in cases.items():
            a.send(frames)
            got = a.answers(2)
            a.report(not got, f'dropped without an answer: {desc}', f'the DUT answered: {describe(got)}')
    after = counters(args.dev)
    moved = after.get('rcvd_pkts', 0) - before.get('rcvd_pkts', 0)
    a.report('rcvd_pkts' in after and moved == 0,
             'the dropped packets did not count in rcvd_pkts (as rdma_rxe)',
             f'rcvd_pkts moved by {moved}')
    # The multicast QPN passes the header checks (rdma_rxe counts it) and
    # finds no group for a unicast address.
    a.send([a.frame(bth(OP_READ_REQ, 0xffffff, psn) + reth(va, rkey, 64))])
    got = a.answers(2)
    a.report(not got, 'dropped without an answer: the multicast QPN to a unicast address',
             f'the DUT answered: {describe(got)}')

    # 2. A READ ahead of the expected PSN: one NAK, PSN sequence error.
    before = counters(args.dev)
    a.send([a.frame(bth(OP_READ_REQ, qpn, psn + 1000) + reth(va, rkey, 64))])
    got = a.answers(10, want=1)
    ok = len(got) == 1 and got[0]['opcode'] == OP_ACK and got[0]['qpn'] == FAKE_QPN and \
        got[0]['psn'] == psn and got[0]['rest'][:1] == bytes([NAK_PSN_SEQ]) and got[0]['icrc_ok']
    a.report(ok, 'READ ahead of the expected PSN: NAK (PSN sequence error) for the expected PSN',
             f'got {describe(got)} ' + ' '.join(p['raw'].hex() for p in got))

    # 3. Valid READs: one response packet, then three.
    a.send([a.frame(bth(OP_READ_REQ, qpn, psn) + reth(va + 100, rkey, 64))])
    got = a.answers(10, want=1)
    ok = len(got) == 1 and got[0]['opcode'] == OP_READ_ONLY and got[0]['psn'] == psn and \
        got[0]['rest'][0] >> 5 == 0 and got[0]['rest'][4:] == mr[100:164] and got[0]['icrc_ok']
    a.report(ok, 'READ of 64 bytes: READ_RESPONSE_ONLY, ACK syndrome, the MR\'s bytes, good ICRC',
             f'got {describe(got)} ' + ' '.join(p['raw'].hex() for p in got))
    psn += 1
    a.send([a.frame(bth(OP_READ_REQ, qpn, psn) + reth(va + 1000, rkey, 3000))])
    got = a.answers(10, want=3)
    ops = [p['opcode'] for p in got]
    data = b''
    if ops == [OP_READ_FIRST, OP_READ_MIDDLE, OP_READ_LAST]:
        data = got[0]['rest'][4:] + got[1]['rest'] + got[2]['rest'][4:]
    ok = ops == [OP_READ_FIRST, OP_READ_MIDDLE, OP_READ_LAST] and \
        [p['psn'] for p in got] == [psn, psn + 1, psn + 2] and data == mr[1000:4000] and \
        all(p['icrc_ok'] for p in got)
    a.report(ok, 'READ of 3000 bytes: FIRST/MIDDLE/LAST responses, consecutive PSNs, the MR\'s bytes, good ICRCs',
             f'got {describe(got)}')
    psn += 3

    # 4. A READ past the end of the MR: NAK, remote access error.
    a.send([a.frame(bth(OP_READ_REQ, qpn, psn) + reth(va + info['len'] - 16, rkey, 64))])
    got = a.answers(10, want=1)
    ok = len(got) == 1 and got[0]['opcode'] == OP_ACK and got[0]['psn'] == psn and \
        got[0]['rest'][:1] == bytes([NAK_REM_ACCESS]) and got[0]['icrc_ok']
    a.report(ok, 'READ past the end of the MR: NAK (remote access error), good ICRC',
             f'got {describe(got)} ' + ' '.join(p['raw'].hex() for p in got))
    after = counters(args.dev)
    rcvd = after.get('rcvd_pkts', 0) - before.get('rcvd_pkts', 0)
    sent = after.get('sent_pkts', 0) - before.get('sent_pkts', 0)
    a.report(rcvd >= 4, f'rcvd_pkts counted the 4 valid requests (+{rcvd})')
    a.report(sent >= 6, f'sent_pkts counted the 6 answers (+{sent})')
    print('# counters: ' + ' '.join(f'{k}={v}' for k, v in after.items()))
    a.sniffer.stop()
    return 1 if a.fails else 0


# ---- security cases (sec-dut, sec-attack) --------------------------------

OP_UC_SEND_FIRST, OP_UC_SEND_LAST, OP_UC_SEND_ONLY = 0x20, 0x22, 0x24
OP_UC_WRITE_FIRST = 0x26
OP_UD_SEND_ONLY = 0x64
OP_SEND_ONLY_INV = 0x17
OP_FETCH_ADD = 0x14
NAK_INVALID_REQ = 0x61
GSI_QKEY = 0x80010000
SEC_QKEY = 0x11111111
SEC_PSN = 0x7000
# The peer QPNs the DUT's connected QPs are "connected" to, one each, so
# that every answer says which QP sent it.
SEC_QPS = {'rd0': 0xb001, 'at0': 0xb002, 'big': 0xb003, 'dup': 0xb004,
           'addr': 0xb005, 'inv': 0xb006, 'bnd': 0xb007, 'uc': 0xb008}
UD_RECV = 40 + 64       # UD receives: the GRH and 64 bytes
UC_RECV = 64


def pattern(n, seed):
    return bytes((i * 13 + seed) & 0xff for i in range(n))


def sec_dut(args):
    """The DUT side of the security cases: QPs of every kind, connected to
    QPNs of SEC_QPS at the attacker's address, and a UD QP; see sec_attack.
    Writes their numbers and keys to --out, waits for --stop, then adds
    each QP's state and the receive completions and bytes to --out."""
    from pyverbs.device import Context
    from pyverbs.pd import PD
    from pyverbs.cq import CQ
    from pyverbs.mr import MR, MW, MWBindInfo
    from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
    from pyverbs.wr import RecvWR, SendWR, SGE
    from pyverbs.addr import AHAttr, GlobalRoute, GID
    import pyverbs.enums as e

    ctx = Context(name=args.dev)
    pd = PD(ctx)
    mr = MR(pd, MR_LEN, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ |
            e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_ATOMIC | e.IBV_ACCESS_MW_BIND)
    mr.write(pattern(MR_LEN, 1), MR_LEN)
    mr2 = MR(pd, MR_LEN, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ)
    mr2.write(pattern(MR_LEN, 2), MR_LEN)
    rmr = MR(pd, MR_LEN, e.IBV_ACCESS_LOCAL_WRITE)
    rmr.write(b'\0' * MR_LEN, MR_LEN)
    a, b, c, d = (int(x) for x in args.peer_ip.split('.'))
    peer_gid = f'0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}'
    qps, cqs = {}, {}
    remote = e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_ATOMIC

    def connected(name, qp_type, rd_atomic=4):
        cq = CQ(ctx, 16)
        qp = QP(pd, QPInitAttr(qp_type=qp_type, scq=cq, rcq=cq,
                               cap=QPCap(max_send_wr=4, max_recv_wr=4)))
        attr = QPAttr(port_num=1)
        attr.qp_access_flags = remote if qp_type == e.IBV_QPT_RC else e.IBV_ACCESS_REMOTE_WRITE
        attr.path_mtu = e.IBV_MTU_1024
        attr.dest_qp_num = SEC_QPS[name]
        attr.rq_psn = SEC_PSN
        attr.sq_psn = DUT_SQ_PSN
        attr.max_dest_rd_atomic = rd_atomic
        attr.max_rd_atomic = 4
        attr.min_rnr_timer, attr.timeout, attr.retry_cnt, attr.rnr_retry = 12, 14, 7, 7
        attr.ah_attr = AHAttr(gr=GlobalRoute(dgid=GID(peer_gid), sgid_index=args.gid),
                              is_global=1, port_num=1)
        bring_up(qp, qp_type, attr)
        qps[name], cqs[name] = qp, cq
        return qp

    def bring_up(qp, qp_type, attr):
        # The masks each transition takes for each type (IBA 11.2.4.2).
        base = e.IBV_QP_STATE
        init = base | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT
        init |= e.IBV_QP_QKEY if qp_type == e.IBV_QPT_UD else e.IBV_QP_ACCESS_FLAGS
        rtr = base
        rts = base | e.IBV_QP_SQ_PSN
        if qp_type != e.IBV_QPT_UD:
            rtr |= e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN
        if qp_type == e.IBV_QPT_RC:
            rtr |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
            rts |= e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY | \
                e.IBV_QP_MAX_QP_RD_ATOMIC
        for state, mask in ((e.IBV_QPS_INIT, init), (e.IBV_QPS_RTR, rtr),
                            (e.IBV_QPS_RTS, rts)):
            attr.qp_state = state
            qp.modify(attr, mask)

    def post_recv(qp, wr_id, off, length):
        qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1, sg=[SGE(rmr.buf + off, length, rmr.lkey)]))

    connected('rd0', e.IBV_QPT_RC, rd_atomic=0)
    connected('at0', e.IBV_QPT_RC, rd_atomic=0)
    for name in ('big', 'dup', 'addr', 'inv', 'bnd'):
        connected(name, e.IBV_QPT_RC)
    post_recv(qps['inv'], 60, 2048, 64)
    uc = connected('uc', e.IBV_QPT_UC)
    post_recv(uc, 70, 1024, UC_RECV)
    post_recv(uc, 71, 1536, UC_RECV)
    ud_cq = CQ(ctx, 16)
    ud = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=ud_cq, rcq=ud_cq,
                           cap=QPCap(max_send_wr=4, max_recv_wr=4)))
    ud_attr = QPAttr(port_num=1)
    ud_attr.qkey = SEC_QKEY
    ud_attr.sq_psn = DUT_SQ_PSN
    bring_up(ud, e.IBV_QPT_UD, ud_attr)
    qps['ud'], cqs['ud'] = ud, ud_cq
    post_recv(ud, 80, 0, UD_RECV)
    post_recv(ud, 81, 512, UD_RECV)

    # A type 2B window over the MR, bound by (and so only usable through)
    # the QP "bnd".
    mw = MW(pd, e.IBV_MW_TYPE_2)
    wr = SendWR(opcode=e.IBV_WR_BIND_MW)
    wr.set_bind_wr(mw, MWBindInfo(mr, mr.buf, MR_LEN, e.IBV_ACCESS_REMOTE_READ))
    mw_rkey = wr.rkey
    qps['bnd'].post_send(wr)
    bound = None
    for _ in range(100):
        n, wcs = cqs['bnd'].poll()
        if n:
            bound = wcs[0].status
            break
        time.sleep(0.05)

    info = {'qpns': {k: q.qp_num for k, q in qps.items()}, 'peer_qpns': SEC_QPS,
            'rkey': mr.rkey, 'va': mr.buf, 'rkey2': mr2.rkey, 'va2': mr2.buf,
            'len': MR_LEN, 'rq_psn': SEC_PSN, 'mw_rkey': mw_rkey, 'mw_bound': bound}
    with open(args.out + '.tmp', 'w') as f:
        json.dump(info, f)
    os.rename(args.out + '.tmp', args.out)
    print(f'sec-dut: QPs {info["qpns"]}, window 0x{mw_rkey:x} bound: status {bound}', flush=True)
    deadline = time.time() + args.timeout
    while not os.path.exists(args.stop) and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(1)
    names = {e.IBV_QPS_RESET: 'RESET', e.IBV_QPS_INIT: 'INIT', e.IBV_QPS_RTR: 'RTR',
             e.IBV_QPS_RTS: 'RTS', e.IBV_QPS_SQD: 'SQD', e.IBV_QPS_SQE: 'SQE',
             e.IBV_QPS_ERR: 'ERR'}
    info['state'] = {}
    for k, q in qps.items():
        qattr, _ = q.query(e.IBV_QP_STATE)
        info['state'][k] = names.get(qattr.qp_state, str(qattr.qp_state))
    info['wcs'] = {}
    for k in ('inv', 'uc', 'ud'):
        got = []
        while True:
            n, wcs = cqs[k].poll()
            if not n:
                break
            got.append({'wr_id': wcs[0].wr_id, 'status': wcs[0].status,
                        'byte_len': wcs[0].byte_len})
        info['wcs'][k] = got
    info['recv_bytes'] = rmr.read(MR_LEN, 0).hex()
    with open(args.out + '.tmp', 'w') as f:
        json.dump(info, f)
    os.rename(args.out + '.tmp', args.out)
    print(f'sec-dut: states {info["state"]}', flush=True)
    print(f'sec-dut: receive completions {info["wcs"]}', flush=True)
    for q in qps.values():
        q.close()
    mw.close()
    for m in (mr, mr2, rmr):
        m.close()
    for cq in list(cqs.values()):
        cq.close()
    pd.close()
    ctx.close()
    return 0


def deth(qkey, src_qpn):
    return struct.pack('>II', qkey, src_qpn & 0xffffff)


def sec_attack(args):
    """The security cases, one per issue item; prints `ok - ...` and
    `not ok - ...` lines and one `outcome: CASE: WHAT` line per case (what
    the DUT did, to compare drivers side by side). With --dut-type rxe, a
    check that rdma_rxe is known to fail is a comment, not a failure."""
    with open(args.info) as f:
        info = json.load(f)
    qpns, peers = info['qpns'], info['peer_qpns']
    va, rkey, psn = info['va'], info['rkey'], info['rq_psn']
    mr = pattern(info['len'], 1)
    a = Attacker(args, info)
    rxe = args.dut_type == 'rxe'

    def check(good, case, desc, detail='', rxe_differs=False):
        if rxe and rxe_differs and not good:
            print(f'# rdma_rxe differs from rrxe (known): {case}: {desc}')
            if detail:
                print(f'#   {detail}')
            return
        a.report(good, f'{case}: {desc}', detail)

    def outcome(case, what):
        print(f'outcome: {case}: {what}', flush=True)

    def read(name, rva, rk, length, p=psn, dst_ip=None):
        return a.frame(bth(OP_READ_REQ, qpns[name], p) + reth(rva, rk, length), dst_ip=dst_ip)

    def nak(got, name, code, p=psn):
        return len(got) == 1 and got[0]['opcode'] == OP_ACK and got[0]['qpn'] == peers[name] \
            and got[0]['psn'] == p and got[0]['rest'][:1] == bytes([code]) and got[0]['icrc_ok']

    def read_only(got, name, data, p=psn):
        return len(got) == 1 and got[0]['opcode'] == OP_READ_ONLY and \
            got[0]['qpn'] == peers[name] and got[0]['psn'] == p and \
            got[0]['rest'][0] >> 5 == 0 and got[0]['rest'][4:] == data and got[0]['icrc_ok']

    def fenced(neg, fence, fence_ok):
        """NEG, then FENCE to the same QP, which must be answered: the DUT
        takes a QP's packets in the order they come, so an answer to NEG
        comes before the fence's, and the fence's ends the wait (instead
        of seconds of silence). Returns (every other answer, the fence's)."""
        a.send(neg)
        a.send([fence])
        # A wrong answer to NEG may look like the fence's (a duplicate
        # replayed, a request taken at the wrong address): what comes in
        # the next 0.7 s counts too, and only the last match is the fence's.
        got = a.answers(10, until=lambda p: fence_ok([p])) + a.answers(0.7)
        for k in range(len(got) - 1, -1, -1):
            if fence_ok([got[k]]):
                return got[:k] + got[k + 1:], [got[k]]
        return got, []

    def what(got):
        out = []
        for p in got:
            name = OPCODES.get(p['opcode'], p['opcode'])
            if p['opcode'] == OP_ACK:
                name += f' syndrome 0x{p["rest"][0]:02x}'
            out.append(f'{name} psn 0x{p.get("psn", 0):x}')
        return ', '.join(out) or 'no answer'

    # Item 3: a UD datagram too long for the GSI QP's receives (the MAD
    # layer's 40 + 256 bytes): dropped; the shell script then checks that
    # QP1 is in RTS and that rdma_cm still connects.
    a.send([a.frame(bth(OP_UD_SEND_ONLY, 1, 0x10, ack=0) + deth(GSI_QKEY, 1) + b'\x01' * 512)])
    got = a.answers(2)
    check(not got, 'gsi_oversize', 'a 512-byte UD SEND_ONLY to QP1 with the GSI Q_Key: no answer',
          what(got))
    # ... to a user UD QP whose receives take 64 bytes: dropped, then a
    # datagram that fits is received (checked at the end).
    ud = qpns['ud']
    a.send([a.frame(bth(OP_UD_SEND_ONLY, ud, 0x20, ack=0) + deth(SEC_QKEY, 0x77) + b'\x02' * 512)])
    time.sleep(0.5)
    a.send([a.frame(bth(OP_UD_SEND_ONLY, ud, 0x21, ack=0) + deth(SEC_QKEY, 0x77) + pattern(32, 3))])
    # ... to a UC QP whose receives take 64 bytes: a SEND_ONLY of 512
    # bytes, a SEND_FIRST/SEND_LAST of 1124, then a SEND_ONLY that fits.
    ucq = qpns['uc']
    a.send([a.frame(bth(OP_UC_SEND_ONLY, ucq, psn, ack=0) + b'\x03' * 512)])
    time.sleep(0.3)
    a.send([a.frame(bth(OP_UC_SEND_FIRST, ucq, psn + 1, ack=0) + b'\x04' * 1024),
            a.frame(bth(OP_UC_SEND_LAST, ucq, psn + 2, ack=0) + b'\x04' * 100)])
    time.sleep(0.3)
    a.send([a.frame(bth(OP_UC_SEND_ONLY, ucq, psn + 3, ack=0) + pattern(32, 4))])
    # ... then a WRITE_FIRST (of bytes the MR already holds) whose
    # message never ends, and a SEND_ONLY in sequence: a first packet
    # while a message is in progress drops that message and starts a new
    # one (IBA class D1), so the SEND is received.
    time.sleep(0.3)
    a.send([a.frame(bth(OP_UC_WRITE_FIRST, ucq, psn + 4, ack=0) + reth(va + 2048, rkey, 2048) +
                    mr[2048:3072]),
            a.frame(bth(OP_UC_SEND_ONLY, ucq, psn + 5, ack=0) + pattern(32, 5))])
    got = a.answers(2)
    check(not got, 'uc_ud_oversize', 'the UD and UC datagrams got no answer', what(got))

    # Item 4: a READ of more than 2^31 bytes: NAK, invalid request (C9-94).
    a.send([read('big', va, rkey, (1 << 31) + 1)])
    got = a.answers(10, want=1)
    outcome('reth_2g', what(got))
    check(nak(got, 'big', NAK_INVALID_REQ),
          'reth_2g', 'a READ of 2^31 + 1 bytes: NAK (invalid request)', what(got))

    # Item 6: READ and atomic with max_dest_rd_atomic 0: NAK, invalid request.
    a.send([read('rd0', va, rkey, 64)])
    got = a.answers(10, want=1)
    outcome('rd_atomic_0_read', what(got))
    check(nak(got, 'rd0', NAK_INVALID_REQ), 'rd_atomic_0_read',
          'a READ to a QP with max_dest_rd_atomic 0: NAK (invalid request)', what(got))
    a.send([a.frame(bth(OP_FETCH_ADD, qpns['at0'], psn) +
                    struct.pack('>QIQQ', va + 64, rkey, 1, 0))])
    got = a.answers(10, want=1)
    outcome('rd_atomic_0_atomic', what(got))
    check(nak(got, 'at0', NAK_INVALID_REQ), 'rd_atomic_0_atomic',
          'a FETCH_ADD to a QP with max_dest_rd_atomic 0: NAK (invalid request)', what(got))

    # Item 6: a duplicate READ is replayed from what the READ did, never
    # re-executed with what the duplicate names.
    a.send([read('dup', va + 128, rkey, 64)])
    got = a.answers(10, want=1)
    check(read_only(got, 'dup', mr[128:192]), 'dup_read', 'a READ of 64 bytes is answered',
          what(got))
    # Each duplicate that must be dropped is followed by the one that
    # must be replayed, whose answer ends the wait (fenced).
    same = read('dup', va + 128, rkey, 64)

    def replayed(got):
        return read_only(got, 'dup', mr[128:192])

    got, fence = fenced([read('dup', info['va2'], info['rkey2'], 64)], same, replayed)
    outcome('dup_read_other_mr', what(got))
    check(not got and fence, 'dup_read_other_mr',
          'its duplicate naming another MR (same PSN) is dropped', what(got + fence))
    got, fence = fenced([read('dup', va + 128, rkey, 128)], same, replayed)
    outcome('dup_read_longer', what(got))
    check(not got and fence, 'dup_read_longer',
          'its duplicate naming more bytes than the READ is dropped', what(got + fence))
    a.send([same])
    got = a.answers(10, want=1)
    outcome('dup_read_same', what(got))
    check(read_only(got, 'dup', mr[128:192]), 'dup_read_same',
          'the same READ again is replayed: the same bytes', what(got))

    # Item 7: an RC request to another address of the DUT's host than the
    # one the QP's path names: dropped; to the right one: answered.
    got, fence = fenced([read('addr', va, rkey, 64, dst_ip=args.other_ip)],
                        read('addr', va, rkey, 64), lambda g: read_only(g, 'addr', mr[:64]))
    outcome('dst_addr', what(got))
    check(not got, 'dst_addr',
          f'a READ to {args.other_ip} for a QP whose path is {args.dst_ip}: dropped', what(got))
    check(bool(fence), 'dst_addr', f'the same READ to {args.dst_ip}: answered', what(got))

    # Item 5: SEND_WITH_INVALIDATE of a type 2B window bound through
    # another QP: the window stays valid (it must be bound to the QP that
    # receives the invalidation). The receive fails (checked at the end).
    a.send([a.frame(bth(OP_SEND_ONLY_INV, qpns['inv'], psn) +
                    struct.pack('>I', info['mw_rkey']) + pattern(16, 5))])
    got = a.answers(10, want=1)
    outcome('inv_mw_other_qp', f'answer: {what(got)}')
    a.send([read('bnd', va + 256, info['mw_rkey'], 64)])
    got = a.answers(10, want=1)
    outcome('inv_mw_other_qp', f'READ through the window afterwards: {what(got)}')
    check(read_only(got, 'bnd', mr[256:320]), 'inv_mw_other_qp',
          'SEND_WITH_INV to another QP left the type 2B window valid: a READ through it '
          'is answered', what(got), rxe_differs=True)

    # The DUT's view.
    with open(args.stop, 'w'):
        pass
    final = None
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with open(args.info) as f:
                final = json.load(f)
        except (OSError, ValueError):
            final = None
        if final and 'state' in final:
            break
        time.sleep(0.5)
    if not final or 'state' not in final:
        a.report(False, 'the DUT helper reported its QPs')
        a.sniffer.stop()
        return 1
    st, wcs = final['state'], final['wcs']
    recv = bytes.fromhex(final['recv_bytes'])
    print(f'# DUT QP states: {st}')
    print(f'# DUT receive completions: {wcs}')
    outcome('ud_oversize', f'UD QP {st["ud"]}, completions {wcs["ud"]}')
    check(st['ud'] == 'RTS', 'ud_oversize', 'the UD QP is still in RTS', st['ud'])
    check([(w['wr_id'], w['status'], w['byte_len']) for w in wcs['ud']] == [(80, 0, 72)] and
          recv[40:72] == pattern(32, 3), 'ud_oversize',
          'the UD QP dropped the long datagram and received the next one in the same receive',
          str(wcs['ud']))
    outcome('uc_oversize', f'UC QP {st["uc"]}, completions {wcs["uc"]}')
    # rdma_rxe 7.3 means to drop them too (RESPST_ERR_LENGTH, class D),
    # but copy_data refuses the long SEND first (-EINVAL): a malformed
    # WQE, class A, the QP goes to ERR.
    check(st['uc'] == 'RTS', 'uc_oversize', 'the UC QP is still in RTS', st['uc'],
          rxe_differs=True)
    uc_wcs = [(w['wr_id'], w['status'], w['byte_len']) for w in wcs['uc']]
    check(uc_wcs[:1] == [(70, 0, 32)] and recv[1024:1056] == pattern(32, 4), 'uc_oversize',
          'the UC QP dropped both long messages and received the next one in the same receive',
          str(wcs['uc']), rxe_differs=True)
    # rdma_rxe drops the SEND too (do_class_d1e_error ends in CLEANUP).
    check(uc_wcs[1:] == [(71, 0, 32)] and recv[1536:1568] == pattern(32, 5), 'uc_d1',
          'a SEND_ONLY after a WRITE_FIRST that never ended is received',
          str(wcs['uc']), rxe_differs=True)
    outcome('inv_mw_other_qp', f'the receive: {wcs["inv"]}, QP {st["inv"]}')
    # IBV_WC_REM_INV_REQ_ERR (as for any key that cannot be invalidated).
    check([(w['wr_id'], w['status']) for w in wcs['inv']] == [(60, 9)], 'inv_mw_other_qp',
          'the receive of the SEND_WITH_INV fails with IBV_WC_REM_INV_REQ_ERR',
          str(wcs['inv']), rxe_differs=True)
    outcome('rd_atomic_0', f'QPs {st["rd0"]}, {st["at0"]}')
    check(st['rd0'] == 'ERR' and st['at0'] == 'ERR' and st['big'] == 'ERR', 'class_c',
          'the QPs that NAKed an invalid request are in the error state',
          f'{st["rd0"]} {st["at0"]} {st["big"]}')
    a.sniffer.stop()
    return 1 if a.fails else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('icrc-check')
    p.add_argument('pcap')
    p = sub.add_parser('dut')
    p.add_argument('--dev', required=True)
    p.add_argument('--gid', type=int, required=True)
    p.add_argument('--peer-ip', required=True)
    p.add_argument('--out', required=True)
    p.add_argument('--stop', required=True)
    p.add_argument('--timeout', type=float, default=300)
    p = sub.add_parser('attack')
    p.add_argument('--info', required=True)
    p.add_argument('--iface', required=True)
    p.add_argument('--src-ip', required=True)
    p.add_argument('--dst-ip', required=True)
    p.add_argument('--dst-mac', required=True)
    p.add_argument('--stray-ip', default='198.18.1.9')
    p.add_argument('--dev', required=True)
    p = sub.add_parser('sec-dut')
    p.add_argument('--dev', required=True)
    p.add_argument('--gid', type=int, required=True)
    p.add_argument('--peer-ip', required=True)
    p.add_argument('--out', required=True)
    p.add_argument('--stop', required=True)
    p.add_argument('--timeout', type=float, default=300)
    p = sub.add_parser('sec-attack')
    p.add_argument('--info', required=True)
    p.add_argument('--stop', required=True)
    p.add_argument('--iface', required=True)
    p.add_argument('--src-ip', required=True)
    p.add_argument('--dst-ip', required=True)
    p.add_argument('--other-ip', required=True)
    p.add_argument('--dst-mac', required=True)
    p.add_argument('--dut-type', default='rrxe')
    p.add_argument('--dev', required=True)
    args = ap.parse_args()
    return {'icrc-check': icrc_check, 'dut': dut, 'attack': attack, 'sec-dut': sec_dut,
            'sec-attack': sec_attack}[args.cmd](args)


if __name__ == '__main__':
    sys.exit(main())
