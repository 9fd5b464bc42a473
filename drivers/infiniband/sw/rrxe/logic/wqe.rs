// SPDX-License-Identifier: GPL-2.0

//! Send and receive WQEs as they sit in a ring slot.
//!
//! A process writes its work requests straight into the send and receive
//! rings it maps (`struct rxe_send_wqe` and `struct rxe_recv_wqe` of
//! `include/uapi/rdma/rdma_user_rxe.h`, followed by the SGE array or the
//! inline data), and `post.rs` writes a kernel consumer's requests in the
//! same layout. The driver copies one whole slot into its own buffer and
//! hands it to [`decode_send`] or [`decode_recv`], which read every field
//! at a fixed offset, check everything a hostile writer could get wrong and
//! return a plain description of the request. Nothing here trusts a length
//! or count from the slot before bounding it, and nothing panics.
//!
//! What is checked, and what is left to the caller:
//!
//! - the opcode is one rxe implements and is legal on the QP type
//!   ([`super::wr::classify`]; UD and GSI QPs take only sends with or
//!   without immediate data, as rxe's `init_send_wr`);
//! - the SGE count is at most the queue's `max_sge` and the array fits in
//!   the slot; the SGE lengths add up, without overflow, to at most
//!   [`MAX_MSG_SIZE`] and to exactly the `dma.length` the provider wrote;
//! - inline data fits in `max_inline` and in the slot, and is only used by
//!   sends and RDMA writes;
//! - compare-and-swap and fetch-and-add target an 8-byte aligned address
//!   and have a local buffer of at least 8 bytes (rdma-core's own rule;
//!   kernel consumers are held to exactly 8 by [`super::wr::check_send`]).
//!
//! Left to the caller: whether keys, AH numbers and remote QPNs name
//! anything, memory access rights, and the alignment of an ATOMIC WRITE's
//! target (the responder checks it, as in rxe). A UD `remote_qpn` is
//! returned as written; the BTH encoder keeps its low 24 bits.
//!
//! The remote address of RDMA and atomic operations is read from the
//! request (`wr.rdma.remote_addr` and its aliases), not from the WQE's
//! `iova` copy: both hold the same value when rdma-core or `post.rs` wrote
//! the slot, and either is as untrusted as the other.

use super::flush::{AtomicWriteWr, FlushWr};
use super::mw::BindWr;
use super::qp_state::QpType;
use super::wr::{classify, opcode, WrClass, MAX_MSG_SIZE, SEND_INLINE};

/// `IB_SEND_FENCE`: wait for earlier reads and atomics to complete.
pub(crate) const SEND_FENCE: u32 = 1;
/// `IB_SEND_SIGNALED`: complete this request even on a selective-signal QP.
pub(crate) const SEND_SIGNALED: u32 = 1 << 1;
/// `IB_SEND_SOLICITED`: ask for a solicited event at the receiver.
pub(crate) const SEND_SOLICITED: u32 = 1 << 2;

/// Byte offsets of the fields decoded here, per
/// `include/uapi/rdma/rdma_user_rxe.h` (checked against the kernel's
/// headers at build time by `ffi/rxe_abi/wqe_layout.rs`). All fields are in host
/// byte order except the immediate data, which is kept as stored.
pub(crate) mod layout {
    /// `rxe_send_wqe.wr.wr_id`.
    pub(crate) const SEND_WR_ID: usize = 0;
    /// `rxe_send_wqe.wr.opcode`.
    pub(crate) const SEND_OPCODE: usize = 12;
    /// `rxe_send_wqe.wr.send_flags`.
    pub(crate) const SEND_FLAGS: usize = 16;
    /// `rxe_send_wqe.wr.ex` (`imm_data` or `invalidate_rkey`).
    pub(crate) const SEND_EX: usize = 20;

    /// `wr.wr.rdma.remote_addr`, also `atomic`, `flush` (and `mw.addr`).
    pub(crate) const RDMA_REMOTE_ADDR: usize = 24;
    /// `wr.wr.rdma.rkey`, also used by ATOMIC WRITE.
    pub(crate) const RDMA_RKEY: usize = 32;

