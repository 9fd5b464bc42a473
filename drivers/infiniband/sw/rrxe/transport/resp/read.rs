// SPDX-License-Identifier: GPL-2.0

//! READ requests and the responses that leave in order behind them.
//!
//! A READ is checked (access, the MR table for its whole range) and
//! recorded as a responder resource; its responses are built later, while
//! the outbox has room, each read through the MR table again (a region
//! gone under the READ ends it). Answers that must not overtake a READ
//! response (atomic ACKs, the empty READ responses of FLUSH and ATOMIC
//! WRITE, a deferred ACK or NAK) wait in the resources or in
//! `RespState::deferred` and are sent here, oldest first.

use super::{
    ack::{emit_ack, emit_atomic_ack, emit_empty_read, response_bth},
    state::{Owed, Resource},
};
use crate::{
    dev::path::Path,
    ffi::net::NetDev,
    logic::{
        mr::REMOTE_READ,
        resp::ReadReq,
        segment::{packet_span, position, read_response_opcode},
    },
    mem::{mw::resolve_rkey, odp::Refusal},
    proto::{
        headers::{Aeth, NakCode, Syndrome},
        opcode::ExtHeader,
        packet::{Headers, Packet},
    },
    transport::qp::{Effects, ErrCause, Missing, QpCtx, QpState_, Side},
    transport::xmit,
};

/// Checks a READ request and records it; returns its response count.
pub(super) fn start_read(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    pkt: &Packet<'_>,
) -> Result<u32, NakCode> {
    let reth = pkt.headers.reth.ok_or(NakCode::InvalidRequest)?;
    if st.attr.get().qp_access_flags as u32 & REMOTE_READ == 0 {
        return Err(NakCode::RemoteAccessError);
    }
    if reth.len > 0 {
        resolve_rkey(
            ctx.mem,
            reth.rkey,
            reth.va,
            u64::from(reth.len),
            REMOTE_READ,
        )
        .map_err(|_| NakCode::RemoteAccessError)?;
    }
    let req = ReadReq::new(reth, pkt.headers.bth.psn, st.mtu);
    let depth = usize::from(st.attr.get().max_dest_rd_atomic);
    st.resp.add_resource(
        Resource::Read {
            cur: req,
            orig: req,
            next: 0,
        },
        depth,
    );
    Ok(req.npkts)
}

/// Sends pending READ responses, oldest resource first, while the outbox
/// (`fx.out`) has room. Returns whether some are still pending.
pub(crate) fn send_read_responses(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    ndev: &NetDev,
) -> bool {
    if !st.resp.reads_pending {
        return false;
    }
    let Some(path) = st.path else {
        return false;
    };
    // Oldest first. Nothing here adds or retires a resource, so an age
    // names the same one all along.
    for i in 0..st.resp.res.len() {
        let Some(slot) = st.resp.res.get_mut(i) else {
            continue;
        };
        match slot.owed() {
            Some(owed) => {
                let out = &mut fx.out;
                if !out.has_room() {
                    return true;
                }
                slot.settle();
                match owed {
                    Owed::AtomicAck { psn, orig } => emit_atomic_ack(st, ndev, out, psn, orig),
                    Owed::EmptyRead { psn } => emit_empty_read(st, ndev, out, psn),
                }
            }
            None if matches!(slot, Resource::Read { .. }) => {
                match send_read(ctx, st, fx, ndev, &path, i) {
                    ReadEnd::Done => {}
                    ReadEnd::Full => return true,
                    // Nothing after it may leave first: all wait for the
                    // fault, which runs the responses again.
                    ReadEnd::Paused => return false,
                    // Its NAK is the last packet of the QP, which goes to
                    // ERR: no later response, nor the deferred ACK, may
                    // follow it (the flush forgets them).
                    ReadEnd::Failed => {
                        st.resp.reads_pending = false;
                        return false;
                    }
                }
            }
            None => {}
        }
    }
    if let Some((psn, syndrome)) = st.resp.deferred {
        if !fx.out.has_room() {
            return true;
        }
        st.resp.deferred = None;
        emit_ack(st, ndev, &mut fx.out, psn, syndrome);
    }
    st.resp.reads_pending = false;
    false
}

