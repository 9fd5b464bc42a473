// SPDX-License-Identifier: GPL-2.0

//! Decoding of send and receive WQEs from ring slots, including hostile
//! slot contents.
//!
//! The slots are built here the way rdma-core's rxe provider and `post.rs`
//! write them, with byte offsets worked out by hand from
//! `include/uapi/rdma/rdma_user_rxe.h` rather than taken from
//! `logic::wqe::layout`, so a wrong constant there shows up as a failure.

use proptest::collection::vec;
use proptest::prelude::*;
use std::vec::Vec;

use crate::logic::flush::{AtomicWriteWr, FlushWr};
use crate::logic::mw::BindWr;
use crate::logic::qp_state::QpType;
use crate::logic::wqe::*;
use crate::logic::wr::{opcode::*, MAX_MSG_SIZE, SEND_INLINE};

/// `sizeof(struct rxe_send_wqe)`: where the SGEs or inline data start.
const SEND_DATA: usize = 208;
/// `sizeof(struct rxe_recv_wqe)`.
const RECV_DATA: usize = 40;

/// A zeroed slot with little helpers to store native-endian fields.
struct SlotBuf(Vec<u8>);

impl SlotBuf {
    fn new(len: usize) -> SlotBuf {
        SlotBuf(std::vec![0; len])
    }
    fn bytes(&mut self, at: usize, b: &[u8]) {
        self.0[at..at + b.len()].copy_from_slice(b);
    }
    fn u8(&mut self, at: usize, v: u8) {
        self.0[at] = v;
    }
    fn u16(&mut self, at: usize, v: u16) {
        self.bytes(at, &v.to_ne_bytes());
    }
    fn u32(&mut self, at: usize, v: u32) {
        self.bytes(at, &v.to_ne_bytes());
    }
    fn u64(&mut self, at: usize, v: u64) {
        self.bytes(at, &v.to_ne_bytes());
    }
    /// The SGE array at `at` (`struct rxe_sge`: addr, length, lkey).
    fn sges(&mut self, at: usize, sges: &[WqeSge]) {
        for (i, s) in sges.iter().enumerate() {
            self.u64(at + 16 * i, s.addr);
            self.u32(at + 16 * i + 8, s.length);
            self.u32(at + 16 * i + 12, s.lkey);
        }
    }
}

/// Where a built request's data comes from.
#[derive(Clone, Debug)]
enum Data {
    Sges(Vec<WqeSge>),
    Inline(Vec<u8>),
}

impl Data {
    fn length(&self) -> u32 {
        match self {
            Data::Sges(s) => s.iter().map(|s| s.length).sum(),
            Data::Inline(b) => b.len() as u32,
        }
    }
}

/// A send request to build a slot from.
#[derive(Clone, Debug)]
struct SendSpec {
    wr_id: u64,
    op: SendOp,
    /// Without `IB_SEND_INLINE`, which [`Data::Inline`] adds.
    flags: u32,
    ud: Option<UdDest>,
    data: Data,
}

impl SendSpec {
    fn flags(&self) -> u32 {
        match self.data {
            Data::Inline(_) => self.flags | SEND_INLINE,
            Data::Sges(_) => self.flags,
        }
    }
}

/// The slot rdma-core's provider would write for `spec`.
fn encode_send(spec: &SendSpec, slot_len: usize) -> Vec<u8> {
    let mut s = SlotBuf::new(slot_len);
    s.u64(0, spec.wr_id);
    s.u32(12, spec.op.wr_opcode());
    s.u32(16, spec.flags());
    let mut iova = 0;
    match spec.op {
        SendOp::Send { imm, inv_rkey } => s.u32(20, imm.or(inv_rkey).unwrap_or(0)),
        SendOp::Write {
            remote_addr,
            rkey,
            imm,
        } => {
            s.u32(20, imm.unwrap_or(0));
            s.u64(24, remote_addr);
            s.u32(32, rkey);
            iova = remote_addr;
        }
        SendOp::Read { remote_addr, rkey } => {
            s.u64(24, remote_addr);
            s.u32(32, rkey);
            iova = remote_addr;
        }
        SendOp::CmpSwap {
            remote_addr,
            rkey,
            compare,
            swap,
        } => {
            s.u64(24, remote_addr);
            s.u64(32, compare);
            s.u64(40, swap);
            s.u32(48, rkey);
            iova = remote_addr;
        }
        SendOp::FetchAdd {
            remote_addr,
            rkey,
            add,
        } => {
            s.u64(24, remote_addr);
            s.u64(32, add);
            s.u32(48, rkey);
            iova = remote_addr;
        }
        SendOp::AtomicWrite(wr) => {
            s.u64(24, wr.remote_addr);
            s.u32(32, wr.rkey);
            s.bytes(SEND_DATA, &wr.value);
            s.u32(184, 8);
            iova = wr.remote_addr;
        }
        SendOp::Flush(wr) => {
            s.u64(24, wr.remote_addr);
            s.u32(36, wr.rkey);
            s.u8(40, wr.placement_type);
            s.u8(41, wr.level);
            s.u32(184, wr.length);
            iova = wr.remote_addr;
        }
        SendOp::LocalInv { rkey } => s.u32(20, rkey),
        SendOp::RegMr {
            key,
            access,
            iova: at,
        } => {
            // The kernel's `ib_mr *`, never decoded.
            s.u64(24, 0xffff_8880_dead_b000);
            s.u32(32, key);
            s.u32(36, access);
            iova = at;
        }
        SendOp::BindMw(wr) => {
            s.u64(24, wr.addr);
            s.u64(32, wr.length);
            s.u32(40, wr.mr_lkey);
            s.u32(44, wr.mw_rkey);
            s.u32(48, wr.rkey);
            s.u32(52, wr.access);
        }
    }
    if let Some(ud) = spec.ud {
        s.u32(24, ud.remote_qpn);
        s.u32(28, ud.remote_qkey);
        s.u16(32, ud.pkey_index);
        s.u32(36, ud.ah_num);
    }
    s.u64(152, iova);
    if carries_data(&spec.op) {
        let length = spec.data.length();
        match &spec.data {
            Data::Sges(sges) => {
                s.sges(SEND_DATA, sges);
                s.u32(196, sges.len() as u32);
            }
            Data::Inline(bytes) => s.bytes(SEND_DATA, bytes),
        }
        s.u32(184, length);
        s.u32(188, length);
    }
    s.0
}

