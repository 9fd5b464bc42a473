// SPDX-License-Identifier: GPL-2.0

//! Tests of the on-demand paging arithmetic and fault rules.

use crate::logic::odp::*;
use proptest::prelude::*;

const SHIFT: u32 = 12;
const PAGE: u64 = 1 << SHIFT;

#[test]
fn implicit_registration() {
    assert!(is_implicit(0, u64::MAX));
    assert!(!is_implicit(0, u64::MAX - 1));
    assert!(!is_implicit(PAGE, u64::MAX));
}

#[test]
fn pages_of_an_access() {
    // A region starting 100 bytes into page 0 of a 3-page table.
    assert_eq!(pages_of(100, SHIFT, 3, 0, 1), Some(0..1));
    assert_eq!(pages_of(100, SHIFT, 3, 0, PAGE - 100), Some(0..1));
    assert_eq!(pages_of(100, SHIFT, 3, 0, PAGE - 99), Some(0..2));
    assert_eq!(pages_of(100, SHIFT, 3, PAGE - 100, 1), Some(1..2));
    // The last byte of the table, then one past it.
    assert_eq!(pages_of(100, SHIFT, 3, 3 * PAGE - 101, 1), Some(2..3));
    assert_eq!(pages_of(100, SHIFT, 3, 3 * PAGE - 100, 1), None);
    // Empty accesses touch no page, anywhere up to the end.
    assert_eq!(pages_of(100, SHIFT, 3, 5, 0), Some(0..0));
    assert_eq!(pages_of(100, SHIFT, 3, 3 * PAGE - 100, 0), Some(3..3));
    assert_eq!(pages_of(0, SHIFT, 3, 4 * PAGE, 0), None);
    // Overflow anywhere is refused, not wrapped.
    assert_eq!(pages_of(100, SHIFT, usize::MAX, u64::MAX - 50, 1), None);
    assert_eq!(pages_of(0, SHIFT, usize::MAX, u64::MAX - PAGE, PAGE), None);
    assert_eq!(pages_of(0, 64, 3, 0, 1), None);
}

#[test]
fn faults_read_ahead_within_the_region() {
    let len = 1 << 20;
    assert_eq!(fault_span(len, 0, 1), (0, FAULT_AHEAD));
    assert_eq!(
        fault_span(len, 100, 2 * FAULT_AHEAD),
        (100, 2 * FAULT_AHEAD)
    );
    assert_eq!(fault_span(len, len - 10, 10), (len - 10, 10));
    assert_eq!(fault_span(len, len + 10, 10), (len, 0));
    assert_eq!(fault_span(u64::MAX, u64::MAX - 1, 1), (u64::MAX - 1, 1));
}

#[test]
fn implicit_accesses_split_at_child_boundaries() {
    let parts = |a, l| child_parts(a, l).map(|p| p.collect::<std::vec::Vec<_>>());
    let part = |index, offset, len, done| ChildPart {
        index,
        offset,
        len,
        done,
    };
    // Inside one child.
    assert_eq!(parts(0x1000, 10), Some(std::vec![part(0, 0x1000, 10, 0)]));
    assert_eq!(
        parts(5 * CHILD_SIZE, CHILD_SIZE),
        Some(std::vec![part(5, 0, CHILD_SIZE, 0)])
    );
    // Across a boundary: two parts, the second from the child's start.
    assert_eq!(
        parts(CHILD_SIZE - 3, 10),
        Some(std::vec![part(0, CHILD_SIZE - 3, 3, 0), part(1, 0, 7, 3)])
    );
    // Across two boundaries.
    assert_eq!(
        parts(3 * CHILD_SIZE - 1, CHILD_SIZE + 2),
        Some(std::vec![
            part(2, CHILD_SIZE - 1, 1, 0),
            part(3, 0, CHILD_SIZE, 1),
            part(4, 0, 1, CHILD_SIZE + 1)
        ])
    );
    // The last byte below the top, an empty access, a wrapping one.
    let top = u64::MAX >> CHILD_SHIFT;
    assert_eq!(
        parts(u64::MAX - 1, 1),
        Some(std::vec![part(top, CHILD_SIZE - 2, 1, 0)])
    );
    assert_eq!(parts(7, 0), Some(std::vec![]));
    assert_eq!(parts(u64::MAX, 1), None);
    assert!(child_parts(u64::MAX - 1, 2).is_none());
    assert!(child_parts(u64::MAX, u64::MAX).is_none());
    assert_eq!(child_start(3), Some(3 * CHILD_SIZE));
    assert_eq!(child_start(top), Some(top << CHILD_SHIFT));
    assert_eq!(child_start(top + 1), None);
}

/// A fault request for the tests: a region number and a byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Req(u32, u64, u64);

impl Covers for Req {
    fn covers(&self, o: &Self) -> bool {
        self.0 == o.0 && self.1 <= o.1 && o.2 <= self.2
    }
}

