// SPDX-License-Identifier: GPL-2.0

//! The completer: matches ACKs, NAKs, READ responses and atomic ACKs to
//! the requester's flights, completes WQEs in order, and decides on
//! retransmission (sequence NAKs, timeouts) and RNR waits.
//!
//! A response for PSN `p` implies the responder received everything
//! before `p`: SENDs and WRITEs before it are done; a READ or atomic
//! before it whose response never came must be asked again.

use super::flights::{Flight, FlightOp};
use crate::{
    dev::counters::Counter,
    ffi::rt::trace::{self, RetryCause},
    logic::{
        qp_state::QpState,
        qp_state::QpType,
        segment::{packet_count, packet_span},
        wc::{WcError, WcOpcode, WcStatus},
        wqe,
    },
    mem::{
        copy::{self, MemError},
        odp::PageFault,
    },
    proto::{
        headers::{NakCode, Syndrome},
        opcode::OpClass,
        packet::Packet,
        psn::Psn,
    },
    queues::cq::Completion,
    queues::queue::SharedQueue,
    transport::qp::{Effects, ErrCause, Missing, QpCtx, QpState_, Side},
};

/// What [`requester_stays`] compares a response's effect against: the
/// send side as it was before the response.
pub(crate) struct Before {
    flights: usize,
    oldest: Psn,
}

impl Before {
    /// The send side of `st` now.
    pub(crate) fn of(st: &QpState_) -> Self {
        Self {
            flights: st.send.flights().len(),
            oldest: st.send.oldest_unacked(),
        }
    }
}

/// Whether the requester can do nothing new after `pkt`, taken since
/// `before`: a READ response other than its READ's last, placed in order
/// (the oldest unacknowledged PSN moved by one), no flight retired, every
/// flight started sent (the cursor is at the next new PSN: a flight being
/// sent, or resent after a retry, goes on as the window slides), and the
/// window still shut to one more new PSN. Running
/// the requester for each such response (as for every response before)
/// was a whole pass per packet of a READ stream's receive. Whatever it
/// waits for comes with another response (the one that opens the window
/// or ends a READ), a post, or a timer, each of which runs it.
///
/// With every flight sent and the window shut to one new PSN, no WQE can
/// start but one with no PSNs (a local operation), which a retired flight
/// (a free slot) or a READ ended (the depth a fence waits for) could let
/// go: neither happened.
pub(crate) fn requester_stays(st: &QpState_, pkt: &Packet<'_>, before: &Before) -> bool {
    let info = pkt.info();
    info.class() == OpClass::ReadResponse
        && !info.is_last()
        && st.send.flights().len() == before.flights
        && st.send.oldest_unacked() == before.oldest.add(1)
        && st.send.caught_up()
        && !st.send.retry_started()
        && !st
            .send
            .window()
            .open(st.send.oldest_unacked(), st.send.psn(), 1)
}

/// Handles a response packet for this RC QP (the caller checked the QP
/// type, the state and the peer). An RNR NAK leaves its wait in `fx`.
pub(crate) fn on_response(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    sq: &SharedQueue,
    pkt: &Packet<'_>,
) {
    let psn = pkt.headers.bth.psn;
    // A READ that fails on the responder's side after some of its
    // responses arrived is NAKed with the PSN of the READ request (rxe's
    // responder and rrxe's), behind the oldest unacknowledged PSN: it
    // fails the READ all the same.
    if let (Some(aeth), OpClass::Ack) = (pkt.headers.aeth, pkt.info().class()) {
        if is_fatal(aeth.syndrome) && st.send.in_answered_read(psn) {
            on_ack(ctx, st, fx, psn, aeth.syndrome);
            return;
        }
    }
    // Ignore responses to PSNs never sent or long acknowledged.
    let oldest = st.send.oldest_unacked();
    if !psn.in_window(oldest.sub(1), oldest.distance(st.send.psn()) + 1) {
        return;
    }
    match pkt.info().class() {
        OpClass::ReadResponse => on_read_response(ctx, st, fx, sq, pkt),
        OpClass::AtomicAck => on_atomic_ack(ctx, st, fx, sq, pkt),
        _ => {
            let Some(aeth) = pkt.headers.aeth else {
                return;
            };
            // A NAK names the first PSN the responder lacks: one before
            // the oldest unacknowledged PSN is stale (a duplicate, or
            // overtaken by the retry it asked for).
            let nak = !matches!(aeth.syndrome, Syndrome::Ack { .. });
            if nak && psn == oldest.sub(1) {
                return;
            }
            on_ack(ctx, st, fx, psn, aeth.syndrome);
        }
    }
}

