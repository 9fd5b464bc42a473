// SPDX-License-Identifier: GPL-2.0

//! Atomics (compare-and-swap, fetch-and-add) on local memory.
//!
//! The target must be an aligned 8 bytes the MR table grants remote atomic
//! access to; the value found is kept in a responder resource, so that a
//! duplicate gets the same answer without executing the atomic again.

use super::state::Resource;
use crate::{
    ffi::ib::AtomicOp,
    logic::mr::REMOTE_ATOMIC,
    mem::{mw::resolve_rkey, odp::Refusal},
    proto::{headers::NakCode, opcode::Opcode, packet::Packet},
    transport::qp::{QpCtx, QpState_},
};

/// Executes an atomic; returns the value found.
pub(super) fn atomic(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    pkt: &Packet<'_>,
) -> Result<u64, Refusal<NakCode>> {
    let a = pkt
        .headers
        .atomic_eth
        .ok_or(Refusal::Denied(NakCode::InvalidRequest))?;
    if st.attr.get().qp_access_flags as u32 & REMOTE_ATOMIC == 0 {
        return Err(Refusal::Denied(NakCode::RemoteAccessError));
    }
    if a.va % 8 != 0 {
        return Err(Refusal::Denied(NakCode::InvalidRequest));
    }
    let (mr, at) = resolve_rkey(ctx.mem, a.rkey, a.va, 8, REMOTE_ATOMIC)
        .map_err(|_| Refusal::Denied(NakCode::RemoteAccessError))?;
    let op = if pkt.opcode() == Opcode::RcCompareSwap {
        AtomicOp::CmpSwap {
            compare: a.compare,
            swap: a.swap_add,
        }
    } else {
        AtomicOp::FetchAdd(a.swap_add)
    };
    // Nothing is recorded before it is done: an atomic that waits for its
    // page comes back whole.
    let orig = mr
        .atomic_at(at, op)
        .map_err(|e| Refusal::of(e, &mr, at, 8, true, NakCode::RemoteOperationalError))?;
    let depth = usize::from(st.attr.get().max_dest_rd_atomic);
    st.resp.add_resource(
        Resource::Atomic {
            psn: pkt.headers.bth.psn,
            orig,
            pending: st.resp.reads_pending,
        },
        depth,
    );
    Ok(orig)
}