/// Whether `op` takes its payload from SGEs or inline data.
fn carries_data(op: &SendOp) -> bool {
    matches!(
        op,
        SendOp::Send { .. }
            | SendOp::Write { .. }
            | SendOp::Read { .. }
            | SendOp::CmpSwap { .. }
            | SendOp::FetchAdd { .. }
    )
}

/// The slot `post_one_recv` would write.
fn encode_recv(wr_id: u64, sges: &[WqeSge], slot_len: usize) -> Vec<u8> {
    let mut s = SlotBuf::new(slot_len);
    let length: u32 = sges.iter().map(|s| s.length).sum();
    s.u64(0, wr_id);
    s.u32(16, length);
    s.u32(20, length);
    s.u32(28, sges.len() as u32);
    s.sges(RECV_DATA, sges);
    s.0
}

/// A slot holding `sges` and `max_inline` inline bytes after the header,
/// as `qp.rs` sizes it (without rounding up).
fn slot_len(max_sge: u32, max_inline: u32) -> usize {
    SEND_DATA + (max_sge as usize * 16).max(max_inline as usize)
}

fn sge(addr: u64, length: u32, lkey: u32) -> WqeSge {
    WqeSge { addr, length, lkey }
}

fn rc_spec(op: SendOp, data: Data) -> SendSpec {
    SendSpec {
        wr_id: 0x1122_3344_5566_7788,
        op,
        flags: SEND_SIGNALED,
        ud: None,
        data,
    }
}

/// `decode_send` of `spec` built into a slot with room for 4 SGEs and
/// 64 inline bytes, with those limits.
fn round(spec: &SendSpec, kind: QpType) -> Result<(SendWqe<'static>, Vec<WqeSge>), WqeError> {
    let slot = std::boxed::Box::leak(encode_send(spec, slot_len(4, 64)).into_boxed_slice());
    let wqe = decode_send(slot, kind, 4, 64)?;
    let sges = match wqe.payload {
        Payload::Sges(s) => s.iter().collect(),
        Payload::Inline(_) => Vec::new(),
    };
    Ok((wqe, sges))
}

/// Decodes `slot` with the limits [`round`] uses.
fn decode(slot: &[u8], kind: QpType) -> Result<SendWqe<'_>, WqeError> {
    decode_send(slot, kind, 4, 64)
}

const RADDR: u64 = 0x7f00_1234_5678;

fn one_sge(length: u32) -> Data {
    Data::Sges(std::vec![sge(0x1000, length, 0x0102)])
}

#[test]
fn send_on_every_qp_kind() {
    for kind in [QpType::Rc, QpType::Uc, QpType::Ud, QpType::Gsi] {
        let ud = UdDest {
            remote_qpn: 0x12_3456,
            remote_qkey: 0x8001_0000,
            pkey_index: 3,
            ah_num: 7,
        };
        let mut spec = rc_spec(
            SendOp::Send {
                imm: None,
                inv_rkey: None,
            },
            Data::Sges(std::vec![sge(0x1000, 100, 1), sge(0x2000, 28, 2)]),
        );
        let datagram = matches!(kind, QpType::Ud | QpType::Gsi);
        if datagram {
            spec.ud = Some(ud);
        }
        let (wqe, sges) = round(&spec, kind).unwrap();
        assert_eq!(wqe.wr_id, spec.wr_id);
        assert_eq!(wqe.op, spec.op);
        assert_eq!(wqe.flags, SEND_SIGNALED);
        assert!(wqe.signaled() && !wqe.fence() && !wqe.solicited());
        assert_eq!(wqe.length, 128);
        assert_eq!(sges, std::vec![sge(0x1000, 100, 1), sge(0x2000, 28, 2)]);
        assert_eq!(wqe.ud, datagram.then_some(ud), "{kind:?}");
    }
}

#[test]
fn send_variants() {
    let imm = u32::from_ne_bytes(0xcafe_f00du32.to_be_bytes());
    for op in [
        SendOp::Send {
            imm: Some(imm),
            inv_rkey: None,
        },
        SendOp::Send {
            imm: None,
            inv_rkey: Some(0x4242),
        },
    ] {
        let (wqe, _) = round(&rc_spec(op, one_sge(10)), QpType::Rc).unwrap();
        assert_eq!(wqe.op, op);
    }
    // The immediate data comes back exactly as stored (big-endian bytes).
    let spec = rc_spec(
        SendOp::Send {
            imm: Some(imm),
            inv_rkey: None,
        },
        one_sge(1),
    );
    let slot = encode_send(&spec, slot_len(4, 64));
    assert_eq!(&slot[20..24], &0xcafe_f00du32.to_be_bytes());
    let wqe = decode(&slot, QpType::Rc).unwrap();
    let SendOp::Send { imm: Some(got), .. } = wqe.op else {
        panic!("{:?}", wqe.op)
    };
    assert_eq!(got.to_ne_bytes(), 0xcafe_f00du32.to_be_bytes());
}