    /// `wr.wr.atomic.remote_addr`.
    pub(crate) const ATOMIC_REMOTE_ADDR: usize = 24;
    /// `wr.wr.atomic.compare_add`.
    pub(crate) const ATOMIC_COMPARE_ADD: usize = 32;
    /// `wr.wr.atomic.swap`.
    pub(crate) const ATOMIC_SWAP: usize = 40;
    /// `wr.wr.atomic.rkey`.
    pub(crate) const ATOMIC_RKEY: usize = 48;

    /// `wr.wr.flush.remote_addr`.
    pub(crate) const FLUSH_REMOTE_ADDR: usize = 24;
    /// `wr.wr.flush.rkey`.
    pub(crate) const FLUSH_RKEY: usize = 36;
    /// `wr.wr.flush.type`.
    pub(crate) const FLUSH_TYPE: usize = 40;
    /// `wr.wr.flush.level`.
    pub(crate) const FLUSH_LEVEL: usize = 41;

    /// `wr.wr.ud.remote_qpn`.
    pub(crate) const UD_REMOTE_QPN: usize = 24;
    /// `wr.wr.ud.remote_qkey`.
    pub(crate) const UD_REMOTE_QKEY: usize = 28;
    /// `wr.wr.ud.pkey_index`.
    pub(crate) const UD_PKEY_INDEX: usize = 32;
    /// `wr.wr.ud.ah_num`.
    pub(crate) const UD_AH_NUM: usize = 36;

    /// `wr.wr.mw.addr`.
    pub(crate) const MW_ADDR: usize = 24;
    /// `wr.wr.mw.length`.
    pub(crate) const MW_LENGTH: usize = 32;
    /// `wr.wr.mw.mr_lkey`.
    pub(crate) const MW_MR_LKEY: usize = 40;
    /// `wr.wr.mw.mw_rkey`.
    pub(crate) const MW_MW_RKEY: usize = 44;
    /// `wr.wr.mw.rkey`.
    pub(crate) const MW_RKEY: usize = 48;
    /// `wr.wr.mw.access`.
    pub(crate) const MW_ACCESS: usize = 52;

    /// `wr.wr.reg.key` (kernel-only member of the union).
    pub(crate) const REG_KEY: usize = 32;
    /// `wr.wr.reg.access`.
    pub(crate) const REG_ACCESS: usize = 36;

    /// `rxe_send_wqe.iova`: for `REG_MR`, the address the region is
    /// registered at (`post.rs` copies the `ib_mr`'s `iova` there).
    pub(crate) const SEND_IOVA: usize = 152;

    /// `rxe_send_wqe.dma.length`.
    pub(crate) const SEND_DMA_LENGTH: usize = 184;
    /// `rxe_send_wqe.dma.num_sge`.
    pub(crate) const SEND_DMA_NUM_SGE: usize = 196;
    /// `rxe_send_wqe.dma.sge` / `inline_data` / `atomic_wr`, which is also
    /// `sizeof(struct rxe_send_wqe)`.
    pub(crate) const SEND_DATA: usize = 208;

    /// `rxe_recv_wqe.wr_id`.
    pub(crate) const RECV_WR_ID: usize = 0;
    /// `rxe_recv_wqe.dma.length`.
    pub(crate) const RECV_DMA_LENGTH: usize = 16;
    /// `rxe_recv_wqe.dma.num_sge`.
    pub(crate) const RECV_DMA_NUM_SGE: usize = 28;
    /// `rxe_recv_wqe.dma.sge`, also `sizeof(struct rxe_recv_wqe)`.
    pub(crate) const RECV_DATA: usize = 40;

    /// `sizeof(struct rxe_sge)`.
    pub(crate) const SGE_SIZE: usize = 16;
    /// `rxe_sge.addr`.
    pub(crate) const SGE_ADDR: usize = 0;
    /// `rxe_sge.length`.
    pub(crate) const SGE_LENGTH: usize = 8;
    /// `rxe_sge.lkey`.
    pub(crate) const SGE_LKEY: usize = 12;

    /// Bytes of an ATOMIC WRITE's value at [`SEND_DATA`].
    pub(crate) const ATOMIC_WRITE_LEN: usize = 8;
}

