// SPDX-License-Identifier: GPL-2.0

//! Tests of the work completion types: every status and opcode keeps the
//! number of `enum ib_wc_status` / `enum ib_wc_opcode`
//! (include/rdma/ib_verbs.h, and `enum ib_uverbs_wc_opcode` of
//! include/uapi/rdma/ib_user_verbs.h), which the kernel's `struct ib_wc`
//! and the user CQE carry. The driver's build checks the same numbers
//! against the headers it is built with.

use crate::logic::wc::{WcError, WcFlags, WcOpcode, WcResult, WcStatus};

#[test]
fn statuses_have_the_kernel_numbers() {
    let expected = [
        (WcStatus::Success, 0),
        (WcStatus::LocLenErr, 1),
        (WcStatus::LocQpOpErr, 2),
        // 3: IB_WC_LOC_EEC_OP_ERR (reliable datagram).
        (WcStatus::LocProtErr, 4),
        (WcStatus::WrFlushErr, 5),
        (WcStatus::MwBindErr, 6),
        (WcStatus::BadRespErr, 7),
        // 8: IB_WC_LOC_ACCESS_ERR.
        (WcStatus::RemInvReqErr, 9),
        (WcStatus::RemAccessErr, 10),
        (WcStatus::RemOpErr, 11),
        (WcStatus::RetryExcErr, 12),
        (WcStatus::RnrRetryExcErr, 13),
    ];
    assert_eq!(expected.len(), WcStatus::ALL.len());
    for (status, raw) in expected {
        assert!(WcStatus::ALL.contains(&status), "{status:?}");
        assert_eq!(status.raw(), raw, "{status:?}");
        assert_eq!(status as u32, raw, "{status:?}");
    }
}

#[test]
fn opcodes_have_the_kernel_numbers() {
    let expected = [
        (WcOpcode::Send, 0),
        (WcOpcode::RdmaWrite, 1),
        (WcOpcode::RdmaRead, 2),
        (WcOpcode::CompSwap, 3),
        (WcOpcode::FetchAdd, 4),
        (WcOpcode::BindMw, 5),
        (WcOpcode::LocalInv, 6),
        // 7: IB_WC_LSO.
        (WcOpcode::Flush, 8),
        (WcOpcode::AtomicWrite, 9),
        (WcOpcode::RegMr, 10),
        // 11, 12: the masked atomics.
        (WcOpcode::Recv, 128),
        (WcOpcode::RecvRdmaWithImm, 129),
    ];
    assert_eq!(expected.len(), WcOpcode::ALL.len());
    for (opcode, raw) in expected {
        assert!(WcOpcode::ALL.contains(&opcode), "{opcode:?}");
        assert_eq!(opcode.raw(), raw, "{opcode:?}");
    }
}

#[test]
fn receives_are_told_by_the_recv_bit() {
    // Consumers test `opcode & IB_WC_RECV`.
    assert_ne!(WcOpcode::Recv.raw() & 128, 0);
    assert_ne!(WcOpcode::RecvRdmaWithImm.raw() & 128, 0);
    for send in WcOpcode::ALL
        .into_iter()
        .filter(|o| !matches!(o, WcOpcode::Recv | WcOpcode::RecvRdmaWithImm))
    {
        assert_eq!(send.raw() & 128, 0, "{send:?}");
    }
}

#[test]
fn defaults_are_zero() {
    // A completion's fields default to 0, as the zeroed C structs did.
    assert_eq!(WcStatus::default(), WcStatus::Success);
    assert_eq!(WcStatus::default().raw(), 0);
    assert_eq!(WcOpcode::default(), WcOpcode::Send);
    assert_eq!(WcOpcode::default().raw(), 0);
}

#[test]
fn errors_map_to_their_statuses() {
    let expected = [
        (WcError::LocLen, WcStatus::LocLenErr),
        (WcError::LocQpOp, WcStatus::LocQpOpErr),
        (WcError::LocProt, WcStatus::LocProtErr),
        (WcError::MwBind, WcStatus::MwBindErr),
        (WcError::BadResp, WcStatus::BadRespErr),
        (WcError::RemInvReq, WcStatus::RemInvReqErr),
        (WcError::RemAccess, WcStatus::RemAccessErr),
        (WcError::RemOp, WcStatus::RemOpErr),
        (WcError::RetryExc, WcStatus::RetryExcErr),
        (WcError::RnrRetryExc, WcStatus::RnrRetryExcErr),
    ];
    for (e, status) in expected {
        assert_eq!(WcStatus::from(e), status, "{e:?}");
        assert_ne!(WcStatus::from(e), WcStatus::Success, "{e:?}");
        let r: WcResult = Err(e);
        assert_eq!(WcStatus::from(r), status, "{e:?}");
    }
    assert_eq!(WcStatus::from(WcResult::Ok(())), WcStatus::Success);
}

#[test]
fn flags_have_the_kernel_bits() {
    // include/rdma/ib_verbs.h, enum ib_wc_flags.
    assert_eq!(WcFlags::GRH.raw(), 1);
    assert_eq!(WcFlags::WITH_IMM.raw(), 2);
    assert_eq!(WcFlags::WITH_INVALIDATE.raw(), 4);
    assert_eq!(WcFlags::WITH_NETWORK_HDR_TYPE.raw(), 64);
    assert_eq!(WcFlags::default(), WcFlags::NONE);
}

#[test]
fn flags_combine_and_clear() {
    let mut f = WcFlags::NONE;
    f |= WcFlags::GRH | WcFlags::WITH_NETWORK_HDR_TYPE;
    assert!(f.contains(WcFlags::GRH));
    assert!(f.contains(WcFlags::GRH | WcFlags::WITH_NETWORK_HDR_TYPE));
    assert!(!f.contains(WcFlags::WITH_IMM));
    let user = f.without(WcFlags::WITH_NETWORK_HDR_TYPE);
    assert_eq!(user, WcFlags::GRH);
    assert_eq!(user.raw(), 1);
}