#[test]
fn inline_send_and_write() {
    let bytes: Vec<u8> = (0..64).collect();
    for op in [
        SendOp::Send {
            imm: None,
            inv_rkey: None,
        },
        SendOp::Write {
            remote_addr: RADDR,
            rkey: 9,
            imm: Some(5),
        },
    ] {
        let spec = rc_spec(op, Data::Inline(bytes.clone()));
        let (wqe, _) = round(&spec, QpType::Uc).unwrap();
        assert_eq!(wqe.op, op);
        assert_eq!(wqe.length, 64);
        assert_eq!(wqe.payload, Payload::Inline(&bytes[..]));
        assert_eq!(wqe.flags, SEND_SIGNALED | SEND_INLINE);
    }
}

#[test]
fn inline_ignores_num_sge() {
    // rdma-core's ibv_post_send leaves the number of gathered buffers in
    // num_sge, even more than max_sge.
    let spec = rc_spec(
        SendOp::Send {
            imm: None,
            inv_rkey: None,
        },
        Data::Inline(std::vec![7; 20]),
    );
    let mut slot = encode_send(&spec, slot_len(4, 64));
    slot[196..200].copy_from_slice(&9u32.to_ne_bytes());
    let wqe = decode(&slot, QpType::Rc).unwrap();
    assert_eq!(wqe.payload, Payload::Inline(&[7; 20][..]));
}

#[test]
fn rdma_and_atomic_ops() {
    let ops = [
        SendOp::Write {
            remote_addr: RADDR,
            rkey: 0x100,
            imm: None,
        },
        SendOp::Read {
            remote_addr: RADDR + 3,
            rkey: 0x200,
        },
        SendOp::CmpSwap {
            remote_addr: RADDR & !7,
            rkey: 0x300,
            compare: 1,
            swap: u64::MAX,
        },
        SendOp::FetchAdd {
            remote_addr: RADDR & !7,
            rkey: 0x400,
            add: 0x8000_0000_0000_0001,
        },
    ];
    for op in ops {
        let (wqe, sges) = round(&rc_spec(op, one_sge(8)), QpType::Rc).unwrap();
        assert_eq!(wqe.op, op);
        assert_eq!(wqe.length, 8);
        assert_eq!(sges, std::vec![sge(0x1000, 8, 0x0102)]);
        assert_eq!(
            wqe.op.class(),
            crate::logic::wr::classify(op.wr_opcode(), QpType::Rc).unwrap()
        );
    }
}

#[test]
fn atomic_buffer_may_exceed_8_bytes() {
    // rdma-core only refuses less than 8 bytes.
    let op = SendOp::FetchAdd {
        remote_addr: 0,
        rkey: 1,
        add: 1,
    };
    let (wqe, _) = round(&rc_spec(op, one_sge(16)), QpType::Rc).unwrap();
    assert_eq!(wqe.length, 16);
}

#[test]
fn atomic_write_flush_and_local_ops() {
    let ops = [
        SendOp::AtomicWrite(AtomicWriteWr {
            remote_addr: RADDR,
            rkey: 0x500,
            value: *b"12345678",
        }),
        SendOp::Flush(FlushWr {
            remote_addr: RADDR,
            rkey: 0x600,
            length: 4096,
            placement_type: 2,
            level: 1,
        }),
        SendOp::LocalInv { rkey: 0x700 },
        SendOp::RegMr {
            key: 0x801,
            access: 0xf,
            // rpcrdma's: the XID in the upper 32 bits.
            iova: 0x1234_5678_0000_1000,
        },
        SendOp::BindMw(BindWr {
            addr: RADDR,
            length: 1 << 33,
            mr_lkey: 0x901,
            mw_rkey: 0xa01,
            rkey: 0xa02,
            access: 0x6,
        }),
    ];
    for op in ops {
        // Whatever the SGE area holds, these read none.
        let (wqe, sges) = round(&rc_spec(op, Data::Sges(Vec::new())), QpType::Rc).unwrap();
        assert_eq!(wqe.op, op);
        assert!(sges.is_empty());
        match op {
            SendOp::AtomicWrite(_) => {
                assert_eq!(wqe.length, 8);
                assert_eq!(wqe.completion_length(), 8);
                assert_eq!(wqe.payload, Payload::Inline(b"12345678"));
            }
            // No payload, but rxe reports the flushed length.
            SendOp::Flush(_) => {
                assert_eq!(wqe.length, 0);
                assert_eq!(wqe.completion_length(), 4096);
                assert_eq!(wqe.payload, Payload::Sges(SgeList::EMPTY));
            }
            _ => {
                assert_eq!(wqe.completion_length(), 0);
                assert_eq!(wqe.length, 0);
                assert_eq!(wqe.payload, Payload::Sges(SgeList::EMPTY));
            }
        }
    }
}

#[test]
fn initiator_depth_is_taken_by_reads_atomics_and_atomic_writes() {
    // C rxe's `check_init_depth` counts READs, atomics and ATOMIC WRITEs;
    // FLUSH, sends, writes and local operations take no place.
    let cases = [
        (
            SendOp::Read {
                remote_addr: RADDR,
                rkey: 1,
            },
            true,
        ),
        (
            SendOp::CmpSwap {
                remote_addr: 0,
                rkey: 1,
                compare: 2,
                swap: 3,
            },
            true,
        ),
        (
            SendOp::FetchAdd {
                remote_addr: 0,
                rkey: 1,
                add: 2,
            },
            true,
        ),
        (
            SendOp::AtomicWrite(AtomicWriteWr {
                remote_addr: 0,
                rkey: 1,
                value: [0; 8],
            }),
            true,
        ),
        (
            SendOp::Flush(FlushWr {
                remote_addr: 0,
                rkey: 1,
                length: 8,
                placement_type: 1,
                level: 1,
            }),
            false,
        ),
        (
            SendOp::Send {
                imm: Some(1),
                inv_rkey: None,
            },
            false,
        ),
        (
            SendOp::Write {
                remote_addr: 0,
                rkey: 1,
                imm: None,
            },
            false,
        ),
        (SendOp::LocalInv { rkey: 1 }, false),
        (
            SendOp::RegMr {
                key: 1,
                access: 0,
                iova: 0,
            },
            false,
        ),
    ];
    for (op, counted) in cases {
        assert_eq!(op.uses_initiator_depth(), counted, "{op:?}");
    }
}