use layout as l;

/// One scatter/gather element (`struct rxe_sge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct WqeSge {
    pub(crate) addr: u64,
    pub(crate) length: u32,
    pub(crate) lkey: u32,
}

impl WqeSge {
    /// The SGE stored in `bytes`.
    fn from_bytes(bytes: &[u8; l::SGE_SIZE]) -> Option<WqeSge> {
        Some(WqeSge {
            addr: u64_at(bytes, l::SGE_ADDR)?,
            length: u32_at(bytes, l::SGE_LENGTH)?,
            lkey: u32_at(bytes, l::SGE_LKEY)?,
        })
    }
}

/// The SGEs of a WQE, decoded lazily from the slot bytes.
///
/// # Invariants
///
/// `bytes.len()` is a multiple of [`layout::SGE_SIZE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SgeList<'a> {
    bytes: &'a [u8],
}

impl<'a> SgeList<'a> {
    /// No SGEs.
    pub(crate) const EMPTY: SgeList<'static> = SgeList { bytes: &[] };

    /// The first `count` SGEs of `data`, if they fit.
    fn new(data: &'a [u8], count: u32) -> Option<SgeList<'a>> {
        let len = usize::try_from(count).ok()?.checked_mul(l::SGE_SIZE)?;
        // INVARIANT: `len` is `count` SGEs.
        Some(SgeList {
            bytes: data.get(..len)?,
        })
    }

    /// Number of SGEs.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len() / l::SGE_SIZE
    }

    /// Whether there are no SGEs.
    pub(crate) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// SGE number `i`, if there is one.
    pub(crate) fn get(&self, i: usize) -> Option<WqeSge> {
        let at = i.checked_mul(l::SGE_SIZE)?;
        WqeSge::from_bytes(self.bytes.get(at..)?.first_chunk()?)
    }

    /// The SGEs in order.
    pub(crate) fn iter(&self) -> SgeIter<'a> {
        SgeIter { rest: self.bytes }
    }

    /// The sum of the SGE lengths, `None` if it overflows (it cannot with
    /// at most 2^32 SGEs, but that is not worth relying on).
    fn total_length(&self) -> Option<u64> {
        self.iter()
            .try_fold(0u64, |sum, s| sum.checked_add(u64::from(s.length)))
    }
}

impl<'a> IntoIterator for SgeList<'a> {
    type Item = WqeSge;
    type IntoIter = SgeIter<'a>;

    fn into_iter(self) -> SgeIter<'a> {
        self.iter()
    }
}

/// Iterator over the SGEs of an [`SgeList`].
#[derive(Clone, Debug)]
pub(crate) struct SgeIter<'a> {
    rest: &'a [u8],
}

impl Iterator for SgeIter<'_> {
    type Item = WqeSge;

    fn next(&mut self) -> Option<WqeSge> {
        let (first, rest) = self.rest.split_first_chunk()?;
        self.rest = rest;
        WqeSge::from_bytes(first)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.rest.len() / l::SGE_SIZE;
        (n, Some(n))
    }
}

impl ExactSizeIterator for SgeIter<'_> {}

/// What a send WQE asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SendOp {
    /// `SEND`, `SEND_WITH_IMM` (`imm` is the big-endian immediate data as
    /// stored, read as a native `u32`) or `SEND_WITH_INV`.
    Send {
        imm: Option<u32>,
        inv_rkey: Option<u32>,
    },
    /// `RDMA_WRITE` or `RDMA_WRITE_WITH_IMM`.
    Write {
        remote_addr: u64,
        rkey: u32,
        imm: Option<u32>,
    },
    /// `RDMA_READ` into the payload SGEs.
    Read { remote_addr: u64, rkey: u32 },
    /// `ATOMIC_CMP_AND_SWP`; the original value goes to the payload SGEs.
    CmpSwap {
        remote_addr: u64,
        rkey: u32,
        compare: u64,
        swap: u64,
    },
    /// `ATOMIC_FETCH_AND_ADD`; the original value goes to the payload SGEs.
    FetchAdd {
        remote_addr: u64,
        rkey: u32,
        add: u64,
    },
    /// `ATOMIC_WRITE` of the 8 bytes rdma-core stores in `dma.atomic_wr`.
    AtomicWrite(AtomicWriteWr),
    /// `FLUSH` of a range (rdma-core puts the length in `dma.length`;
    /// `wr.flush.length` stays zero and is not read).
    Flush(FlushWr),
    /// `LOCAL_INV` of `rkey` (`ex.invalidate_rkey`).
    LocalInv { rkey: u32 },
    /// `REG_MR` (kernel consumers only): the new key and access flags, and
    /// the address the region is registered at (the WQE's `iova`, which
    /// `post.rs` takes from the `ib_mr` when the request is posted). The
    /// `ib_mr` pointer next to them is not decoded.
    RegMr { key: u32, access: u32, iova: u64 },
    /// `BIND_MW`.
    BindMw(BindWr),
}

