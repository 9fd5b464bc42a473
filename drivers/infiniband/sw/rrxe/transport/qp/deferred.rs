// SPDX-License-Identifier: GPL-2.0

//! The gate of a QP's deferred work: every queueing of its work item, its
//! retransmit timer or its RNR timer goes through [`QpInner::defer`], under
//! the `deferrals` lock and only while it is open. `destroy_qp` closes the
//! gate before it cancels them, so once it returns nothing can be queued
//! for the QP any more (see design.rst, "Lifetimes").
//!
//! The gate belongs to the QP, not to what the work runs: the work items
//! themselves (what they run: the requester's run, the timers) are the
//! engine's, above the roles; here are only the fields they live in
//! (`HasWork`, `HasDelayedWork`) and the one way to queue them. The
//! socket-buffer hook, which only reschedules a paused QP, is here too.

use super::inner::QpInner;
use crate::{
    ffi::net::{SkbAccount, SkbOwner},
    logic::flow::{skbs_may_resume, skbs_must_pause},
};
use kernel::{
    impl_has_delayed_work, impl_has_work,
    sync::{Arc, ArcBorrow},
    workqueue,
};

/// The work a QP defers (see [`QpInner::defer`]); delays in jiffies.
#[derive(Clone, Copy)]
pub(in crate::transport) enum Deferred {
    /// The requester's run, from the work queue.
    Run,
    /// The retransmit timer.
    Retransmit(usize),
    /// The end of an RNR wait.
    RnrWait(usize),
}

/// A QP's packets are counted while in the IP stack; the requester pauses
/// above the high mark and is rescheduled (never run) from the buffers'
/// destructor below the low mark.
impl SkbOwner for QpInner {
    fn skb_account(&self) -> &SkbAccount<Self> {
        &self.tx
    }

    fn must_pause(in_flight: u32) -> bool {
        skbs_must_pause(in_flight)
    }

    fn may_resume(in_flight: u32) -> bool {
        skbs_may_resume(in_flight)
    }

    fn resume(this: ArcBorrow<'_, Self>) {
        Arc::from(this).schedule();
    }
}

impl_has_work! {
    impl HasWork<Self, 0> for QpInner { self.task }
}
impl_has_delayed_work! {
    impl HasDelayedWork<Self, 1> for QpInner { self.retransmit }
    impl HasDelayedWork<Self, 2> for QpInner { self.rnr }
}

/// The gate of deferred work.
impl QpInner {
    /// Queues deferred work, unless the QP is being destroyed.
    pub(in crate::transport) fn defer(self: &Arc<Self>, what: Deferred) {
        let open = self.deferrals.lock();
        if !*open {
            return;
        }
        let wq = workqueue::system_unbound();
        // An item already queued keeps its place; the clone comes back and
        // is dropped (never the last reference: `self` is one).
        match what {
            Deferred::Run => {
                let _ = wq.enqueue::<Arc<QpInner>, 0>(self.clone());
            }
            Deferred::Retransmit(j) => {
                let _ = wq.enqueue_delayed::<Arc<QpInner>, 1>(self.clone(), j);
            }
            Deferred::RnrWait(j) => {
                let _ = wq.enqueue_delayed::<Arc<QpInner>, 2>(self.clone(), j);
            }
        }
        drop(open);
    }

    /// Runs the requester later, from the work queue.
    pub(crate) fn schedule(self: &Arc<Self>) {
        self.defer(Deferred::Run);
    }

    /// Closes the gate for good (`destroy_qp`): nothing is queued after
    /// this returns, and whatever was queued before is visible to the
    /// cancellations that follow.
    pub(in crate::transport) fn close_deferrals(&self) {
        *self.deferrals.lock() = false;
    }
}