/// How sending a READ's responses stopped.
enum ReadEnd {
    /// All sent (or the READ ended).
    Done,
    /// The outbox ran out: some responses are still pending.
    Full,
    /// Pages of a region paged on demand are not mapped: the responses
    /// wait for the fault (asked for in the effects), which runs them
    /// again.
    Paused,
    /// The READ failed: its NAK was sent and the QP enters ERR. Nothing
    /// more leaves.
    Failed,
}

/// Sends what the outbox has room for of the READ in resource `i` (its
/// age: 0 is the oldest).
fn send_read(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    ndev: &NetDev,
    path: &Path,
    i: usize,
) -> ReadEnd {
    loop {
        let out = &mut fx.out;
        let Some(Resource::Read { cur, next, .. }) = st.resp.res.get(i).copied() else {
            return ReadEnd::Done;
        };
        let ReadReq {
            rkey,
            va,
            len,
            first_psn,
            npkts,
        } = cur;
        if next >= npkts {
            return ReadEnd::Done;
        }
        if !out.has_room() {
            return ReadEnd::Full;
        }
        let Some((offset, plen)) = packet_span(len, st.mtu, next) else {
            return ReadEnd::Done;
        };
        let pos = position(next, npkts);
        let psn = first_psn.add(next);
        let opcode = read_response_opcode(pos);
        let mut hdrs = Headers::new(response_bth(st, opcode, psn));
        // First, last and only responses carry an AETH, middle ones not.
        if opcode.info().has(ExtHeader::Aeth) {
            hdrs.aeth = Some(Aeth::ack(st.resp.msn));
        }
        let built = xmit::build(ndev, path, st.sport, hdrs, plen as usize, |dst| {
            let len = dst.remaining();
            if len == 0 {
                return Ok(());
            }
            let at_va = va.wrapping_add(u64::from(offset));
            let n = len as u64;
            let (mr, at) = resolve_rkey(ctx.mem, rkey, at_va, n, REMOTE_READ)
                .map_err(|_| Refusal::Denied(()))?;
            mr.read_into(at, len, dst)
                .map_err(|e| Refusal::of(e, &mr, at, n, false, ()))
        });
        match built {
            Ok(p) => out.push(p),
            // The MR went away under the READ: nothing more to send.
            Err(xmit::BuildError::Payload(Refusal::Denied(()))) => {
                end_read(st, i);
                return ReadEnd::Done;
            }
            Err(xmit::BuildError::Payload(Refusal::Missing(fault))) => {
                match st.page_missing(fx, Side::Tx, fault) {
                    Missing::Wait => return ReadEnd::Paused,
                    Missing::Fail => {
                        // Memory the process does not have: as rxe's R_Key
                        // violation, a remote access error, and the QP
                        // fails (class C). The NAK carries the PSN of the
                        // READ request answered, as rxe's responder (which
                        // NAKs the request packet): rxe's completer drops
                        // a NAK past the responses it received (one was
                        // lost: the READ would end in a retry error against
                        // a QP in ERR), and takes one at or before them as
                        // the READ's; rrxe's takes both.
                        end_read(st, i);
                        let code = NakCode::RemoteAccessError;
                        emit_ack(st, ndev, &mut fx.out, first_psn, Syndrome::Nak(code));
                        fx.enter_error(ErrCause::NakSent(code));
                        return ReadEnd::Failed;
                    }
                }
            }
            Err(xmit::BuildError::NoBuffer) => return ReadEnd::Full,
        }
        if let Some(Resource::Read { next, .. }) = st.resp.res.get_mut(i) {
            *next += 1;
        }
    }
}

/// The READ in resource `i` ends with nothing more sent.
fn end_read(st: &mut QpState_, i: usize) {
    if let Some(r) = st.resp.res.get_mut(i) {
        *r = Resource::Free;
    }
}