#[test]
fn inline_flag_is_irrelevant_without_sges() {
    for op in [
        SendOp::AtomicWrite(AtomicWriteWr {
            remote_addr: RADDR,
            rkey: 1,
            value: [9; 8],
        }),
        SendOp::LocalInv { rkey: 2 },
    ] {
        let mut spec = rc_spec(op, Data::Sges(Vec::new()));
        spec.flags |= SEND_INLINE;
        assert_eq!(round(&spec, QpType::Rc).unwrap().0.op, op);
    }
}

#[test]
fn opcode_legality_per_qp_type() {
    use QpType::*;
    let plain = SendOp::Send {
        imm: None,
        inv_rkey: None,
    };
    let inv = SendOp::Send {
        imm: None,
        inv_rkey: Some(1),
    };
    let write = SendOp::Write {
        remote_addr: 0,
        rkey: 0,
        imm: None,
    };
    let read = SendOp::Read {
        remote_addr: 0,
        rkey: 0,
    };
    let bind = SendOp::BindMw(BindWr {
        addr: 0,
        length: 0,
        mr_lkey: 0,
        mw_rkey: 0,
        rkey: 0,
        access: 0,
    });
    let cases: &[(SendOp, &[QpType])] = &[
        (plain, &[Rc, Uc, Ud, Gsi]),
        (inv, &[Rc, Uc]),
        (write, &[Rc, Uc]),
        (bind, &[Rc, Uc]),
        (read, &[Rc]),
        (SendOp::LocalInv { rkey: 0 }, &[Rc]),
        (
            SendOp::RegMr {
                key: 0,
                access: 0,
                iova: 0,
            },
            &[Rc],
        ),
        (
            SendOp::FetchAdd {
                remote_addr: 0,
                rkey: 0,
                add: 0,
            },
            &[Rc],
        ),
        (
            SendOp::AtomicWrite(AtomicWriteWr {
                remote_addr: 0,
                rkey: 0,
                value: [0; 8],
            }),
            &[Rc],
        ),
        (
            SendOp::Flush(FlushWr {
                remote_addr: 0,
                rkey: 0,
                length: 0,
                placement_type: 0,
                level: 0,
            }),
            &[Rc],
        ),
    ];
    for &(op, ok) in cases {
        let data = if carries_data(&op) {
            one_sge(8)
        } else {
            Data::Sges(Vec::new())
        };
        let slot = encode_send(&rc_spec(op, data), slot_len(4, 64));
        for kind in QpType::ALL {
            let got = decode(&slot, kind).map(|w| w.op);
            if ok.contains(&kind) {
                assert_eq!(got, Ok(op), "{op:?} on {kind:?}");
            } else {
                assert_eq!(
                    got,
                    Err(WqeError::OpcodeNotForQp(op.wr_opcode())),
                    "{op:?} on {kind:?}"
                );
            }
        }
    }
}

#[test]
fn unimplemented_opcodes() {
    let mut slot = encode_send(
        &rc_spec(
            SendOp::Read {
                remote_addr: 0,
                rkey: 0,
            },
            one_sge(8),
        ),
        256,
    );
    for code in [LSO, RDMA_READ_WITH_INV, 12, 13, 16, 0x21, 0xf0, u32::MAX] {
        slot[12..16].copy_from_slice(&code.to_ne_bytes());
        for kind in QpType::ALL {
            assert_eq!(
                decode(&slot, kind).map(|w| w.op),
                Err(WqeError::BadOpcode(code))
            );
        }
    }
}

/// The `enum ib_wr_opcode` values of `include/rdma/ib_verbs.h` (the shared
/// ones equal `enum ib_uverbs_wr_opcode` in
/// `include/uapi/rdma/ib_user_verbs.h`), which rdma-core writes into WQEs.
#[test]
fn opcode_values_are_the_uapi_ones() {
    let expect = [
        (RDMA_WRITE, 0),
        (RDMA_WRITE_WITH_IMM, 1),
        (SEND, 2),
        (SEND_WITH_IMM, 3),
        (RDMA_READ, 4),
        (ATOMIC_CMP_AND_SWP, 5),
        (ATOMIC_FETCH_AND_ADD, 6),
        (LOCAL_INV, 7),
        (BIND_MW, 8),
        (SEND_WITH_INV, 9),
        (LSO, 10),
        (RDMA_READ_WITH_INV, 11),
        (FLUSH, 14),
        (ATOMIC_WRITE, 15),
        (REG_MR, 0x20),
    ];
    for (i, (got, want)) in expect.into_iter().enumerate() {
        assert_eq!(got, want, "entry {i}");
    }
}

#[test]
fn send_flag_values() {
    // `enum ib_send_flags` in include/rdma/ib_verbs.h.
    assert_eq!(SEND_FENCE, 1);
    assert_eq!(SEND_SIGNALED, 2);
    assert_eq!(SEND_SOLICITED, 4);
    assert_eq!(SEND_INLINE, 8);
}