/// Whether a NAK's syndrome ends the request it names, and the QP: those
/// the responder sends once, before its QP enters ERR.
fn is_fatal(syndrome: Syndrome) -> bool {
    matches!(
        syndrome,
        Syndrome::Nak(
            NakCode::InvalidRequest | NakCode::RemoteAccessError | NakCode::RemoteOperationalError
        )
    )
}

/// Everything before `psn` was received by the responder: SENDs and
/// WRITEs there are done. Returns `false` if a READ or atomic there lost
/// (part of) its response; it is asked again from its first missing
/// response, once until something moves, so that a burst of later
/// responses (reordered, or replies to the retry itself) does not start a
/// retry each.
fn acked_before(ctx: &QpCtx<'_>, st: &mut QpState_, psn: Psn) -> bool {
    // The caller checked `psn` is no later than the next PSN to send.
    let acked = st.send.acknowledge(psn);
    note_progress(st, acked.progress);
    let Some(upto) = acked.gap else {
        return true;
    };
    if !st.send.retry_started() {
        retry(ctx, st, upto, RetryCause::ReadGap);
    }
    false
}

/// Forward progress resets the retry budgets to the QP's attributes and
/// restarts the timeout clock ([`super::SendState::progressed`]).
fn note_progress(st: &mut QpState_, progress: bool) {
    if progress {
        let a = st.attr.get();
        let (retry_cnt, rnr_retry) = (a.retry_cnt, a.rnr_retry);
        let now = crate::ffi::rt::now_ns();
        st.send.progressed(retry_cnt, rnr_retry, now);
    }
}

fn on_ack(ctx: &QpCtx<'_>, st: &mut QpState_, fx: &mut Effects, psn: Psn, syndrome: Syndrome) {
    match syndrome {
        Syndrome::Ack { .. } => {
            acked_before(ctx, st, psn.next());
        }
        Syndrome::RnrNak { timer } => {
            if !acked_before(ctx, st, psn) {
                return;
            }
            ctx.counters.add(Counter::RcvdRnrErr, 1);
            if !st.send.rnr_nak(psn) {
                ctx.counters.add(Counter::RetryRnrExceededErr, 1);
                fail_at(st, psn, WcError::RnrRetryExc);
                return;
            }
            fx.rnr_wait(crate::proto::headers::rnr_timeout_usecs(timer));
        }
        Syndrome::Nak(NakCode::PsnSequenceError) => {
            if !acked_before(ctx, st, psn) {
                return;
            }
            ctx.counters.add(Counter::RcvdSeqErr, 1);
            // Progress above cleared `retry_started`; without it this NAK
            // names the gap the running retry already fills.
            if !st.send.retry_started() {
                retry(ctx, st, psn, RetryCause::SeqNak);
            }
        }
        Syndrome::Nak(code) => {
            if !acked_before(ctx, st, psn) {
                return;
            }
            let e = match code {
                NakCode::InvalidRequest => WcError::RemInvReq,
                NakCode::RemoteAccessError => WcError::RemAccess,
                NakCode::RemoteOperationalError => WcError::RemOp,
                _ => WcError::BadResp,
            };
            fail_at(st, psn, e);
        }
        Syndrome::Reserved(_) => {}
    }
}

