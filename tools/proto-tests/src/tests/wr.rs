// SPDX-License-Identifier: GPL-2.0

//! Tests of the work-request rules against rxe's opcode table.

use crate::logic::qp_state::QpType;
use crate::logic::wr::{opcode::*, *};
use proptest::prelude::*;

fn send(opcode: u32, num_sge: u32, length: u64) -> SendCheck {
    SendCheck {
        opcode,
        send_flags: 0,
        num_sge,
        length,
        atomic_addr: 0,
    }
}

#[test]
fn opcode_table_matches_rxe() {
    use QpType::*;
    let rc_only = [
        RDMA_READ,
        RDMA_READ_WITH_INV,
        ATOMIC_CMP_AND_SWP,
        ATOMIC_FETCH_AND_ADD,
        LOCAL_INV,
        REG_MR,
        FLUSH,
        ATOMIC_WRITE,
    ];
    for op in rc_only {
        assert!(classify(op, Rc).is_some(), "{op}");
        for t in [Uc, Ud, Gsi] {
            assert_eq!(classify(op, t), None, "{op} on {t:?}");
        }
    }
    for op in [RDMA_WRITE, RDMA_WRITE_WITH_IMM] {
        assert_eq!(classify(op, Uc), Some(WrClass::Write));
        assert_eq!(classify(op, Ud), None);
    }
    for t in [Rc, Uc, Ud, Gsi] {
        assert_eq!(classify(SEND, t), Some(WrClass::Send));
        assert_eq!(classify(SEND_WITH_IMM, t), Some(WrClass::Send));
    }
    assert_eq!(classify(SEND_WITH_INV, Gsi), None);
    assert_eq!(classify(SEND_WITH_INV, Ud), Some(WrClass::Send));
    assert_eq!(classify(BIND_MW, Uc), Some(WrClass::LocalOp));
    assert_eq!(classify(LSO, Rc), None);
    for t in QpType::ALL {
        if !matches!(t, Rc | Uc | Ud | Gsi) {
            assert_eq!(classify(SEND, t), None);
        }
    }
}

#[test]
fn send_checks() {
    let t = QpType::Rc;
    assert_eq!(check_send(&send(SEND, 2, 100), t, 2, 64), Ok(WrClass::Send));
    assert_eq!(
        check_send(&send(SEND, 3, 100), t, 2, 64),
        Err(WrError::TooManySges)
    );
    assert_eq!(
        check_send(&send(SEND, 1, MAX_MSG_SIZE + 1), t, 2, 64),
        Err(WrError::TooLong)
    );
    let mut a = send(ATOMIC_FETCH_AND_ADD, 1, 8);
    assert_eq!(check_send(&a, t, 2, 64), Ok(WrClass::Atomic));
    a.atomic_addr = 4;
    assert_eq!(check_send(&a, t, 2, 64), Err(WrError::BadAtomic));
    a.atomic_addr = 8;
    a.length = 16;
    assert_eq!(check_send(&a, t, 2, 64), Err(WrError::BadAtomic));
    let mut i = send(RDMA_WRITE, 1, 64);
    i.send_flags = SEND_INLINE;
    assert_eq!(check_send(&i, t, 2, 64), Ok(WrClass::Write));
    i.length = 65;
    assert_eq!(check_send(&i, t, 2, 64), Err(WrError::BadInline));
    i.opcode = RDMA_READ;
    i.length = 8;
    assert_eq!(check_send(&i, t, 2, 64), Err(WrError::BadInline));
    assert_eq!(
        check_send(&send(99, 0, 0), t, 2, 64),
        Err(WrError::BadOpcode(99))
    );
}

#[test]
fn recv_checks() {
    assert_eq!(check_recv(1, 10, 1), Ok(()));
    assert_eq!(check_recv(2, 10, 1), Err(WrError::TooManySges));
    assert_eq!(check_recv(1, MAX_MSG_SIZE + 1, 4), Err(WrError::TooLong));
}

proptest! {
    /// Whatever a process writes, a request the checks accept respects
    /// every limit.
    #[test]
    fn accepted_requests_respect_limits(
        opcode in 0u32..64, flags in any::<u32>(), num_sge in any::<u32>(),
        length in any::<u64>(), addr in any::<u64>(), max_sge in 0u32..64, max_inline in 0u32..1024,
        ty in proptest::sample::select(QpType::ALL.to_vec()),
    ) {
        let wr = SendCheck { opcode, send_flags: flags, num_sge, length, atomic_addr: addr };
        if let Ok(class) = check_send(&wr, ty, max_sge, max_inline) {
            prop_assert!(num_sge <= max_sge);
            prop_assert!(length <= MAX_MSG_SIZE);
            prop_assert_eq!(Some(class), classify(opcode, ty));
            if flags & SEND_INLINE != 0 {
                prop_assert!(length <= u64::from(max_inline));
            }
            if class == WrClass::Atomic {
                prop_assert!(length == 8 && addr % 8 == 0);
            }
        }
    }
}
