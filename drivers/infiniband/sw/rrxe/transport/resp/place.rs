// SPDX-License-Identifier: GPL-2.0

//! SEND and WRITE packets into memory, for RC and UC.
//!
//! A packet must continue the message in progress (or start one) and carry
//! the length its place in the message asks for. A WRITE's RETH is checked
//! against the MR table for the whole message before its first byte is
//! placed, each packet against what is left of it; a SEND is scattered
//! into the receive WQE, whose length errors fall into the classes of
//! `logic::resp::on_length_error`. The last packet of a SEND or WRITE with
//! immediate completes the receive.

use super::{
    recv_wqe::{fail_recv, finish_recv, recv_scatter, take_recv},
    refused,
    state::InProgress,
};
use crate::{
    logic::{
        mr::REMOTE_WRITE,
        resp::{on_length_error, LengthError},
        wc::{WcError, WcStatus},
    },
    mem::copy::MemError,
    mem::mw::resolve_rkey,
    mem::odp::Refusal,
    proto::{headers::NakCode, opcode::OpcodeInfo, packet::Packet},
    queues::queue::SharedQueue,
    transport::qp::{Effects, Missing, QpCtx, QpState_, Side},
};

/// The opcode must continue the message in progress (or start one).
pub(super) fn check_sequence(cur: InProgress, info: &OpcodeInfo) -> Result<(), NakCode> {
    let ok = match cur {
        InProgress::None | InProgress::Drop => {
            info.is_first() || !(info.is_send() || info.is_write())
        }
        InProgress::Send => info.is_send() && !info.is_first(),
        InProgress::Write { .. } => info.is_write() && !info.is_first(),
    };
    if ok {
        Ok(())
    } else {
        Err(NakCode::InvalidRequest)
    }
}

/// First and middle packets carry exactly one MTU; the rest at most one.
pub(super) fn check_length(mtu: u32, info: &OpcodeInfo, len: usize) -> Result<(), NakCode> {
    let mtu = mtu as usize;
    let full = (info.is_first() && !info.is_last()) || (!info.is_first() && !info.is_last());
    let fits = if full && (info.is_send() || info.is_write()) {
        len == mtu
    } else {
        len <= mtu
    };
    if fits {
        Ok(())
    } else {
        Err(NakCode::InvalidRequest)
    }
}

/// Why a SEND or WRITE packet was not placed.
pub(super) enum Placement {
    Rnr,
    Nak(NakCode),
    /// UC: the message does not fit its receive and is dropped; the QP
    /// goes on (its receive was dealt with).
    Dropped,
    /// Pages of a region paged on demand are not mapped: the packet waits
    /// for the fault (its datagram held) with nothing of it done but the
    /// receive taken, which it finds again when it comes back.
    Wait,
}

/// Places a SEND or WRITE packet; completes the receive at the end of a
/// SEND or WRITE with immediate.
pub(super) fn place(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    mut rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
) -> Result<(), Placement> {
    let info = pkt.info();
    let needs_recv = info.is_send() || (info.is_last() && pkt.headers.immdt.is_some());
    if needs_recv && !st.resp.have_recv && !take_recv(ctx, st, fx, rq.as_deref_mut()) {
        return Err(Placement::Rnr);
    }
    if info.is_write() {
        write_payload(ctx, st, fx, pkt)?;
    } else {
        let offset = st.resp.recv_offset;
        let placed = match recv_scatter(ctx, st, offset, pkt.payload) {
            Err(MemError::Missing(fault)) => match st.page_missing(fx, Side::Rx, fault) {
                Missing::Wait => return Err(Placement::Wait),
                Missing::Fail => Err(MemError::Protection),
            },
            placed => placed,
        };
        if let Err(e) = placed {
            return Err(send_failed(ctx, st, fx, rq, pkt, e));
        }
        // Only now: a packet that waited for its pages comes back as the
        // same part of the message.
        st.resp.cur = InProgress::Send;
        st.resp.recv_offset = offset.saturating_add(pkt.payload.len() as u32);
    }
    if info.is_last() {
        st.resp.msn = st.resp.msn.wrapping_add(1);
        if needs_recv {
            finish_recv(ctx, st, fx, rq, pkt, WcStatus::Success);
        }
        st.resp.cur = InProgress::None;
    }
    Ok(())
}

/// A SEND packet whose payload could not be scattered into the receive
/// (`e`): what becomes of the receive and the message (the error classes of
/// `logic::resp::on_length_error`).
fn send_failed(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    mut rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
    e: MemError,
) -> Placement {
    if matches!(e, MemError::Length) {
        let srq = st.resp.recv_from_srq;
        match on_length_error(ctx.ty, srq) {
            LengthError::Fatal => {}
            LengthError::CompleteInError => {
                // UC on an SRQ (class E): the receive it took completes in
                // error, the QP goes on.
                fail_recv(ctx, st, fx, rq.as_deref_mut(), pkt.headers.bth.solicited);
                return Placement::Dropped;
            }
            LengthError::Drop => {
                // UC on an RQ (class D): the receive stays posted for the
                // next message, from its start.
                st.resp.have_recv = false;
                st.resp.recv_offset = 0;
                return Placement::Dropped;
            }
        }
    }
    // The receive completes in error and the QP fails.
    let status = WcStatus::from(WcError::from(e));
    finish_recv(ctx, st, fx, rq, pkt, status);
    Placement::Nak(NakCode::InvalidRequest)
}

/// The RDMA WRITE part of a packet: the RETH (first packet) is checked
/// against the MR table, every packet against what is left of it.
fn write_payload(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    pkt: &Packet<'_>,
) -> Result<(), Placement> {
    let len = pkt.payload.len() as u32;
    let (rkey, va, resid, total) = match (st.resp.cur, pkt.headers.reth) {
        (
            InProgress::Write {
                rkey,
                va,
                resid,
                len: total,
            },
            _,
        ) => (rkey, va, resid, total),
        (_, Some(reth)) => {
            if st.attr.get().qp_access_flags as u32 & REMOTE_WRITE == 0 {
                return Err(Placement::Nak(NakCode::RemoteAccessError));
            }
            // The whole message must be allowed before its first byte is
            // placed (as rxe): a WRITE that runs past its region or window
            // places nothing.
            if reth.len > 0 {
                resolve_rkey(
                    ctx.mem,
                    reth.rkey,
                    reth.va,
                    u64::from(reth.len),
                    REMOTE_WRITE,
                )
                .map_err(|_| Placement::Nak(NakCode::RemoteAccessError))?;
            }
            (reth.rkey, reth.va, reth.len, reth.len)
        }
        _ => return Err(Placement::Nak(NakCode::InvalidRequest)),
    };
    if len > resid || (pkt.info().is_last() && len != resid) {
        return Err(Placement::Nak(NakCode::InvalidRequest));
    }
    if len > 0 || resid > 0 {
        let (mr, at) = resolve_rkey(ctx.mem, rkey, va, u64::from(len), REMOTE_WRITE)
            .map_err(|_| Placement::Nak(NakCode::RemoteAccessError))?;
        if let Err(e) = mr.write_at(at, pkt.payload) {
            let r = Refusal::of(e, &mr, at, u64::from(len), true, NakCode::RemoteAccessError);
            return Err(refused(st, fx, r).map_or(Placement::Wait, Placement::Nak));
        }
    }
    st.resp.cur = InProgress::Write {
        rkey,
        va: va.wrapping_add(u64::from(len)),
        resid: resid - len,
        len: total,
    };
    Ok(())
}
