// SPDX-License-Identifier: GPL-2.0

//! Work completion statuses and opcodes at the C boundary: the typed
//! [`WcStatus`] and [`WcOpcode`] become the numbers of `enum ib_wc_status`
//! and `enum ib_wc_opcode` here, for a `struct ib_wc` or a user CQE
//! (`struct ib_uverbs_wc`, which uses the same numbers); the build checks
//! that [`WcFlags`] has the bits of `enum ib_wc_flags`.

use crate::{
    ffi::sys::{
        IB_WC_ATOMIC_WRITE, IB_WC_BAD_RESP_ERR, IB_WC_BIND_MW, IB_WC_COMP_SWAP, IB_WC_FETCH_ADD,
        IB_WC_FLUSH, IB_WC_GRH, IB_WC_LOCAL_INV, IB_WC_LOC_LEN_ERR, IB_WC_LOC_PROT_ERR,
        IB_WC_LOC_QP_OP_ERR, IB_WC_MW_BIND_ERR, IB_WC_RDMA_READ, IB_WC_RDMA_WRITE, IB_WC_RECV,
        IB_WC_RECV_RDMA_WITH_IMM, IB_WC_REG_MR, IB_WC_REM_ACCESS_ERR, IB_WC_REM_INV_REQ_ERR,
        IB_WC_REM_OP_ERR, IB_WC_RETRY_EXC_ERR, IB_WC_RNR_RETRY_EXC_ERR, IB_WC_SEND, IB_WC_SUCCESS,
        IB_WC_WITH_IMM, IB_WC_WITH_INVALIDATE, IB_WC_WITH_NETWORK_HDR_TYPE, IB_WC_WR_FLUSH_ERR,
    },
    logic::wc::{WcFlags, WcOpcode, WcStatus},
};

/// The `enum ib_wc_status` value of `status`.
pub(crate) const fn wc_status(status: WcStatus) -> u32 {
    match status {
        WcStatus::Success => IB_WC_SUCCESS,
        WcStatus::LocLenErr => IB_WC_LOC_LEN_ERR,
        WcStatus::LocQpOpErr => IB_WC_LOC_QP_OP_ERR,
        WcStatus::LocProtErr => IB_WC_LOC_PROT_ERR,
        WcStatus::WrFlushErr => IB_WC_WR_FLUSH_ERR,
        WcStatus::MwBindErr => IB_WC_MW_BIND_ERR,
        WcStatus::BadRespErr => IB_WC_BAD_RESP_ERR,
        WcStatus::RemInvReqErr => IB_WC_REM_INV_REQ_ERR,
        WcStatus::RemAccessErr => IB_WC_REM_ACCESS_ERR,
        WcStatus::RemOpErr => IB_WC_REM_OP_ERR,
        WcStatus::RetryExcErr => IB_WC_RETRY_EXC_ERR,
        WcStatus::RnrRetryExcErr => IB_WC_RNR_RETRY_EXC_ERR,
    }
}

/// The `enum ib_wc_opcode` value of `opcode`.
pub(crate) const fn wc_opcode(opcode: WcOpcode) -> u32 {
    match opcode {
        WcOpcode::Send => IB_WC_SEND,
        WcOpcode::RdmaWrite => IB_WC_RDMA_WRITE,
        WcOpcode::RdmaRead => IB_WC_RDMA_READ,
        WcOpcode::CompSwap => IB_WC_COMP_SWAP,
        WcOpcode::FetchAdd => IB_WC_FETCH_ADD,
        WcOpcode::BindMw => IB_WC_BIND_MW,
        WcOpcode::LocalInv => IB_WC_LOCAL_INV,
        WcOpcode::Flush => IB_WC_FLUSH,
        WcOpcode::AtomicWrite => IB_WC_ATOMIC_WRITE,
        WcOpcode::RegMr => IB_WC_REG_MR,
        WcOpcode::Recv => IB_WC_RECV,
        WcOpcode::RecvRdmaWithImm => IB_WC_RECV_RDMA_WITH_IMM,
    }
}

// The numbers `logic::wc` gives (and the host tests pin to the IBA's) are
// those of the kernel we build for.
const _: () = {
    let statuses = WcStatus::ALL;
    let mut i = 0;
    while i < statuses.len() {
        assert!(statuses[i].raw() == wc_status(statuses[i]));
        i += 1;
    }
    let opcodes = WcOpcode::ALL;
    let mut i = 0;
    while i < opcodes.len() {
        assert!(opcodes[i].raw() == wc_opcode(opcodes[i]));
        i += 1;
    }
    assert!(WcFlags::GRH.raw() == IB_WC_GRH);
    assert!(WcFlags::WITH_IMM.raw() == IB_WC_WITH_IMM);
    assert!(WcFlags::WITH_INVALIDATE.raw() == IB_WC_WITH_INVALIDATE);
    assert!(WcFlags::WITH_NETWORK_HDR_TYPE.raw() == IB_WC_WITH_NETWORK_HDR_TYPE);
};
