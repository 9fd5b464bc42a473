// SPDX-License-Identifier: GPL-2.0

//! Queue pairs: creation with the rxe ring layout, the IBA state machine of
//! `modify_qp` (rules in [`logic::qp_state`]), query and destroy.

use crate::{
    dev::ah::RrxeAh,
    dev::params,
    dev::shared::Shared,
    ffi::ib::{
        consts::*, AhAttr, CreateQpResp, Event, Operations, PostError, QpAttr, QpCap, QpHandle,
        QpInitAttr, RecvWqe, RecvWrs, SendWqe, SendWrs, Sge, StoredQpAttr, Udata,
    },
    ffi::net::{NetDev, SkbAccount, SkbOwner},
    ffi::rt,
    logic::{
        flow::{qp_sport, skbs_may_resume, skbs_must_pause, udp_sport, MAX_UNACKED_PSNS},
        qp_state::{check_mask_supported, check_modify, AttrMask, QpState, QpStateError, QpType},
        queue::QueueType,
        wc::WcStatus,
    },
    proto::{
        mtu::{ib_mtu_bytes, ib_mtu_for_netdev},
        packet::Packet,
        psn::Psn,
    },
    queues::cq::{Completion, CqInner},
    queues::post::{self, SendLimits},
    queues::queue::SharedQueue,
    queues::srq::SrqInner,
    transport::comp,
    transport::path::Path,
    transport::req::{self, ReqEnd, ReqState},
    transport::resp::{self, RespState, RxMeta},
    transport::xmit::Outbox,
};
use core::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use kernel::{
    impl_has_delayed_work, impl_has_work, new_delayed_work, new_spinlock_irq, new_work,
    prelude::*,
    sync::{Arc, ArcBorrow, SpinLockIrq},
    workqueue::{self, DelayedWork, Work, WorkItem},
};

/// BTH PSNs and QPNs are 24 bits wide.
const MASK_24: u32 = 0x00ff_ffff;
/// The path MTUs there are.
const MTU_RANGE: core::ops::RangeInclusive<u32> = IB_MTU_256..=IB_MTU_4096;

/// The mutable part of a QP, under its lock: the control state and the
/// requester's, completer's and responder's state.
pub(crate) struct QpState_ {
    pub(crate) state: QpState,
    pub(crate) sq_draining: bool,
    /// `destroy_qp` ran: nothing may be posted or completed any more.
    destroyed: bool,
    /// The attributes as last set (only the fields of masks applied so far
    /// are meaningful).
    pub(crate) attr: StoredQpAttr,
    /// Where a connected QP's packets go (set with the address vector).
    pub(crate) path: Option<Path>,
    /// The UDP source port of this QP's packets.
    pub(crate) sport: u16,
    /// The path MTU in bytes.
    pub(crate) mtu: u32,
    /// The retransmit timeout in jiffies (`None`: wait forever).
    pub(crate) timeout_jiffies: Option<u64>,
    pub(crate) req: ReqState,
    pub(crate) resp: RespState,
    /// Set by the data path under the lock, acted on after it.
    pub(crate) enter_error: bool,
    pub(crate) arm_retransmit: bool,
    pub(crate) rnr_delay_us: Option<u32>,
    pub(crate) reads_pending: bool,
    pub(crate) sqd_event: bool,
}

impl QpState_ {
    /// Whether the requester may send: RTS, or SQD finishing what it began.
    pub(crate) fn can_send(&self) -> bool {
        matches!(self.state, QpState::Rts | QpState::Sqd) && !self.destroyed
    }

    /// Whether the QP is in SQD.
    pub(crate) fn sqd(&self) -> bool {
        self.state == QpState::Sqd
    }

    /// Whether the responder takes requests: RTR or later, not in error.
    fn can_receive(&self) -> bool {
        matches!(
            self.state,
            QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe
        ) && !self.destroyed
    }
}

/// Completion handlers to call once the QP's lock is dropped (a kernel
/// consumer may post from its handler).
#[derive(Default)]
pub(crate) struct Notify {
    pub(crate) send: bool,
    pub(crate) recv: bool,
}

/// Runs a QP's work on one CPU at a time: a second caller only asks the
/// running one to go round again.
struct RunOnce(AtomicU8);

const IDLE: u8 = 0;
const RUNNING: u8 = 1;
const AGAIN: u8 = 2;

