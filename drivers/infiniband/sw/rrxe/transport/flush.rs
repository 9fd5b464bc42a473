// SPDX-License-Identifier: GPL-2.0

//! FLUSH and ATOMIC WRITE (IBA 1.5, Annex A19), both ways.
//!
//! Requester: a FLUSH is one RC_FLUSH packet (FETH with the placement type
//! and selectivity level, RETH with the range; no payload), an ATOMIC
//! WRITE one RC_ATOMIC_WRITE packet (RETH naming 8 bytes, then the 8 bytes
//! of the WQE). Both complete when acknowledged.
//!
//! Responder: as C rxe, both are answered by an RDMA READ response (only)
//! with an AETH and no payload, and kept as a responder resource so that
//! the answer leaves in PSN order behind READ responses and is sent again
//! for a duplicate. rrxe has no persistent memory (a region with
//! `IB_ACCESS_FLUSH_PERSISTENT` cannot be registered from user space), so
//! a FLUSH is a write barrier: the writes placed before it are visible to
//! every CPU before its answer is sent, which is what rxe does for memory
//! that is not persistent.

use crate::{
    ffi::ib::AtomicOp,
    logic::{
        flush::{atomic_write_ok, flush_access, flush_range, qp_allows_flush, ATOMIC_WRITE_LEN},
        mr::REMOTE_WRITE,
        wqe::SendOp,
    },
    mem::{
        mw::{check_rkey, resolve_rkey},
        odp::Refusal,
    },
    proto::{
        headers::{Feth, NakCode, Reth},
        packet::{Headers, Packet},
    },
    transport::qp::{QpCtx, QpState_},
};
use kernel::{
    prelude::*,
    sync::barrier::{mb, Write},
};

/// Fills in the extension headers of the request packet of a FLUSH or
/// ATOMIC WRITE; returns the payload's offset and length in the WQE's
/// payload (the 8 inline bytes of an ATOMIC WRITE, nothing for a FLUSH).
/// `None` for other operations.
pub(crate) fn request_headers(op: &SendOp, hdrs: &mut Headers) -> Option<(u32, u32)> {
    // rxe sets the solicited bit only on SENDs and WRITEs with immediate.
    hdrs.bth.solicited = false;
    match op {
        SendOp::AtomicWrite(wr) => {
            hdrs.reth = Some(wr.reth());
            Some((0, ATOMIC_WRITE_LEN))
        }
        SendOp::Flush(wr) => {
            let (reth, feth) = wr.headers();
            hdrs.reth = Some(reth);
            hdrs.feth = Some(feth);
            Some((0, 0))
        }
        _ => None,
    }
}

/// Executes a FLUSH or ATOMIC WRITE request taken in order, with rxe's
/// checks and NAK codes: the QP's access flags (else an invalid request),
/// then the R_Key, range and rights (else a remote access error), then the
/// form of an ATOMIC WRITE and its alignment (else an invalid request). An
/// ATOMIC WRITE to a page of a region paged on demand that is not mapped
/// is refused with the fault to resolve first, having done nothing.
///
/// A FLUSH touches no page: pages an ODP region does not map now hold
/// nothing the device wrote that is not already visible.
pub(crate) fn execute(
    ctx: &QpCtx<'_>,
    st: &QpState_,
    pkt: &Packet<'_>,
) -> Result<(), Refusal<NakCode>> {
    let reth = pkt
        .headers
        .reth
        .ok_or(Refusal::Denied(NakCode::InvalidRequest))?;
    let qp_access = st.attr.get().qp_access_flags as u32;
    if let Some(feth) = pkt.headers.feth {
        flush(ctx, qp_access, reth, feth).map_err(Refusal::Denied)
    } else {
        atomic_write(ctx, st, qp_access, reth, pkt)
    }
}

fn flush(ctx: &QpCtx<'_>, qp_access: u32, reth: Reth, feth: Feth) -> Result<(), NakCode> {
    if !qp_allows_flush(qp_access, feth.placement_type) {
        return Err(NakCode::InvalidRequest);
    }
    let need = flush_access(feth.placement_type);
    let checked = match flush_range(feth.selectivity, reth.va, reth.len) {
        Some((va, len)) => resolve_rkey(ctx.mem, reth.rkey, va, len, need).map(|_| ()),
        // The whole region: the RETH's range means nothing.
        None => check_rkey(ctx.mem, reth.rkey, need),
    };
    checked.map_err(|_| NakCode::RemoteAccessError)?;
    // Writes before the FLUSH reach memory before its answer leaves.
    mb(Write);
    Ok(())
}

fn atomic_write(
    ctx: &QpCtx<'_>,
    st: &QpState_,
    qp_access: u32,
    reth: Reth,
    pkt: &Packet<'_>,
) -> Result<(), Refusal<NakCode>> {
    let deny = |code| Refusal::Denied(code);
    if qp_access & REMOTE_WRITE == 0 || st.attr.get().max_dest_rd_atomic == 0 {
        return Err(deny(NakCode::InvalidRequest));
    }
    let (mr, at) = resolve_rkey(
        ctx.mem,
        reth.rkey,
        reth.va,
        u64::from(reth.len),
        REMOTE_WRITE,
    )
    .map_err(|_| deny(NakCode::RemoteAccessError))?;
    if !atomic_write_ok(reth.len, pkt.payload.len(), pkt.layout.pad) {
        return Err(deny(NakCode::InvalidRequest));
    }
    let data = pkt
        .atomic_write_data()
        .ok_or(deny(NakCode::InvalidRequest))?;
    // The bytes land as they came, as rxe stores them.
    let value = u64::from_ne_bytes(data.data);
    match mr.atomic_at(at, AtomicOp::Write(value)) {
        Ok(_) => Ok(()),
        // The range was checked: a misaligned target (rxe's
        // RESPST_ERR_MISALIGNED_ATOMIC).
        Err(e) if e == EINVAL => Err(deny(NakCode::InvalidRequest)),
        Err(e) => Err(Refusal::of(
            e,
            &mr,
            at,
            ATOMIC_WRITE_LEN.into(),
            true,
            NakCode::RemoteAccessError,
        )),
    }
}
