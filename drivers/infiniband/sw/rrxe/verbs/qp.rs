// SPDX-License-Identifier: GPL-2.0

//! The verbs of queue pairs: QP numbers and the device's QP table, creation
//! and destruction, multicast attachment; the rest goes to the QP itself
//! ([`crate::transport::control`]).

use super::{debugfs, device::RrxeDevice};
use crate::{
    dev::params,
    ffi::ib::{IbDevice, PostError, Qp, QpAttr, QpBinding, QpInitAttr, RecvWrs, SendWrs, Udata},
    ffi::rt,
    logic::{self, qp_state::QpType},
    transport::control::QpLinks,
    transport::qp::{QpInner, RrxeQp},
};
use kernel::{prelude::*, sync::Arc};

// The device's QP table, which creation fills.
impl RrxeDevice {
    /// Enters `qp` into the QP table under a free number (1 for GSI).
    fn insert_qp(
        &self,
        make: impl FnOnce(u32) -> Result<Arc<QpInner>>,
        gsi: bool,
    ) -> Result<Arc<QpInner>> {
        let _creating = self.qp_create.lock();
        let qpn = if gsi {
            if self.shared.qps.contains(1) {
                return Err(EINVAL);
            }
            1
        } else {
            self.free_qpn()?
        };
        let qp = make(qpn)?;
        self.shared.qps.store(qpn as usize, qp.clone())?;
        Ok(qp)
    }

    /// A QP number from `MIN_QPN` on that is not in use, searched
    /// round-robin so that a number is not reused right after its QP is
    /// destroyed. Runs under `qp_create`, so a number found free stays so.
    fn free_qpn(&self) -> Result<u32> {
        self.next_qpn
            .find(params::MIN_QPN, params::MAX_QP, |qpn| {
                !self.shared.qps.contains(qpn as usize)
            })
            .map(|(qpn, _)| qpn)
            .ok_or(ENOMEM)
    }
}

// The verbs of QPs, which `RrxeDevice`'s `Operations` calls.

/// `Operations::create_qp`: a QP under a free number (1 for GSI), linked to
/// its CQs, SRQ and PD.
pub(super) fn create_qp(
    dev: &IbDevice<RrxeDevice>,
    init: &mut QpInitAttr,
    binding: QpBinding<'_, RrxeDevice>,
    udata: Option<&Udata>,
) -> Result<(RrxeQp, u32)> {
    let gsi = init.qp_type == QpType::Gsi.raw();
    let (Some(scq), Some(rcq)) = (binding.send_cq, binding.recv_cq) else {
        return Err(EINVAL);
    };
    let links = QpLinks {
        handle: binding.handle,
        send_cq: scq.inner.clone(),
        recv_cq: rcq.inner.clone(),
        srq: binding.srq.map(|s| s.inner.clone()),
        pd: binding.pd,
        dev: dev.shared.ctx.clone(),
    };
    let inner = dev.insert_qp(|qpn| QpInner::new(qpn, init, links, udata), gsi)?;
    let qpn = inner.qpn();
    let debugfs = dev
        .debugfs
        .as_ref()
        .and_then(|dir| debugfs::qp_file(dir, &inner));
    Ok((
        RrxeQp {
            inner,
            _debugfs: debugfs,
        },
        qpn,
    ))
}

/// `Operations::modify_qp`: a QP state transition and attributes.
pub(super) fn modify_qp(
    qp: &Qp<RrxeDevice>,
    attr: &QpAttr,
    mask: u32,
    _udata: Option<&Udata>,
) -> Result {
    qp.inner.modify(attr, mask)
}

/// `Operations::query_qp`: the QP's attributes.
pub(super) fn query_qp(qp: &Qp<RrxeDevice>, attr: &mut QpAttr, init: &mut QpInitAttr) -> Result {
    qp.inner.query(attr, init);
    Ok(())
}

/// `Operations::destroy_qp`: the QP out of the table and destroyed, once no
/// receiver that found it can still hold it.
pub(super) fn destroy_qp(qp: &Qp<RrxeDevice>) -> Result {
    // IBA o10-2.2.3, as rxe: not while attached to a multicast group
    // (the core already refuses, counting attachments in `usecnt`).
    if qp.inner.in_mcast_group() {
        return Err(EBUSY);
    }
    let removed = qp
        .device::<RrxeDevice>()
        .shared
        .qps
        .remove(qp.inner.qpn() as usize);
    drop(removed);
    // Receivers that found the QP in the table are done with it once their
    // read-side sections have ended (rx::demux); then no reference but
    // ours is left, and the QP's queues are freed here, in process
    // context. Work items, timers and packets are cancelled or waited for
    // by `destroy`. An SRCU grace period of the receive path alone, not
    // an RCU one: those take milliseconds (every CPU must pass a
    // quiescent state), once per QP.
    rt::wait_for_rx_readers();
    qp.inner.destroy();
    Ok(())
}

/// `Operations::post_send`: a kernel consumer's send work requests, or a
/// process's doorbell.
pub(super) fn post_send(qp: &Qp<RrxeDevice>, wrs: Option<SendWrs<'_>>) -> Result<(), PostError> {
    QpInner::post_send::<RrxeDevice>(&qp.inner, wrs)
}

/// `Operations::post_recv`: a kernel consumer's receive work requests, or a
/// process's doorbell.
pub(super) fn post_recv(qp: &Qp<RrxeDevice>, wrs: Option<RecvWrs<'_>>) -> Result<(), PostError> {
    qp.inner.post_recv(wrs)
}

/// `Operations::attach_mcast`: the UD QP joins a multicast group.
pub(super) fn attach_mcast(qp: &Qp<RrxeDevice>, mgid: &[u8; 16], _mlid: u16) -> Result {
    check_mcast(qp, mgid)?;
    let shared = &qp.device::<RrxeDevice>().shared;
    shared
        .mcast
        .attach(&qp.inner, mgid, shared.netdev().as_deref())
}

/// `Operations::detach_mcast`: the UD QP leaves a multicast group.
pub(super) fn detach_mcast(qp: &Qp<RrxeDevice>, mgid: &[u8; 16], _mlid: u16) -> Result {
    check_mcast(qp, mgid)?;
    let shared = &qp.device::<RrxeDevice>().shared;
    shared
        .mcast
        .detach(&qp.inner, mgid, shared.netdev().as_deref())
}

/// What the core checks before attaching or detaching (a UD QP, a
/// multicast GID), checked again: `EINVAL` otherwise.
fn check_mcast(qp: &Qp<RrxeDevice>, mgid: &[u8; 16]) -> Result {
    if qp.inner.ty == QpType::Ud && logic::mcast::is_multicast(mgid) {
        Ok(())
    } else {
        Err(EINVAL)
    }
}
