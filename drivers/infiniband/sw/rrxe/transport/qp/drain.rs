// SPDX-License-Identifier: GPL-2.0

//! Emptying a QP's queues when it leaves the data path: on RESET what was
//! posted is dropped without completions, in ERR it is completed with
//! `WR_FLUSH_ERR`. Both the verbs (`modify_qp`, a post in ERR) and the data
//! path (a fatal error) get here, so it is neither's; the flush runs
//! once at a time ([`RunOnce`](super::run_once::RunOnce)) and calls the
//! CQs' handlers with no lock held.

use super::inner::QpInner;
use crate::{
    ffi::ib::Event,
    logic::wc::WcStatus,
    queues::cq::{Completion, CqInner, Posted},
    queues::queue::SharedQueue,
};

/// What flushing one queue into its CQ leaves due once the queue's lock is
/// dropped.
#[derive(Default)]
struct Drained {
    /// The CQ's handler is to be called.
    notify: bool,
    /// The CQ was full: its error event is to be reported (once: the rest
    /// of the queue is dropped unread).
    overflow: bool,
}

impl QpInner {
    /// On entering RESET: drops what was posted, without completions, and
    /// clears the slots (rxe's `rxe_qp_reset`), and the datagrams queued
    /// for the QP, a held one too: the faults forgotten (under the lock),
    /// then the queue purged ([`QpInner::purge_rx`]).
    pub(in crate::transport) fn reset_queues(&self) {
        {
            let mut st = self.state.lock();
            st.send.reset();
            st.resp.reset();
            st.faults.clear();
        }
        self.purge_rx();
        if let Some(sq) = (*self.sq.lock()).as_mut() {
            sq.clear();
        }
        if let Some(rq) = (*self.rq.lock()).as_mut() {
            rq.clear();
        }
    }

    /// In ERR: completes every posted request with [`WcStatus::WrFlushErr`]
    /// (rxe's `flush_send_queue` and `flush_recv_queue`). If a CQ overflows
    /// the rest are dropped without completions, as in rxe.
    pub(in crate::transport) fn flush(&self) {
        {
            let mut st = self.state.lock();
            st.send.reset();
            st.resp.reset();
            st.faults.clear();
        }
        self.flush_queues();
        if self.has_srq {
            // The SRQ's receives belong to the other QPs sharing it.
            self.handle.event(Event::LastWqeReached);
        }
    }

    /// Completes what is posted in the SQ and RQ in error and calls the
    /// CQs' handlers with no lock of ours held: a kernel consumer may poll
    /// and post from its handler. A post from a handler (or from another
    /// thread) while this runs only asks the running flush to go round
    /// again, so a handler that reposts neither recurses nor deadlocks.
    pub(in crate::transport) fn flush_queues(&self) {
        if !self.flusher.try_start() {
            return;
        }
        loop {
            // Each CQ's error event, if it overflowed, is reported as soon
            // as the queue's lock is dropped, before the handlers.
            let send = (*self.sq.lock())
                .as_mut()
                .map(|sq| self.drain_into(sq, &self.send_cq))
                .unwrap_or_default();
            if send.overflow {
                self.send_cq.report_overflow();
            }
            let recv = (*self.rq.lock())
                .as_mut()
                .map(|rq| self.drain_into(rq, &self.recv_cq))
                .unwrap_or_default();
            if recv.overflow {
                self.recv_cq.report_overflow();
            }
            if send.notify {
                self.send_cq.notify();
            }
            if recv.notify {
                self.recv_cq.notify();
            }
            if self.flusher.finish() {
                return;
            }
        }
    }

    /// Consumes the elements of `q`, completing each in error on `cq`
    /// until the CQ is full. Returns what is due on the CQ (by the caller,
    /// once it dropped the queue's lock). Both WQE layouts start with the
    /// consumer's 64-bit `wr_id`.
    fn drain_into(&self, q: &mut SharedQueue, cq: &CqInner) -> Drained {
        let mut due = Drained::default();
        q.drain(|head| {
            let c = Completion {
                wr_id: u64::from_ne_bytes(*head),
                status: WcStatus::WrFlushErr,
                qp_num: self.qpn,
                ..Default::default()
            };
            match cq.post_quiet(&c, self.handle) {
                Posted::Queued => true,
                Posted::Notify => {
                    due.notify = true;
                    true
                }
                // Full: this completion is lost and the rest are dropped
                // unread.
                Posted::Overflow => {
                    due.overflow = true;
                    false
                }
                // Gone: the rest are dropped unread.
                Posted::Gone => false,
            }
        });
        due
    }
}