impl RunOnce {
    const fn new() -> Self {
        Self(AtomicU8::new(IDLE))
    }

    /// `true` if the caller now runs; else the runner will run again.
    fn try_start(&self) -> bool {
        loop {
            match self
                .0
                .compare_exchange(IDLE, RUNNING, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(RUNNING) => {
                    if self
                        .0
                        .compare_exchange(RUNNING, AGAIN, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
                    {
                        return false;
                    }
                }
                Err(_) => return false,
            }
        }
    }

    /// `true` if the runner may stop; `false` if asked to run again.
    fn finish(&self) -> bool {
        if self
            .0
            .compare_exchange(RUNNING, IDLE, Ordering::Release, Ordering::Relaxed)
            .is_ok()
        {
            return true;
        }
        self.0.store(RUNNING, Ordering::Release);
        false
    }

    /// Gives up running (the rest continues from the work queue).
    fn stop(&self) {
        self.0.store(IDLE, Ordering::Release);
    }
}

/// Passes one run makes before leaving the rest to the work queue.
const RUN_BUDGET: u32 = 8;

/// The work a QP defers (see [`QpInner::defer`]); delays in jiffies.
#[derive(Clone, Copy)]
enum Deferred {
    /// The requester's run, from the work queue.
    Run,
    /// The retransmit timer.
    Retransmit(usize),
    /// The end of an RNR wait.
    RnrWait(usize),
}

/// A QP's state, shared with the device's QP table (and, with the data
/// path, with the requester, responder and completer).
#[pin_data]
pub(crate) struct QpInner {
    pub(crate) qpn: u32,
    pub(crate) ty: QpType,
    /// Capabilities as created (what `query_qp` reports).
    pub(crate) cap: QpCap,
    pub(crate) sq_sig_all: bool,
    port: u32,
    pub(crate) handle: QpHandle,
    pub(crate) send_cq: Arc<CqInner>,
    pub(crate) recv_cq: Arc<CqInner>,
    /// Receives come from an SRQ instead of `rq`.
    has_srq: bool,
    pub(crate) srq: Option<Arc<SrqInner>>,
    /// Whether a process maps the queues.
    is_user: bool,
    /// The PD (its address: an identity compared with MRs').
    pub(crate) pd: usize,
    /// The device's data-path state (tables, counters, netdev).
    pub(crate) dev: Arc<Shared>,
    // Lock order: `state`, then `sq` or `rq`, then a CQ's lock, then
    // `deferrals`. All turn interrupts off: the data path takes them in
    // softirq context.
    /// The send queue; `None` once destroyed (its memory then belongs to
    /// its mmap entry, or is freed).
    #[pin]
    sq: SpinLockIrq<Option<SharedQueue>>,
    /// The receive queue; `None` with an SRQ, and once destroyed.
    #[pin]
    rq: SpinLockIrq<Option<SharedQueue>>,
    #[pin]
    state: SpinLockIrq<QpState_>,
    /// The requester/READ-responder run, when it continues later.
    #[pin]
    task: Work<QpInner, 0>,
    /// The retransmit timer.
    #[pin]
    retransmit: DelayedWork<QpInner, 1>,
    /// The RNR wait.
    #[pin]
    rnr: DelayedWork<QpInner, 2>,
    /// Whether `task`, `retransmit` and `rnr` may still be queued: every
    /// queueing happens under this lock and only while it says so, and
    /// `destroy` closes it before cancelling them. So once `destroy`
    /// returns, no work item or timer holds the QP (see design.rst,
    /// "Lifetimes").
    #[pin]
    deferrals: SpinLockIrq<bool>,
    runner: RunOnce,
    /// The flush of a QP in ERR (`flush_queues`), likewise.
    flusher: RunOnce,
    /// The socket buffers this QP has in the IP stack.
    tx: SkbAccount<QpInner>,
    /// How many multicast groups the QP is attached to (`crate::rx::mcast`).
    mcast_groups: AtomicU32,
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

impl WorkItem<0> for QpInner {
    type Pointer = Arc<QpInner>;

    fn run(this: Arc<QpInner>) {
        this.kick();
    }
}

impl WorkItem<1> for QpInner {
    type Pointer = Arc<QpInner>;

    fn run(this: Arc<QpInner>) {
        this.retransmit_timer();
    }
}

impl WorkItem<2> for QpInner {
    type Pointer = Arc<QpInner>;

