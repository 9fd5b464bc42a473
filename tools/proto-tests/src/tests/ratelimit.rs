// SPDX-License-Identifier: GPL-2.0

//! The log rate limit: a burst per interval, the refused lines counted
//! into the next one allowed.

use proptest::prelude::*;

use crate::logic::ratelimit::RateLimit;

const SEC: u64 = 1_000_000_000;

#[test]
fn burst_then_refused_then_next_interval_says_how_many() {
    let r = RateLimit::new(5 * SEC, 3);
    assert_eq!(r.allow(100), Some(0));
    assert_eq!(r.allow(200), Some(0));
    assert_eq!(r.allow(300), Some(0));
    assert_eq!(r.allow(400), None);
    assert_eq!(r.allow(5 * SEC), None);
    assert_eq!(r.allow(5 * SEC + 100), Some(2));
    assert_eq!(r.allow(5 * SEC + 200), Some(0));
}

#[test]
fn a_clock_at_zero_still_starts_an_interval() {
    let r = RateLimit::new(SEC, 1);
    assert_eq!(r.allow(0), Some(0));
    assert_eq!(r.allow(1), None);
    assert_eq!(r.allow(SEC + 1), Some(1));
}

proptest! {
    /// Whatever the times (non-decreasing), no interval lets more than
    /// `burst` lines through, and every line is either allowed or counted
    /// in a later allowed one (or still pending at the end).
    #[test]
    fn never_more_than_burst_and_nothing_lost(
        burst in 1u32..5,
        steps in proptest::collection::vec(0u64..2 * SEC, 1..200),
    ) {
        let r = RateLimit::new(SEC, burst);
        let mut now = 1u64;
        let mut allowed = 0u64;
        let mut reported = 0u64;
        let mut refused = 0u64;
        let mut window: std::vec::Vec<u64> = std::vec::Vec::new();
        for s in steps {
            now += s;
            match r.allow(now) {
                Some(n) => {
                    allowed += 1;
                    reported += u64::from(n);
                    window.push(now);
                }
                None => refused += 1,
            }
            // Lines allowed within the last second: at most two
            // intervals' worth overlap any one-second window.
            let recent = window.iter().filter(|&&t| now - t < SEC).count() as u32;
            prop_assert!(recent <= 2 * burst);
        }
        prop_assert!(reported <= refused);
        prop_assert!(allowed >= 1);
    }
}
