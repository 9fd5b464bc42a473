// SPDX-License-Identifier: GPL-2.0

//! Tests of the memory window rules: binds and accesses through windows.

use crate::logic::mr::{MrError, LOCAL_WRITE, MW_BIND, REMOTE_ATOMIC, REMOTE_READ, REMOTE_WRITE};
use crate::logic::mw::*;
use proptest::prelude::*;

fn target(ty: MwType, state: MwState) -> BindTarget {
    BindTarget {
        ty,
        state,
        same_pd: true,
    }
}

fn region() -> BindRegion {
    BindRegion {
        same_pd: true,
        iova: 0x1000,
        length: 0x1000,
        access: LOCAL_WRITE | MW_BIND,
    }
}

fn req(addr: u64, length: u64, access: u32) -> BindRequest {
    BindRequest {
        addr,
        length,
        access,
    }
}

#[test]
fn mw_types_have_the_kernel_numbers() {
    // enum ib_mw_type (include/rdma/ib_verbs.h), as the core passes it to
    // alloc_mw; the driver's build checks the same against the header.
    for (ty, raw) in [(MwType::One, 1), (MwType::Two, 2)] {
        assert_eq!(ty.raw(), raw, "{ty:?}");
        assert_eq!(MwType::from_raw(raw), Some(ty), "{ty:?}");
    }
    for raw in [0, 3, u32::MAX] {
        assert_eq!(MwType::from_raw(raw), None, "{raw}");
    }
}

#[test]
fn bind_wr_asks_for_its_range_and_makes_that_window() {
    let wr = BindWr {
        addr: 0x1800,
        length: 0x10,
        mr_lkey: 0x101,
        mw_rkey: 0x202,
        rkey: 0x203,
        access: REMOTE_READ | ZERO_BASED,
    };
    let asked = wr.request();
    assert_eq!(asked, req(0x1800, 0x10, REMOTE_READ | ZERO_BASED));
    assert_eq!(
        asked.window(),
        Window {
            addr: 0x1800,
            length: 0x10,
            access: REMOTE_READ | ZERO_BASED,
        }
    );
}

#[test]
fn type1_binds_and_unbinds_while_valid() {
    let t1 = target(MwType::One, MwState::Valid);
    assert_eq!(
        check_bind(t1, Some(region()), req(0x1000, 0x1000, REMOTE_WRITE)),
        Ok(())
    );
    // Length zero: no region, an unbind.
    assert_eq!(check_bind(t1, None, req(0, 0, 0)), Ok(()));
    // Rebinding a bound type 1 window is allowed (it stays valid).
    assert_eq!(
        check_bind(t1, Some(region()), req(0x1800, 0x10, REMOTE_READ)),
        Ok(())
    );
    assert_eq!(
        check_bind(
            target(MwType::One, MwState::Invalid),
            Some(region()),
            req(0x1000, 8, 0)
        ),
        Err(BindError::WrongState)
    );
    assert_eq!(
        check_bind(t1, Some(region()), req(0, 8, ZERO_BASED)),
        Err(BindError::ZeroBasedType1)
    );
}

#[test]
fn type2_binds_only_when_free_and_to_a_region() {
    let free = target(MwType::Two, MwState::Free);
    assert_eq!(
        check_bind(free, Some(region()), req(0x1000, 8, REMOTE_READ)),
        Ok(())
    );
    assert_eq!(
        check_bind(
            target(MwType::Two, MwState::Valid),
            Some(region()),
            req(0x1000, 8, 0)
        ),
        Err(BindError::WrongState)
    );
    assert_eq!(
        check_bind(free, None, req(0, 0, 0)),
        Err(BindError::NoRegion)
    );
    assert_eq!(
        check_bind(free, Some(region()), req(0x1000, 0, 0)),
        Err(BindError::NoRegion)
    );
    // Zero-based type 2 windows are allowed; their length must fit.
    assert_eq!(
        check_bind(free, Some(region()), req(0, 0x1000, ZERO_BASED)),
        Ok(())
    );
    assert_eq!(
        check_bind(free, Some(region()), req(0, 0x1001, ZERO_BASED)),
        Err(BindError::OutOfRange)
    );
}

