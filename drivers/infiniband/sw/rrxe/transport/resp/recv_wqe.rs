// SPDX-License-Identifier: GPL-2.0

//! The receive WQE of the message being received: taken, filled, completed.
//!
//! A message that needs a receive takes the oldest WQE of the RQ (left
//! there until the message completes, so that a dropped UC message leaves
//! it posted) or pops one from the SRQ; its copy in `RespState::recv` is
//! what payloads are scattered through. The completion reports the
//! receive as every QP type fills it, plus immediate data or a remote
//! invalidation (done here, as rxe); a failed receive takes the QP to the
//! error state, but for the class E errors of [`fail_recv`].

use super::state::InProgress;
use crate::{
    dev::counters::Counter,
    logic::{
        wc::{WcFlags, WcOpcode, WcStatus},
        wqe,
    },
    mem::copy::{self, MemError},
    proto::packet::Packet,
    queues::cq::Completion,
    queues::queue::SharedQueue,
    transport::qp::{Effects, ErrCause, QpCtx, QpState_},
};

/// Takes a receive WQE for the message starting now: the oldest of the
/// RQ (left there until the message completes) or one popped from the
/// SRQ, whose limit event, if due, is left in `fx`. `false` if there is
/// none.
pub(super) fn take_recv(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    rq: Option<&mut SharedQueue>,
) -> bool {
    st.resp.recv_offset = 0;
    if let Some(srq) = ctx.srq {
        let taken = srq.take(&mut st.resp.recv);
        if let Some(t) = &taken {
            fx.srq_taken(t);
        }
        let got = taken.is_some();
        st.resp.have_recv = got;
        st.resp.recv_from_srq = true;
        return got;
    }
    let Some(rq) = rq else {
        return false;
    };
    let got = rq.peek(&mut st.resp.recv);
    st.resp.have_recv = got;
    st.resp.recv_from_srq = false;
    got
}

/// Copies `data` to byte `offset` of the receive WQE's buffers.
pub(super) fn recv_scatter(
    ctx: &QpCtx<'_>,
    st: &QpState_,
    offset: u32,
    data: &[u8],
) -> Result<(), MemError> {
    let max_sge = ctx.recv_max_sge();
    let w = wqe::decode_recv(&st.resp.recv, max_sge).map_err(|_| MemError::Protection)?;
    copy::scatter(ctx.mem.mrs, ctx.mem.pd, &w.sges, offset, data)
}

/// Completes the receive WQE in use with `status` and releases it.
pub(super) fn finish_recv(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
    status: WcStatus,
) {
    if !st.resp.have_recv {
        return;
    }
    // As rxe: a WRITE with immediate data reports the WRITE's length, a
    // SEND the bytes placed in the receive.
    let byte_len = match st.resp.cur {
        InProgress::Write { len, .. } => len,
        _ => st.resp.recv_offset,
    };
    let mut c = recv_completion(ctx, st, status, byte_len, st.attr.get().dest_qp_num);
    if let Some(imm) = pkt.headers.immdt {
        c.ex = imm.stored();
        c.wc_flags |= WcFlags::WITH_IMM;
        if pkt.info().is_write() {
            c.opcode = WcOpcode::RecvRdmaWithImm;
        }
    } else if let Some(ieth) = pkt.headers.ieth {
        c.ex = ieth.rkey;
        c.wc_flags |= WcFlags::WITH_INVALIDATE;
        if crate::mem::mw::is_mw_key(ieth.rkey) {
            // As rxe, a window that cannot be invalidated fails the
            // receive (and the QP).
            if c.status == WcStatus::Success
                && crate::mem::mw::invalidate(ctx.mem, ieth.rkey, true).is_err()
            {
                c.status = WcStatus::RemInvReqErr;
            }
        } else if c.status == WcStatus::Success
            && ctx
                .mem
                .mrs
                .get(ieth.rkey)
                .is_none_or(|mr| mr.invalidate_in_pd(ctx.mem.pd, ieth.rkey).is_err())
        {
            // An unknown key, a key that is not the MR's current one, an MR
            // of another PD, not fast-registered or with windows bound: as
            // rxe, the receive fails (Class J) and so does the QP.
            c.status = WcStatus::RemInvReqErr;
        }
    }
    if c.status == WcStatus::Success {
        // A connected QP only takes packets from its peer's address (the
        // engine checks it before the responder runs): the path's family
        // is the packet's.
        c.set_network_header(st.path.is_none_or(|p| p.dst.is_v4()));
    }
    post_recv_completion(ctx, st, fx, rq, &c, pkt.headers.bth.solicited);
}

/// The completion of the receive WQE in use as every QP type fills it
/// (`wc_flags` and what goes with them aside).
pub(super) fn recv_completion(
    ctx: &QpCtx<'_>,
    st: &QpState_,
    status: WcStatus,
    byte_len: u32,
    src_qp: u32,
) -> Completion {
    let wr_id = st
        .resp
        .recv
        .first_chunk::<8>()
        .map_or(0, |b| u64::from_ne_bytes(*b));
    Completion {
        wr_id,
        status,
        opcode: WcOpcode::Recv,
        byte_len,
        qp_num: ctx.qpn,
        src_qp,
        port_num: crate::dev::params::PORT as u8,
        ..Default::default()
    }
}

/// Posts a receive completion and releases the receive WQE. A failed
/// receive takes the QP to the error state (after the lock, through
/// `fx`).
pub(super) fn post_recv_completion(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    rq: Option<&mut SharedQueue>,
    c: &Completion,
    solicited: bool,
) {
    if c.status != WcStatus::Success {
        fx.enter_error(ErrCause::RecvWc(c.status));
    }
    release_recv(ctx, st, fx, rq, c, solicited);
}

/// Completes the receive WQE in use with [`WcStatus::RemInvReqErr`] for a
/// message that did not fit it (UC or UD on an SRQ, class E): the QP
/// stays as it is, as in rxe.
pub(super) fn fail_recv(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    rq: Option<&mut SharedQueue>,
    solicited: bool,
) {
    if !st.resp.have_recv {
        return;
    }
    // As rxe, an error completion reports no length or source.
    let c = recv_completion(ctx, st, WcStatus::RemInvReqErr, 0, 0);
    release_recv(ctx, st, fx, rq, &c, solicited);
}

/// Posts a receive completion and releases the receive WQE; the CQ's
/// handler, if due, is called after the lock (`fx`).
fn release_recv(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    rq: Option<&mut SharedQueue>,
    c: &Completion,
    solicited: bool,
) {
    if !st.resp.recv_from_srq {
        if let Some(rq) = rq {
            rq.pop();
        }
    }
    st.resp.have_recv = false;
    st.resp.recv_offset = 0;
    if c.status == WcStatus::Success {
        ctx.counters.add(Counter::RdmaRecvs, 1);
    }
    fx.recv_completed(ctx.recv_cq.post_solicited_quiet(c, ctx.handle, solicited));
}