    fn run(this: Arc<QpInner>) {
        this.rnr_timer();
    }
}

/// The objects a new QP is bound to.
pub(crate) struct QpLinks {
    pub(crate) handle: QpHandle,
    pub(crate) send_cq: Arc<CqInner>,
    pub(crate) recv_cq: Arc<CqInner>,
    pub(crate) srq: Option<Arc<SrqInner>>,
    pub(crate) pd: usize,
    pub(crate) dev: Arc<Shared>,
}

/// The driver data of a QP.
pub(crate) struct RrxeQp {
    pub(crate) inner: Arc<QpInner>,
}

fn state_error(e: QpStateError) -> Error {
    match e {
        QpStateError::Unsupported(_) => EOPNOTSUPP,
        _ => EINVAL,
    }
}

/// The QP types rxe implements; GSI only for the kernel's MAD layer.
fn qp_type(raw: u32, user: bool) -> Result<QpType> {
    match QpType::from_raw(raw) {
        Some(QpType::Rc | QpType::Uc | QpType::Ud) => Ok(QpType::from_raw(raw).ok_or(EINVAL)?),
        Some(QpType::Gsi) if !user => Ok(QpType::Gsi),
        _ => Err(EOPNOTSUPP),
    }
}

impl QpInner {
    /// Checks `init` against the device limits, sizes the queues as rxe does
    /// (reporting the actual capabilities back in `init.cap`) and creates
    /// them, mapped into the process for user QPs.
    pub(crate) fn new(
        qpn: u32,
        init: &mut QpInitAttr,
        links: QpLinks,
        udata: Option<&Udata>,
    ) -> Result<Arc<Self>> {
        let ty = qp_type(init.qp_type, udata.is_some())?;
        if init.create_flags != 0 {
            return Err(EOPNOTSUPP);
        }
        // With an SRQ the QP has no receive queue of its own.
        let has_srq = links.srq.is_some();
        let cap = &mut init.cap;
        if cap.max_send_wr > params::MAX_QP_WR
            || cap.max_send_sge > params::MAX_SGE
            || (!has_srq
                && (cap.max_recv_wr > params::MAX_QP_WR || cap.max_recv_sge > params::MAX_SGE))
            || cap.max_inline_data > params::MAX_INLINE_DATA
        {
            return Err(EINVAL);
        }
        // The send WQE's data area holds either the SGEs or the inline data.
        let sge = size_of::<Sge>() as u32;
        let send_room = (cap.max_send_sge * sge).max(cap.max_inline_data);
        let sq = SharedQueue::new(
            cap.max_send_wr,
            size_of::<SendWqe>() + send_room as usize,
            QueueType::FromClient,
            udata,
        )?;
        let rq = if has_srq {
            cap.max_recv_wr = 0;
            cap.max_recv_sge = 0;
            None
        } else {
            let rq = SharedQueue::new(
                cap.max_recv_wr,
                size_of::<RecvWqe>() + (cap.max_recv_sge * sge) as usize,
                QueueType::FromClient,
                udata,
            )?;
            cap.max_recv_wr = rq.capacity();
            Some(rq)
        };
        cap.max_send_wr = sq.capacity();
        cap.max_send_sge = send_room / sge;
        cap.max_inline_data = send_room;
        if let Some(udata) = udata {
            udata.respond(&CreateQpResp {
                rq_mi: rq.as_ref().map(SharedQueue::mminfo).unwrap_or_default(),
                sq_mi: sq.mminfo(),
            })?;
        }
        let cap = init.cap;
        let req = ReqState::new(
            sq.elem_size(),
            (cap.max_send_wr as usize).min(MAX_UNACKED_PSNS as usize),
        )?;
        let recv_size = match (&rq, &links.srq) {
            (Some(rq), _) => rq.elem_size(),
            (None, Some(srq)) => srq.elem_size(),
            _ => 0,
        };
        let resp = RespState::new(recv_size)?;
        let sport = qp_sport(qpn);
        Arc::pin_init(
            try_pin_init!(Self {
                qpn,
                ty,
                cap,
                sq_sig_all: init.sq_sig_type == IB_SIGNAL_ALL_WR,
                port: init.port_num,
                handle: links.handle,
                send_cq: links.send_cq,
                recv_cq: links.recv_cq,
                has_srq,
                srq: links.srq,
                is_user: udata.is_some(),
                pd: links.pd,
                dev: links.dev,
                sq <- new_spinlock_irq!(Some(sq)),
                rq <- new_spinlock_irq!(rq),
                state <- new_spinlock_irq!(QpState_ {
                    state: QpState::Reset,
                    sq_draining: false,
                    destroyed: false,
                    attr: initial_attr(),
                    path: None,
                    sport,
                    mtu: ib_mtu_bytes(*MTU_RANGE.start()),
                    timeout_jiffies: None,
                    req,
                    resp,
                    enter_error: false,
                    arm_retransmit: false,
                    rnr_delay_us: None,
                    reads_pending: false,
                    sqd_event: false,
                }),
                task <- new_work!("rrxe_qp_task"),
                retransmit <- new_delayed_work!("rrxe_qp_retransmit"),
                rnr <- new_delayed_work!("rrxe_qp_rnr"),
                deferrals <- new_spinlock_irq!(true),
                runner: RunOnce::new(),
                flusher: RunOnce::new(),
                tx: SkbAccount::new()?,
                mcast_groups: AtomicU32::new(0),
            }),
            GFP_KERNEL,
        )
    }

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

