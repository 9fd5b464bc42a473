// SPDX-License-Identifier: GPL-2.0

//! The gate of a QP's deferred work: every queueing of its work item and
//! every arming of its retransmit or RNR timer goes through
//! [`QpInner::defer`], under the `deferrals` lock and only while it is
//! open. `destroy_qp` closes the gate before it cancels them, so once it
//! returns nothing can be queued or armed for the QP any more (see
//! design.rst, "Lifetimes").
//!
//! The gate belongs to the QP, not to what the work runs: what the work
//! item and the timers run (the requester's run, the timers' decisions)
//! is the engine's, above the roles; here are only the field the work item
//! lives in (`HasWork`) and the one way to queue or arm them. The
//! socket-buffer hook, which only reschedules a paused QP, is here too.

use super::inner::QpInner;
use crate::{
    ffi::net::{SkbAccount, SkbOwner},
    ffi::rt::{self, SoftTimer},
    logic::flow::{skbs_may_resume, skbs_must_pause},
};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    impl_has_work,
    sync::{Arc, ArcBorrow},
    workqueue,
};

/// The work a QP defers (see [`QpInner::defer`]); delays in nanoseconds.
#[derive(Clone, Copy)]
pub(in crate::transport) enum Deferred {
    /// The requester's run, on the home CPU, in softirq.
    Run,
    /// What a run of the requester left when it used its budget (or the
    /// rest of a long READ's responses, from `deliver`): the same, in
    /// process context (see [`rt::enqueue_task_on`]), normally on the
    /// CPU the run was on: the rest of its packets leave after the first
    /// ones, through the same CPU's backlog (a veth peer takes each CPU's
    /// packets on that CPU: from two CPUs they could arrive out of order).
    /// See `QpInner::left_cpu`; an item queued or running elsewhere
    /// already stays there.
    RunLeft,
    /// The run of the received datagrams' queue, on the home CPU or, if
    /// the caller is there, the next one (see [`QpInner::rx_cpu`]), in
    /// softirq.
    Rx,
    /// What a run of the queue left when it used its budget: the same, in
    /// process context, on any CPU (`system_unbound_wq`).
    RxLeft,
    /// The retransmit timer.
    Retransmit(u64),
    /// The end of an RNR wait.
    RnrWait(u64),
    /// The page faults the data path asked for, in process context with
    /// bottom halves on (faulting sleeps), on any CPU.
    Fault,
}

/// How much later than asked a timer may expire, as a share of its delay
/// (a sixteenth), so that the kernel can fire nearby timers together. A
/// retransmit timeout or an RNR wait is a lower bound (IBA C9-140, 9.7.5.2.8).
const fn slack(ns: u64) -> u64 {
    ns / 16
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
    impl HasWork<Self, 3> for QpInner { self.rx_task }
    impl HasWork<Self, 4> for QpInner { self.task_left }
    impl HasWork<Self, 5> for QpInner { self.rx_left }
    impl HasWork<Self, 6> for QpInner { self.fault_task }
}

/// How much sooner than the last post took the next must come to start
/// a stream ([`QpInner::post_starts_stream`]).
const STREAM_GAP_RATIO: u64 = 4;

/// The home CPU of the next QP (see [`QpInner::home`]): the online CPUs
/// in turn.
pub(in crate::transport) fn next_home() -> u32 {
    static LAST: AtomicU32 = AtomicU32::new(u32::MAX);
    // Two QPs created at once may get the same CPU: only the spread
    // matters.
    let cpu = rt::next_online_cpu(LAST.load(Ordering::Relaxed));
    LAST.store(cpu, Ordering::Relaxed);
    cpu
}

/// The gate of deferred work.
impl QpInner {
    /// Queues deferred work or arms a timer, unless the QP is being
    /// destroyed.
    pub(in crate::transport) fn defer(self: &Arc<Self>, what: Deferred) {
        // The gate's lock keeps interrupts off, under which bottom-half
        // work queued on this CPU only raises its softirq, which process
        // context would leave to the next interrupt or ksoftirqd (a kernel
        // consumer's post on the home CPU waited so). With bottom halves
        // off around the lock, the work runs when this guard, dropped
        // last, turns them on again.
        let _bh = rt::BhOff::where_allowed();
        let left_cpu = matches!(what, Deferred::RunLeft).then(|| self.left_cpu());
        let open = self.deferrals.lock();
        if !*open {
            return;
        }
        // An item already queued keeps its place; the clone comes back and
        // is dropped (never the last reference: `self` is one).
        match what {
            Deferred::Run => {
                rt::enqueue_bh_on::<_, 0>(self.home_cpu(), self.clone());
            }
            Deferred::RunLeft => {
                let cpu = left_cpu.unwrap_or_else(rt::this_cpu);
                rt::enqueue_task_on::<_, 4>(cpu, self.clone());
            }
            Deferred::RxLeft => {
                // Any CPU: the queue and the run-once flag order what is
                // taken, wherever it runs, and a bound item waits behind
                // the kworker of its CPU, which under load runs other QPs'
                // continuations (`ib_write_bw -q 8` went from 0.69 to
                // 0.82-0.92 of rdma_rxe's; `-q 4` 0.74-0.89, noisy). The
                // answers such a run sends (ACKs, READ responses) may leave
                // from two CPUs in turn: design.rst, "Softirq and process
                // context".
                let _ = workqueue::system_unbound().enqueue::<_, 5>(self.clone());
            }
            Deferred::Rx => {
                // Queued already (on this or another CPU): that run takes
                // what was just queued.
                rt::enqueue_bh_on::<_, 3>(self.rx_cpu(), self.clone());
            }
            Deferred::Retransmit(ns) => SoftTimer::<_, 1>::arm(self, ns, slack(ns)),
            Deferred::RnrWait(ns) => SoftTimer::<_, 2>::arm(self, ns, slack(ns)),
            Deferred::Fault => {
                // Queued already: that run takes what was just asked.
                let _ = workqueue::system_unbound().enqueue::<_, 6>(self.clone());
            }
        }
        drop(open);
    }

