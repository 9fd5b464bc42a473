// SPDX-License-Identifier: GPL-2.0

//! FLUSH and ATOMIC WRITE (IBA 1.5, Annex A19) rules for the responder,
//! as C rxe applies them.
//!
//! A FLUSH names a placement type (a set of `IB_FLUSH_GLOBAL` and
//! `IB_FLUSH_PERSISTENT`) and a selectivity level (the RETH's range, or the
//! whole region). The QP must have been opened to each placement type
//! asked for, and the region must have been registered with the matching
//! `IB_ACCESS_FLUSH_*` rights. An ATOMIC WRITE stores exactly 8 bytes
//! (oA19-28) to an 8-byte aligned address of a region open to remote
//! writes.

use super::mr::{FLUSH_GLOBAL, FLUSH_PERSISTENT};
use crate::proto::headers::{Feth, Reth};

const PLT_GLOBAL: u8 = Feth::PLT_GLOBAL;
const PLT_PERSISTENT: u8 = Feth::PLT_PERSISTENT;
const SEL_MR: u8 = Feth::SEL_MR;

/// The access rights (QP and region) a FLUSH of placement type `plt`
/// needs. Placement bits other than these two ask for nothing.
pub(crate) const fn flush_access(plt: u8) -> u32 {
    let mut need = 0;
    if plt & PLT_GLOBAL != 0 {
        need |= FLUSH_GLOBAL;
    }
    if plt & PLT_PERSISTENT != 0 {
        need |= FLUSH_PERSISTENT;
    }
    need
}

/// Whether a QP with access flags `qp_access` takes a FLUSH of placement
/// type `plt` (rxe's `check_qp_attr_access`; otherwise an invalid request).
pub(crate) const fn qp_allows_flush(qp_access: u32, plt: u8) -> bool {
    let need = flush_access(plt);
    qp_access & need == need
}

/// The range of the region a FLUSH must lie in: the RETH's for the range
/// level (and, as rxe, for the reserved levels), `None` for the whole
/// region, whose RETH address and length mean nothing.
pub(crate) const fn flush_range(sel: u8, va: u64, len: u32) -> Option<(u64, u64)> {
    if sel == SEL_MR {
        None
    } else {
        Some((va, len as u64))
    }
}

/// Bytes an ATOMIC WRITE stores.
pub(crate) const ATOMIC_WRITE_LEN: u32 = 8;

/// Whether an ATOMIC WRITE request is well formed: its RETH names exactly
/// 8 bytes and its payload is those 8 bytes with no pad (oA19-28; else an
/// invalid request, as rxe).
pub(crate) const fn atomic_write_ok(reth_len: u32, payload_len: usize, pad: usize) -> bool {
    reth_len == ATOMIC_WRITE_LEN && payload_len == ATOMIC_WRITE_LEN as usize && pad == 0
}

/// A FLUSH work request as posted: flush `length` bytes at `remote_addr`
/// under `rkey` (`wr.wr.flush`; the length is the WQE's `dma.length`, where
/// rdma-core puts it, as `wr.flush.length` stays zero), for the placement
/// type and selectivity level given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FlushWr {
    pub(crate) remote_addr: u64,
    pub(crate) rkey: u32,
    pub(crate) length: u32,
    pub(crate) placement_type: u8,
    pub(crate) level: u8,
}

impl FlushWr {
    /// The RETH and FETH of its request packet. The FETH takes the
    /// placement type and level as posted; its encoder keeps their low
    /// bits, as rxe's `feth_init`.
    pub(crate) const fn headers(&self) -> (Reth, Feth) {
        let reth = Reth {
            va: self.remote_addr,
            rkey: self.rkey,
            len: self.length,
        };
        let feth = Feth {
            placement_type: self.placement_type,
            selectivity: self.level,
        };
        (reth, feth)
    }
}

/// An ATOMIC WRITE work request as posted: store the 8 bytes `value` (the
/// WQE's `dma.atomic_wr`) at `remote_addr` under `rkey` (`wr.wr.rdma`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AtomicWriteWr {
    pub(crate) remote_addr: u64,
    pub(crate) rkey: u32,
    pub(crate) value: [u8; 8],
}

impl AtomicWriteWr {
    /// The RETH of its request packet, naming the 8 bytes it stores.
    pub(crate) const fn reth(&self) -> Reth {
        Reth {
            va: self.remote_addr,
            rkey: self.rkey,
            len: ATOMIC_WRITE_LEN,
        }
    }
}
