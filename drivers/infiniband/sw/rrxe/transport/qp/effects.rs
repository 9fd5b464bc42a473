// SPDX-License-Identifier: GPL-2.0

//! What the roles decide under a QP's lock but may only carry out once it
//! is dropped, gathered in one place: [`Effects`].
//!
//! Sending a packet, reporting an asynchronous event or calling a CQ's
//! handler (a kernel consumer may post, poll or modify from either),
//! queueing a timer and flushing the queues into ERR all take other locks
//! or call out of the driver, so none of them may happen under the QP's
//! lock. The engine makes an `Effects` on its stack, hands it to the roles
//! with the QP's read-only context ([`QpCtx`](super::ctx::QpCtx)) and the
//! locked state, [settles](Effects::settle) it against the state before
//! the lock is dropped, and carries it out after (`QpInner::apply`). The
//! roles only record; nothing here acts, so a role can be run and its
//! decisions read without the engine.
//!
//! Once the lock is dropped, the effects are carried out in this order:
//!
//! 1. the packets, in the order built ([`Effects::out`]): the answers
//!    and requests a pass built leave even when it also failed the QP;
//! 2. the asynchronous events the pass raised, in the order the roles
//!    raise them: the SRQ's limit reached (taken at the start of a
//!    message, before its completion), then each completion lost to a
//!    full send CQ, then each lost to a full receive CQ (a pass posts to
//!    one of the two: the completer to the send CQ, the responder to the
//!    receive CQ). They precede the handlers, as they did when they were
//!    raised under the lock, so a consumer hears that its CQ overflowed
//!    before its handler polls it;
//! 3. the send CQ's handler, then the receive CQ's;
//! 4. queueing the retransmit timer, then the end of an RNR wait, then
//!    the page fault work (the send side's; a held datagram queues the
//!    receive side's once it is back in the queue, see `intake.rs`);
//! 5. SQ drained (`IB_EVENT_SQ_DRAINED`);
//! 6. the flush into ERR, last: the consumer hears of the completions the
//!    pass posted before the flush completes the rest in error; a QP that
//!    was not in ERR before logs why (rate-limited, [`ErrCause`]).

use super::state::QpState_;
use crate::{
    logic::{qp_state::QpState, wc::WcStatus},
    proto::headers::NakCode,
    queues::{cq::Posted, srq::Taken},
    transport::xmit::Outbox,
};

/// Why the data path puts a QP into ERR: what the kernel log line says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrCause {
    /// A send WQE completed in error (retries exhausted, a NAK received,
    /// a local protection or length error...).
    SendWc(WcStatus),
    /// A receive WQE completed in error.
    RecvWc(WcStatus),
    /// The responder answered a request with a NAK that ends the
    /// connection (IBA class C or D: invalid request, remote access or
    /// operational error).
    NakSent(NakCode),
}

/// The effects of one pass under a QP's lock: recorded by the roles, then
/// settled against the state under the lock and carried out after it.
/// Lives on the engine's stack; nothing in it allocates.
pub(crate) struct Effects {
    /// The packets built, to send in order.
    pub(crate) out: Outbox,
    /// A receive taken from the SRQ crossed its armed limit:
    /// `IB_EVENT_SRQ_LIMIT_REACHED` is due (at most once a pass: a pass
    /// starts at most one message).
    pub(in crate::transport) srq_limit_reached: bool,
    /// Completions the send CQ lost, being full: as many
    /// `IB_EVENT_CQ_ERR` are due.
    pub(in crate::transport) send_cq_overflows: u32,
    /// Completions the receive CQ lost, being full: likewise.
    pub(in crate::transport) recv_cq_overflows: u32,
    /// A completion on the send CQ asks for its handler.
    pub(in crate::transport) notify_send: bool,
    /// A completion on the receive CQ asks for its handler.
    pub(in crate::transport) notify_recv: bool,
    /// The QP is to enter ERR and be flushed (a failed completion, a
    /// class C or D NAK sent): the first cause the pass found.
    pub(in crate::transport) enter_error: Option<ErrCause>,
    /// Once settled: the state the QP was in before this pass put it in
    /// ERR (the trace's, and whether it is news worth a log line).
    pub(in crate::transport) left_state: QpState,
    /// An RC request went out: the retransmit timer is to run (asked by
    /// the requester; [`settle`](Self::settle) turns it into
    /// `retransmit_in`).
    arm_retransmit: bool,
    /// Once settled: arm the retransmit timer with this delay in
    /// nanoseconds (it was not armed and the QP has a timeout).
    pub(in crate::transport) retransmit_in: Option<u64>,
    /// An RNR NAK asks to wait this long (microseconds) before retrying.
    pub(in crate::transport) rnr_delay_us: Option<u32>,
    /// The SQ drained in SQD; once settled, only if the consumer asked to
    /// be told (`en_sqd_async_notify`).
    pub(in crate::transport) sq_drained: bool,
    /// The datagram being taken waits for a page fault: the receive path
    /// puts it back at the head of the queue (and queues the fault work).
    hold: bool,
    /// The send side asked for a page fault: the fault work is to be
    /// queued.
    pub(in crate::transport) fault: bool,
}