    /// Where the home CPU's work goes: the home CPU, or this one while
    /// the home CPU is offline.
    fn home_cpu(&self) -> u32 {
        let home = self.home.load(Ordering::Relaxed);
        if rt::cpu_online(home) {
            home
        } else {
            rt::this_cpu()
        }
    }

    /// Where the requester's run goes on after its budget: where it ran,
    /// so that the rest of its packets follow the first ones through the
    /// same CPU's backlog, unless the QP streams and it ran elsewhere
    /// than home: its kicks go home (`QpInner::kick`), whose runs would
    /// take turns with the continuation, from two CPUs.
    fn left_cpu(&self) -> u32 {
        if self.streaming() && !self.runs_here() {
            self.home_cpu()
        } else {
            rt::this_cpu()
        }
    }

    /// Where the queue of received datagrams is taken: the home CPU, but
    /// never the caller's while another is online. Bulk is queued by the
    /// CPU it arrived on, which is the sender's when the sender is local
    /// (a veth peer delivers on the sending CPU): taking it there would
    /// put both sides' per-byte work on one CPU, whatever the homes.
    fn rx_cpu(&self) -> u32 {
        let here = rt::this_cpu();
        let home = self.home_cpu();
        if home != here {
            home
        } else {
            rt::next_online_cpu(here)
        }
    }

    /// Whether the caller runs on the QP's home CPU (or it is offline):
    /// then the data path may run here and now. A hint where preemption
    /// is on; the run-once flags keep the data path on one CPU at a time
    /// whatever it says.
    pub(in crate::transport) fn runs_here(&self) -> bool {
        let cpu = rt::this_cpu();
        let home = self.home.load(Ordering::Relaxed);
        cpu == home || !rt::cpu_online(home)
    }

    /// Whether a process's post starts a stream that its posts alone do
    /// not show: every message of it went and came back inside its own
    /// post (a veth peer delivers on the sending CPU, so the peer's
    /// responder and the ACK run before the post returns), so the SQ never
    /// holds two WQEs and the process and the data path take turns on one
    /// CPU. Such a post follows the last one's return much sooner than
    /// that one took, and the QP received no request in between. A
    /// ping-pong's post follows the peer's message (a SEND or WRITE this
    /// QP received), which may come back before the post that called for
    /// it has returned.
    pub(in crate::transport) fn post_starts_stream(&self, now: u64) -> bool {
        if self.request_since_post.swap(false, Ordering::Relaxed) {
            return false;
        }
        let gap = now.saturating_sub(self.post_end_ns.load(Ordering::Relaxed));
        gap.saturating_mul(STREAM_GAP_RATIO) < self.post_cost_ns.load(Ordering::Relaxed)
    }

    /// A request arrived (`QpInner::post_starts_stream`).
    pub(in crate::transport) fn request_arrived(&self) {
        if !self.request_since_post.load(Ordering::Relaxed) {
            self.request_since_post.store(true, Ordering::Relaxed);
        }
    }

    /// A process's post starts a stream from the home CPU: the home moves
    /// to the next online CPU, so that the requester (and the ACKs and
    /// completions that follow it) run beside the process instead of
    /// taking turns with it on one CPU, as C rxe's kworker runs beside it.
    /// The QP's work queued on the old home meanwhile runs there: the
    /// run-once flags, not the home, keep the data path on one CPU at a
    /// time.
    pub(in crate::transport) fn step_aside(&self) {
        let here = rt::this_cpu();
        if self.home.load(Ordering::Relaxed) == here {
            self.home
                .store(rt::next_online_cpu(here), Ordering::Relaxed);
        }
    }

    /// Runs the requester later, on the home CPU (bottom-half work).
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
