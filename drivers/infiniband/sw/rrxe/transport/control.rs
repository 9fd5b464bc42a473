// SPDX-License-Identifier: GPL-2.0

//! The QP's verbs: `create_qp` (the rxe ring layout, the device limits),
//! `modify_qp` (the IBA state machine, rules in
//! [`logic::qp_state`](crate::logic::qp_state)), `query_qp`, `post_send`,
//! `post_recv` and `destroy_qp`. They run in process context and take the
//! QP's locks like the data path; they stay beside it, in the transport,
//! because they build the pinned QP and take its locks (the state, the
//! rings, the gate of deferred work), which the verbs layer cannot reach.
//! `verbs::device` calls them.
//!
//! They sit at the top of the transport, above the engine, not in the
//! QP's own module ([`qp`](crate::transport::qp)) with the rooms they
//! use: `post_send` runs the requester ([`QpInner::kick`]), so they need
//! the engine, which needs the roles, which need the QP's rooms. In `qp`
//! they would close that chain into a cycle; here every import points
//! down: control names the engine and `qp` (and the roles' state types, to
//! build a QP), and nothing names control but the verbs layer above.

use crate::{
    dev::ah::RrxeAh,
    dev::counters::CounterSet,
    dev::params,
    dev::path::Path,
    ffi::ib::{
        AhAttr, Event, Operations, PostError, QpAttr, QpHandle, QpInitAttr, RecvWrs, SendWrs,
        SignalType, Udata,
    },
    ffi::net::{RouteSlot, RxQueue, SkbAccount},
    ffi::rt::{self, new_spinlock_bh, SoftTimer, TakenIn},
    ffi::rxe_abi::{CreateQpResp, RecvWqe, SendWqe, Sge},
    logic::{
        flow::{qp_sport, MAX_UNACKED_PSNS},
        qp_state::{check_mask_supported, check_modify, AttrMask, QpState, QpStateError, QpType},
        queue::QueueType,
    },
    proto::mtu::ib_mtu_bytes,
    queues::cq::CqInner,
    queues::post::{self, SendLimits},
    queues::queue::SharedQueue,
    queues::srq::SrqInner,
    transport::dev_ctx::DevCtx,
    transport::intake::RX_QUEUE_LEN,
    transport::qp::{
        apply, check_attrs, initial_attr, next_home, Faults, QpInner, QpState_, RunOnce, MTU_RANGE,
    },
    transport::resp::RespState,
    transport::send::SendState,
};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use kernel::{new_spinlock_irq, new_work, prelude::*, sync::Arc};

/// The objects a new QP is bound to.
pub(crate) struct QpLinks {
    /// The core's QP.
    pub(crate) handle: QpHandle,
    /// The send CQ.
    pub(crate) send_cq: Arc<CqInner>,
    /// The receive CQ.
    pub(crate) recv_cq: Arc<CqInner>,
    /// The SRQ, if the QP takes its receives from one.
    pub(crate) srq: Option<Arc<SrqInner>>,
    /// The PD (its address).
    pub(crate) pd: usize,
    /// What the QP reaches of its device (the netdev, the counters, the
    /// memory and AH tables).
    pub(crate) dev: Arc<DevCtx>,
}

