// SPDX-License-Identifier: GPL-2.0

//! The verbs of completion queues and shared receive queues: each object is
//! counted against the device's limits here; its ring and its work are in
//! [`crate::queues`].

use super::device::RrxeDevice;
use crate::{
    dev::params,
    ffi::ib::{
        self, Cq, CqHandle, CqInitAttr, IbDevice, PostError, RecvWrs, Srq, SrqHandle, Udata,
        WorkCompletion,
    },
    queues::{cq::RrxeCq, srq::RrxeSrq},
};
use core::mem::MaybeUninit;
use kernel::prelude::*;

// The verbs of CQs and SRQs, which `RrxeDevice`'s `Operations` calls.
/// `Operations::create_cq`: a CQ, counted against `MAX_CQ`.
pub(super) fn create_cq(
    dev: &IbDevice<RrxeDevice>,
    handle: CqHandle,
    attr: &CqInitAttr,
    udata: Option<&Udata>,
) -> Result<(RrxeCq, u32)> {
    dev.cqs.take(params::MAX_CQ)?;
    RrxeCq::new(handle, attr, udata).inspect_err(|_| dev.cqs.give())
}

/// `Operations::destroy_cq`: the CQ destroyed and its count given back.
pub(super) fn destroy_cq(cq: &Cq<RrxeDevice>) -> Result {
    cq.inner.destroy();
    cq.device::<RrxeDevice>().cqs.give();
    Ok(())
}

/// `Operations::resize_cq`: a new ring size for the CQ.
pub(super) fn resize_cq(cq: &Cq<RrxeDevice>, entries: u32, udata: Option<&Udata>) -> Result<u32> {
    cq.resize(entries, udata)
}

/// `Operations::req_notify_cq`: arms the CQ's completion handler.
pub(super) fn req_notify_cq(cq: &Cq<RrxeDevice>, flags: ib::CqNotifyFlags) -> Result<i32> {
    cq.req_notify(flags)
}

/// `Operations::poll_cq`: takes completions off a kernel CQ.
pub(super) fn poll_cq(
    cq: &Cq<RrxeDevice>,
    wc: &mut [MaybeUninit<WorkCompletion>],
) -> Result<usize> {
    cq.poll(wc)
}

/// `Operations::create_srq`: an SRQ, counted against `MAX_SRQ`, with a
/// number of its own.
pub(super) fn create_srq(
    dev: &IbDevice<RrxeDevice>,
    handle: SrqHandle,
    init: &mut ib::SrqInitAttr,
    udata: Option<&Udata>,
) -> Result<RrxeSrq> {
    dev.srqs.take(params::MAX_SRQ)?;
    RrxeSrq::new(&dev.srq_numbers, handle, init, udata).inspect_err(|_| dev.srqs.give())
}

/// `Operations::modify_srq`: the SRQ's limit or size.
pub(super) fn modify_srq(
    srq: &Srq<RrxeDevice>,
    attr: &mut ib::SrqAttr,
    mask: ib::SrqAttrMask,
    udata: Option<&Udata>,
) -> Result {
    srq.modify(attr, mask, udata)
}

/// `Operations::query_srq`: the SRQ's attributes.
pub(super) fn query_srq(srq: &Srq<RrxeDevice>, attr: &mut ib::SrqAttr) -> Result {
    srq.query(attr);
    Ok(())
}

/// `Operations::destroy_srq`: the SRQ's count given back.
pub(super) fn destroy_srq(srq: &Srq<RrxeDevice>) -> Result {
    srq.device::<RrxeDevice>().srqs.give();
    Ok(())
}

/// `Operations::post_srq_recv`: a kernel consumer's receive work requests
/// into the SRQ.
pub(super) fn post_srq_recv(srq: &Srq<RrxeDevice>, wrs: RecvWrs<'_>) -> Result<(), PostError> {
    srq.post(wrs)
}