    /// `modify_qp`: validates the whole request first, then applies it, so
    /// a refused request changes nothing.
    pub(crate) fn modify(self: &Arc<Self>, attr: &QpAttr, mask: u32) -> Result {
        let mask = AttrMask::from_bits(mask);
        check_mask_supported(mask).map_err(state_error)?;
        check_attrs(attr, mask)?;
        let mut st = self.state.lock();
        let next = if mask.contains(AttrMask::STATE) {
            let t = check_modify(
                st.state,
                st.sq_draining,
                self.ty,
                mask,
                attr.cur_qp_state,
                attr.qp_state,
            )
            .map_err(state_error)?;
            Some(t.to)
        } else {
            None
        };
        // The path is resolved now, while the core holds the source GID.
        let path = if mask.contains(AttrMask::AV) {
            Some(Path::from_ah(AhAttr::of_qp_attr(attr)).ok_or(EINVAL)?)
        } else {
            None
        };
        st.attr.update(|to| apply(to, attr, mask));
        self.apply_datapath(&mut st, mask, path);
        let Some(next) = next else { return Ok(()) };
        let prev = st.state;
        st.state = next;
        // SQD is reported once the requester has nothing in flight.
        let sqd_notify = st.attr.get().en_sqd_async_notify != 0;
        let drained = st.req.flights.is_empty();
        st.sq_draining = next == QpState::Sqd && !drained;
        drop(st);
        match next {
            QpState::Reset => self.reset_queues(),
            QpState::Err => self.flush(),
            QpState::Sqd if sqd_notify && drained => self.handle.event(Event::SqDrained),
            QpState::Rts if prev == QpState::Sqd => self.schedule(),
            _ => {}
        }
        Ok(())
    }

    /// Derives the data path's view of the attributes just applied.
    fn apply_datapath(&self, st: &mut QpState_, mask: AttrMask, path: Option<Path>) {
        let a = *st.attr.get();
        if let Some(path) = path {
            st.path = Some(path);
            if matches!(self.ty, QpType::Rc | QpType::Uc) {
                st.sport = udp_sport(path.flow_label, self.qpn, a.dest_qp_num);
            }
        }
        if mask.contains(AttrMask::DEST_QPN) {
            if let Some(path) = st.path {
                st.sport = udp_sport(path.flow_label, self.qpn, a.dest_qp_num);
            }
        }
        if mask.contains(AttrMask::PATH_MTU) {
            st.mtu = ib_mtu_bytes(a.path_mtu);
        }
        if mask.contains(AttrMask::TIMEOUT) {
            // 4.096 us << timeout; 0 means no timeout.
            st.timeout_jiffies = (a.timeout != 0)
                .then(|| rt::usecs_to_jiffies((4096u64 << a.timeout.min(31)) / 1000));
        }
        if mask.contains(AttrMask::RETRY_CNT) {
            st.req.retry_left = a.retry_cnt;
        }
        if mask.contains(AttrMask::RNR_RETRY) {
            st.req.rnr_left = a.rnr_retry;
        }
        if mask.contains(AttrMask::SQ_PSN) {
            st.req.psn = Psn::new(a.sq_psn);
            st.req.acked = st.req.psn;
        }
        if mask.contains(AttrMask::RQ_PSN) {
            st.resp.psn = Psn::new(a.rq_psn);
        }
    }

