// SPDX-License-Identifier: GPL-2.0

//! The data-path engine: runs the requester, completer and responder
//! ([`send::req`](crate::transport::send::req),
//! [`send::comp`](crate::transport::send::comp),
//! [`resp`](crate::transport::resp)) under the QP's lock, each on the QP's
//! read-only context ([`QpCtx`](crate::transport::qp::QpCtx), built where
//! the lock is taken) and its locked state, collecting what they decide in
//! an [`Effects`], then, with the lock dropped, carries that out
//! ([`QpInner::apply`]): sends the packets, calls the CQs' handlers, arms
//! timers, reports events, flushes into ERR. Packets arrive here from the receive path
//! ([`QpInner::receive`]); the requester runs from a post, a packet, a
//! timer or the work queue ([`QpInner::kick`]), one CPU at a time. The
//! work items and timers run here; they are queued only through the QP's
//! gate that `destroy_qp` closes ([`QpInner::defer`]).
//!
//! It sits above both the QP ([`qp`](crate::transport::qp): its locks,
//! state, context, effects collector, gate and flush) and the roles, and
//! is the only code that names both: the roles name only the QP's lower
//! rooms, and nothing below names the engine. The QP's verbs
//! ([`control`](crate::transport::control)) sit above it, as `post_send`
//! runs the requester.

use crate::{
    dev::counters::Tally,
    ffi::ib::Event,
    ffi::net::NetDev,
    ffi::rt::{
        self,
        trace::{self, DropReason},
        SoftTimer, SoftTimerOwner, SpinLockBhGuard,
    },
    logic::qp_state::{QpState, QpType},
    proto::{
        mtu::{ib_mtu_bytes, ib_mtu_for_netdev},
        packet::Packet,
    },
    transport::qp::{Deferred, Effects, Held, QpInner, QpState_, Side},
    transport::resp::{self, RxMeta},
    transport::send::comp,
    transport::send::req::{self, ReqEnd},
};
use core::sync::atomic::Ordering;
use kernel::{sync::Arc, workqueue::WorkItem};

/// Passes (at most 16 packets each) a run makes in softirq, or inline
/// where it was kicked, before it leaves the rest to process context
/// (`Deferred::RunLeft`).
const RUN_BUDGET: u32 = 8;

/// Passes a run makes in process context before it queues the rest there
/// again. Short, so that the packets it sent are taken soon: a veth peer
/// receives them in this CPU's `NET_RX` softirq, which runs when the round
/// turns bottom halves on again. (With eight passes at once, a peer took a
/// READ's responses in bursts of a hundred, and the two CPUs took turns
/// instead of working side by side. Rounds in softirq would not help:
/// the bottom-half pool runs an item that queues itself again up to ten
/// times before the softirq loop gets to `NET_RX`.)
const LEFT_BUDGET: u32 = 2;

impl WorkItem<0> for QpInner {
    type Pointer = Arc<QpInner>;

    // Runs where it was queued, without asking `kick` where: an item
    // queued (or running) on a CPU that stopped being the home is queued
    // there again by the workqueue whatever CPU is asked, and would go
    // round in softirq there without sending. Later kicks go home.
    fn run(this: Arc<QpInner>) {
        this.run_requester(RUN_BUDGET);
    }
}

/// The requester's run after one used its budget (`Deferred::RunLeft`), in
/// process context: the data path runs as in softirq, bottom halves off,
/// in rounds of [`LEFT_BUDGET`] passes.
impl WorkItem<4> for QpInner {
    type Pointer = Arc<QpInner>;

    fn run(this: Arc<QpInner>) {
        let _bh = rt::BhOff::new();
        this.run_requester(LEFT_BUDGET);
    }
}

impl WorkItem<3> for QpInner {
    type Pointer = Arc<QpInner>;

    fn run(this: Arc<QpInner>) {
        this.take_queued();
    }
}

/// The queue's run after one used its budget (`Deferred::RxLeft`), likewise.
impl WorkItem<5> for QpInner {
    type Pointer = Arc<QpInner>;

    fn run(this: Arc<QpInner>) {
        let _bh = rt::BhOff::new();
        this.take_queued();
    }
}

/// The page faults the data path asked for (`Deferred::Fault`): process
/// context with bottom halves on, where faulting may sleep.
impl WorkItem<6> for QpInner {
    type Pointer = Arc<QpInner>;

    fn run(this: Arc<QpInner>) {
        this.resolve_faults();
    }
}

