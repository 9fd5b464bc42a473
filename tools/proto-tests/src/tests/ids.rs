// SPDX-License-Identifier: GPL-2.0

//! The two-level bitmap behind AH numbers, against a plain model.

use proptest::prelude::*;
use std::vec::Vec;

use crate::logic::ids::{leaf_words, summary_words, Ids, BITS};

/// rxe's `RXE_MAX_AH`: the AH table hands out 1..=32767, i.e. 32,767 ids.
const AHS: usize = (1 << 15) - 1;

fn words(count: usize) -> (Vec<u64>, Vec<u64>) {
    (
        std::vec![0; summary_words(count)],
        std::vec![0; leaf_words(count)],
    )
}

#[test]
fn sizes_for_rxe_ah_numbers() {
    assert_eq!(leaf_words(AHS), 512);
    assert_eq!(summary_words(AHS), 8);
    assert_eq!(leaf_words(64), 1);
    assert_eq!(leaf_words(65), 2);
    assert_eq!(summary_words(0), 0);
}

#[test]
fn fills_lowest_first_then_reuses_the_lowest_freed() {
    let (mut s, mut l) = words(AHS);
    let mut ids = Ids::new(&mut s, &mut l, AHS);
    for n in 0..AHS {
        assert_eq!(ids.take_lowest(), Some(n));
    }
    // Full: nothing, not even the bit past the range in the last word.
    assert_eq!(ids.lowest_free(), None);
    assert_eq!(ids.take_lowest(), None);
    assert!(!ids.take(AHS));
    ids.free(AHS - 1);
    ids.free(4000);
    ids.free(70);
    assert_eq!(ids.take_lowest(), Some(70));
    assert_eq!(ids.take_lowest(), Some(4000));
    assert_eq!(ids.take_lowest(), Some(AHS - 1));
    assert_eq!(ids.take_lowest(), None);
    // Taking twice fails, freeing twice is harmless.
    assert!(!ids.take(5));
    ids.free(5);
    ids.free(5);
    assert!(!ids.is_taken(5));
    assert!(ids.take(5));
    assert!(ids.is_taken(5));
}

#[test]
fn short_storage_shrinks_the_range() {
    let (mut s, mut l) = (std::vec![0u64; 1], std::vec![0u64; 2]);
    let mut ids = Ids::new(&mut s, &mut l, 1000);
    for n in 0..2 * BITS {
        assert_eq!(ids.take_lowest(), Some(n));
    }
    assert_eq!(ids.take_lowest(), None);
    let mut none: [u64; 0] = [];
    let mut none2: [u64; 0] = [];
    let mut empty = Ids::new(&mut none, &mut none2, 10);
    assert_eq!(empty.take_lowest(), None);
    assert!(!empty.take(0));
    empty.free(0);
}

#[derive(Clone, Debug)]
enum Op {
    TakeLowest,
    Take(usize),
    Free(usize),
}

fn arb_op(count: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::TakeLowest),
        1 => (0..count + 70).prop_map(Op::Take),
        2 => (0..count + 70).prop_map(Op::Free),
    ]
}

proptest! {
    #[test]
    fn matches_a_linear_scan(
        count in 1usize..5000,
        ops in proptest::collection::vec(arb_op(5000), 0..400),
        prefill in 0usize..5000,
    ) {
        let (mut s, mut l) = words(count);
        let mut ids = Ids::new(&mut s, &mut l, count);
        let mut model = std::vec![false; count];
        // Start from a dense prefix, as a long-running table has.
        for n in 0..prefill.min(count) {
            prop_assert!(ids.take(n));
            model[n] = true;
        }
        for op in ops {
            match op {
                Op::TakeLowest => {
                    let want = model.iter().position(|t| !t);
                    prop_assert_eq!(ids.take_lowest(), want);
                    if let Some(n) = want {
                        model[n] = true;
                    }
                }
                Op::Take(n) => {
                    let free = n < count && !model[n];
                    prop_assert_eq!(ids.take(n), free);
                    if free {
                        model[n] = true;
                    }
                }
                Op::Free(n) => {
                    ids.free(n);
                    if n < count {
                        model[n] = false;
                    }
                }
            }
            prop_assert_eq!(ids.lowest_free(), model.iter().position(|t| !t));
        }
        for (n, &t) in model.iter().enumerate() {
            prop_assert_eq!(ids.is_taken(n), t);
        }
    }
}