#[test]
fn pd_rights_and_range() {
    let t1 = target(MwType::One, MwState::Valid);
    let other_pd = BindTarget {
        same_pd: false,
        ..t1
    };
    assert_eq!(
        check_bind(other_pd, None, req(0, 0, 0)),
        Err(BindError::WindowPd)
    );
    let foreign = BindRegion {
        same_pd: false,
        ..region()
    };
    assert_eq!(
        check_bind(t1, Some(foreign), req(0x1000, 8, 0)),
        Err(BindError::RegionPd)
    );
    let no_bind = BindRegion {
        access: LOCAL_WRITE,
        ..region()
    };
    assert_eq!(
        check_bind(t1, Some(no_bind), req(0x1000, 8, 0)),
        Err(BindError::NoBindAccess)
    );
    let read_only = BindRegion {
        access: MW_BIND,
        ..region()
    };
    assert_eq!(
        check_bind(t1, Some(read_only), req(0x1000, 8, REMOTE_READ)),
        Ok(())
    );
    for w in [REMOTE_WRITE, REMOTE_ATOMIC] {
        assert_eq!(
            check_bind(t1, Some(read_only), req(0x1000, 8, w)),
            Err(BindError::WritableWithoutLocalWrite)
        );
    }
    for (addr, len) in [(0xfff, 8), (0x1ff9, 8), (0x1000, 0x1001), (u64::MAX, 2)] {
        assert_eq!(
            check_bind(t1, Some(region()), req(addr, len, 0)),
            Err(BindError::OutOfRange),
            "{addr:#x}+{len:#x}"
        );
    }
    assert_eq!(
        check_bind(t1, Some(region()), req(0x1000, 8, 1 << 30)),
        Err(BindError::Unsupported(1 << 30))
    );
}

#[test]
fn translate_through_windows() {
    let w = Window {
        addr: 0x1100,
        length: 0x100,
        access: REMOTE_WRITE,
    };
    assert_eq!(w.translate(0x1100, 0x100, REMOTE_WRITE), Ok(0x1100));
    assert_eq!(w.translate(0x1200, 0, REMOTE_WRITE), Ok(0x1200));
    assert_eq!(
        w.translate(0x10ff, 2, REMOTE_WRITE),
        Err(MrError::OutOfBounds)
    );
    assert_eq!(
        w.translate(0x11ff, 2, REMOTE_WRITE),
        Err(MrError::OutOfBounds)
    );
    assert_eq!(
        w.translate(0x1100, 8, REMOTE_READ),
        Err(MrError::NotPermitted(REMOTE_READ))
    );
    let zb = Window {
        access: REMOTE_READ | ZERO_BASED,
        ..w
    };
    assert_eq!(zb.translate(0, 0x100, REMOTE_READ), Ok(0x1100));
    assert_eq!(zb.translate(0x80, 8, REMOTE_READ), Ok(0x1180));
    assert_eq!(
        zb.translate(0xf9, 8, REMOTE_READ),
        Err(MrError::OutOfBounds)
    );
    let unbound = Window { length: 0, ..w };
    assert_eq!(
        unbound.translate(0x1100, 0, REMOTE_WRITE),
        Err(MrError::OutOfBounds)
    );
}

proptest! {
    /// Whatever a WQE says, an accepted bind lies inside its region, and
    /// every access a window lets through lies inside the window.
    #[test]
    fn accepted_binds_and_accesses_stay_inside(
        addr in any::<u64>(), length in any::<u64>(), access in any::<u32>(),
        iova in any::<u64>(), mr_len in any::<u64>(),
        va in any::<u64>(), len in any::<u64>(),
    ) {
        let mr = BindRegion { same_pd: true, iova, length: mr_len, access: LOCAL_WRITE | MW_BIND };
        let t = target(MwType::Two, MwState::Free);
        if check_bind(t, Some(mr), req(addr, length, access)).is_ok() {
            if access & ZERO_BASED == 0 {
                prop_assert!(addr >= iova);
                prop_assert!(addr.checked_add(length).unwrap() <= iova.checked_add(mr_len).unwrap());
            } else {
                prop_assert!(length <= mr_len);
            }
        }
        let w = Window { addr, length, access };
        if let Ok(at) = w.translate(va, len, 0) {
            prop_assert!(length > 0);
            prop_assert!(at >= addr);
            let end = at.checked_add(len).unwrap();
            if access & ZERO_BASED == 0 {
                prop_assert!(end <= addr.checked_add(length).unwrap());
            } else {
                prop_assert!(end - addr <= length);
            }
        }
    }
}