/// Retransmits from `psn` for `cause` if the retry budget allows, else
/// fails the flight with `RETRY_EXC_ERR`.
fn retry(ctx: &QpCtx<'_>, st: &mut QpState_, psn: Psn, cause: RetryCause) {
    if !st.send.retry(psn, crate::ffi::rt::now_ns()) {
        ctx.counters.add(Counter::RetryExceededErr, 1);
        fail_at(st, psn, WcError::RetryExc);
        return;
    }
    trace::retransmit(ctx.qpn, psn.get(), cause);
    ctx.counters.add(Counter::CompleterRetryErr, 1);
}

/// Fails the flight holding `psn` (or the oldest outstanding one).
fn fail_at(st: &mut QpState_, psn: Psn, e: WcError) {
    let i = st.send.flights().find(psn).unwrap_or(0);
    st.send.fail_flight(i, e);
}

fn on_read_response(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    sq: &SharedQueue,
    pkt: &Packet<'_>,
) {
    let psn = pkt.headers.bth.psn;
    let Some(i) = st.send.flights().find(psn) else {
        return;
    };
    let Some(f) = st.send.flights().get(i).copied() else {
        return;
    };
    if f.is_done() {
        return;
    }
    if f.op != FlightOp::Read {
        // FLUSH and ATOMIC WRITE are answered by an empty READ response
        // (C rxe): it acknowledges them.
        if is_empty_read_ack(&f, pkt) {
            if let Some(aeth) = pkt.headers.aeth {
                on_ack(ctx, st, fx, psn, aeth.syndrome);
            }
        }
        return;
    }
    if !acked_before(ctx, st, f.first_psn) {
        return;
    }
    // Only the next packet in order is taken. A gap (a response lost or
    // overtaken) asks for the rest of the READ at once, as C rxe does,
    // once until the READ moves on; a duplicate is dropped.
    let index = f.first_psn.distance(psn);
    if index != f.read_next {
        if index > f.read_next && !st.send.retry_started() {
            ctx.counters.add(Counter::RcvdSeqErr, 1);
            retry(ctx, st, f.first_psn.add(f.read_next), RetryCause::ReadGap);
        }
        return;
    }
    // After a READ was asked again for its rest, the responder numbers
    // the rest as a new READ (first, middle, last), so only the place and
    // the length of each response are checked, not its position opcode.
    let count = packet_count(f.length, st.mtu);
    if pkt.info().is_last() != (index + 1 == count) {
        return;
    }
    let Some((offset, len)) = packet_span(f.length, st.mtu, index) else {
        return;
    };
    if pkt.payload.len() != len as usize {
        fail_at(st, psn, WcError::BadResp);
        return;
    }
    if !place_in_wqe(ctx, st, fx, sq, (i, psn), offset, pkt.payload) {
        return;
    }
    note_progress(st, true);
    st.send.read_placed(i, count);
}

/// Copies `data`, an answer to flight `i` (READ response bytes, an
/// atomic's original value) in the packet of `psn`, to byte `offset` of
/// its WQE's buffers. Returns whether it was placed: not if the WQE is no
/// longer in the SQ, nor if it cannot take the bytes, which fails the
/// flight holding `psn`, nor if pages of the buffers are not mapped (a
/// region paged on demand): the packet then waits for the fault (in
/// `fx`), and comes back.
fn place_in_wqe(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    sq: &SharedQueue,
    (i, psn): (usize, Psn),
    offset: u32,
    data: &[u8],
) -> bool {
    if !sq.peek_nth(i as u32, &mut st.send.slot) {
        return false;
    }
    // Decoding borrows the slot copy: a fault is asked for after. The
    // error is the failure's status, or the pages to fault in.
    let placed: Result<(), Result<WcError, PageFault>> = match wqe::decode_send(
        &st.send.slot,
        QpType::Rc,
        ctx.cap.max_send_sge,
        ctx.cap.max_inline_data,
    ) {
        Ok(w) => match &w.payload {
            wqe::Payload::Sges(sges) => copy::scatter(ctx.mem.mrs, ctx.mem.pd, sges, offset, data)
                .map_err(|e| match e {
                    MemError::Missing(fault) => Err(fault),
                    e => Ok(WcError::from(e)),
                }),
            wqe::Payload::Inline(_) => Err(Ok(WcError::LocQpOp)),
        },
        Err(_) => Err(Ok(WcError::LocQpOp)),
    };
    let e = match placed {
        Ok(()) => return true,
        Err(Ok(e)) => e,
        Err(Err(fault)) => match st.page_missing(fx, Side::Rx, fault) {
            Missing::Wait => return false,
            Missing::Fail => WcError::LocProt,
        },
    };
    fail_at(st, psn, e);
    false
}

