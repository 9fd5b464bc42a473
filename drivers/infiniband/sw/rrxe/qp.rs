// SPDX-License-Identifier: GPL-2.0

//! Queue pairs: creation with the rxe ring layout, the IBA state machine of
//! `modify_qp` (rules in [`logic::qp_state`]), query and destroy.

use crate::{
    cq::{Completion, CqInner},
    ib::{
        consts::*, CreateQpResp, Event, PostError, QpAttr, QpCap, QpHandle, QpInitAttr, RecvWqe,
        RecvWrs, SendWqe, SendWrs, Sge, StoredQpAttr, Udata,
    },
    logic::{
        qp_state::{check_mask_supported, check_modify, AttrMask, QpState, QpStateError, QpType},
        queue::QueueType,
    },
    params,
    post::{self, SendLimits},
    queue::SharedQueue,
};
use kernel::{
    new_spinlock_irq,
    prelude::*,
    sync::{Arc, SpinLockIrq},
};

/// BTH PSNs and QPNs are 24 bits wide.
const MASK_24: u32 = 0x00ff_ffff;
/// The path MTUs there are.
const MTU_RANGE: core::ops::RangeInclusive<u32> = IB_MTU_256..=IB_MTU_4096;

/// The mutable part of a QP, under its lock.
struct QpState_ {
    state: QpState,
    sq_draining: bool,
    /// `destroy_qp` ran: nothing may be posted or completed any more.
    destroyed: bool,
    /// The attributes as last set (only the fields of masks applied so far
    /// are meaningful).
    attr: StoredQpAttr,
}

/// A QP's state, shared with the device's QP table (and, with the data
/// path, with the requester, responder and completer).
#[pin_data]
pub(crate) struct QpInner {
    qpn: u32,
    ty: QpType,
    /// Capabilities as created (what `query_qp` reports).
    cap: QpCap,
    sq_sig_all: bool,
    port: u32,
    handle: QpHandle,
    send_cq: Arc<CqInner>,
    recv_cq: Arc<CqInner>,
    /// Receives come from an SRQ instead of `rq`.
    has_srq: bool,
    /// Whether a process maps the queues.
    is_user: bool,
    // Lock order: `state`, then `sq` or `rq`, then a CQ's lock. All turn
    // interrupts off: the data path takes them in softirq context.
    #[pin]
    sq: SpinLockIrq<SharedQueue>,
    #[pin]
    rq: SpinLockIrq<Option<SharedQueue>>,
    #[pin]
    state: SpinLockIrq<QpState_>,
}

/// The objects a new QP is bound to.
pub(crate) struct QpLinks {
    pub(crate) handle: QpHandle,
    pub(crate) send_cq: Arc<CqInner>,
    pub(crate) recv_cq: Arc<CqInner>,
    pub(crate) has_srq: bool,
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
        let has_srq = links.has_srq;
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
                is_user: udata.is_some(),
                sq <- new_spinlock_irq!(sq),
                rq <- new_spinlock_irq!(rq),
                state <- new_spinlock_irq!(QpState_ {
                    state: QpState::Reset,
                    sq_draining: false,
                    destroyed: false,
                    attr: initial_attr(),
                }),
            }),
            GFP_KERNEL,
        )
    }

    /// The QP number.
    pub(crate) fn qpn(&self) -> u32 {
        self.qpn
    }

    /// `modify_qp`: validates the whole request first, then applies it, so
    /// a refused request changes nothing.
    pub(crate) fn modify(&self, attr: &QpAttr, mask: u32) -> Result {
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
        st.attr.update(|to| apply(to, attr, mask));
        let Some(next) = next else { return Ok(()) };
        st.state = next;
        // rxe's requester drains the SQ before it reports SQD; with no
        // requester running yet the queue is drained at once.
        st.sq_draining = false;
        let sqd_notify = st.attr.get().en_sqd_async_notify != 0;
        drop(st);
        match next {
            QpState::Reset => self.reset_queues(),
            QpState::Err => self.flush(),
            QpState::Sqd if sqd_notify => self.handle.event(Event::SqDrained),
            _ => {}
        }
        Ok(())
    }

    /// On entering RESET: drops what was posted, without completions, and
    /// clears the slots (rxe's `rxe_qp_reset`).
    fn reset_queues(&self) {
        self.sq.lock().clear();
        if let Some(rq) = (*self.rq.lock()).as_mut() {
            rq.clear();
        }
    }

    /// In ERR: completes every posted request with `IB_WC_WR_FLUSH_ERR`
    /// (rxe's `flush_send_queue` and `flush_recv_queue`). If a CQ overflows
    /// the rest are dropped without completions, as in rxe.
    fn flush(&self) {
        self.flush_sq();
        if self.has_srq {
            // The SRQ's receives belong to the other QPs sharing it.
            self.handle.event(Event::LastWqeReached);
        } else {
            self.flush_rq();
        }
    }

    fn flush_sq(&self) {
        self.drain_into(&mut self.sq.lock(), &self.send_cq);
    }

    fn flush_rq(&self) {
        let mut rq = self.rq.lock();
        if let Some(rq) = (*rq).as_mut() {
            self.drain_into(rq, &self.recv_cq);
        }
    }

    /// Consumes every element of `q`, completing each in error on `cq`.
    /// Both WQE layouts start with the consumer's 64-bit `wr_id`.
    fn drain_into(&self, q: &mut SharedQueue, cq: &CqInner) {
        let mut notify = true;
        let mut wr_id = [0u8; 8];
        while q.peek(&mut wr_id) {
            if notify {
                let c = Completion {
                    wr_id: u64::from_ne_bytes(wr_id),
                    status: IB_WC_WR_FLUSH_ERR,
                    qp_num: self.qpn,
                    ..Default::default()
                };
                notify = cq.post(&c, self.handle, false).is_ok();
            }
            q.pop();
        }
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
    /// as rxe's send task does.
    pub(crate) fn post_send(&self, wrs: Option<SendWrs<'_>>) -> Result<(), PostError> {
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
                post::post_sends(&self.sq.lock(), wrs, &limits)
            }
            Some(_) => Err(refuse(EINVAL)),
            None => Ok(()),
        };
        if state == QpState::Err {
            self.flush_sq();
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
            self.flush_rq();
        }
        ret
    }

    /// `destroy_qp`: from now on nothing is posted or completed.
    pub(crate) fn destroy(&self) {
        self.state.lock().destroyed = true;
    }

    /// `query_qp`: the attributes as set, the current state and the
    /// capabilities.
    pub(crate) fn query(&self, attr: &mut QpAttr, init: &mut QpInitAttr) {
        let st = self.state.lock();
        *attr = *st.attr.get();
        attr.qp_state = st.state.raw();
        attr.cur_qp_state = st.state.raw();
        attr.sq_draining = u8::from(st.sq_draining);
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