impl SendOp {
    /// The `enum ib_wr_opcode` value this operation is posted with.
    pub(crate) const fn wr_opcode(&self) -> u32 {
        use opcode::*;
        match self {
            SendOp::Send {
                imm: Some(_),
                inv_rkey: _,
            } => SEND_WITH_IMM,
            SendOp::Send {
                imm: None,
                inv_rkey: Some(_),
            } => SEND_WITH_INV,
            SendOp::Send { .. } => SEND,
            SendOp::Write { imm: Some(_), .. } => RDMA_WRITE_WITH_IMM,
            SendOp::Write { imm: None, .. } => RDMA_WRITE,
            SendOp::Read { .. } => RDMA_READ,
            SendOp::CmpSwap { .. } => ATOMIC_CMP_AND_SWP,
            SendOp::FetchAdd { .. } => ATOMIC_FETCH_AND_ADD,
            SendOp::AtomicWrite(_) => ATOMIC_WRITE,
            SendOp::Flush(_) => FLUSH,
            SendOp::LocalInv { .. } => LOCAL_INV,
            SendOp::RegMr { .. } => REG_MR,
            SendOp::BindMw(_) => BIND_MW,
        }
    }

    /// Whether the operation holds a place of the initiator depth
    /// (`max_rd_atomic`) from its start to its completion. READs and
    /// atomics do, and so does ATOMIC WRITE: C rxe's requester counts
    /// `RXE_READ_OR_ATOMIC_MASK | RXE_ATOMIC_WRITE_MASK` in
    /// `check_init_depth`, and its responder keeps a resource for each
    /// ATOMIC WRITE from a ring of `max_dest_rd_atomic`, recycling the
    /// oldest on the understanding that the requester sends no more. FLUSH
    /// does not count in rxe, nor here.
    pub(crate) const fn uses_initiator_depth(&self) -> bool {
        matches!(
            self.class(),
            WrClass::Read | WrClass::Atomic | WrClass::AtomicWrite
        )
    }

    /// How the operation is handled (as [`classify`] says).
    pub(crate) const fn class(&self) -> WrClass {
        match self {
            SendOp::Send { .. } => WrClass::Send,
            SendOp::Write { .. } => WrClass::Write,
            SendOp::Read { .. } => WrClass::Read,
            SendOp::CmpSwap { .. } | SendOp::FetchAdd { .. } => WrClass::Atomic,
            SendOp::AtomicWrite(_) => WrClass::AtomicWrite,
            SendOp::Flush(_) => WrClass::Flush,
            SendOp::LocalInv { .. } | SendOp::RegMr { .. } | SendOp::BindMw(_) => WrClass::LocalOp,
        }
    }
}

/// UD addressing of a send WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct UdDest {
    pub(crate) remote_qpn: u32,
    pub(crate) remote_qkey: u32,
    pub(crate) pkey_index: u16,
    pub(crate) ah_num: u32,
}

