// SPDX-License-Identifier: GPL-2.0

//! Queue pairs: creation with the rxe ring layout, the IBA state machine of
//! `modify_qp` (rules in [`logic::qp_state`]), query and destroy.

use crate::{
    ib::{
        consts::*, CreateQpResp, QpAttr, QpCap, QpInitAttr, RecvWqe, SendWqe, Sge, StoredQpAttr,
        Udata,
    },
    logic::qp_state::{
        check_mask_supported, check_modify, AttrMask, QpState, QpStateError, QpType,
    },
    params,
    queue::SharedQueue,
};
use kernel::{new_spinlock, prelude::*, sync::Arc, sync::SpinLock};

/// BTH PSNs and QPNs are 24 bits wide.
const MASK_24: u32 = 0x00ff_ffff;
/// The path MTUs there are.
const MTU_RANGE: core::ops::RangeInclusive<u32> = IB_MTU_256..=IB_MTU_4096;

/// The mutable part of a QP, under its lock.
struct QpState_ {
    state: QpState,
    sq_draining: bool,
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
    sq: SharedQueue,
    rq: Option<SharedQueue>,
    #[pin]
    state: SpinLock<QpState_>,
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
    pub(crate) fn new(qpn: u32, init: &mut QpInitAttr, udata: Option<&Udata>) -> Result<Arc<Self>> {
        let ty = qp_type(init.qp_type, udata.is_some())?;
        if init.create_flags != 0 {
            return Err(EOPNOTSUPP);
        }
        if init.send_cq.is_null() || init.recv_cq.is_null() {
            return Err(EINVAL);
        }
        // With an SRQ the QP has no receive queue of its own.
        let has_srq = !init.srq.is_null();
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
                sq,
                rq,
                state <- new_spinlock!(QpState_ {
                    state: QpState::Reset,
                    sq_draining: false,
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
        if let Some(next) = next {
            st.state = next;
            // rxe's requester drains the SQ before it reports SQD; with no
            // requester running yet the queue is drained at once.
            st.sq_draining = false;
        }
        Ok(())
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