impl Effects {
    /// Nothing decided yet.
    pub(crate) const fn new() -> Self {
        Self {
            out: Outbox::new(),
            srq_limit_reached: false,
            send_cq_overflows: 0,
            recv_cq_overflows: 0,
            notify_send: false,
            notify_recv: false,
            enter_error: None,
            left_state: QpState::Reset,
            arm_retransmit: false,
            retransmit_in: None,
            rnr_delay_us: None,
            sq_drained: false,
            hold: false,
            fault: false,
        }
    }

    /// A send completion was posted: records what its CQ said is due
    /// (its handler, or the error event of a full CQ).
    pub(crate) fn send_completed(&mut self, posted: Posted) {
        match posted {
            Posted::Notify => self.notify_send = true,
            Posted::Overflow => self.send_cq_overflows = self.send_cq_overflows.saturating_add(1),
            Posted::Queued | Posted::Gone => {}
        }
    }

    /// A receive completion was posted: likewise, for the receive CQ.
    pub(crate) fn recv_completed(&mut self, posted: Posted) {
        match posted {
            Posted::Notify => self.notify_recv = true,
            Posted::Overflow => self.recv_cq_overflows = self.recv_cq_overflows.saturating_add(1),
            Posted::Queued | Posted::Gone => {}
        }
    }

    /// A receive was taken from the SRQ: records whether it crossed the
    /// SRQ's limit, whose event is then due.
    pub(crate) fn srq_taken(&mut self, taken: &Taken) {
        self.srq_limit_reached |= taken.limit_reached;
    }

    /// The QP is to enter ERR: a completion failed, or the responder sent
    /// a NAK that ends the connection (`cause`; the first one is kept).
    pub(crate) fn enter_error(&mut self, cause: ErrCause) {
        self.enter_error.get_or_insert(cause);
    }

    /// Whether this pass decided the QP enters ERR (the requester then
    /// sends nothing more in it).
    pub(crate) fn enters_error(&self) -> bool {
        self.enter_error.is_some()
    }

    /// An RC request went out: the retransmit timer must run.
    pub(crate) fn arm_retransmit(&mut self) {
        self.arm_retransmit = true;
    }

    /// An RNR NAK asks to wait `us` microseconds before sending again.
    pub(crate) fn rnr_wait(&mut self, us: u32) {
        self.rnr_delay_us = Some(us);
    }

    /// Whether an RNR wait was decided (the requester then waits for its
    /// timer rather than running now).
    pub(crate) fn rnr_waits(&self) -> bool {
        self.rnr_delay_us.is_some()
    }

    /// The datagram being taken waits for a page fault.
    pub(crate) fn hold_packet(&mut self) {
        self.hold = true;
    }

    /// Whether the datagram being taken waits for a page fault (it is
    /// then neither answered nor counted: it comes back).
    pub(crate) fn holds_packet(&self) -> bool {
        self.hold
    }

    /// The send side asked for a page fault.
    pub(crate) fn queue_fault(&mut self) {
        self.fault = true;
    }

    /// In SQD, the last flight completed: SQD is reached.
    pub(crate) fn sq_drained(&mut self) {
        self.sq_drained = true;
    }

    /// Under the lock, once the roles are done: decides against the state
    /// what is due, and records in the state what carrying it out will
    /// have done, so that the next holder of the lock sees it. The timer
    /// is armed only if it is not and the QP has a timeout (`timer_armed`
    /// is set now); the SQD event only if asked for; ERR is entered now
    /// (the flush follows after the lock).
    pub(in crate::transport) fn settle(&mut self, st: &mut QpState_) {
        if core::mem::take(&mut self.arm_retransmit) && !st.timer_armed {
            self.retransmit_in = st.timeout_ns;
            if self.retransmit_in.is_some() {
                st.timer_armed = true;
            }
        }
        self.sq_drained = self.sq_drained && st.attr.get().en_sqd_async_notify != 0;
        if self.enter_error.is_some() {
            self.left_state = st.state;
            st.state = QpState::Err;
        }
    }
}