/// Where a message's payload comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Payload<'a> {
    /// Memory named by SGEs (also the destination of reads and atomics).
    Sges(SgeList<'a>),
    /// Bytes copied into the WQE itself.
    Inline(&'a [u8]),
}

/// A decoded send WQE, borrowing the slot copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SendWqe<'a> {
    pub(crate) wr_id: u64,
    pub(crate) op: SendOp,
    /// `send_flags`, as written.
    pub(crate) flags: u32,
    /// Some only when decoded for a UD or GSI QP.
    pub(crate) ud: Option<UdDest>,
    /// The total size of `payload`: the sum of the SGE lengths or the
    /// inline length. 0 for FLUSH (its length is in [`SendOp::Flush`]) and
    /// local operations, 8 for ATOMIC WRITE. At most [`MAX_MSG_SIZE`].
    pub(crate) length: u32,
    /// Empty SGEs for FLUSH and local operations; for ATOMIC WRITE, the
    /// 8 inline bytes of its value.
    pub(crate) payload: Payload<'a>,
}

impl SendWqe<'_> {
    /// The `byte_len` its successful completion reports: what rxe reports,
    /// the `dma.length` the poster wrote. That is the payload's length,
    /// except for a FLUSH, which has no payload but whose `dma.length` is
    /// the length of the range it flushes.
    pub(crate) const fn completion_length(&self) -> u32 {
        match self.op {
            SendOp::Flush(wr) => wr.length,
            _ => self.length,
        }
    }

    /// Whether `IB_SEND_FENCE` is set.
    pub(crate) const fn fence(&self) -> bool {
        self.flags & SEND_FENCE != 0
    }

    /// Whether `IB_SEND_SIGNALED` is set.
    pub(crate) const fn signaled(&self) -> bool {
        self.flags & SEND_SIGNALED != 0
    }

    /// Whether `IB_SEND_SOLICITED` is set.
    pub(crate) const fn solicited(&self) -> bool {
        self.flags & SEND_SOLICITED != 0
    }
}

/// A decoded receive WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RecvWqe<'a> {
    pub(crate) wr_id: u64,
    /// The sum of the SGE lengths, at most [`MAX_MSG_SIZE`].
    pub(crate) length: u32,
    pub(crate) sges: SgeList<'a>,
}

/// Why a WQE cannot be processed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WqeError {
    /// The slot is shorter than the WQE header, its SGE array or its inline
    /// data (only a driver bug can make a slot too short for the limits).
    Truncated,
    /// An opcode rxe does not implement (including LSO and
    /// RDMA_READ_WITH_INV).
    BadOpcode(u32),
    /// An opcode this QP type does not take.
    OpcodeNotForQp(u32),
    /// More SGEs (the count given) than the queue was created for.
    TooManySges(u32),
    /// `dma.length` differs from the SGE lengths' sum, or an ATOMIC
    /// WRITE's `dma.length` is not 8.
    LengthMismatch,
    /// The message is longer than [`MAX_MSG_SIZE`].
    TooLong,
    /// More inline data than the queue was created for.
    InlineTooLong,
    /// An atomic's remote address is not 8-byte aligned.
    Misaligned,
    /// `IB_SEND_INLINE` on a read or an atomic, whose data area must hold
    /// SGEs.
    InlineNotAllowed,
    /// A compare-and-swap or fetch-and-add whose local buffer is shorter
    /// than the 8 bytes the original value needs.
    AtomicTooShort,
}