/// The errno of a refused transition: `EOPNOTSUPP` for what rxe does not
/// implement, else `EINVAL`.
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
        let send = SendState::new(
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
        // A kernel consumer may post from a hard interrupt (nvmet-rdma
        // answers from a block device's completion), which takes `state`,
        // `sq` and `rq`; a process's QP is posted to by system calls only,
        // and its data path may run with interrupts on.
        let taken_in = if udata.is_some() {
            TakenIn::Softirq
        } else {
            TakenIn::Hardirq
        };
        Arc::pin_init(
            try_pin_init!(Self {
                qpn,
                ty,
                cap,
                sq_sig_all: init.sig_type() == SignalType::ALL_WR,
                port: init.port_num,
                handle: links.handle,
                send_cq: links.send_cq,
                recv_cq: links.recv_cq,
                has_srq,
                srq: links.srq,
                is_user: udata.is_some(),
                pd: links.pd,
                dev: links.dev,
                sq <- new_spinlock_bh!(Some(sq), taken_in),
                rq <- new_spinlock_bh!(rq, taken_in),
                state <- new_spinlock_bh!(
                    QpState_ {
                    state: QpState::Reset,
                    sq_draining: false,
                    destroyed: false,
                    attr: initial_attr(),
                    path: None,
                    sport,
                    mtu: ib_mtu_bytes(*MTU_RANGE.start()),
                    timeout_ns: None,
                    send,
                    resp,
                    timer_armed: false,
                    counter: None,
                    faults: Faults::new(),
                    },
                    taken_in
                ),
                home: AtomicU32::new(next_home()),
                rxq <- RxQueue::new(RX_QUEUE_LEN),
                rx_backlog: AtomicU32::new(0),
                rx_task <- new_work!("rrxe_qp_rx"),
                rx_left <- new_work!("rrxe_qp_rx_left"),
                rx_held: AtomicBool::new(false),
                fault_task <- new_work!("rrxe_qp_fault"),
                task <- new_work!("rrxe_qp_task"),
                task_left <- new_work!("rrxe_qp_task_left"),
                retransmit <- SoftTimer::new(),
                rnr <- SoftTimer::new(),
                deferrals <- new_spinlock_irq!(true),
                runner: RunOnce::new(),
                rx_runner: RunOnce::new(),
                flusher: RunOnce::new(),
                tx: SkbAccount::new()?,
                routes <- RouteSlot::new(),
                mcast_groups: AtomicU32::new(0),
                post_end_ns: AtomicU64::new(0),
                post_cost_ns: AtomicU64::new(0),
                request_since_post: AtomicBool::new(false),
            }),
            GFP_KERNEL,
        )
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
        rt::trace::qp_state(self.qpn, prev.raw() as u8, next.raw() as u8);
        // SQD is reported once the requester has nothing in flight.
        let sqd_notify = st.attr.get().en_sqd_async_notify != 0;
        let drained = st.send.is_drained();
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
            self.post_kick();
        } else {
            // Kernel consumers may post with interrupts off (the MAD layer
            // does), where nothing may be transmitted: send from the work
            // queue.
            self.schedule();
        }
        ret
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
        self.close_deferrals();
        self.retransmit.cancel();
        self.rnr.cancel();
        rt::cancel_work_sync::<_, 0>(self);
        rt::cancel_work_sync::<_, 3>(self);
        rt::cancel_work_sync::<_, 4>(self);
        rt::cancel_work_sync::<_, 5>(self);
        // Waits for a fault in progress (which may sleep in the process's
        // page tables); a datagram it held is freed with the queue below.
        rt::cancel_work_sync::<_, 6>(self);
        self.rxq.purge();
        self.tx.close();
        // Nothing sends for the QP any more; its route goes now (an IPv6
        // route must not outlive its namespace: `Dst`).
        self.routes.clear();
        // Released here, not with the last reference: their mmap entries
        // belong to the process's user context, which may go right after.
        let sq = self.sq.lock().take();
        let rq = self.rq.lock().take();
        drop((sq, rq));
        // The core unbinds a bound QP before `destroy_qp`; were it still
        // bound, its counter's set would go now, not with the last
        // reference.
        drop(self.count_in(None));
    }

    /// `counter_bind_qp` and `counter_unbind_qp`: the QP's events are
    /// counted in `set` from its next pass on (`None`: in the port's
    /// counters). Returns the set they were counted in, for the caller to
    /// drop after the lock. A pass under way keeps the set it took.
    pub(crate) fn count_in(&self, set: Option<Arc<CounterSet>>) -> Option<Arc<CounterSet>> {
        core::mem::replace(&mut self.state.lock().counter, set)
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
        attr.sq_psn = st.send.psn().get();
        attr.rq_psn = st.resp.psn.get();
        drop(st);
        attr.cap = self.cap;
        init.cap = self.cap;
        init.qp_type = self.ty.raw();
        init.set_sig_type(if self.sq_sig_all {
            SignalType::ALL_WR
        } else {
            SignalType::REQ_WR
        });
        init.port_num = self.port;
    }
}
