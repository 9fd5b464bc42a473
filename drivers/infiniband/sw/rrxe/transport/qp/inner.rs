// SPDX-License-Identifier: GPL-2.0

//! The QP object itself, [`QpInner`]: its fields, their lock order, and
//! the accessors the rest of the driver reads it by; and [`RrxeQp`], the
//! driver data of the core's QP, which holds it.
//!
//! The other files of [`qp`](super) add to it by job (the context the
//! roles get, the gate of deferred work, draining, attributes) and import
//! it from here; nothing here names them but the types its fields have
//! (the locked state, the run-once flags).

use super::{run_once::RunOnce, state::QpState_};
use crate::{
    ffi::ib::{QpCap, QpHandle},
    ffi::net::{RouteSlot, RxQueue, SkbAccount},
    ffi::rt::{SoftTimer, SpinLockBh},
    logic::qp_state::QpType,
    queues::cq::CqInner,
    queues::queue::SharedQueue,
    queues::srq::SrqInner,
    transport::dev_ctx::DevCtx,
};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::{
    prelude::*,
    sync::{Arc, SpinLockIrq},
    workqueue::Work,
};

/// A QP's state, shared with the device's QP table, the verbs and the
/// data path. The requester, completer and responder do not see it: the
/// engine hands them a [`QpCtx`](super::ctx::QpCtx) borrowed from it and
/// its locked state.
///
/// Its fields are visible in the transport, for the two users above the
/// roles that own a QP: the engine takes its locks and runs its work, the
/// QP's verbs (`control.rs`) build it and take it apart. The roles,
/// handed only a `QpCtx`, never reach them.
#[pin_data]
pub(crate) struct QpInner {
    /// The QP number.
    pub(crate) qpn: u32,
    /// The transport service (RC, UC, UD or GSI).
    pub(crate) ty: QpType,
    /// Capabilities as created (what `query_qp` reports).
    pub(crate) cap: QpCap,
    /// Every send WQE completes, signaled or not (`IB_SIGNAL_ALL_WR`).
    pub(crate) sq_sig_all: bool,
    /// The port number as created (what `query_qp` reports).
    pub(in crate::transport) port: u32,
    /// The core's QP, for events and completions.
    pub(crate) handle: QpHandle,
    /// Where send WQEs complete.
    pub(crate) send_cq: Arc<CqInner>,
    /// Where receive WQEs complete.
    pub(crate) recv_cq: Arc<CqInner>,
    /// Receives come from an SRQ instead of `rq`.
    pub(in crate::transport) has_srq: bool,
    /// The SRQ receives come from, if any.
    pub(crate) srq: Option<Arc<SrqInner>>,
    /// Whether a process maps the queues.
    pub(in crate::transport) is_user: bool,
    /// The PD (its address: an identity compared with MRs').
    pub(crate) pd: usize,
    /// What the QP reaches of its device: the netdev, the counters, the
    /// MR, MW and AH tables (not the device's `Shared`, whose tables hold
    /// QPs).
    pub(crate) dev: Arc<DevCtx>,
    // Lock order: `state`, then `sq` or `rq`, then a CQ's lock (or the
    // SRQ's, or a device table's, each alone), then `deferrals`. The data
    // path takes them in softirq context. The QP's own three keep bottom
    // halves off for a process's QP (the pass copies payload under them,
    // with interrupts on) and interrupts off for a kernel consumer's, which
    // may post from a hard interrupt (`TakenIn`); the others always turn
    // interrupts off; none of those is held when one of the QP's is taken
    // (a process's QP's would then be a plain spinlock, undone with bottom
    // halves on only if released first). The roles reach the inner ones
    // through their `QpCtx` (see `ctx.rs`).
    /// The send queue; `None` once destroyed (its memory then belongs to
    /// its mmap entry, or is freed).
    #[pin]
    pub(in crate::transport) sq: SpinLockBh<Option<SharedQueue>>,
    /// The receive queue; `None` with an SRQ, and once destroyed.
    #[pin]
    pub(in crate::transport) rq: SpinLockBh<Option<SharedQueue>>,
    /// The control and data-path state ([`QpState_`]).
    #[pin]
    pub(in crate::transport) state: SpinLockBh<QpState_>,
    /// The CPU the QP's data path runs on: the requester, completer and
    /// responder run there, and work arriving elsewhere (a post, a packet,
    /// a timer) is handed to it (`transport::intake`). Chosen round robin
    /// among the online CPUs at creation, so that QPs spread over CPUs;
    /// moved to the next CPU when a process streams from the home one
    /// (`QpInner::step_aside`), so that posting and sending run on two.
    pub(in crate::transport) home: AtomicU32,
    /// Received datagrams waiting for the home CPU.
    #[pin]
    pub(in crate::transport) rxq: RxQueue,
    /// Datagrams queued in `rxq` or being taken (from it, or at once as
    /// they arrive): while not zero,
    /// a datagram arriving is queued behind them, never taken at once, so
    /// that the QP takes its datagrams in order.
    pub(in crate::transport) rx_backlog: AtomicU32,
    /// The run of `rxq`, bottom-half work on the home CPU (or the next
    /// one, when the datagram arrived on the home CPU: `rx_cpu`).
    #[pin]
    pub(in crate::transport) rx_task: Work<QpInner, 3>,
    /// The run of `rxq` after one used its budget: process-context work on
    /// any CPU (`system_unbound_wq`; an item of its own: a work item
    /// belongs to one queue).
    #[pin]
    pub(in crate::transport) rx_left: Work<QpInner, 5>,
    /// The datagram at the head of `rxq` waits for a page fault (a region
    /// paged on demand): no run of `rxq` takes anything until the fault
    /// work has resolved it and cleared this. Set before the datagram is
    /// put back, so that no run takes it back first.
    pub(in crate::transport) rx_held: AtomicBool,
    /// The page faults the data path asked for (`QpState_::faults`),
    /// resolved in process context with bottom halves on, where faulting
    /// may sleep: `system_unbound_wq`.
    #[pin]
    pub(in crate::transport) fault_task: Work<QpInner, 6>,
    /// The requester/READ-responder run, when it continues later:
    /// bottom-half work on the home CPU.
    #[pin]
    pub(in crate::transport) task: Work<QpInner, 0>,
    /// The same run after one used its budget, and the rest of a long
    /// READ's responses: process-context work, normally on the CPU that
    /// run was on (`QpInner::left_cpu`).
    #[pin]
    pub(in crate::transport) task_left: Work<QpInner, 4>,
    /// The retransmit timer (softirq, nanoseconds).
    #[pin]
    pub(in crate::transport) retransmit: SoftTimer<QpInner, 1>,
    /// The end of an RNR wait (softirq, nanoseconds).
    #[pin]
    pub(in crate::transport) rnr: SoftTimer<QpInner, 2>,
    /// Whether the work items, `retransmit` and `rnr` may still be queued: every
    /// queueing happens under this lock and only while it says so, and
    /// `destroy` closes it before cancelling them. So once `destroy`
    /// returns, no work item or timer holds the QP (see design.rst,
    /// "Lifetimes").
    #[pin]
    pub(in crate::transport) deferrals: SpinLockIrq<bool>,
    /// The requester's run (`kick`), on one CPU at a time.
    pub(in crate::transport) runner: RunOnce,
    /// The run of `rxq` (`take_queued`), likewise: `rx_task` and `rx_left`
    /// may both be queued, and two runs taking datagrams side by side
    /// would reorder them.
    pub(in crate::transport) rx_runner: RunOnce,
    /// The flush of a QP in ERR (`flush_queues`), likewise.
    pub(in crate::transport) flusher: RunOnce,
    /// The socket buffers this QP has in the IP stack.
    pub(in crate::transport) tx: SkbAccount<QpInner>,
    /// The route of the QP's last packet, kept for the next ones between
    /// passes (a connected QP's all take one path; a datagram QP's while
    /// it sends to one peer); emptied by `destroy`.
    #[pin]
    pub(in crate::transport) routes: RouteSlot,
    /// How many multicast groups the QP is attached to (the device's
    /// multicast table counts them here).
    pub(in crate::transport) mcast_groups: AtomicU32,
    /// When the last `post_send` of a process returned, and how long it
    /// took (nanoseconds): a post that follows the last one's return
    /// much sooner than that one took starts a stream
    /// (`QpInner::post_starts_stream`).
    pub(in crate::transport) post_end_ns: AtomicU64,
    /// See `post_end_ns`.
    pub(in crate::transport) post_cost_ns: AtomicU64,
    /// A request (not a response) arrived since the last post of a process
    /// (`QpInner::post_starts_stream`).
    pub(in crate::transport) request_since_post: AtomicBool,
}

/// The driver data of a QP.
pub(crate) struct RrxeQp {
    /// The QP, which the QP table and the data path share.
    pub(crate) inner: Arc<QpInner>,
    /// Its debugfs file (`verbs::debugfs`), which holds it too: removed
    /// with this, when the core frees the QP after `destroy_qp`.
    pub(crate) _debugfs: Option<super::report::QpFile>,
}

impl QpInner {
    /// The QP number.
    pub(crate) fn qpn(&self) -> u32 {
        self.qpn
    }

    /// The multicast table attached the QP to one more group.
    pub(crate) fn mcast_attached(&self) {
        self.mcast_groups.fetch_add(1, Ordering::Relaxed);
    }

    /// The multicast table detached the QP from a group.
    pub(crate) fn mcast_detached(&self) {
        let _ = self
            .mcast_groups
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    /// Whether the QP is attached to a multicast group (then it cannot be
    /// destroyed, IBA o10-2.2.3).
    pub(crate) fn in_mcast_group(&self) -> bool {
        self.mcast_groups.load(Ordering::Relaxed) != 0
    }
}