#[test]
fn one_fault_at_a_time() {
    let mut s = FaultSlot::new();
    assert!(s.is_idle());
    assert_eq!(s.missed(Req(1, 0, 10)), Missed::Wait { queue: true });
    // Asked already: later misses wait for it without queueing again.
    assert_eq!(s.missed(Req(2, 0, 10)), Missed::Wait { queue: false });
    assert!(!s.is_idle());
    assert_eq!(s.start(), Some(Req(1, 0, 10)));
    assert_eq!(s.start(), None);
    assert_eq!(s.missed(Req(1, 0, 10)), Missed::Wait { queue: false });
    assert_eq!(s.finish(Req(1, 0, 10), true), Some(Req(1, 0, 10)));
    assert!(s.is_idle());
    assert_eq!(s.missed(Req(2, 0, 10)), Missed::Wait { queue: true });
}

#[test]
fn a_failed_fault_fails_its_access_once() {
    let mut s = FaultSlot::new();
    assert_eq!(s.missed(Req(1, 0, 100)), Missed::Wait { queue: true });
    let r = s.start().unwrap();
    assert_eq!(s.finish(r, false), None);
    assert!(s.is_idle());
    // Another region or a range outside the failed one asks again...
    assert_eq!(s.missed(Req(1, 50, 200)), Missed::Wait { queue: true });
    let r = s.start().unwrap();
    // The older failure went when the new fault was asked for.
    assert_eq!(s.finish(r, false), None);
    // ...an access it covers fails, once.
    assert_eq!(s.missed(Req(1, 60, 70)), Missed::Failed);
    assert_eq!(s.missed(Req(1, 60, 70)), Missed::Wait { queue: true });
    // A reset forgets a failure.
    let r = s.start().unwrap();
    let _ = s.finish(r, false);
    s.clear();
    assert_eq!(s.missed(Req(1, 60, 70)), Missed::Wait { queue: true });
}

#[test]
fn a_fault_running_across_a_reset_fails_nothing_after_it() {
    let mut s = FaultSlot::new();
    assert_eq!(s.missed(Req(1, 0, 100)), Missed::Wait { queue: true });
    let r = s.start().unwrap();
    // The QP is reset while the fault runs: the slot stays busy...
    s.clear();
    assert!(!s.is_idle());
    assert_eq!(s.missed(Req(1, 0, 100)), Missed::Wait { queue: false });
    // ...and the fault's failure, which concerned the old connection, is
    // not remembered: the next access asks again instead of failing.
    assert_eq!(s.finish(r, false), Some(Req(1, 0, 100)));
    assert!(s.is_idle());
    assert_eq!(s.missed(Req(1, 0, 100)), Missed::Wait { queue: true });
    // A fault started after the reset fails its access as always.
    let r = s.start().unwrap();
    assert_eq!(s.finish(r, false), None);
    assert_eq!(s.missed(Req(1, 10, 20)), Missed::Failed);
    // Two resets while one fault runs: still stale.
    assert_eq!(s.missed(Req(2, 0, 1)), Missed::Wait { queue: true });
    let r = s.start().unwrap();
    s.clear();
    s.clear();
    assert_eq!(s.finish(r, false), Some(Req(2, 0, 1)));
    assert_eq!(s.missed(Req(2, 0, 1)), Missed::Wait { queue: true });
}

proptest! {
    /// The pages of an access lie in the table and hold every byte of it.
    #[test]
    fn pages_hold_the_access(first in 0u64..PAGE, pages in 0usize..64, offset in 0u64..(70 * PAGE), len in 0u64..(10 * PAGE)) {
        if let Some(r) = pages_of(first, SHIFT, pages, offset, len) {
            prop_assert!(r.end <= pages);
            prop_assert!(r.start <= r.end);
            let start = first + offset;
            prop_assert_eq!(r.start as u64, start / PAGE);
            if len > 0 {
                prop_assert_eq!(r.end as u64, (start + len - 1) / PAGE + 1);
            }
        } else {
            prop_assert!(first + offset + len > pages as u64 * PAGE);
        }
    }

    /// A fault maps the access it was asked for, within the region.
    #[test]
    fn fault_covers_its_access((length, offset, len) in access_in_region()) {
        let (o, l) = fault_span(length, offset, len);
        prop_assert_eq!(o, offset);
        prop_assert!(l >= len);
        prop_assert!(o + l <= length);
    }
}

proptest! {
    /// The parts of an access cover it exactly, in order, each inside one
    /// child, and a child's part maps to pages of that child's table.
    #[test]
    fn child_parts_tile_the_access(addr in any::<u64>(), len in 0u64..(3 * CHILD_SIZE)) {
        match child_parts(addr, len) {
            None => prop_assert!(addr.checked_add(len).is_none()),
            Some(parts) => {
                let mut next = addr;
                let mut done = 0;
                for p in parts {
                    prop_assert!(p.len >= 1);
                    prop_assert_eq!(p.done, done);
                    prop_assert_eq!(child_start(p.index).map(|s| s + p.offset), Some(next));
                    prop_assert!(p.offset + p.len <= CHILD_SIZE);
                    let pages = (CHILD_SIZE >> SHIFT) as usize;
                    prop_assert!(pages_of(0, SHIFT, pages, p.offset, p.len).is_some());
                    next += p.len;
                    done += p.len;
                }
                prop_assert_eq!(done, len);
            }
        }
    }
}

/// A region length and an access inside it.
fn access_in_region() -> impl Strategy<Value = (u64, u64, u64)> {
    any::<u64>()
        .prop_flat_map(|length| (Just(length), 0..=length))
        .prop_flat_map(|(length, offset)| (Just(length), Just(offset), 0..=length - offset))
}
