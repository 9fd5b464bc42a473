// SPDX-License-Identifier: GPL-2.0

//! Work requests: which operations each QP type accepts, and the checks a
//! send request must pass before it is queued (rxe's `rxe_wr_opcode_info`
//! and `validate_send_wr`). The same rules apply whether a kernel consumer
//! posts through `ib_post_send` or a process writes the WQE into its ring.

use super::qp_state::QpType;

/// `enum ib_wr_opcode` values (the same in the rxe user ABI).
pub(crate) mod opcode {
    pub(crate) const RDMA_WRITE: u32 = 0;
    pub(crate) const RDMA_WRITE_WITH_IMM: u32 = 1;
    pub(crate) const SEND: u32 = 2;
    pub(crate) const SEND_WITH_IMM: u32 = 3;
    pub(crate) const RDMA_READ: u32 = 4;
    pub(crate) const ATOMIC_CMP_AND_SWP: u32 = 5;
    pub(crate) const ATOMIC_FETCH_AND_ADD: u32 = 6;
    pub(crate) const LOCAL_INV: u32 = 7;
    pub(crate) const BIND_MW: u32 = 8;
    pub(crate) const SEND_WITH_INV: u32 = 9;
    pub(crate) const LSO: u32 = 10;
    pub(crate) const RDMA_READ_WITH_INV: u32 = 11;
    pub(crate) const FLUSH: u32 = 14;
    pub(crate) const ATOMIC_WRITE: u32 = 15;
    pub(crate) const REG_MR: u32 = 0x20;
}

/// `IB_SEND_INLINE`.
pub(crate) const SEND_INLINE: u32 = 1 << 3;
/// `RXE_PORT_MAX_MSG_SZ`: the longest message.
pub(crate) const MAX_MSG_SIZE: u64 = 1 << 31;

/// What kind of operation a work request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WrClass {
    Send,
    Write,
    Read,
    Atomic,
    /// Handled by the local QP alone (invalidate, register, bind).
    LocalOp,
    Flush,
    AtomicWrite,
}

/// How `opcode` is handled on a QP of type `qp`, or `None` if that QP type
/// does not accept it.
pub(crate) const fn classify(opcode: u32, qp: QpType) -> Option<WrClass> {
    use opcode::*;
    let (rc, uc, ud) = (
        matches!(qp, QpType::Rc),
        matches!(qp, QpType::Uc),
        matches!(qp, QpType::Ud),
    );
    let gsi = matches!(qp, QpType::Gsi);
    let (class, allowed) = match opcode {
        RDMA_WRITE | RDMA_WRITE_WITH_IMM => (WrClass::Write, rc || uc),
        SEND | SEND_WITH_IMM => (WrClass::Send, rc || uc || ud || gsi),
        SEND_WITH_INV => (WrClass::Send, rc || uc || ud),
        RDMA_READ | RDMA_READ_WITH_INV => (WrClass::Read, rc),
        ATOMIC_CMP_AND_SWP | ATOMIC_FETCH_AND_ADD => (WrClass::Atomic, rc),
        LOCAL_INV | REG_MR => (WrClass::LocalOp, rc),
        BIND_MW => (WrClass::LocalOp, rc || uc),
        FLUSH => (WrClass::Flush, rc),
        ATOMIC_WRITE => (WrClass::AtomicWrite, rc),
        _ => return None,
    };
    if allowed {
        Some(class)
    } else {
        None
    }
}

impl WrClass {
    /// Whether the payload may be carried inline in the WQE.
    pub(crate) const fn allows_inline(self) -> bool {
        matches!(self, WrClass::Send | WrClass::Write)
    }
}

/// Why a send request is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WrError {
    /// The opcode is unknown or not for this QP type.
    BadOpcode(u32),
    /// More SGEs than the queue was created for.
    TooManySges,
    /// The SGE lengths add up to more than [`MAX_MSG_SIZE`].
    TooLong,
    /// An atomic is not exactly 8 bytes or not 8-byte aligned.
    BadAtomic,
    /// Inline data for an opcode without it, or more than the queue holds.
    BadInline,
}

/// A send request as far as its checks need it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SendCheck {
    pub(crate) opcode: u32,
    pub(crate) send_flags: u32,
    pub(crate) num_sge: u32,
    /// Sum of the SGE lengths.
    pub(crate) length: u64,
    /// The remote address of an atomic.
    pub(crate) atomic_addr: u64,
}

/// rxe's `validate_send_wr`: the class of `wr` on a QP of type `qp` whose
/// send queue holds `max_sge` SGEs or `max_inline` inline bytes.
pub(crate) fn check_send(
    wr: &SendCheck,
    qp: QpType,
    max_sge: u32,
    max_inline: u32,
) -> Result<WrClass, WrError> {
    let class = classify(wr.opcode, qp).ok_or(WrError::BadOpcode(wr.opcode))?;
    if wr.num_sge > max_sge {
        return Err(WrError::TooManySges);
    }
    if wr.length > MAX_MSG_SIZE {
        return Err(WrError::TooLong);
    }
    if class == WrClass::Atomic && (wr.length != 8 || wr.atomic_addr & 7 != 0) {
        return Err(WrError::BadAtomic);
    }
    if wr.send_flags & SEND_INLINE != 0
        && (!class.allows_inline() || wr.length > u64::from(max_inline))
    {
        return Err(WrError::BadInline);
    }
    Ok(class)
}

/// rxe's `post_one_recv` checks: the number of SGEs and the total length.
pub(crate) fn check_recv(num_sge: u32, length: u64, max_sge: u32) -> Result<(), WrError> {
    if num_sge > max_sge {
        return Err(WrError::TooManySges);
    }
    if length > MAX_MSG_SIZE {
        return Err(WrError::TooLong);
    }
    Ok(())
}