#[test]
fn truncated_slots() {
    let spec = rc_spec(
        SendOp::Send {
            imm: None,
            inv_rkey: None,
        },
        one_sge(8),
    );
    let slot = encode_send(&spec, slot_len(4, 64));
    for len in [0, 1, 100, SEND_DATA - 1] {
        assert_eq!(decode(&slot[..len], QpType::Rc), Err(WqeError::Truncated));
    }
    // The SGE array must fit, whatever max_sge says.
    assert_eq!(
        decode_send(&slot[..SEND_DATA + 15], QpType::Rc, 4, 64),
        Err(WqeError::Truncated)
    );
    assert!(decode_send(&slot[..SEND_DATA + 16], QpType::Rc, 4, 64).is_ok());
    // Inline data must fit.
    let inline = rc_spec(spec.op, Data::Inline(std::vec![1; 40]));
    let slot = encode_send(&inline, slot_len(4, 64));
    assert_eq!(
        decode_send(&slot[..SEND_DATA + 39], QpType::Rc, 4, 64),
        Err(WqeError::Truncated)
    );
    // So must an ATOMIC WRITE's value.
    let aw = rc_spec(
        SendOp::AtomicWrite(AtomicWriteWr {
            remote_addr: 0,
            rkey: 0,
            value: [1; 8],
        }),
        Data::Sges(Vec::new()),
    );
    let slot = encode_send(&aw, slot_len(4, 64));
    assert_eq!(
        decode(&slot[..SEND_DATA + 7], QpType::Rc),
        Err(WqeError::Truncated)
    );
    assert!(decode(&slot[..SEND_DATA + 8], QpType::Rc).is_ok());
}

#[test]
fn sge_count_and_lengths() {
    let send = SendOp::Send {
        imm: None,
        inv_rkey: None,
    };
    let sges: Vec<WqeSge> = (0..5).map(|i| sge(i, 10, 1)).collect();
    let slot = encode_send(&rc_spec(send, Data::Sges(sges)), slot_len(8, 0));
    assert_eq!(
        decode_send(&slot, QpType::Rc, 4, 0),
        Err(WqeError::TooManySges(5))
    );
    assert_eq!(decode_send(&slot, QpType::Rc, 5, 0).unwrap().length, 50);

    // dma.length must be the sum.
    let mut bad = slot.clone();
    bad[184..188].copy_from_slice(&49u32.to_ne_bytes());
    assert_eq!(
        decode_send(&bad, QpType::Rc, 5, 0),
        Err(WqeError::LengthMismatch)
    );

    // The largest message is 2^31 bytes; the sum is computed without
    // wrapping (2 * 2^31 would wrap a u32 to 0).
    let half = 1u32 << 30;
    let max = Data::Sges(std::vec![sge(0, half, 1), sge(0, half, 1)]);
    let slot = encode_send(&rc_spec(send, max), slot_len(4, 0));
    assert_eq!(
        decode_send(&slot, QpType::Rc, 4, 0).unwrap().length,
        1 << 31
    );
    let wraps = [sge(0, 1 << 31, 1), sge(0, 1 << 31, 1)];
    let mut s = SlotBuf(slot.clone());
    s.sges(SEND_DATA, &wraps);
    s.u32(184, 0);
    assert_eq!(decode_send(&s.0, QpType::Rc, 4, 0), Err(WqeError::TooLong));
    s.sges(SEND_DATA, &[sge(0, 1 << 31, 1), sge(0, 1, 1)]);
    s.u32(184, (1 << 31) + 1);
    assert_eq!(decode_send(&s.0, QpType::Rc, 4, 0), Err(WqeError::TooLong));
}

#[test]
fn inline_limits() {
    let send = SendOp::Send {
        imm: None,
        inv_rkey: None,
    };
    let slot = encode_send(
        &rc_spec(send, Data::Inline(std::vec![3; 64])),
        slot_len(0, 64),
    );
    assert!(decode_send(&slot, QpType::Rc, 0, 64).is_ok());
    assert_eq!(
        decode_send(&slot, QpType::Rc, 0, 63),
        Err(WqeError::InlineTooLong)
    );
    let mut huge = slot.clone();
    huge[184..188].copy_from_slice(&u32::MAX.to_ne_bytes());
    assert_eq!(
        decode_send(&huge, QpType::Rc, 0, 64),
        Err(WqeError::InlineTooLong)
    );
    // Inline on operations whose data area must hold SGEs.
    for op in [
        SendOp::Read {
            remote_addr: 0,
            rkey: 0,
        },
        SendOp::CmpSwap {
            remote_addr: 0,
            rkey: 0,
            compare: 0,
            swap: 0,
        },
        SendOp::FetchAdd {
            remote_addr: 0,
            rkey: 0,
            add: 0,
        },
    ] {
        let slot = encode_send(&rc_spec(op, Data::Inline(std::vec![0; 8])), slot_len(4, 64));
        assert_eq!(decode(&slot, QpType::Rc), Err(WqeError::InlineNotAllowed));
    }
}