/// Decodes the send WQE in `slot` (one whole ring element) for a QP of
/// type `kind` whose send queue holds at most `max_sge` SGEs or
/// `max_inline` inline bytes.
pub(crate) fn decode_send(
    slot: &[u8],
    kind: QpType,
    max_sge: u32,
    max_inline: u32,
) -> Result<SendWqe<'_>, WqeError> {
    let hdr = Fields(slot.get(..l::SEND_DATA).ok_or(WqeError::Truncated)?);
    let data = slot.get(l::SEND_DATA..).ok_or(WqeError::Truncated)?;
    let wr_id = hdr.u64(l::SEND_WR_ID)?;
    let code = hdr.u32(l::SEND_OPCODE)?;
    let flags = hdr.u32(l::SEND_FLAGS)?;
    check_opcode(code, kind)?;
    let ud = match kind {
        QpType::Ud | QpType::Gsi => Some(ud_dest(&hdr)?),
        _ => None,
    };
    let op = send_op(&hdr, data, code)?;
    let dma_length = hdr.u32(l::SEND_DMA_LENGTH)?;
    let num_sge = hdr.u32(l::SEND_DMA_NUM_SGE)?;
    let inline = flags & SEND_INLINE != 0;
    let (length, payload) = match op {
        SendOp::Send { .. } | SendOp::Write { .. } if inline => {
            inline_payload(data, dma_length, max_inline)?
        }
        SendOp::Send { .. } | SendOp::Write { .. } => {
            sge_payload(data, num_sge, dma_length, max_sge)?
        }
        // Their data area must hold the SGEs the result goes to, where
        // rdma-core would have copied the buffers' contents.
        SendOp::Read { .. } | SendOp::CmpSwap { .. } | SendOp::FetchAdd { .. } if inline => {
            return Err(WqeError::InlineNotAllowed)
        }
        SendOp::Read { .. } => sge_payload(data, num_sge, dma_length, max_sge)?,
        SendOp::CmpSwap { remote_addr, .. } | SendOp::FetchAdd { remote_addr, .. } => {
            atomic_payload(data, remote_addr, num_sge, dma_length, max_sge)?
        }
        // The remaining operations read no SGEs, so `IB_SEND_INLINE` does
        // not change anything for them.
        SendOp::AtomicWrite(_) => atomic_write_payload(data, dma_length)?,
        SendOp::Flush(wr) if u64::from(wr.length) > MAX_MSG_SIZE => return Err(WqeError::TooLong),
        SendOp::Flush(_) | SendOp::LocalInv { .. } | SendOp::RegMr { .. } | SendOp::BindMw(_) => {
            (0, Payload::Sges(SgeList::EMPTY))
        }
    };
    Ok(SendWqe {
        wr_id,
        op,
        flags,
        ud,
        length,
        payload,
    })
}

/// Decodes the receive WQE in `slot` (one whole ring element) of a queue
/// that holds at most `max_sge` SGEs.
pub(crate) fn decode_recv(slot: &[u8], max_sge: u32) -> Result<RecvWqe<'_>, WqeError> {
    let hdr = Fields(slot.get(..l::RECV_DATA).ok_or(WqeError::Truncated)?);
    let data = slot.get(l::RECV_DATA..).ok_or(WqeError::Truncated)?;
    let num_sge = hdr.u32(l::RECV_DMA_NUM_SGE)?;
    let (sges, length) = checked_sges(data, num_sge, hdr.u32(l::RECV_DMA_LENGTH)?, max_sge)?;
    Ok(RecvWqe {
        wr_id: hdr.u64(l::RECV_WR_ID)?,
        length,
        sges,
    })
}

/// Whether a QP of type `kind` takes opcode `code`, telling an opcode rxe
/// does not implement from one the QP type does not take.
fn check_opcode(code: u32, kind: QpType) -> Result<(), WqeError> {
    use opcode::*;
    // LSO and RDMA_READ_WITH_INV are in `classify`'s table but rxe's
    // requester has no packet for them.
    let implemented = matches!(
        code,
        RDMA_WRITE
            | RDMA_WRITE_WITH_IMM
            | SEND
            | SEND_WITH_IMM
            | SEND_WITH_INV
            | RDMA_READ
            | ATOMIC_CMP_AND_SWP
            | ATOMIC_FETCH_AND_ADD
            | ATOMIC_WRITE
            | FLUSH
            | LOCAL_INV
            | BIND_MW
            | REG_MR
    );
    if !implemented {
        return Err(WqeError::BadOpcode(code));
    }
    // Datagrams have packet opcodes only for plain sends and sends with
    // immediate data (rxe's `init_send_wr` refuses the rest).
    let datagram = matches!(kind, QpType::Ud | QpType::Gsi);
    if datagram && !matches!(code, SEND | SEND_WITH_IMM) {
        return Err(WqeError::OpcodeNotForQp(code));
    }
    match classify(code, kind) {
        Some(_) => Ok(()),
        None => Err(WqeError::OpcodeNotForQp(code)),
    }
}