impl SoftTimerOwner<1> for QpInner {
    fn soft_timer(&self) -> &SoftTimer<Self, 1> {
        &self.retransmit
    }

    fn fired(this: Arc<QpInner>) {
        this.retransmit_timer();
    }
}

impl SoftTimerOwner<2> for QpInner {
    fn soft_timer(&self) -> &SoftTimer<Self, 2> {
        &self.rnr
    }

    fn fired(this: Arc<QpInner>) {
        this.rnr_timer();
    }
}

/// The data path.
/// Traces a packet the QP does not take (`rrxe_drop`).
fn dropped(pkt: &Packet<'_>, reason: DropReason) {
    let bth = &pkt.headers.bth;
    trace::drop_packet(bth.dest_qpn, bth.opcode, bth.psn.get(), reason);
}

impl QpInner {
    /// Runs the requester (and READ responses) now, unless another CPU is
    /// already running them, in which case that one goes round again, or
    /// the QP streams and this is not its home CPU, which then runs them.
    /// A long run leaves the rest to the work item.
    pub(crate) fn kick(self: &Arc<Self>) {
        if !self.runs_here() && self.streaming() {
            self.schedule();
            return;
        }
        self.run_requester(RUN_BUDGET);
    }

    /// Runs the requester here and now, unless another CPU is running it
    /// (which then goes round again); a run longer than `budget` passes
    /// leaves the rest to process context, normally on this CPU
    /// (`QpInner::left_cpu`): from another, its packets could overtake the
    /// ones just sent, since a veth peer takes each CPU's packets on that
    /// CPU.
    fn run_requester(self: &Arc<Self>, budget: u32) {
        if !self.runner.try_start() {
            return;
        }
        let mut passes = 0;
        loop {
            let more = self.pass();
            if more {
                passes += 1;
                if passes >= budget {
                    self.runner.stop();
                    // Not back to softirq: a QP that keeps it busy would
                    // starve the CPU's tasks and RCU (the kill storm ran
                    // a debug guest out of memory so).
                    self.defer(Deferred::RunLeft);
                    return;
                }
                continue;
            }
            if self.runner.finish() {
                return;
            }
        }
    }

    /// A process posted: a stream that its own posts kept hidden
    /// ([`QpInner::post_starts_stream`]) is sent from another CPU than the
    /// process's ([`QpInner::step_aside`]); anything else as
    /// [`QpInner::kick`] decides. Times the post for the next one.
    pub(crate) fn post_kick(self: &Arc<Self>) {
        let start = rt::now_ns();
        if !self.streaming() && self.post_starts_stream(start) {
            self.step_aside();
            self.schedule();
        } else {
            self.kick();
        }
        let end = rt::now_ns();
        self.post_cost_ns
            .store(end.saturating_sub(start), Ordering::Relaxed);
        self.post_end_ns.store(end, Ordering::Relaxed);
    }

    /// Whether the SQ holds more than one WQE: the QP streams, and sends
    /// from its home CPU, beside the peer's receive work. A lone WQE (a
    /// ping-pong's) is sent at once wherever it was posted: handing it
    /// over would add an IPI to every round trip.
    pub(in crate::transport) fn streaming(&self) -> bool {
        self.sq.lock().as_ref().is_some_and(|sq| sq.count() > 1)
    }

    /// One pass under the locks: completions, requests, READ responses.
    /// Returns whether more is left to send.
    fn pass(self: &Arc<Self>) -> bool {
        let Some(ndev) = self.dev.netdev() else {
            return false;
        };
        let mut fx = Effects::new();
        let mut st = self.state.lock();
        let bound = st.counting();
        let ctx = self.ctx(bound.as_deref());
        if st.destroyed {
            return false;
        }
        if matches!(self.ty, QpType::Ud | QpType::Gsi) {
            // Datagrams use the port's MTU, which follows the netdev's.
            st.mtu = ib_mtu_bytes(ib_mtu_for_netdev(ndev.mtu()));
        }
        let mut more = false;
        {
            let mut sq = self.sq.lock();
            let Some(sq) = (*sq).as_mut() else {
                return false;
            };
            comp::complete_done(&ctx, &mut st, &mut fx, sq);
            if !fx.enters_error() && req::step(&ctx, &mut st, &mut fx, sq, &ndev) == ReqEnd::More {
                more = true;
            }
            comp::complete_done(&ctx, &mut st, &mut fx, sq);
        }
        if resp::send_read_responses(&ctx, &mut st, &mut fx, &ndev) {
            more = true;
        }
        self.after(st, &mut fx, &ndev, ctx.counters);
        more
    }

