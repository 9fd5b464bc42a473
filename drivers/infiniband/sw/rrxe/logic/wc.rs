// SPDX-License-Identifier: GPL-2.0

//! Work completions: the status and the opcode each one reports.
//!
//! The data path works with these types. They become the C values of
//! `enum ib_wc_status` and `enum ib_wc_opcode` (`include/rdma/ib_verbs.h`;
//! the user ABI's `struct ib_uverbs_wc` has the same numbers) only as a
//! `struct ib_wc` or a user CQE is written, through `crate::ffi::ib`, which
//! also checks at build time that every number here is the kernel's. The
//! host tests pin them to the IBA's.
//!
//! Only what rrxe reports is here: the reliable datagram statuses (EEC,
//! RDD), LSO and the masked atomics have no variant until something
//! completes with them.
//!
//! A step that can only fail a work request returns a [`WcResult`], whose
//! error, [`WcError`], cannot be a success, in the way rust_binder's
//! `BinderResult` carries its replies; [`WcStatus::from`] turns either
//! outcome into the status a completion reports.

/// The status of a work completion (`enum ib_wc_status`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum WcStatus {
    /// `IB_WC_SUCCESS`.
    #[default]
    Success = 0,
    /// `IB_WC_LOC_LEN_ERR`: the local buffers do not match the message's
    /// length.
    LocLenErr = 1,
    /// `IB_WC_LOC_QP_OP_ERR`: a work request the QP cannot execute.
    LocQpOpErr = 2,
    /// `IB_WC_LOC_PROT_ERR`: local memory the QP may not use that way.
    LocProtErr = 4,
    /// `IB_WC_WR_FLUSH_ERR`: flushed by the QP's error state.
    WrFlushErr = 5,
    /// `IB_WC_MW_BIND_ERR`: a refused memory window bind.
    MwBindErr = 6,
    /// `IB_WC_BAD_RESP_ERR`: an unexpected response from the responder.
    BadRespErr = 7,
    /// `IB_WC_REM_INV_REQ_ERR`: the responder found the request invalid.
    RemInvReqErr = 9,
    /// `IB_WC_REM_ACCESS_ERR`: the responder refused the remote access.
    RemAccessErr = 10,
    /// `IB_WC_REM_OP_ERR`: the responder could not complete the operation.
    RemOpErr = 11,
    /// `IB_WC_RETRY_EXC_ERR`: the transport retries ran out.
    RetryExcErr = 12,
    /// `IB_WC_RNR_RETRY_EXC_ERR`: the RNR retries ran out.
    RnrRetryExcErr = 13,
}

impl WcStatus {
    /// Every status, for the checks that the numbers are the kernel's.
    pub(crate) const ALL: [Self; 12] = [
        Self::Success,
        Self::LocLenErr,
        Self::LocQpOpErr,
        Self::LocProtErr,
        Self::WrFlushErr,
        Self::MwBindErr,
        Self::BadRespErr,
        Self::RemInvReqErr,
        Self::RemAccessErr,
        Self::RemOpErr,
        Self::RetryExcErr,
        Self::RnrRetryExcErr,
    ];

    /// The IBA's and the kernel's number for the status.
    pub(crate) const fn raw(self) -> u32 {
        self as u32
    }
}

/// The opcode of a work completion (`enum ib_wc_opcode`): what the
/// completed work request was.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum WcOpcode {
    /// `IB_WC_SEND`; also what a flushed completion reports (rxe leaves
    /// its opcode at 0).
    #[default]
    Send = 0,
    /// `IB_WC_RDMA_WRITE`.
    RdmaWrite = 1,
    /// `IB_WC_RDMA_READ`.
    RdmaRead = 2,
    /// `IB_WC_COMP_SWAP`.
    CompSwap = 3,
    /// `IB_WC_FETCH_ADD`.
    FetchAdd = 4,
    /// `IB_WC_BIND_MW`.
    BindMw = 5,
    /// `IB_WC_LOCAL_INV`.
    LocalInv = 6,
    /// `IB_WC_FLUSH`.
    Flush = 8,
    /// `IB_WC_ATOMIC_WRITE`.
    AtomicWrite = 9,
    /// `IB_WC_REG_MR`.
    RegMr = 10,
    /// `IB_WC_RECV`: a receive (consumers test `opcode & IB_WC_RECV`).
    Recv = 128,
    /// `IB_WC_RECV_RDMA_WITH_IMM`: a receive consumed by an RDMA WRITE
    /// with immediate data.
    RecvRdmaWithImm = 129,
}

