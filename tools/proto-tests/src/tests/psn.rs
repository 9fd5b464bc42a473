// SPDX-License-Identifier: GPL-2.0

//! PSN arithmetic and wrap-around ordering.

use core::cmp::Ordering;

use proptest::prelude::*;

use super::{arb_psn, u24};
use crate::proto::psn::{psn_compare, Psn, PSN_MASK};

/// Reference model of the IBA ordering, in wide arithmetic: the forward
/// distance from `b` to `a` decides; under half the space means "after".
fn model_order(a: u32, b: u32) -> Ordering {
    let d = (i64::from(a) - i64::from(b)).rem_euclid(1 << 24);
    if d == 0 {
        Ordering::Equal
    } else if d < (1 << 23) {
        Ordering::Greater
    } else {
        Ordering::Less
    }
}

#[test]
fn known_answers() {
    assert_eq!(psn_compare(5, 5), 0);
    assert!(psn_compare(6, 5) > 0);
    assert!(psn_compare(5, 6) < 0);
    // Zero comes right after the largest PSN.
    assert!(psn_compare(0, 0xff_ffff) > 0);
    assert!(psn_compare(0xff_ffff, 0) < 0);
    // The exact value, as C rxe computes it: (a - b) << 8 as s32.
    assert_eq!(psn_compare(0, 0xff_ffff), 1 << 8);
    assert_eq!(psn_compare(0xff_ffff, 0), -(1 << 8));
    // Exactly half the space apart compares as "before" both ways.
    assert_eq!(psn_compare(0x80_0000, 0), i32::MIN);
    assert_eq!(psn_compare(0, 0x80_0000), i32::MIN);
    // Bits above 24 are ignored.
    assert_eq!(psn_compare(0x0100_0005, 0xff00_0004), psn_compare(5, 4));
}

#[test]
fn construction_and_wrap() {
    assert_eq!(Psn::new(0x1ff_ffff), Psn::MAX);
    assert_eq!(Psn::try_new(0x100_0000), None);
    assert_eq!(Psn::try_new(0xff_ffff), Some(Psn::MAX));
    assert_eq!(Psn::MAX.next(), Psn::ZERO);
    assert_eq!(Psn::ZERO.prev(), Psn::MAX);
    assert_eq!(Psn::new(0xff_fffe).add(5).get(), 3);
    assert_eq!(Psn::new(3).sub(5).get(), 0xff_fffe);
    assert_eq!(Psn::MAX.distance(Psn::ZERO), 1);
    assert_eq!(Psn::ZERO.distance(Psn::MAX), PSN_MASK);
    assert_eq!(Psn::ZERO.signed_diff(Psn::MAX), 1);
    assert_eq!(Psn::MAX.signed_diff(Psn::ZERO), -1);
    assert_eq!(u32::from(Psn::new(42)), 42);
    assert!(Psn::ZERO.is_after(Psn::MAX));
    assert_eq!(Psn::ZERO.wrapping_cmp(Psn::MAX), Ordering::Greater);
}

#[test]
fn window_across_wrap() {
    let start = Psn::new(0xff_fffe);
    assert!(start.in_window(start, 4));
    assert!(Psn::MAX.in_window(start, 4));
    assert!(Psn::ZERO.in_window(start, 4));
    assert!(Psn::new(1).in_window(start, 4));
    assert!(!Psn::new(2).in_window(start, 4));
    assert!(!Psn::new(0xff_fffd).in_window(start, 4));
    assert!(!start.in_window(start, 0));
    assert!(Psn::new(12345).in_window(start, 1 << 24));
}

proptest! {
    #[test]
    fn compare_matches_model(a in any::<u32>(), b in any::<u32>()) {
        let got = psn_compare(a, b).cmp(&0);
        prop_assert_eq!(got, model_order(a & PSN_MASK, b & PSN_MASK));
        prop_assert_eq!(Psn::new(a).wrapping_cmp(Psn::new(b)), got);
    }

    #[test]
    fn forward_steps_are_after(a in arb_psn(), d in 1u32..(1 << 23)) {
        let later = a.add(d);
        prop_assert!(later.is_after(a));
        prop_assert!(a.is_before(later));
        prop_assert!(a.sub(d).is_before(a));
        prop_assert_eq!(a.distance(later), d);
        prop_assert_eq!(later.sub(d), a);
        prop_assert_eq!(later.signed_diff(a), i32::try_from(d).unwrap());
        prop_assert_eq!(a.signed_diff(later), -i32::try_from(d).unwrap());
        // Antisymmetry holds everywhere except exactly half the space apart.
        prop_assert_eq!(later.compare(a).signum(), -a.compare(later).signum());
    }

    #[test]
    fn add_is_modular(a in arb_psn(), n in any::<u32>()) {
        let b = a.add(n);
        prop_assert!(b.get() <= PSN_MASK);
        prop_assert_eq!(u64::from(b.get()), (u64::from(a.get()) + u64::from(n)) % (1 << 24));
        prop_assert_eq!(a.next().prev(), a);
        prop_assert_eq!(a.prev().next(), a);
        prop_assert_eq!(a.distance(b), n & PSN_MASK);
    }

    #[test]
    fn window_membership(start in arb_psn(), k in u24(), len in 0u32..(1 << 24)) {
        prop_assert_eq!(start.add(k).in_window(start, len), k < len);
    }

    #[test]
    fn high_bits_ignored(a in u24(), b in u24(), x in any::<u8>(), y in any::<u8>()) {
        let hi = |v: u32, h: u8| v | (u32::from(h) << 24);
        prop_assert_eq!(psn_compare(hi(a, x), hi(b, y)), psn_compare(a, b));
    }
}