    /// Finishes a pass: settles `fx` against the state, drops the lock,
    /// carries `fx` out, counting the packets sent in `tally` (the pass's).
    fn after(
        self: &Arc<Self>,
        mut st: SpinLockBhGuard<'_, QpState_>,
        fx: &mut Effects,
        ndev: &NetDev,
        tally: Tally<'_>,
    ) {
        fx.settle(&mut st);
        drop(st);
        self.apply(fx, ndev, tally);
    }

    /// Carries out what a pass decided, with no lock of the QP held, in
    /// the order [`Effects`] gives: send the packets; report the SRQ's
    /// limit, then each completion a full send CQ lost, then each a full
    /// receive CQ lost; call the send CQ's handler, then the receive CQ's;
    /// queue the retransmit timer; queue the end of an RNR wait; report SQ
    /// drained; flush the queues into ERR.
    fn apply(self: &Arc<Self>, fx: &mut Effects, ndev: &NetDev, tally: Tally<'_>) {
        fx.out.flush(ndev, &self.routes, tally, self);
        if fx.srq_limit_reached {
            if let Some(srq) = &self.srq {
                srq.report_limit();
            }
        }
        for _ in 0..fx.send_cq_overflows {
            self.send_cq.report_overflow();
        }
        for _ in 0..fx.recv_cq_overflows {
            self.recv_cq.report_overflow();
        }
        if fx.notify_send {
            self.send_cq.notify();
        }
        if fx.notify_recv {
            self.recv_cq.notify();
        }
        if let Some(ns) = fx.retransmit_in {
            self.defer(Deferred::Retransmit(ns));
        }
        if let Some(us) = fx.rnr_delay_us {
            trace::rnr_wait(self.qpn, us);
            self.defer(Deferred::RnrWait(u64::from(us) * 1000));
        }
        if fx.fault {
            self.defer(Deferred::Fault);
        }
        if fx.sq_drained {
            self.handle.event(Event::SqDrained);
        }
        if let Some(cause) = fx.enter_error {
            if fx.left_state != QpState::Err {
                trace::qp_state(
                    self.qpn,
                    fx.left_state.raw() as u8,
                    QpState::Err.raw() as u8,
                );
                self.log_error(cause);
            }
            self.flush();
        }
    }

    /// A packet for this QP, from the receive path (softirq, on the home
    /// CPU: [`QpInner::arrive`]). Returns whether it waits for a page
    /// fault: the caller then holds its datagram (with what this returned),
    /// to hand it in again once the fault is resolved
    /// ([`QpInner::release_rx`]).
    pub(crate) fn receive(self: &Arc<Self>, pkt: &Packet<'_>, meta: &RxMeta<'_>) -> Option<Held> {
        self.deliver(pkt, meta, true)
    }

    /// A multicast packet for one of the groups this QP is attached to,
    /// which the receive path has counted once for all of them. One that
    /// waits for a page fault is dropped (it is the group's, not this
    /// QP's, and UD may lose it), the fault resolved for the next one.
    pub(crate) fn receive_multicast(self: &Arc<Self>, pkt: &Packet<'_>, meta: &RxMeta<'_>) {
        if self.deliver(pkt, meta, false).is_some() {
            self.defer(Deferred::Fault);
        }
    }

