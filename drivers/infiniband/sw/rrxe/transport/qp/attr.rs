// SPDX-License-Identifier: GPL-2.0

//! A QP's attributes: the checks `modify_qp` makes beyond the state machine
//! ([`logic::qp_state`](crate::logic::qp_state)), the copy of the fields a
//! mask names into the stored attributes, and what the data path derives
//! from them (source port, MTU, timeout, retry counts, PSNs). Field by
//! field and apart from the verbs that call it, so that the copy can be
//! read against rxe's `rxe_qp_from_attr`.

use super::{inner::QpInner, state::QpState_};
use crate::{
    dev::params,
    dev::path::Path,
    ffi::ib::{QpAttr, StoredQpAttr},
    logic::{
        flow::udp_sport,
        qp_state::{AttrMask, QpType},
    },
    proto::{
        mtu::{ib_mtu_bytes, IB_MTU_256, IB_MTU_4096},
        psn::Psn,
    },
};
use kernel::prelude::*;

/// BTH PSNs and QPNs are 24 bits wide.
const MASK_24: u32 = 0x00ff_ffff;
/// The path MTUs there are.
pub(in crate::transport) const MTU_RANGE: core::ops::RangeInclusive<u32> = IB_MTU_256..=IB_MTU_4096;

/// The attributes of a new QP: all zero except the path MTU, which rxe
/// starts at `IB_MTU_256` (what UD QPs, which never set it, keep).
pub(in crate::transport) fn initial_attr() -> StoredQpAttr {
    let mut attr = StoredQpAttr::default();
    attr.update(|a| a.path_mtu = *MTU_RANGE.start());
    attr
}

/// rxe's `rxe_qp_chk_attr`: values the state machine does not cover.
pub(in crate::transport) fn check_attrs(attr: &QpAttr, mask: AttrMask) -> Result {
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
pub(in crate::transport) fn apply(to: &mut QpAttr, from: &QpAttr, mask: AttrMask) {
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

impl QpInner {
    /// Derives the data path's view of the attributes just applied.
    pub(in crate::transport) fn apply_datapath(
        &self,
        st: &mut QpState_,
        mask: AttrMask,
        path: Option<Path>,
    ) {
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
            st.timeout_ns = (a.timeout != 0).then(|| 4096u64 << a.timeout.min(31));
        }
        if mask.contains(AttrMask::RETRY_CNT) {
            st.send.set_retry_cnt(a.retry_cnt);
        }
        if mask.contains(AttrMask::RNR_RETRY) {
            st.send.set_rnr_retry(a.rnr_retry);
        }
        if mask.contains(AttrMask::SQ_PSN) {
            st.send.set_sq_psn(Psn::new(a.sq_psn));
        }
        if mask.contains(AttrMask::RQ_PSN) {
            st.resp.psn = Psn::new(a.rq_psn);
        }
    }
}
