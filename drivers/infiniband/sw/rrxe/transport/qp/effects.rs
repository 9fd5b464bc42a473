// SPDX-License-Identifier: GPL-2.0

//! What the roles decide under a QP's lock but may only carry out once it
//! is dropped, gathered in one place: [`Effects`].
//!
//! Sending a packet, calling a CQ's handler (a kernel consumer may post
//! from it), queueing a timer and flushing the queues into ERR all take
//! other locks or call out of the driver, so none of them may happen
//! under the QP's lock. The engine makes an `Effects` on its stack, hands
//! it to the roles with the QP's read-only context
//! ([`QpCtx`](super::QpCtx)) and the locked state,
//! [settles](Effects::settle) it against the state before the lock is
//! dropped, and carries it out after (`QpInner::apply`, which gives the
//! order). The roles only record; nothing here acts, so a
//! role can be run and its decisions read without the engine.

use super::QpState_;
use crate::{logic::qp_state::QpState, transport::xmit::Outbox};

/// The effects of one pass under a QP's lock: recorded by the roles, then
/// settled against the state under the lock and carried out after it.
/// Lives on the engine's stack; nothing in it allocates.
pub(crate) struct Effects {
    /// The packets built, to send in order.
    pub(crate) out: Outbox,
    /// A completion on the send CQ asks for its handler.
    pub(in crate::transport) notify_send: bool,
    /// A completion on the receive CQ asks for its handler.
    pub(in crate::transport) notify_recv: bool,
    /// The QP is to enter ERR and be flushed (a failed completion, a
    /// class C or D NAK sent).
    pub(in crate::transport) enter_error: bool,
    /// An RC request went out: the retransmit timer is to run (asked by
    /// the requester; [`settle`](Self::settle) turns it into
    /// `retransmit_in`).
    arm_retransmit: bool,
    /// Once settled: queue the retransmit timer with this delay in
    /// jiffies (it was not armed and the QP has a timeout).
    pub(in crate::transport) retransmit_in: Option<u64>,
    /// An RNR NAK asks to wait this long (microseconds) before retrying.
    pub(in crate::transport) rnr_delay_us: Option<u32>,
    /// The SQ drained in SQD; once settled, only if the consumer asked to
    /// be told (`en_sqd_async_notify`).
    pub(in crate::transport) sq_drained: bool,
}

impl Effects {
    /// Nothing decided yet.
    pub(crate) const fn new() -> Self {
        Self {
            out: Outbox::new(),
            notify_send: false,
            notify_recv: false,
            enter_error: false,
            arm_retransmit: false,
            retransmit_in: None,
            rnr_delay_us: None,
            sq_drained: false,
        }
    }

    /// A send completion was posted; `fire`: its CQ's handler is due.
    pub(crate) fn send_completed(&mut self, fire: bool) {
        self.notify_send |= fire;
    }

    /// A receive completion was posted; `fire`: its CQ's handler is due.
    pub(crate) fn recv_completed(&mut self, fire: bool) {
        self.notify_recv |= fire;
    }

    /// The QP is to enter ERR: a completion failed, or the responder sent
    /// a NAK that ends the connection.
    pub(crate) fn enter_error(&mut self) {
        self.enter_error = true;
    }

    /// Whether this pass decided the QP enters ERR (the requester then
    /// sends nothing more in it).
    pub(crate) fn enters_error(&self) -> bool {
        self.enter_error
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
            self.retransmit_in = st.timeout_jiffies;
            if self.retransmit_in.is_some() {
                st.timer_armed = true;
            }
        }
        self.sq_drained = self.sq_drained && st.attr.get().en_sqd_async_notify != 0;
        if self.enter_error {
            st.state = QpState::Err;
        }
    }
}