/// The operation of opcode `code` (one [`check_opcode`] accepted) with its
/// arguments from the request header `hdr` and, for ATOMIC WRITE, the data
/// area `data` after it.
fn send_op(hdr: &Fields<'_>, data: &[u8], code: u32) -> Result<SendOp, WqeError> {
    use opcode::*;
    let ex = hdr.u32(l::SEND_EX)?;
    let flag = |on: bool| on.then_some(ex);
    Ok(match code {
        SEND | SEND_WITH_IMM | SEND_WITH_INV => SendOp::Send {
            imm: flag(code == SEND_WITH_IMM),
            inv_rkey: flag(code == SEND_WITH_INV),
        },
        RDMA_WRITE | RDMA_WRITE_WITH_IMM => SendOp::Write {
            remote_addr: hdr.u64(l::RDMA_REMOTE_ADDR)?,
            rkey: hdr.u32(l::RDMA_RKEY)?,
            imm: flag(code == RDMA_WRITE_WITH_IMM),
        },
        RDMA_READ => SendOp::Read {
            remote_addr: hdr.u64(l::RDMA_REMOTE_ADDR)?,
            rkey: hdr.u32(l::RDMA_RKEY)?,
        },
        ATOMIC_CMP_AND_SWP => SendOp::CmpSwap {
            remote_addr: hdr.u64(l::ATOMIC_REMOTE_ADDR)?,
            rkey: hdr.u32(l::ATOMIC_RKEY)?,
            compare: hdr.u64(l::ATOMIC_COMPARE_ADD)?,
            swap: hdr.u64(l::ATOMIC_SWAP)?,
        },
        ATOMIC_FETCH_AND_ADD => SendOp::FetchAdd {
            remote_addr: hdr.u64(l::ATOMIC_REMOTE_ADDR)?,
            rkey: hdr.u32(l::ATOMIC_RKEY)?,
            add: hdr.u64(l::ATOMIC_COMPARE_ADD)?,
        },
        // rdma-core's `wr_atomic_write` fills the `rdma` member and puts
        // the value in `dma.atomic_wr`.
        ATOMIC_WRITE => SendOp::AtomicWrite(AtomicWriteWr {
            remote_addr: hdr.u64(l::RDMA_REMOTE_ADDR)?,
            rkey: hdr.u32(l::RDMA_RKEY)?,
            value: bytes_at(data, 0).ok_or(WqeError::Truncated)?,
        }),
        FLUSH => SendOp::Flush(FlushWr {
            remote_addr: hdr.u64(l::FLUSH_REMOTE_ADDR)?,
            rkey: hdr.u32(l::FLUSH_RKEY)?,
            length: hdr.u32(l::SEND_DMA_LENGTH)?,
            placement_type: hdr.u8(l::FLUSH_TYPE)?,
            level: hdr.u8(l::FLUSH_LEVEL)?,
        }),
        LOCAL_INV => SendOp::LocalInv { rkey: ex },
        REG_MR => SendOp::RegMr {
            key: hdr.u32(l::REG_KEY)?,
            access: hdr.u32(l::REG_ACCESS)?,
            iova: hdr.u64(l::SEND_IOVA)?,
        },
        BIND_MW => SendOp::BindMw(BindWr {
            addr: hdr.u64(l::MW_ADDR)?,
            length: hdr.u64(l::MW_LENGTH)?,
            mr_lkey: hdr.u32(l::MW_MR_LKEY)?,
            mw_rkey: hdr.u32(l::MW_MW_RKEY)?,
            rkey: hdr.u32(l::MW_RKEY)?,
            access: hdr.u32(l::MW_ACCESS)?,
        }),
        _ => return Err(WqeError::BadOpcode(code)),
    })
}

/// The datagram addressing of a request.
fn ud_dest(hdr: &Fields<'_>) -> Result<UdDest, WqeError> {
    Ok(UdDest {
        remote_qpn: hdr.u32(l::UD_REMOTE_QPN)?,
        remote_qkey: hdr.u32(l::UD_REMOTE_QKEY)?,
        pkey_index: hdr.u16(l::UD_PKEY_INDEX)?,
        ah_num: hdr.u32(l::UD_AH_NUM)?,
    })
}

