// SPDX-License-Identifier: GPL-2.0

//! The typed values the verbs of [`Operations`](super::Operations) are
//! given: the kinds of objects, the masks and the flags the core passes as
//! arguments or in the attribute structs. As in
//! [`device_attr`](super::device_attr), each C enum or flag set is a Rust
//! type whose numbers are the bindings'; a value that comes from the core
//! (and, through it, from user space) is a `#[repr(transparent)]` newtype
//! that holds any number, so that the driver decides what it refuses.

use super::{QpInitAttr, SrqInitAttr, WorkCompletion};
use crate::ffi::sys;

/// The kind of a memory region `alloc_mr` is asked for (`enum ib_mr_type`).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MrType(u32);

impl MrType {
    /// `IB_MR_TYPE_MEM_REG`: registered by `REG_MR` work requests.
    pub(crate) const MEM_REG: Self = Self(sys::IB_MR_TYPE_MEM_REG);
    /// `IB_MR_TYPE_SG_GAPS`: a page list with gaps (for tests: rrxe, as
    /// rxe, has no such MRs).
    #[cfg(CONFIG_KUNIT)]
    pub(crate) const SG_GAPS: Self = Self(sys::IB_MR_TYPE_SG_GAPS);

    /// The type the core passed as `raw`.
    pub(super) const fn from_raw(raw: u32) -> Self {
        Self(raw)
    }
}

/// What `ibv_advise_mr` advises about ranges of memory regions (`enum
/// ib_uverbs_advise_mr_advice`).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MrAdvice(u32);

impl MrAdvice {
    /// `IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH`: fault the pages in for
    /// reading.
    pub(crate) const PREFETCH: Self = Self(sys::IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH);
    /// `IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE`: fault the pages in for
    /// writing.
    pub(crate) const PREFETCH_WRITE: Self = Self(sys::IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE);
    /// `IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT`: map the pages that
    /// are present, fault none.
    pub(crate) const PREFETCH_NO_FAULT: Self =
        Self(sys::IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT);

    /// The advice the core passed as `raw`.
    pub(super) const fn from_raw(raw: u32) -> Self {
        Self(raw)
    }
}

/// How `ibv_advise_mr` wants its advice taken (`enum
/// ib_uverbs_advise_mr_flag`).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AdviseMrFlags(u32);

impl AdviseMrFlags {
    /// `IB_UVERBS_ADVISE_MR_FLAG_FLUSH`: done before the call returns,
    /// errors reported; otherwise best effort.
    pub(crate) const FLUSH: Self = Self(sys::IB_UVERBS_ADVISE_MR_FLAG_FLUSH);
}

core_mask_ops!(AdviseMrFlags);

/// What a `rereg_user_mr` call changes (`enum ib_mr_rereg_flags`).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MrReregFlags(u32);

impl MrReregFlags {
    /// `IB_MR_REREG_PD`: the MR moves to another PD.
    pub(crate) const PD: Self = Self(sys::IB_MR_REREG_PD);
}

core_mask_ops!(MrReregFlags);

/// The kind of a shared receive queue (`enum ib_srq_type`).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SrqType(u32);

impl SrqType {
    /// `IB_SRQT_BASIC`: a plain SRQ (neither XRC nor tag matching).
    pub(crate) const BASIC: Self = Self(sys::IB_SRQT_BASIC);
}

impl SrqInitAttr {
    /// The kind of SRQ `create_srq` is asked for (`srq_type`).
    pub(crate) fn kind(&self) -> SrqType {
        SrqType(self.srq_type)
    }
}

/// What a `modify_srq` call changes (`enum ib_srq_attr_mask`).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SrqAttrMask(u32);

impl SrqAttrMask {
    /// `IB_SRQ_MAX_WR`: resize the SRQ to `max_wr`.
    pub(crate) const MAX_WR: Self = Self(sys::IB_SRQ_MAX_WR);
    /// `IB_SRQ_LIMIT`: arm the limit event at `srq_limit`.
    pub(crate) const LIMIT: Self = Self(sys::IB_SRQ_LIMIT);
}

core_mask_ops!(SrqAttrMask);

/// Which completions raise a CQ's event (`enum ib_cq_notify_flags`): what
/// `req_notify_cq` arms, and whether it reports completions missed.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CqNotifyFlags(u32);

impl CqNotifyFlags {
    /// No flag: nothing armed.
    pub(crate) const NONE: Self = Self(0);
    /// `IB_CQ_NEXT_COMP`: the next completion raises the event.
    pub(crate) const NEXT_COMP: Self = Self(sys::IB_CQ_NEXT_COMP);
    /// `IB_CQ_SOLICITED_MASK`: the flags that say which completions raise
    /// the event (`IB_CQ_SOLICITED`, `IB_CQ_NEXT_COMP`).
    pub(crate) const SOLICITED_MASK: Self = Self(sys::IB_CQ_SOLICITED_MASK);
    /// `IB_CQ_REPORT_MISSED_EVENTS`: say whether completions are already
    /// waiting.
    pub(crate) const REPORT_MISSED_EVENTS: Self = Self(sys::IB_CQ_REPORT_MISSED_EVENTS);

    /// The flags set both here and in `other`.
    pub(crate) const fn intersection(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }
}

core_mask_ops!(CqNotifyFlags);

/// The network header a message came with (`enum rdma_network_type`), as a
/// kernel work completion reports it.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NetworkHdrType {
    /// `RDMA_NETWORK_IPV4`: RoCEv2 over IPv4.
    Ipv4 = sys::RDMA_NETWORK_IPV4 as u8,
    /// `RDMA_NETWORK_IPV6`: RoCEv2 over IPv6.
    Ipv6 = sys::RDMA_NETWORK_IPV6 as u8,
}

impl WorkCompletion {
    /// Sets the network header the message came with (`network_hdr_type`,
    /// a `u8`; consumers read it with `IB_WC_WITH_NETWORK_HDR_TYPE`).
    pub(crate) fn set_network_hdr_type(&mut self, ty: NetworkHdrType) {
        self.network_hdr_type = ty as u8;
    }
}

/// Which of a QP's send requests complete (`enum ib_sig_type`): the
/// `sq_sig_type` of a [`QpInitAttr`].
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SignalType(u32);

impl SignalType {
    /// `IB_SIGNAL_ALL_WR`: every send request completes.
    pub(crate) const ALL_WR: Self = Self(sys::IB_SIGNAL_ALL_WR);
    /// `IB_SIGNAL_REQ_WR`: the send requests that ask to complete.
    pub(crate) const REQ_WR: Self = Self(sys::IB_SIGNAL_REQ_WR);
}

impl QpInitAttr {
    /// Which send requests complete, as `create_qp` is asked.
    pub(crate) fn sig_type(&self) -> SignalType {
        SignalType(self.sq_sig_type)
    }

    /// Reports which send requests complete (`query_qp`).
    pub(crate) fn set_sig_type(&mut self, ty: SignalType) {
        self.sq_sig_type = ty.0;
    }
}
