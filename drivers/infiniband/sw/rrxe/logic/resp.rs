// SPDX-License-Identifier: GPL-2.0

//! Responder rules that need no state: the DMA length limit of a RETH,
//! whether a UD datagram fits a receive, what a length error does to each
//! QP type, and what a duplicate READ request may replay.
//!
//! They follow C rxe (`rxe_resp.c`) and the IBA sections it cites.

use super::qp_state::QpType;
use super::segment::packet_count;
use crate::proto::{headers::Reth, psn::Psn};

/// The largest DMA length a RETH may name (IBA C9-94: 2^31 bytes). A READ
/// of more, split at a small path MTU, would take more PSNs than the
/// 24-bit space can tell apart.
pub(crate) const MAX_DMA_LEN: u32 = 1 << 31;

/// Whether a RETH's DMA length is allowed (rxe's `rxe_resp_check_length`).
pub(crate) const fn dma_len_ok(len: u32) -> bool {
    len <= MAX_DMA_LEN
}

/// The bytes a UD receive holds before the payload: the GRH (or the IPv4
/// header in its last 20 bytes).
pub(crate) const GRH_LEN: u32 = 40;

/// Whether a UD datagram of `payload` bytes fits, behind the GRH, in a
/// receive whose buffers hold `recv_len` bytes (IBA C9-92; rxe checks it
/// before any byte is placed).
pub(crate) const fn ud_fits(payload: usize, recv_len: u32) -> bool {
    (payload as u64).saturating_add(GRH_LEN as u64) <= recv_len as u64
}

/// What a message that does not fit its receive leads to (IBA 9.9.3's
/// responder error classes, as rxe's `RESPST_ERR_LENGTH` applies them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LengthError {
    /// RC, class C: an invalid request NAK; the receive completes in error
    /// and the QP goes to the error state.
    Fatal,
    /// UC or UD on an SRQ, class E: the message is dropped and the receive
    /// it took completes in error; the QP stays as it is.
    CompleteInError,
    /// UC or UD on an RQ, class D: the message is dropped, the receive
    /// stays posted for the next one; nothing is reported.
    Drop,
}

/// How a length error on a QP of type `ty` (on an SRQ or not) is handled.
pub(crate) const fn on_length_error(ty: QpType, srq: bool) -> LengthError {
    match ty {
        QpType::Rc => LengthError::Fatal,
        _ if srq => LengthError::CompleteInError,
        _ => LengthError::Drop,
    }
}

/// A READ request as the responder executed it and keeps it: `npkts`
/// responses from `first_psn`, of the `len` bytes at `va` under `rkey`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReadReq {
    pub(crate) rkey: u32,
    pub(crate) va: u64,
    pub(crate) len: u32,
    pub(crate) first_psn: Psn,
    pub(crate) npkts: u32,
}

impl ReadReq {
    /// The READ a request with `reth` at `psn` asks for, at `mtu`.
    pub(crate) const fn new(reth: Reth, psn: Psn, mtu: u32) -> Self {
        Self {
            rkey: reth.rkey,
            va: reth.va,
            len: reth.len,
            first_psn: psn,
            npkts: packet_count(reth.len, mtu),
        }
    }

    /// Whether `psn` is one of this READ's responses.
    pub(crate) const fn holds(&self, psn: Psn) -> bool {
        psn.in_window(self.first_psn, self.npkts)
    }

    /// What a duplicate READ request (`reth` at `psn`, which [`holds`])
    /// is answered with: the responses from `psn` on, of the part of the
    /// original READ it names. A requester asks again for a whole READ, or
    /// for the rest of it from its first missing response. As rxe, the
    /// duplicate must name the original's R_Key and a range inside the
    /// original's; else (`None`) it is dropped. It never gets more
    /// responses than the original had from `psn` on.
    ///
    /// [`holds`]: ReadReq::holds
    pub(crate) const fn replay(&self, psn: Psn, reth: Reth, mtu: u32) -> Option<ReadReq> {
        if !self.holds(psn) {
            return None;
        }
        if reth.len != 0 {
            if reth.rkey != self.rkey || reth.va < self.va {
                return None;
            }
            let end = match reth.va.checked_add(reth.len as u64) {
                Some(end) => end,
                None => return None,
            };
            let orig_end = match self.va.checked_add(self.len as u64) {
                Some(end) => end,
                None => return None,
            };
            if end > orig_end {
                return None;
            }
        }
        let left = self.npkts - self.first_psn.distance(psn);
        let n = packet_count(reth.len, mtu);
        Some(ReadReq {
            rkey: self.rkey,
            va: reth.va,
            len: reth.len,
            first_psn: psn,
            npkts: if n < left { n } else { left },
        })
    }
}