    /// Hands a packet to the completer or responder; `count`: count it in
    /// the QP's received packets (its counter's, or the port's) once it
    /// passed the QP's checks. Returns whether it waits for a page fault
    /// (then nothing of it was done, nor counted).
    fn deliver(self: &Arc<Self>, pkt: &Packet<'_>, meta: &RxMeta<'_>, count: bool) -> Option<Held> {
        // Answers leave through the device's netdev, whatever the packet
        // arrived on (`lo`, for a device's packets to itself).
        let ndev = self.dev.netdev()?;
        let ndev = &*ndev;
        let mut fx = Effects::new();
        let mut st = self.state.lock();
        let bound = st.counting();
        let ctx = self.ctx(bound.as_deref());
        let info = pkt.info();
        let mut kick = false;
        let mut long_read = false;
        if info.is_response() {
            if self.ty != QpType::Rc || !st.can_send() {
                dropped(pkt, DropReason::QpState);
                return None;
            }
            if !st.path.is_some_and(|p| meta.follows(&p)) {
                dropped(pkt, DropReason::WrongPath);
                return None;
            }
            let mut sq = self.sq.lock();
            let sq = (*sq).as_mut()?;
            let before = comp::Before::of(&st);
            comp::on_response(&ctx, &mut st, &mut fx, sq, pkt);
            comp::complete_done(&ctx, &mut st, &mut fx, sq);
            kick = !comp::requester_stays(&st, pkt, &before) || st.resp.reads_pending();
        } else {
            if !st.can_receive() {
                dropped(pkt, DropReason::QpState);
                return None;
            }
            if matches!(self.ty, QpType::Rc | QpType::Uc)
                && !st.path.is_some_and(|p| meta.follows(&p))
            {
                dropped(pkt, DropReason::WrongPath);
                return None;
            }
            self.request_arrived();
            let mut rq = self.rq.lock();
            let meta = RxMeta { ndev, ..*meta };
            resp::on_request(&ctx, &mut st, &mut fx, (*rq).as_mut(), pkt, &meta);
            if st.resp.reads_pending() {
                drop(rq);
                resp::send_read_responses(&ctx, &mut st, &mut fx, ndev);
                // The rest of a long READ goes on in process context, in
                // rounds with bottom halves on in between, so that a veth
                // peer on this CPU takes the responses as they go (its
                // NET_RX cannot run while softirq work sends).
                long_read = st.resp.reads_pending();
            }
        }
        // A held packet comes back: it is counted when it is taken.
        let held = fx.holds_packet().then(|| st.faults.held());
        if count && held.is_none() {
            ctx.counters.received(pkt.layout.total_len);
        }
        let rnr_pending = fx.rnr_waits();
        self.after(st, &mut fx, ndev, ctx.counters);
        if long_read {
            self.defer(Deferred::RunLeft);
        } else if kick && !rnr_pending {
            self.kick();
        }
        held
    }

    /// The page faults the data path asked for (process context, bottom
    /// halves on: faulting sleeps), one at a time, the receive side's
    /// first; after each, its side goes on: the held datagram is taken
    /// again, or the requester runs. A fault that failed is recorded for
    /// the access that asked for it, which then fails cleanly.
    fn resolve_faults(self: &Arc<Self>) {
        loop {
            let next = {
                let mut st = self.state.lock();
                if st.destroyed {
                    return;
                }
                st.faults.take()
            };
            let Some((side, fault)) = next else {
                break;
            };
            let ok = fault.resolve();
            let spent = self.state.lock().faults.done(side, fault, ok);
            drop(spent);
            match side {
                Side::Rx => self.release_rx(),
                Side::Tx => self.schedule(),
            }
        }
        // The receive side goes on whenever no fault is left for it. A
        // datagram's fault may have been resolved by a run that began
        // before the datagram was put back, and released the side before
        // it was (or a reset forgot the fault): `hold` queues this work
        // after it put the datagram back, so this run sees it. If its
        // pages are still missing, it asks again.
        if self.state.lock().faults.rx_idle() {
            self.release_rx();
        }
    }

    /// The receive side's fault is resolved: the held datagram, at the
    /// head of the queue, is taken again, and those behind it (a run of
    /// the queue is queued whenever it holds something).
    fn release_rx(self: &Arc<Self>) {
        self.rx_held.store(false, Ordering::Release);
        if !self.rxq.is_empty() {
            self.defer(Deferred::Rx);
        }
    }

    /// The retransmit timer fired (softirq): the completer decides (retry, or give
    /// up into ERR), the timer is armed again if needed, the requester runs.
    fn retransmit_timer(self: &Arc<Self>) {
        let mut st = self.state.lock();
        st.timer_armed = false;
        if st.destroyed {
            return;
        }
        // A retry that ran out only fails its flight: the requester's run
        // below retires it and takes the QP to ERR.
        let bound = st.counting();
        let again = comp::timeout(&self.ctx(bound.as_deref()), &mut st);
        if again.is_some() {
            st.timer_armed = true;
        }
        drop(st);
        if let Some(j) = again {
            self.defer(Deferred::Retransmit(j.max(1)));
        }
        self.kick();
    }

    /// The RNR wait is over (softirq): the requester runs again.
    fn rnr_timer(self: &Arc<Self>) {
        {
            let mut st = self.state.lock();
            if st.destroyed {
                return;
            }
            st.send.rnr_wait_over();
        }
        self.kick();
    }
}