/// Inline data of `dma_length` bytes at the start of `data`. `num_sge` is
/// not looked at: rdma-core's `ibv_post_send` leaves there the number of
/// buffers it gathered, its `ibv_wr_set_inline_data*` leave it 0.
fn inline_payload(
    data: &[u8],
    dma_length: u32,
    max_inline: u32,
) -> Result<(u32, Payload<'_>), WqeError> {
    if dma_length > max_inline {
        return Err(WqeError::InlineTooLong);
    }
    let len = usize::try_from(dma_length).map_err(|_| WqeError::Truncated)?;
    let bytes = data.get(..len).ok_or(WqeError::Truncated)?;
    Ok((dma_length, Payload::Inline(bytes)))
}

/// The `num_sge` SGEs at the start of `data` as a payload.
fn sge_payload(
    data: &[u8],
    num_sge: u32,
    dma_length: u32,
    max_sge: u32,
) -> Result<(u32, Payload<'_>), WqeError> {
    let (sges, length) = checked_sges(data, num_sge, dma_length, max_sge)?;
    Ok((length, Payload::Sges(sges)))
}

/// The `num_sge` SGEs at the start of `data`, checked against the queue's
/// limit and the `dma_length` the poster computed, with their total length.
fn checked_sges(
    data: &[u8],
    num_sge: u32,
    dma_length: u32,
    max_sge: u32,
) -> Result<(SgeList<'_>, u32), WqeError> {
    if num_sge > max_sge {
        return Err(WqeError::TooManySges(num_sge));
    }
    let sges = SgeList::new(data, num_sge).ok_or(WqeError::Truncated)?;
    let total = sges.total_length().ok_or(WqeError::TooLong)?;
    if total > MAX_MSG_SIZE {
        return Err(WqeError::TooLong);
    }
    if total != u64::from(dma_length) {
        return Err(WqeError::LengthMismatch);
    }
    Ok((sges, dma_length))
}

/// The local buffer of a compare-and-swap or fetch-and-add, which receives
/// the original value.
fn atomic_payload(
    data: &[u8],
    remote_addr: u64,
    num_sge: u32,
    dma_length: u32,
    max_sge: u32,
) -> Result<(u32, Payload<'_>), WqeError> {
    if remote_addr % 8 != 0 {
        return Err(WqeError::Misaligned);
    }
    let (length, payload) = sge_payload(data, num_sge, dma_length, max_sge)?;
    if length < 8 {
        return Err(WqeError::AtomicTooShort);
    }
    Ok((length, payload))
}

/// The value of an ATOMIC WRITE, which rdma-core stores in the data area
/// with `dma.length` 8, as an inline payload.
fn atomic_write_payload(data: &[u8], dma_length: u32) -> Result<(u32, Payload<'_>), WqeError> {
    if usize::try_from(dma_length) != Ok(l::ATOMIC_WRITE_LEN) {
        return Err(WqeError::LengthMismatch);
    }
    let value = data.get(..l::ATOMIC_WRITE_LEN).ok_or(WqeError::Truncated)?;
    Ok((dma_length, Payload::Inline(value)))
}

/// A WQE header: native-endian fields at fixed offsets, any of which may
/// be missing if the slot is short.
struct Fields<'a>(&'a [u8]);

impl Fields<'_> {
    fn u8(&self, at: usize) -> Result<u8, WqeError> {
        self.0.get(at).copied().ok_or(WqeError::Truncated)
    }

    fn u16(&self, at: usize) -> Result<u16, WqeError> {
        bytes_at(self.0, at)
            .map(u16::from_ne_bytes)
            .ok_or(WqeError::Truncated)
    }

    fn u32(&self, at: usize) -> Result<u32, WqeError> {
        u32_at(self.0, at).ok_or(WqeError::Truncated)
    }

    fn u64(&self, at: usize) -> Result<u64, WqeError> {
        u64_at(self.0, at).ok_or(WqeError::Truncated)
    }
}

/// The `N` bytes of `bytes` at `at`, if they are all there.
fn bytes_at<const N: usize>(bytes: &[u8], at: usize) -> Option<[u8; N]> {
    bytes.get(at..)?.first_chunk().copied()
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    bytes_at(bytes, at).map(u32::from_ne_bytes)
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    bytes_at(bytes, at).map(u64::from_ne_bytes)
}