#[test]
fn atomic_checks() {
    for addr in [1, 4, 7, RADDR | 2] {
        let op = SendOp::CmpSwap {
            remote_addr: addr,
            rkey: 0,
            compare: 0,
            swap: 0,
        };
        assert_eq!(
            round(&rc_spec(op, one_sge(8)), QpType::Rc).map(|w| w.0.op),
            Err(WqeError::Misaligned)
        );
    }
    let op = SendOp::FetchAdd {
        remote_addr: 8,
        rkey: 0,
        add: 0,
    };
    for len in [0, 4, 7] {
        assert_eq!(
            round(&rc_spec(op, one_sge(len)), QpType::Rc).map(|w| w.0.op),
            Err(WqeError::AtomicTooShort)
        );
    }
    // An ATOMIC WRITE carries exactly 8 bytes.
    let aw = rc_spec(
        SendOp::AtomicWrite(AtomicWriteWr {
            remote_addr: 8,
            rkey: 0,
            value: [0; 8],
        }),
        Data::Sges(Vec::new()),
    );
    let mut slot = encode_send(&aw, slot_len(4, 64));
    for len in [0, 7, 9, 16] {
        slot[184..188].copy_from_slice(&(len as u32).to_ne_bytes());
        assert_eq!(decode(&slot, QpType::Rc), Err(WqeError::LengthMismatch));
    }
    // Its alignment is the responder's business.
    let mut odd = aw.clone();
    odd.op = SendOp::AtomicWrite(AtomicWriteWr {
        remote_addr: 3,
        rkey: 0,
        value: [0; 8],
    });
    assert!(round(&odd, QpType::Rc).is_ok());
}

#[test]
fn flush_length_is_bounded() {
    let flush = |length| {
        rc_spec(
            SendOp::Flush(FlushWr {
                remote_addr: 0,
                rkey: 0,
                length,
                placement_type: 1,
                level: 1,
            }),
            Data::Sges(Vec::new()),
        )
    };
    assert!(round(&flush(1 << 31), QpType::Rc).is_ok());
    assert_eq!(
        round(&flush((1 << 31) + 1), QpType::Rc).map(|w| w.0.op),
        Err(WqeError::TooLong)
    );
}

#[test]
fn sge_list_access() {
    let sges = [sge(1, 2, 3), sge(4, 5, 6), sge(7, 8, 9)];
    let slot = encode_recv(42, &sges, RECV_DATA + 64);
    let wqe = decode_recv(&slot, 4).unwrap();
    let list = wqe.sges;
    assert_eq!(list.len(), 3);
    assert!(!list.is_empty());
    assert_eq!(list.get(1), Some(sges[1]));
    assert_eq!(list.get(3), None);
    assert_eq!(list.get(usize::MAX), None);
    assert_eq!(list.iter().len(), 3);
    assert_eq!(list.into_iter().collect::<Vec<_>>(), sges.to_vec());
    assert!(SgeList::EMPTY.is_empty());
    assert_eq!(SgeList::EMPTY.get(0), None);
}

#[test]
fn recv_wqes() {
    let sges = [sge(0x1000, 100, 1), sge(0x2000, 0, 2), sge(0x3000, 4000, 3)];
    let slot = encode_recv(7, &sges, RECV_DATA + 64);
    let wqe = decode_recv(&slot, 4).unwrap();
    assert_eq!(wqe.wr_id, 7);
    assert_eq!(wqe.length, 4100);
    assert_eq!(wqe.sges.iter().collect::<Vec<_>>(), sges.to_vec());
    let empty = encode_recv(8, &[], RECV_DATA);
    assert_eq!(decode_recv(&empty, 0).unwrap().sges, SgeList::EMPTY);

    assert_eq!(decode_recv(&slot, 2), Err(WqeError::TooManySges(3)));
    assert_eq!(
        decode_recv(&slot[..RECV_DATA - 1], 4),
        Err(WqeError::Truncated)
    );
    assert_eq!(
        decode_recv(&slot[..RECV_DATA + 47], 4),
        Err(WqeError::Truncated)
    );
    let mut bad = slot.clone();
    bad[16..20].copy_from_slice(&4101u32.to_ne_bytes());
    assert_eq!(decode_recv(&bad, 4), Err(WqeError::LengthMismatch));
    let long = encode_recv(9, &[sge(0, 1 << 31, 1), sge(0, 1, 1)], RECV_DATA + 32);
    assert_eq!(decode_recv(&long, 4), Err(WqeError::TooLong));
}

// ---- property tests ----

/// The QP types a send WQE is decoded for.
fn arb_kind() -> impl Strategy<Value = QpType> {
    prop::sample::select(std::vec![QpType::Rc, QpType::Uc, QpType::Ud, QpType::Gsi])
}

fn arb_sges(min_total: u32) -> impl Strategy<Value = Vec<WqeSge>> {
    vec(
        any::<(u64, u32)>().prop_flat_map(|(addr, lkey)| {
            (0u32..(1 << 28)).prop_map(move |length| sge(addr, length, lkey))
        }),
        0..6,
    )
    .prop_filter("atomic buffer", move |s| {
        s.iter().map(|s| s.length).sum::<u32>() >= min_total
    })
}

fn arb_sge_data() -> impl Strategy<Value = Data> {
    arb_sges(0).prop_map(Data::Sges)
}

fn arb_data() -> impl Strategy<Value = Data> {
    prop_oneof![
        arb_sge_data(),
        vec(any::<u8>(), 0..200).prop_map(Data::Inline)
    ]
}

fn arb_send() -> impl Strategy<Value = SendOp> {
    (any::<Option<u32>>(), any::<bool>()).prop_map(|(x, inv)| match (x, inv) {
        (Some(v), true) => SendOp::Send {
            imm: None,
            inv_rkey: Some(v),
        },
        (imm, _) => SendOp::Send {
            imm,
            inv_rkey: None,
        },
    })
}

fn arb_write() -> impl Strategy<Value = SendOp> {
    any::<(u64, u32, Option<u32>)>().prop_map(|(remote_addr, rkey, imm)| SendOp::Write {
        remote_addr,
        rkey,
        imm,
    })
}