    /// On entering RESET: drops what was posted, without completions, and
    /// clears the slots (rxe's `rxe_qp_reset`).
    fn reset_queues(&self) {
        {
            let mut st = self.state.lock();
            st.req.reset();
            st.resp.reset();
        }
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
    fn flush(&self) {
        {
            let mut st = self.state.lock();
            st.req.reset();
            st.resp.reset();
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
    fn flush_queues(&self) {
        if !self.flusher.try_start() {
            return;
        }
        loop {
            let send = (*self.sq.lock())
                .as_mut()
                .is_some_and(|sq| self.drain_into(sq, &self.send_cq));
            let recv = (*self.rq.lock())
                .as_mut()
                .is_some_and(|rq| self.drain_into(rq, &self.recv_cq));
            if send {
                self.send_cq.notify();
            }
            if recv {
                self.recv_cq.notify();
            }
            if self.flusher.finish() {
                return;
            }
        }
    }

    /// Consumes the elements of `q`, completing each in error on `cq`
    /// until the CQ is full. Returns whether the CQ's handler is to be
    /// called (by the caller, once it dropped the queue's lock). Both WQE
    /// layouts start with the consumer's 64-bit `wr_id`.
    fn drain_into(&self, q: &mut SharedQueue, cq: &CqInner) -> bool {
        let mut fire = false;
        q.drain(|head| {
            let c = Completion {
                wr_id: u64::from_ne_bytes(*head),
                status: WcStatus::WrFlushErr,
                qp_num: self.qpn,
                ..Default::default()
            };
            match cq.post_quiet(&c, self.handle) {
                Ok(f) => {
                    fire |= f;
                    true
                }
                // Full: the rest are dropped unread.
                Err(_) => false,
            }
        });
        fire
    }

    /// The state, unless the QP was destroyed.
    fn live_state(&self) -> Result<QpState> {
        let st = self.state.lock();
        if st.destroyed {
            return Err(EINVAL);
        }
        Ok(st.state)
    }

    /// `post_send`: a user doorbell (WQEs already in the ring) or a kernel
    /// consumer's chain, written into the ring. The WQEs wait there for the
    /// requester (the data path). In ERR the queue is flushed right away,
    /// as rxe's send task does. `D` is the device whose address handles
    /// datagram requests name.
    pub(crate) fn post_send<D: Operations<Ah = RrxeAh>>(
        self: &Arc<Self>,
        wrs: Option<SendWrs<'_>>,
    ) -> Result<(), PostError> {
        let refuse = |err| PostError { posted: 0, err };
        let state = self.live_state().map_err(refuse)?;
        // IBA C10-97.2.1 as rxe applies it: sends need RTS or later.
        if state.raw() < QpState::Rts.raw() {
            return Err(refuse(EINVAL));
        }
        let ret = match wrs {
            Some(wrs) if !self.is_user => {
                let limits = SendLimits {
                    ty: self.ty,
                    max_sge: self.cap.max_send_sge,
                    max_inline: self.cap.max_inline_data,
                };
                match &*self.sq.lock() {
                    Some(sq) => post::post_sends::<D>(sq, wrs, &limits),
                    None => Err(refuse(EINVAL)),
                }
            }
            Some(_) => Err(refuse(EINVAL)),
            None => Ok(()),
        };
        if state == QpState::Err {
            self.flush_queues();
        } else if self.is_user {
            self.kick();
        } else {
            // Kernel consumers may post with interrupts off (the MAD layer
            // does), where nothing may be transmitted: send from the work
            // queue.
            self.schedule();
        }
        ret
    }

    /// Whether a process owns this QP (its rings are hostile memory).
    pub(crate) fn is_user(&self) -> bool {
        self.is_user
    }

    /// The most SGEs a receive WQE of this QP may have.
    pub(crate) fn recv_max_sge(&self) -> u32 {
        match &self.srq {
            Some(srq) => srq.max_sge(),
            None => self.cap.max_recv_sge,
        }
    }

    /// `post_recv` from a kernel consumer (user processes post receives
    /// straight into their ring).
    pub(crate) fn post_recv(&self, wrs: Option<RecvWrs<'_>>) -> Result<(), PostError> {
        let refuse = |err| PostError { posted: 0, err };
        let state = self.live_state().map_err(refuse)?;
        // C10-97.2.1: receives may be posted from INIT on.
        if state == QpState::Reset || self.has_srq {
            return Err(refuse(EINVAL));
        }
        let ret = match wrs {
            Some(wrs) if !self.is_user => {
                let rq = self.rq.lock();
                let rq = rq.as_ref().ok_or(refuse(EINVAL))?;
                post::post_recvs(rq, wrs, self.cap.max_recv_sge)
            }
            _ => Err(refuse(EINVAL)),
        };
        if state == QpState::Err {
            self.flush_queues();
        }
        ret
    }

    /// `destroy_qp`, once no softirq can find the QP any more: from now
    /// on nothing is posted, sent or completed. Closes the gate of
    /// deferred work and cancels what is queued (waiting for a run in
    /// progress), waits for the QP's packets still in the IP stack to be
    /// freed, and releases the rings the process maps. After it, nothing
    /// but the caller's reference holds the QP: no work item, timer or
    /// packet runs for it again.
    pub(crate) fn destroy(&self) {
        self.state.lock().destroyed = true;
        *self.deferrals.lock() = false;
        rt::cancel_delayed_work_sync::<_, 1>(self);
        rt::cancel_delayed_work_sync::<_, 2>(self);
        rt::cancel_work_sync::<_, 0>(self);
        self.tx.close();
        // Released here, not with the last reference: their mmap entries
        // belong to the process's user context, which may go right after.
        let sq = self.sq.lock().take();
        let rq = self.rq.lock().take();
        drop((sq, rq));
    }

    /// Queues deferred work, unless the QP is being destroyed.
    fn defer(self: &Arc<Self>, what: Deferred) {
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

    /// Whether the requester must wait for this QP's packets in the IP
    /// stack to drain before building more.
    pub(crate) fn tx_paused(&self) -> bool {
        self.tx.must_pause()
    }

    /// `query_qp`: the attributes as set, the current state, PSNs and
    /// capabilities.
    pub(crate) fn query(&self, attr: &mut QpAttr, init: &mut QpInitAttr) {
        let st = self.state.lock();
        *attr = *st.attr.get();
        attr.qp_state = st.state.raw();
        attr.cur_qp_state = st.state.raw();
        attr.sq_draining = u8::from(st.sq_draining);
        // The PSNs where the queues stand now, not as last set: what rxe
        // reports, and what `rdma res show qp` shows.
        attr.sq_psn = st.req.psn.get();
        attr.rq_psn = st.resp.psn.get();
        drop(st);
        attr.cap = self.cap;
        init.cap = self.cap;
        init.qp_type = self.ty.raw();
        init.sq_sig_type = if self.sq_sig_all {
            IB_SIGNAL_ALL_WR
        } else {
            IB_SIGNAL_REQ_WR
        };
        init.port_num = self.port;
    }
}

/// The attributes of a new QP: all zero except the path MTU, which rxe
/// starts at `IB_MTU_256` (what UD QPs, which never set it, keep).
fn initial_attr() -> StoredQpAttr {
    let mut attr = StoredQpAttr::default();
    attr.update(|a| a.path_mtu = *MTU_RANGE.start());
    attr
}

/// rxe's `rxe_qp_chk_attr`: values the state machine does not cover.
fn check_attrs(attr: &QpAttr, mask: AttrMask) -> Result {
    if mask.contains(AttrMask::PORT) && attr.port_num != params::PORT {
        return Err(EINVAL);
    }
    if mask.contains(AttrMask::PKEY_INDEX) && attr.pkey_index >= params::PKEY_TABLE_LEN {
        return Err(EINVAL);
    }
    if mask.contains(AttrMask::PATH_MTU) && !MTU_RANGE.contains(&attr.path_mtu) {
        return Err(EINVAL);
    }
    if mask.contains(AttrMask::MAX_QP_RD_ATOMIC)
        && u32::from(attr.max_rd_atomic) > params::MAX_RD_ATOMIC
    {
        return Err(EINVAL);
    }
    if mask.contains(AttrMask::MAX_DEST_RD_ATOMIC)
        && u32::from(attr.max_dest_rd_atomic) > params::MAX_RD_ATOMIC
    {
        return Err(EINVAL);
    }
    // Resizing the queues of an existing QP is not supported (as in rxe).
    if mask.contains(AttrMask::CAP) {
        return Err(EINVAL);
    }
    Ok(())
}

/// Copies the fields `mask` names from `from` into the stored attributes.
fn apply(to: &mut QpAttr, from: &QpAttr, mask: AttrMask) {
    let has = |m: AttrMask| mask.contains(m);
    if has(AttrMask::EN_SQD_ASYNC_NOTIFY) {
        to.en_sqd_async_notify = from.en_sqd_async_notify;
    }
    if has(AttrMask::ACCESS_FLAGS) {
        to.qp_access_flags = from.qp_access_flags;
    }
    if has(AttrMask::PKEY_INDEX) {
        to.pkey_index = from.pkey_index;
    }
    if has(AttrMask::PORT) {
        to.port_num = from.port_num;
    }
    if has(AttrMask::QKEY) {
        to.qkey = from.qkey;
    }
    if has(AttrMask::AV) {
        to.ah_attr = from.ah_attr;
    }
    if has(AttrMask::PATH_MTU) {
        to.path_mtu = from.path_mtu;
    }
    if has(AttrMask::TIMEOUT) {
        to.timeout = from.timeout;
    }
    if has(AttrMask::RETRY_CNT) {
        to.retry_cnt = from.retry_cnt & 0x7;
    }
    if has(AttrMask::RNR_RETRY) {
        to.rnr_retry = from.rnr_retry & 0x7;
    }
    if has(AttrMask::RQ_PSN) {
        to.rq_psn = from.rq_psn & MASK_24;
    }
    if has(AttrMask::MAX_QP_RD_ATOMIC) {
        to.max_rd_atomic = from.max_rd_atomic;
    }
    if has(AttrMask::ALT_PATH) {
        to.alt_ah_attr = from.alt_ah_attr;
        to.alt_pkey_index = from.alt_pkey_index;
        to.alt_port_num = from.alt_port_num;
        to.alt_timeout = from.alt_timeout;
    }
    if has(AttrMask::MIN_RNR_TIMER) {
        to.min_rnr_timer = from.min_rnr_timer;
    }
    if has(AttrMask::SQ_PSN) {
        to.sq_psn = from.sq_psn & MASK_24;
    }
    if has(AttrMask::MAX_DEST_RD_ATOMIC) {
        to.max_dest_rd_atomic = from.max_dest_rd_atomic;
    }
    if has(AttrMask::PATH_MIG_STATE) {
        to.path_mig_state = from.path_mig_state;
    }
    if has(AttrMask::DEST_QPN) {
        to.dest_qp_num = from.dest_qp_num & MASK_24;
    }
}

/// The data path.
impl QpInner {
    /// Runs the requester (and READ responses) now, unless another CPU is
    /// already running them, in which case that one goes round again. A
    /// long run leaves the rest to the work queue.
    pub(crate) fn kick(self: &Arc<Self>) {
        if !self.runner.try_start() {
            return;
        }
        let mut passes = 0;
        loop {
            let more = self.pass();
            if more {
                passes += 1;
                if passes >= RUN_BUDGET {
                    self.runner.stop();
                    self.schedule();
                    return;
                }
                continue;
            }
            if self.runner.finish() {
                return;
            }
        }
    }

    /// Runs the requester later, from the work queue.
    pub(crate) fn schedule(self: &Arc<Self>) {
        self.defer(Deferred::Run);
    }

    /// One pass under the locks: completions, requests, READ responses.
    /// Returns whether more is left to send.
    fn pass(self: &Arc<Self>) -> bool {
        let Some(ndev) = self.dev.netdev() else {
            return false;
        };
        let mut out = Outbox::new();
        let mut notify = Notify::default();
        let mut st = self.state.lock();
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
            comp::complete_done(self, &mut st, sq, &mut notify);
            if !st.enter_error && req::step(self, &mut st, sq, &ndev, &mut out) == ReqEnd::More {
                more = true;
            }
            comp::complete_done(self, &mut st, sq, &mut notify);
        }
        if resp::send_read_responses(self, &mut st, &ndev, &mut out) {
            more = true;
        }
        self.after(st, &ndev, &mut out, notify);
        more
    }

    /// Finishes a pass: drops the lock, sends, reports, arms timers.
    fn after(
        self: &Arc<Self>,
        mut st: kernel::sync::lock::Guard<
            '_,
            QpState_,
            kernel::sync::lock::spinlock::SpinLockIrqBackend,
        >,
        ndev: &NetDev,
        out: &mut Outbox,
        notify: Notify,
    ) {
        let error = core::mem::take(&mut st.enter_error);
        let arm = core::mem::take(&mut st.arm_retransmit) && !st.req.timer_armed;
        let timeout = st.timeout_jiffies;
        if arm && timeout.is_some() {
            st.req.timer_armed = true;
        }
        let rnr = st.rnr_delay_us.take();
        let sqd = core::mem::take(&mut st.sqd_event) && st.attr.get().en_sqd_async_notify != 0;
        if error {
            st.state = QpState::Err;
        }
        drop(st);
        out.flush(ndev, &self.dev.counters, self);
        if notify.send {
            self.send_cq.notify();
        }
        if notify.recv {
            self.recv_cq.notify();
        }
        if let (true, Some(t)) = (arm, timeout) {
            self.defer(Deferred::Retransmit(t as usize));
        }
        if let Some(us) = rnr {
            let j = rt::usecs_to_jiffies(u64::from(us));
            self.defer(Deferred::RnrWait(j as usize));
        }
        if sqd {
            self.handle.event(Event::SqDrained);
        }
        if error {
            self.flush();
        }
    }

    /// A packet for this QP, from the receive path (softirq).
    pub(crate) fn receive(self: &Arc<Self>, pkt: &Packet<'_>, meta: &RxMeta<'_>) {
        self.deliver(pkt, meta, true);
    }

    /// A multicast packet for one of the groups this QP is attached to,
    /// which the receive path has counted once for all of them.
    pub(crate) fn receive_multicast(self: &Arc<Self>, pkt: &Packet<'_>, meta: &RxMeta<'_>) {
        self.deliver(pkt, meta, false);
    }

    /// Hands a packet to the completer or responder; `count`: count it in
    /// the port's received packets once it passed the QP's checks.
    fn deliver(self: &Arc<Self>, pkt: &Packet<'_>, meta: &RxMeta<'_>, count: bool) {
        // Answers leave through the device's netdev, whatever the packet
        // arrived on (`lo`, for a device's packets to itself).
        let Some(ndev) = self.dev.netdev() else {
            return;
        };
        let ndev = &*ndev;
        let mut out = Outbox::new();
        let mut notify = Notify::default();
        let mut st = self.state.lock();
        let info = pkt.info();
        let mut kick = false;
        if info.is_response() {
            if self.ty != QpType::Rc || !st.can_send() || !st.path.is_some_and(|p| p.carried(meta))
            {
                return;
            }
            if count {
                self.dev.counters.received(pkt.layout.total_len);
            }
            let mut sq = self.sq.lock();
            let Some(sq) = (*sq).as_mut() else {
                return;
            };
            comp::on_response(self, &mut st, sq, pkt);
            comp::complete_done(self, &mut st, sq, &mut notify);
            kick = true;
        } else {
            if !st.can_receive() {
                return;
            }
            if matches!(self.ty, QpType::Rc | QpType::Uc)
                && !st.path.is_some_and(|p| p.carried(meta))
            {
                return;
            }
            if count {
                self.dev.counters.received(pkt.layout.total_len);
            }
            let mut rq = self.rq.lock();
            let meta = RxMeta { ndev, ..*meta };
            resp::on_request(
                self,
                &mut st,
                (*rq).as_mut(),
                pkt,
                &meta,
                &mut out,
                &mut notify,
            );
            if st.reads_pending {
                drop(rq);
                resp::send_read_responses(self, &mut st, ndev, &mut out);
                kick = st.reads_pending;
            }
        }
        let rnr_pending = st.rnr_delay_us.is_some();
        self.after(st, ndev, &mut out, notify);
        if kick && !rnr_pending {
            self.kick();
        }
    }

    fn retransmit_timer(self: &Arc<Self>) {
        let mut st = self.state.lock();
        st.req.timer_armed = false;
        if st.destroyed {
            return;
        }
        let again = comp::timeout(self, &mut st);
        let failed = st.enter_error;
        if let Some(j) = again {
            if !failed {
                st.req.timer_armed = true;
                drop(st);
                self.defer(Deferred::Retransmit(j.max(1) as usize));
                self.kick();
                return;
            }
        }
        drop(st);
        self.kick();
    }

    fn rnr_timer(self: &Arc<Self>) {
        {
            let mut st = self.state.lock();
            if st.destroyed {
                return;
            }
            st.req.rnr_wait = false;
        }
        self.kick();
    }
}