impl WcOpcode {
    /// Every opcode, for the checks that the numbers are the kernel's.
    pub(crate) const ALL: [Self; 12] = [
        Self::Send,
        Self::RdmaWrite,
        Self::RdmaRead,
        Self::CompSwap,
        Self::FetchAdd,
        Self::BindMw,
        Self::LocalInv,
        Self::Flush,
        Self::AtomicWrite,
        Self::RegMr,
        Self::Recv,
        Self::RecvRdmaWithImm,
    ];

    /// The IBA's and the kernel's number for the opcode.
    pub(crate) const fn raw(self) -> u32 {
        self as u32
    }
}

/// Why a work request failed: a [`WcStatus`] other than success.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WcError {
    /// [`WcStatus::LocLenErr`].
    LocLen,
    /// [`WcStatus::LocQpOpErr`].
    LocQpOp,
    /// [`WcStatus::LocProtErr`].
    LocProt,
    /// [`WcStatus::MwBindErr`].
    MwBind,
    /// [`WcStatus::BadRespErr`].
    BadResp,
    /// [`WcStatus::RemInvReqErr`].
    RemInvReq,
    /// [`WcStatus::RemAccessErr`].
    RemAccess,
    /// [`WcStatus::RemOpErr`].
    RemOp,
    /// [`WcStatus::RetryExcErr`].
    RetryExc,
    /// [`WcStatus::RnrRetryExcErr`].
    RnrRetryExc,
}

/// The outcome of a step of a work request: a failure is its completion's
/// status.
pub(crate) type WcResult<T = ()> = Result<T, WcError>;

/// The flags of a work completion rrxe sets (`enum ib_wc_flags`): which
/// optional fields it carries.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct WcFlags(u32);

impl WcFlags {
    /// No optional field.
    pub(crate) const NONE: Self = Self(0);
    /// The message came with a network header (`IB_WC_GRH`).
    pub(crate) const GRH: Self = Self(1 << 0);
    /// The completion carries immediate data (`IB_WC_WITH_IMM`).
    pub(crate) const WITH_IMM: Self = Self(1 << 1);
    /// The completion carries the key a SEND invalidated
    /// (`IB_WC_WITH_INVALIDATE`).
    pub(crate) const WITH_INVALIDATE: Self = Self(1 << 2);
    /// The completion says which network header came
    /// (`IB_WC_WITH_NETWORK_HDR_TYPE`); kernel consumers only.
    pub(crate) const WITH_NETWORK_HDR_TYPE: Self = Self(1 << 6);

    /// Whether every flag of `other` is set.
    pub(crate) const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// These flags without those of `other`.
    pub(crate) const fn without(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    /// The `enum ib_wc_flags` bits (the user CQE's `wc_flags` of rxe, too).
    pub(crate) const fn raw(self) -> u32 {
        self.0
    }
}

impl core::ops::BitOr for WcFlags {
    type Output = Self;

    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl core::ops::BitOrAssign for WcFlags {
    fn bitor_assign(&mut self, other: Self) {
        self.0 |= other.0;
    }
}

impl From<WcError> for WcStatus {
    fn from(e: WcError) -> Self {
        match e {
            WcError::LocLen => Self::LocLenErr,
            WcError::LocQpOp => Self::LocQpOpErr,
            WcError::LocProt => Self::LocProtErr,
            WcError::MwBind => Self::MwBindErr,
            WcError::BadResp => Self::BadRespErr,
            WcError::RemInvReq => Self::RemInvReqErr,
            WcError::RemAccess => Self::RemAccessErr,
            WcError::RemOp => Self::RemOpErr,
            WcError::RetryExc => Self::RetryExcErr,
            WcError::RnrRetryExc => Self::RnrRetryExcErr,
        }
    }
}

impl From<WcResult> for WcStatus {
    fn from(r: WcResult) -> Self {
        match r {
            Ok(()) => Self::Success,
            Err(e) => e.into(),
        }
    }
}
