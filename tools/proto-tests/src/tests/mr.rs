// SPDX-License-Identifier: GPL-2.0

//! Tests of the MR access rules.

use crate::logic::mr::*;
use proptest::prelude::*;

#[test]
fn registration_flags() {
    assert_eq!(check_reg_access(0), Ok(()));
    assert_eq!(
        check_reg_access(LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ),
        Ok(())
    );
    assert_eq!(check_reg_access(REMOTE_READ), Ok(()));
    assert_eq!(
        check_reg_access(REMOTE_WRITE),
        Err(MrError::RemoteWriteWithoutLocalWrite)
    );
    assert_eq!(
        check_reg_access(REMOTE_ATOMIC),
        Err(MrError::RemoteWriteWithoutLocalWrite)
    );
    assert_eq!(
        check_reg_access(ON_DEMAND),
        Err(MrError::Unsupported(ON_DEMAND))
    );
    assert_eq!(
        check_reg_access(1 << 30),
        Err(MrError::Unsupported(1 << 30))
    );
    // Optional hints (relaxed ordering) are accepted and ignored.
    assert_eq!(check_reg_access(1 << 20), Ok(()));
}

#[test]
fn bounds() {
    let mr = MrRange {
        iova: 0x1000,
        length: 0x100,
        access: LOCAL_WRITE | REMOTE_READ,
    };
    assert_eq!(mr.check(0x1000, 0x100, 0), Ok(0));
    assert_eq!(mr.check(0x1080, 0x80, REMOTE_READ), Ok(0x80));
    assert_eq!(mr.check(0x1100, 0, 0), Ok(0x100));
    assert_eq!(mr.check(0x1080, 0x81, 0), Err(MrError::OutOfBounds));
    assert_eq!(mr.check(0xfff, 1, 0), Err(MrError::OutOfBounds));
    assert_eq!(mr.check(u64::MAX, 2, 0), Err(MrError::OutOfBounds));
    assert_eq!(
        mr.check(0x1000, 1, REMOTE_WRITE),
        Err(MrError::NotPermitted(REMOTE_WRITE))
    );
}

#[test]
fn whole_memory() {
    let dma = MrRange {
        iova: 0,
        length: u64::MAX,
        access: LOCAL_WRITE,
    };
    assert_eq!(dma.check(u64::MAX - 1, 1, LOCAL_WRITE), Ok(u64::MAX - 1));
    assert_eq!(dma.check(u64::MAX, 1, 0), Err(MrError::OutOfBounds));
}

proptest! {
    /// An accepted access always lies inside the region, whatever the inputs.
    #[test]
    fn accepted_means_inside(iova: u64, length: u64, va: u64, len: u64, access in 0u32..16, need in 0u32..16) {
        let mr = MrRange { iova, length, access };
        if let Ok(off) = mr.check(va, len, need) {
            prop_assert_eq!(need & !access, 0);
            prop_assert!(va >= iova);
            prop_assert_eq!(off, va - iova);
            prop_assert!(off.checked_add(len).is_some_and(|e| e <= length));
        }
    }
}