/// Whether `pkt`, a READ response to the flight `f`, is the answer C rxe
/// gives to a FLUSH or an ATOMIC WRITE: a lone response without payload.
fn is_empty_read_ack(f: &Flight, pkt: &Packet<'_>) -> bool {
    matches!(f.wc_opcode, WcOpcode::Flush | WcOpcode::AtomicWrite)
        && pkt.info().is_first()
        && pkt.info().is_last()
        && pkt.payload.is_empty()
}

fn on_atomic_ack(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    sq: &SharedQueue,
    pkt: &Packet<'_>,
) {
    let psn = pkt.headers.bth.psn;
    let (Some(i), Some(ack)) = (st.send.flights().find(psn), pkt.headers.atomic_ack_eth) else {
        return;
    };
    match st.send.flights().get(i) {
        Some(f) if f.op == FlightOp::Atomic && !f.is_done() => {}
        _ => return,
    }
    if !acked_before(ctx, st, psn) {
        return;
    }
    // The original value lands in host byte order, as on any HCA.
    if !place_in_wqe(ctx, st, fx, sq, (i, psn), 0, &ack.orig.to_ne_bytes()) {
        return;
    }
    note_progress(st, true);
    st.send.answered(i);
}

/// The retransmit timer fired: if nothing moved for a whole timeout,
/// retransmit from the oldest unacknowledged PSN. Returns the nanoseconds
/// to wait before checking again, if the timer should stay armed.
pub(crate) fn timeout(ctx: &QpCtx<'_>, st: &mut QpState_) -> Option<u64> {
    let base = st.timeout_ns?;
    let period = st.send.timer_period(base);
    if st.state.raw() < QpState::Rts.raw() || !st.send.awaiting_peer() {
        return None;
    }
    let now = crate::ffi::rt::now_ns();
    let due = st.send.last_progress().wrapping_add(period);
    if (now.wrapping_sub(due) as i64) < 0 {
        return Some(due.wrapping_sub(now));
    }
    // `awaiting_peer` above: a flight waits, the oldest unacknowledged
    // PSN is in it.
    let psn = st.send.oldest_unacked();
    retry(ctx, st, psn, RetryCause::Timeout);
    st.send.timed_out();
    Some(st.send.timer_period(base))
}

/// Pops the completed flights at the head of the SQ and reports them.
/// An error completion takes the QP to the error state, and the last
/// flight of a draining SQD reaches SQD: both through `fx`, after the
/// lock.
pub(crate) fn complete_done(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    sq: &mut SharedQueue,
) {
    while let Some((f, status)) = st.send.retire_done() {
        sq.pop();
        let failed = status != WcStatus::Success;
        if !failed && f.wc_opcode == WcOpcode::Send {
            ctx.counters.add(Counter::RdmaSends, 1);
        }
        if f.signaled || failed {
            let c = Completion {
                wr_id: f.wr_id,
                status,
                opcode: f.wc_opcode,
                byte_len: f.length,
                qp_num: ctx.qpn,
                ..Default::default()
            };
            fx.send_completed(ctx.send_cq.post_quiet(&c, ctx.handle));
        }
        if failed {
            fx.enter_error(ErrCause::SendWc(status));
            break;
        }
    }
    if st.sqd() && st.sq_draining && st.send.is_drained() {
        st.sq_draining = false;
        fx.sq_drained();
    }
}
