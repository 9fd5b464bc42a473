// SPDX-License-Identifier: GPL-2.0

//! The driver's fixed-capacity ring, against a `VecDeque` with a bound.

use proptest::prelude::*;
use std::collections::VecDeque;
use std::vec::Vec;

use crate::logic::ring::FixedRing;

fn ring(cap: usize) -> FixedRing<Vec<u32>> {
    FixedRing::new(std::vec![0; cap])
}

fn contents(r: &FixedRing<Vec<u32>>) -> Vec<u32> {
    r.iter().copied().collect()
}

#[test]
fn fills_refuses_then_drains_in_order() {
    let mut r = ring(3);
    assert!(r.is_empty() && !r.is_full());
    assert_eq!(r.capacity(), 3);
    assert_eq!(r.front(), None);
    assert_eq!(r.pop_front(), None);
    for v in [10, 11, 12] {
        assert_eq!(r.push_back(v), Ok(()));
    }
    assert!(r.is_full());
    // Full: the value comes back and nothing changes.
    assert_eq!(r.push_back(13), Err(13));
    assert_eq!(contents(&r), [10, 11, 12]);
    assert_eq!(r.pop_front(), Some(10));
    // Wraps round: the newest now sits in the first slot.
    assert_eq!(r.push_back(13), Ok(()));
    assert_eq!(r.as_slices(), (&[11, 12][..], &[13][..]));
    assert_eq!((r.get(0), r.get(2), r.get(3)), (Some(&11), Some(&13), None));
    if let Some(v) = r.get_mut(2) {
        *v = 23;
    }
    for v in r.iter_mut() {
        *v += 1;
    }
    assert_eq!(contents(&r), [12, 13, 24]);
    assert_eq!(r.pop_front(), Some(12));
    assert_eq!(r.pop_front(), Some(13));
    assert_eq!(r.pop_front(), Some(24));
    assert_eq!(r.pop_front(), None);
    assert_eq!(r.len(), 0);
}

#[test]
fn clear_empties_wherever_the_head_is() {
    let mut r = ring(2);
    assert_eq!(r.push_back(1), Ok(()));
    assert_eq!(r.pop_front(), Some(1));
    assert_eq!(r.push_back(2), Ok(()));
    r.clear();
    assert!(r.is_empty());
    assert_eq!(r.get(0), None);
    assert_eq!(r.push_back(3), Ok(()));
    assert_eq!(r.push_back(4), Ok(()));
    assert_eq!(contents(&r), [3, 4]);
}

#[test]
fn no_capacity_holds_nothing() {
    let mut r = ring(0);
    assert!(r.is_full() && r.is_empty());
    assert_eq!(r.push_back(1), Err(1));
    assert_eq!(r.push_back_evicting(1, 4), 0);
    assert_eq!(r.pop_front(), None);
    assert_eq!(r.get_mut(0), None);
    assert_eq!(r.iter().count(), 0);
    assert_eq!(r.iter_mut().count(), 0);
}

#[test]
fn evicting_keeps_the_newest_under_a_changing_limit() {
    let mut r = ring(4);
    for v in 0..6 {
        r.push_back_evicting(v, 3);
    }
    assert_eq!(contents(&r), [3, 4, 5]);
    // A smaller limit drops the oldest down to it, a larger one lets the
    // ring grow again; the capacity bounds both (and 0 counts as 1).
    assert_eq!(r.push_back_evicting(6, 1), 3);
    assert_eq!(contents(&r), [6]);
    assert_eq!(r.push_back_evicting(7, 9), 0);
    assert_eq!(r.push_back_evicting(8, 9), 0);
    assert_eq!(r.push_back_evicting(9, 9), 0);
    assert_eq!(r.push_back_evicting(10, 9), 1);
    assert_eq!(contents(&r), [7, 8, 9, 10]);
    assert_eq!(r.push_back_evicting(11, 0), 4);
    assert_eq!(contents(&r), [11]);
}

#[test]
fn borrowed_storage_works_too() {
    let mut slots = [0u8; 2];
    let mut r = FixedRing::new(&mut slots[..]);
    assert_eq!(r.push_back(1), Ok(()));
    assert_eq!(r.push_back(2), Ok(()));
    assert_eq!(r.push_back(3), Err(3));
    assert_eq!(r.pop_front(), Some(1));
}

#[derive(Clone, Debug)]
enum Op {
    Push(u32),
    PushEvicting(u32, usize),
    Pop,
    Set(usize, u32),
    AddToAll(u32),
    Clear,
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u32>().prop_map(Op::Push),
        2 => (any::<u32>(), 0usize..12).prop_map(|(v, l)| Op::PushEvicting(v, l)),
        3 => Just(Op::Pop),
        1 => (0usize..12, any::<u32>()).prop_map(|(i, v)| Op::Set(i, v)),
        1 => any::<u32>().prop_map(Op::AddToAll),
        1 => Just(Op::Clear),
    ]
}

proptest! {
    #[test]
    fn matches_a_bounded_vecdeque(
        cap in 0usize..10,
        ops in proptest::collection::vec(arb_op(), 0..200),
    ) {
        let mut r = ring(cap);
        let mut model: VecDeque<u32> = VecDeque::new();
        for op in ops {
            match op {
                Op::Push(v) => {
                    let got = r.push_back(v);
                    if model.len() < cap {
                        model.push_back(v);
                        prop_assert_eq!(got, Ok(()));
                    } else {
                        prop_assert_eq!(got, Err(v));
                    }
                }
                Op::PushEvicting(v, limit) => {
                    let limit = limit.clamp(1, cap.max(1));
                    let mut dropped = 0;
                    while model.len() >= limit {
                        model.pop_front();
                        dropped += 1;
                    }
                    if cap > 0 {
                        model.push_back(v);
                    }
                    prop_assert_eq!(r.push_back_evicting(v, limit), dropped);
                }
                Op::Pop => prop_assert_eq!(r.pop_front(), model.pop_front()),
                Op::Set(i, v) => {
                    match (r.get_mut(i), model.get_mut(i)) {
                        (Some(a), Some(b)) => {
                            *a = v;
                            *b = v;
                        }
                        (None, None) => {}
                        _ => prop_assert!(false, "get_mut({}) disagrees", i),
                    }
                }
                Op::AddToAll(d) => {
                    for v in r.iter_mut() {
                        *v = v.wrapping_add(d);
                    }
                    for v in model.iter_mut() {
                        *v = v.wrapping_add(d);
                    }
                }
                Op::Clear => {
                    r.clear();
                    model.clear();
                }
            }
            prop_assert_eq!(r.len(), model.len());
            prop_assert_eq!(r.is_empty(), model.is_empty());
            prop_assert_eq!(r.is_full(), model.len() == cap);
            prop_assert_eq!(r.capacity(), cap);
            prop_assert_eq!(r.front(), model.front());
            prop_assert_eq!(contents(&r), model.iter().copied().collect::<Vec<_>>());
            let (a, b) = r.as_slices();
            prop_assert!(a.len() + b.len() == model.len());
            // Only wrapped elements are in the second slice.
            prop_assert!(b.is_empty() || !a.is_empty());
            for i in 0..=cap {
                prop_assert_eq!(r.get(i), model.get(i));
            }
        }
    }
}
