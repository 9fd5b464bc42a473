// SPDX-License-Identifier: GPL-2.0

//! The per-QP bound on socket buffers in the IP stack.

use proptest::prelude::*;

use crate::logic::flow::{
    skbs_may_resume, skbs_must_pause, RetryBudget, INFLIGHT_SKBS_HIGH, INFLIGHT_SKBS_LOW,
};

#[test]
fn marks_are_c_rxe_s() {
    assert_eq!(INFLIGHT_SKBS_HIGH, 64);
    assert_eq!(INFLIGHT_SKBS_LOW, 16);
}

#[test]
fn pauses_only_above_the_high_mark() {
    assert!(!skbs_must_pause(0));
    assert!(!skbs_must_pause(INFLIGHT_SKBS_HIGH));
    assert!(skbs_must_pause(INFLIGHT_SKBS_HIGH + 1));
    assert!(skbs_must_pause(u32::MAX));
}

#[test]
fn resumes_only_below_the_low_mark() {
    assert!(skbs_may_resume(0));
    assert!(skbs_may_resume(INFLIGHT_SKBS_LOW - 1));
    assert!(!skbs_may_resume(INFLIGHT_SKBS_LOW));
    assert!(!skbs_may_resume(INFLIGHT_SKBS_HIGH + 1));
}

/// A requester paused at the high mark and the destructors that free its
/// buffers one by one, as `SkbAccount` runs them: the requester is woken
/// exactly once, and only after the count fell below the low mark.
fn wakeups(start: u32) -> (u32, Option<u32>) {
    let mut in_flight = start;
    let mut paused = skbs_must_pause(in_flight) && !skbs_may_resume(in_flight);
    let mut wakes = 0;
    let mut woke_at = None;
    while in_flight > 0 {
        in_flight -= 1;
        if skbs_may_resume(in_flight) && paused {
            paused = false;
            wakes += 1;
            woke_at.get_or_insert(in_flight);
        }
    }
    (wakes, woke_at)
}

/// How many retries a budget of `count` grants, up to `cap` asked for.
fn retries_granted(count: u8, cap: u32) -> u32 {
    let mut b = RetryBudget::new(count);
    (0..cap).take_while(|_| b.spend()).count() as u32
}

#[test]
fn a_budget_of_zero_grants_nothing() {
    let mut b = RetryBudget::new(0);
    assert!(!b.spend());
    assert!(!b.spend());
    assert_eq!(b, RetryBudget::new(0));
}

#[test]
fn seven_retries_forever() {
    assert_eq!(RetryBudget::FOREVER, 7);
    assert_eq!(retries_granted(RetryBudget::FOREVER, 10_000), 10_000);
}

proptest! {
    /// Any count below 7 grants exactly that many retries, then none.
    #[test]
    fn a_budget_grants_its_count(count in 0u8..7) {
        prop_assert_eq!(retries_granted(count, 100), u32::from(count));
    }
}

proptest! {
    /// Nothing is both a reason to pause and to resume (a paused requester
    /// always has buffers whose destructors will wake it).
    #[test]
    fn pause_and_resume_exclude(n in any::<u32>()) {
        prop_assert!(!(skbs_must_pause(n) && skbs_may_resume(n)));
        if skbs_must_pause(n) {
            prop_assert!(n > 0);
        }
    }

    #[test]
    fn a_paused_requester_is_woken_once(start in 0u32..1000) {
        let (wakes, at) = wakeups(start);
        if skbs_must_pause(start) {
            prop_assert_eq!(wakes, 1);
            prop_assert_eq!(at, Some(INFLIGHT_SKBS_LOW - 1));
        } else {
            prop_assert_eq!(wakes, 0);
        }
    }
}