fn arb_bind() -> impl Strategy<Value = SendOp> {
    any::<(u64, u64, u32, u32, u32, u32)>().prop_map(
        |(addr, length, mr_lkey, mw_rkey, rkey, access)| {
            SendOp::BindMw(BindWr {
                addr,
                length,
                mr_lkey,
                mw_rkey,
                rkey,
                access,
            })
        },
    )
}

/// RC-only operations with the data they take.
fn arb_rc_only() -> impl Strategy<Value = (SendOp, Data)> {
    let aligned = any::<u64>().prop_map(|a| a & !7);
    prop_oneof![
        (any::<(u64, u32)>(), arb_sge_data())
            .prop_map(|((remote_addr, rkey), d)| (SendOp::Read { remote_addr, rkey }, d)),
        (aligned.clone(), any::<(u32, u64, u64)>(), arb_sges(8)).prop_map(
            |(remote_addr, (rkey, compare, swap), s)| (
                SendOp::CmpSwap {
                    remote_addr,
                    rkey,
                    compare,
                    swap
                },
                Data::Sges(s)
            )
        ),
        (aligned, any::<(u32, u64)>(), arb_sges(8)).prop_map(|(remote_addr, (rkey, add), s)| (
            SendOp::FetchAdd {
                remote_addr,
                rkey,
                add
            },
            Data::Sges(s)
        )),
        any::<(u64, u32, [u8; 8])>().prop_map(|(remote_addr, rkey, value)| (
            SendOp::AtomicWrite(AtomicWriteWr {
                remote_addr,
                rkey,
                value
            }),
            Data::Sges(Vec::new())
        )),
        (any::<(u64, u32, u8, u8)>(), 0..=(1u32 << 31)).prop_map(
            |((remote_addr, rkey, placement_type, level), length)| (
                SendOp::Flush(FlushWr {
                    remote_addr,
                    rkey,
                    length,
                    placement_type,
                    level
                }),
                Data::Sges(Vec::new())
            )
        ),
        any::<u32>().prop_map(|rkey| (SendOp::LocalInv { rkey }, Data::Sges(Vec::new()))),
        any::<(u32, u32, u64)>().prop_map(|(key, access, iova)| (
            SendOp::RegMr { key, access, iova },
            Data::Sges(Vec::new())
        )),
    ]
}

/// A request legal on `kind`, with its data.
fn arb_op_for(kind: QpType) -> BoxedStrategy<(SendOp, Data)> {
    let send = (arb_send(), arb_data());
    match kind {
        QpType::Ud | QpType::Gsi => (arb_send(), arb_data())
            .prop_filter("datagram send", |(op, _)| {
                matches!(op, SendOp::Send { inv_rkey: None, .. })
            })
            .boxed(),
        QpType::Uc => prop_oneof![
            send,
            (arb_write(), arb_data()),
            arb_bind().prop_map(|op| (op, Data::Sges(Vec::new()))),
        ]
        .boxed(),
        _ => prop_oneof![
            send,
            (arb_write(), arb_data()),
            arb_bind().prop_map(|op| (op, Data::Sges(Vec::new()))),
            arb_rc_only(),
        ]
        .boxed(),
    }
}

/// A legal request for a QP kind, with limits it fits and the slot length.
fn arb_send_case() -> impl Strategy<Value = (QpType, SendSpec, u32, u32, usize)> {
    arb_kind()
        .prop_flat_map(|kind| {
            (
                Just(kind),
                arb_op_for(kind),
                any::<(u64, u32)>(),
                any::<(u32, u32, u16, u32)>(),
                (0u32..3, 0u32..64, 0usize..64),
            )
        })
        .prop_map(
            |(kind, (op, data), (wr_id, flags), (qpn, qkey, pkey, ah), (xs, xi, xl))| {
                let ud = matches!(kind, QpType::Ud | QpType::Gsi).then_some(UdDest {
                    remote_qpn: qpn,
                    remote_qkey: qkey,
                    pkey_index: pkey,
                    ah_num: ah,
                });
                let (nsge, ninl) = match &data {
                    Data::Sges(s) => (s.len() as u32, 0),
                    Data::Inline(b) => (0, b.len() as u32),
                };
                let (max_sge, max_inline) = (nsge + xs, ninl + xi);
                let len = slot_len(max_sge, max_inline).max(SEND_DATA + 8) + xl;
                let spec = SendSpec {
                    wr_id,
                    op,
                    flags: flags & !SEND_INLINE,
                    ud,
                    data,
                };
                (kind, spec, max_sge, max_inline, len)
            },
        )
}

/// What must hold of any successfully decoded send WQE.
fn check_send_invariants(
    slot: &[u8],
    wqe: &SendWqe<'_>,
    kind: QpType,
    max_sge: u32,
    max_inline: u32,
) -> Result<(), TestCaseError> {
    prop_assert!(u64::from(wqe.length) <= MAX_MSG_SIZE);
    prop_assert_eq!(
        u32::from_ne_bytes(slot[12..16].try_into().unwrap()),
        wqe.op.wr_opcode()
    );
    prop_assert_eq!(wqe.ud.is_some(), matches!(kind, QpType::Ud | QpType::Gsi));
    match wqe.payload {
        Payload::Sges(s) => {
            prop_assert!(s.len() <= max_sge as usize);
            prop_assert_eq!(
                s.iter().map(|s| u64::from(s.length)).sum::<u64>(),
                u64::from(wqe.length)
            );
        }
        Payload::Inline(b) => {
            prop_assert_eq!(b.len(), wqe.length as usize);
            if !matches!(wqe.op, SendOp::AtomicWrite(_)) {
                prop_assert!(b.len() <= max_inline as usize);
            }
        }
    }
    if let SendOp::CmpSwap { remote_addr, .. } | SendOp::FetchAdd { remote_addr, .. } = wqe.op {
        prop_assert_eq!(remote_addr % 8, 0);
        prop_assert!(wqe.length >= 8);
    }
    Ok(())
}

