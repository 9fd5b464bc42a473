// SPDX-License-Identifier: GPL-2.0

//! RC requests: taken strictly in PSN order, each answered.
//!
//! A later PSN than expected gets one sequence NAK per gap, an earlier one
//! goes to [`duplicate`](super::duplicate). A request in order is checked
//! (its place in the message, its length, the responder resources it
//! needs), executed by its kind (READ, atomic, FLUSH or ATOMIC WRITE,
//! SEND or WRITE) and answered: an ACK, a NAK (which, but for a sequence
//! error, takes the QP to the error state), an RNR NAK, an atomic ACK or
//! an empty READ response. READ responses are left to
//! [`send_read_responses`](super::send_read_responses).

use super::{
    ack::{send_ack, send_atomic_ack, send_empty_read},
    atomic::atomic,
    duplicate::duplicate,
    place::{check_length, check_sequence, place, Placement},
    read::start_read,
    refused,
    state::Resource,
};
use crate::{
    dev::counters::Counter,
    ffi::net::NetDev,
    logic::resp::dma_len_ok,
    proto::{
        headers::{NakCode, Syndrome},
        packet::Packet,
    },
    queues::queue::SharedQueue,
    transport::qp::{Effects, ErrCause, QpCtx, QpState_},
};

/// How a request ends for the requester.
enum Answer {
    /// Nothing (UC, UD, or no ACK requested).
    None,
    /// An ACK of the request's PSN.
    Ack,
    /// A NAK with this code.
    Nak(NakCode),
    /// An RNR NAK: no receive WQE for a SEND.
    Rnr,
    /// An atomic ACK with the value the atomic found.
    AtomicAck(u64),
    /// An empty READ response (FLUSH, ATOMIC WRITE).
    EmptyRead,
    /// Nothing yet: the request waits for pages of a region paged on
    /// demand, with nothing of it done; its datagram is held and comes
    /// back.
    Hold,
}

/// Handles an RC request: in order, a duplicate, or past a gap.
pub(super) fn on_rc(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
    ndev: &NetDev,
) {
    let psn = pkt.headers.bth.psn;
    let expected = st.resp.psn;
    if psn.is_after(expected) {
        ctx.counters.add(Counter::OutOfSeqRequest, 1);
        if !st.resp.nak_sent {
            st.resp.nak_sent = true;
            send_ack(
                st,
                ndev,
                &mut fx.out,
                expected,
                Syndrome::Nak(NakCode::PsnSequenceError),
            );
        }
        return;
    }
    if psn.is_before(expected) {
        ctx.counters.add(Counter::DuplicateRequest, 1);
        duplicate(st, pkt, ndev, &mut fx.out);
        return;
    }
    let answer = execute(ctx, st, fx, rq, pkt);
    let out = &mut fx.out;
    match answer {
        Answer::None => {}
        Answer::Ack => send_ack(st, ndev, out, psn, Syndrome::ACK_UNLIMITED),
        Answer::Nak(code) => {
            send_ack(st, ndev, out, psn, Syndrome::Nak(code));
            // Class C/D errors: the responder's QP goes to the error state.
            if code != NakCode::PsnSequenceError {
                fx.enter_error(ErrCause::NakSent(code));
            }
        }
        Answer::Rnr => {
            ctx.counters.add(Counter::SendRnrErr, 1);
            let timer = st.attr.get().min_rnr_timer;
            send_ack(st, ndev, out, psn, Syndrome::RnrNak { timer });
        }
        Answer::AtomicAck(orig) => send_atomic_ack(st, ndev, out, psn, orig),
        Answer::EmptyRead => send_empty_read(st, ndev, out, psn),
        Answer::Hold => {}
    }
}

/// Takes a request in order: checks it, executes it, advances the PSN.
fn execute(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
) -> Answer {
    let info = pkt.info();
    let psn = pkt.headers.bth.psn;
    if let Err(code) = check_sequence(st.resp.cur, info) {
        return Answer::Nak(code);
    }
    if let Err(code) = check_length(st.mtu, info, pkt.payload.len()) {
        return Answer::Nak(code);
    }
    // IBA C9-94, as rxe: a RETH names at most 2^31 bytes.
    if pkt.headers.reth.is_some_and(|r| !dma_len_ok(r.len)) {
        return Answer::Nak(NakCode::InvalidRequest);
    }
    // A READ or atomic needs a responder resource; with
    // `max_dest_rd_atomic` 0 there is none (rxe's
    // `RESPST_ERR_TOO_MANY_RDMA_ATM_REQ`, class C). ATOMIC WRITE is
    // checked in `flush::execute`.
    if (info.is_read() || info.is_atomic()) && st.attr.get().max_dest_rd_atomic == 0 {
        return Answer::Nak(NakCode::InvalidRequest);
    }
    let ack_req = pkt.headers.bth.ack_req;
    if info.is_read() {
        return match start_read(ctx, st, pkt) {
            Ok(npkts) => {
                st.resp.psn = psn.add(npkts);
                st.resp.msn = st.resp.msn.wrapping_add(1);
                st.resp.nak_sent = false;
                st.resp.reads_pending = true;
                Answer::None
            }
            Err(code) => Answer::Nak(code),
        };
    }
    if info.is_atomic() {
        return match atomic(ctx, st, pkt) {
            Ok(orig) => {
                st.resp.psn = psn.next();
                st.resp.msn = st.resp.msn.wrapping_add(1);
                st.resp.nak_sent = false;
                Answer::AtomicAck(orig)
            }
            Err(r) => refused(st, fx, r).map_or(Answer::Hold, Answer::Nak),
        };
    }
    if info.is_flush() || info.is_atomic_write() {
        return match crate::transport::flush::execute(ctx, st, pkt) {
            Ok(()) => {
                st.resp.psn = psn.next();
                st.resp.msn = st.resp.msn.wrapping_add(1);
                st.resp.nak_sent = false;
                let depth = usize::from(st.attr.get().max_dest_rd_atomic);
                let pending = st.resp.reads_pending;
                st.resp.add_resource(Resource::Done { psn, pending }, depth);
                Answer::EmptyRead
            }
            Err(r) => refused(st, fx, r).map_or(Answer::Hold, Answer::Nak),
        };
    }
    if !info.is_send() && !info.is_write() {
        return Answer::Nak(NakCode::InvalidRequest);
    }
    match place(ctx, st, fx, rq, pkt) {
        Ok(()) => {
            st.resp.psn = psn.next();
            st.resp.nak_sent = false;
            if ack_req {
                Answer::Ack
            } else {
                Answer::None
            }
        }
        Err(Placement::Rnr) => Answer::Rnr,
        Err(Placement::Nak(code)) => Answer::Nak(code),
        Err(Placement::Wait) => Answer::Hold,
        // Not for RC (`on_length_error`).
        Err(Placement::Dropped) => Answer::None,
    }
}