/// Random bytes, but with a header plausible enough to get past the opcode
/// check: a known opcode, few SGEs, and `dma.length` often matching.
fn arb_plausible_slot() -> impl Strategy<Value = Vec<u8>> {
    let codes = std::vec![
        RDMA_WRITE,
        RDMA_WRITE_WITH_IMM,
        SEND,
        SEND_WITH_IMM,
        RDMA_READ,
        ATOMIC_CMP_AND_SWP,
        ATOMIC_FETCH_AND_ADD,
        LSO,
        SEND_WITH_INV,
        RDMA_READ_WITH_INV,
        LOCAL_INV,
        BIND_MW,
        FLUSH,
        ATOMIC_WRITE,
        REG_MR,
        12,
    ];
    (
        vec(any::<u8>(), 150..500),
        prop::sample::select(codes),
        0u32..16,
        0u32..8,
        any::<bool>(),
    )
        .prop_map(|(mut bytes, code, flags, num_sge, fix_length)| {
            let mut put = |at: usize, v: u32| {
                if let Some(b) = bytes.get_mut(at..at + 4) {
                    b.copy_from_slice(&v.to_ne_bytes());
                }
            };
            put(12, code);
            put(16, flags);
            put(196, num_sge);
            let total: u64 = (0..num_sge as usize)
                .filter_map(|i| bytes.get(SEND_DATA + 16 * i + 8..SEND_DATA + 16 * i + 12))
                .map(|b| u64::from(u32::from_ne_bytes(b.try_into().unwrap())))
                .sum();
            if fix_length && bytes.len() >= 188 {
                bytes[184..188].copy_from_slice(&(total as u32).to_ne_bytes());
            }
            bytes
        })
}

proptest! {
    #[test]
    fn built_send_wqes_decode_to_what_was_built(
        (kind, spec, max_sge, max_inline, len) in arb_send_case()
    ) {
        let slot = encode_send(&spec, len);
        let wqe = decode_send(&slot, kind, max_sge, max_inline)
            .map_err(|e| TestCaseError::fail(std::format!("{e:?} for {spec:?}")))?;
        prop_assert_eq!(wqe.wr_id, spec.wr_id);
        prop_assert_eq!(wqe.op, spec.op);
        prop_assert_eq!(wqe.flags, spec.flags());
        prop_assert_eq!(wqe.ud, spec.ud);
        match (&spec.data, wqe.payload) {
            _ if !carries_data(&spec.op) => {}
            (Data::Sges(want), Payload::Sges(got)) => {
                prop_assert_eq!(got.iter().collect::<Vec<_>>(), want.clone());
            }
            (Data::Inline(want), Payload::Inline(got)) => prop_assert_eq!(got, &want[..]),
            (want, got) => prop_assert!(false, "{:?} decoded as {:?}", want, got),
        }
        if carries_data(&spec.op) {
            prop_assert_eq!(wqe.length, spec.data.length());
        }
        check_send_invariants(&slot, &wqe, kind, max_sge, max_inline)?;
    }

    #[test]
    fn built_recv_wqes_decode_to_what_was_built(
        wr_id in any::<u64>(),
        sges in arb_sges(0),
        extra in 0u32..3,
    ) {
        let max_sge = sges.len() as u32 + extra;
        let slot = encode_recv(wr_id, &sges, RECV_DATA + 16 * max_sge as usize);
        let wqe = decode_recv(&slot, max_sge).unwrap();
        prop_assert_eq!(wqe.wr_id, wr_id);
        prop_assert_eq!(wqe.sges.iter().collect::<Vec<_>>(), sges.clone());
        prop_assert_eq!(wqe.length, sges.iter().map(|s| s.length).sum::<u32>());
    }

    #[test]
    fn any_bytes_decode_or_fail_cleanly(
        bytes in vec(any::<u8>(), 0..700),
        kind in prop::sample::select(QpType::ALL.to_vec()),
        max_sge in 0u32..40,
        max_inline in 0u32..600,
    ) {
        if let Ok(wqe) = decode_send(&bytes, kind, max_sge, max_inline) {
            check_send_invariants(&bytes, &wqe, kind, max_sge, max_inline)?;
        }
        if let Ok(wqe) = decode_recv(&bytes, max_sge) {
            prop_assert!(wqe.sges.len() <= max_sge as usize);
            prop_assert!(u64::from(wqe.length) <= MAX_MSG_SIZE);
        }
    }

    #[test]
    fn plausible_slots_decode_or_fail_cleanly(
        bytes in arb_plausible_slot(),
        kind in arb_kind(),
        max_sge in 0u32..8,
        max_inline in 0u32..200,
    ) {
        if let Ok(wqe) = decode_send(&bytes, kind, max_sge, max_inline) {
            check_send_invariants(&bytes, &wqe, kind, max_sge, max_inline)?;
        }
    }

    #[test]
    fn corrupted_wqes_decode_or_fail_cleanly(
        (kind, spec, max_sge, max_inline, len) in arb_send_case(),
        hits in vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut slot = encode_send(&spec, len);
        for (at, v) in hits {
            let i = at.index(slot.len());
            slot[i] = v;
        }
        let cut = cut.index(slot.len() + 1);
        let slot = if cut < SEND_DATA { &slot[..] } else { &slot[..cut] };
        if let Ok(wqe) = decode_send(slot, kind, max_sge, max_inline) {
            check_send_invariants(slot, &wqe, kind, max_sge, max_inline)?;
        }
    }
}
