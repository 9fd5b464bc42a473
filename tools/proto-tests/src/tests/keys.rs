// SPDX-License-Identifier: GPL-2.0

//! MR and MW key layout, ranges and variant reuse.

use proptest::prelude::*;
use std::vec::Vec;

use crate::logic::keys::{
    bind_mw_key, fast_reg_key, fresh_variant, Key, KeyError, KeyKind, MAX_INDEX, MAX_MR_INDEX,
    MAX_MW_INDEX, MIN_MR_INDEX, MIN_MW_INDEX,
};

/// The kernel's `ib_inc_rkey`, transcribed.
fn ib_inc_rkey(rkey: u32) -> u32 {
    ((rkey.wrapping_add(1)) & 0xff) | (rkey & !0xff)
}

#[test]
fn ranges_match_rxe_param() {
    // RXE_MIN_MR_INDEX 1, RXE_MAX_MR_INDEX (1 << 20) >> 1, MWs right after
    // up to 1 << 20.
    assert_eq!(MIN_MR_INDEX, 0x0000_0001);
    assert_eq!(MAX_MR_INDEX, 0x0008_0000);
    assert_eq!(MIN_MW_INDEX, 0x0008_0001);
    assert_eq!(MAX_MW_INDEX, 0x0010_0000);
    assert_eq!(KeyKind::of_index(0), None);
    assert_eq!(KeyKind::of_index(1), Some(KeyKind::Mr));
    assert_eq!(KeyKind::of_index(0x8_0000), Some(KeyKind::Mr));
    assert_eq!(KeyKind::of_index(0x8_0001), Some(KeyKind::Mw));
    assert_eq!(KeyKind::of_index(0x10_0000), Some(KeyKind::Mw));
    assert_eq!(KeyKind::of_index(0x10_0001), None);
    assert_eq!(KeyKind::Mr.min_index(), MIN_MR_INDEX);
    assert_eq!(KeyKind::Mw.max_index(), MAX_MW_INDEX);
}

#[test]
fn spans_are_multiples_of_256() {
    // Both index ranges hold 2^19 indices. A round-robin allocation count
    // therefore cannot serve as the variant: an index comes round after
    // exactly 2^19 allocations (when nothing else is live), with the same
    // low byte, so every index would always get the same key back.
    for kind in [KeyKind::Mr, KeyKind::Mw] {
        let span = kind.max_index() - kind.min_index() + 1;
        assert_eq!(span, 1 << 19);
        assert_eq!(span % 256, 0);
    }
}

#[test]
fn fresh_variant_skips_exactly_the_previous_one() {
    // For each previous variant, the 255 residues of the random number map
    // one to one onto the other 255 bytes.
    for previous in 0..=255u8 {
        let mut seen = [0u32; 256];
        for r in 0..255u32 {
            seen[usize::from(fresh_variant(previous, r))] += 1;
        }
        for (v, &count) in seen.iter().enumerate() {
            assert_eq!(
                count,
                u32::from(v != usize::from(previous)),
                "{previous} {v}"
            );
        }
        assert_eq!(
            fresh_variant(previous, u32::MAX),
            fresh_variant(previous, u32::MAX % 255)
        );
    }
}

/// xorshift64*: a seeded stand-in for the kernel's `get_random_u32`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }
}

/// The driver's allocation rule (`key_table.rs`) over a small index range:
/// indices round-robin, each new key `fresh_variant` of the variant that
/// index last had, remembered per index.
struct Allocator {
    last: Vec<u8>,
    next: usize,
    rng: Rng,
}

impl Allocator {
    fn new(span: usize, seed: u64) -> Self {
        Self {
            last: std::vec![0; span],
            next: 0,
            rng: Rng(seed | 1),
        }
    }

    fn alloc(&mut self) -> Key {
        let i = self.next % self.last.len();
        self.next += 1;
        let v = fresh_variant(self.last[i], self.rng.next());
        self.last[i] = v;
        KeyKind::Mr.new_key(MIN_MR_INDEX + i as u32, v).unwrap()
    }
}

#[test]
fn fresh_allocators_differ_and_reuse_never_repeats() {
    // Two allocators (two devices, or one after a reload) with their own
    // random streams hand out different key sequences; with the old rule
    // (the allocation count's low byte) both gave 0x100, 0x201, 0x302, ...
    let mut a = Allocator::new(4, 1);
    let mut b = Allocator::new(4, 2);
    let sa: Vec<u32> = (0..64).map(|_| a.alloc().raw()).collect();
    let sb: Vec<u32> = (0..64).map(|_| b.alloc().raw()).collect();
    assert_ne!(sa, sb);
    // Each index is reused every 4 allocations: never with the key it
    // had just before, and its variants spread over many values.
    for (n, k) in sa.iter().enumerate().skip(4) {
        assert_ne!(*k, sa[n - 4]);
        assert_eq!(k >> 8, sa[n - 4] >> 8);
    }
    let mut variants: Vec<u32> = sa.iter().map(|k| k & 0xff).collect();
    variants.sort_unstable();
    variants.dedup();
    assert!(variants.len() > 32, "{variants:?}");
}

#[test]
fn layout() {
    let k = Key::new(0x12_3456, 0x78).unwrap();
    assert_eq!(k.raw(), 0x1234_5678);
    assert_eq!(k.index(), 0x12_3456);
    assert_eq!(k.variant(), 0x78);
    assert_eq!(Key::from_raw(0x1234_5678), k);
    assert_eq!(Key::new(MAX_INDEX + 1, 0), None);
    assert_eq!(Key::new(MAX_INDEX, 0xff).map(Key::raw), Some(u32::MAX));
    assert_eq!(k.next_variant().raw(), 0x1234_5679);
    assert_eq!(Key::from_raw(0x1234_56ff).next_variant().raw(), 0x1234_5600);
    assert_eq!(k.with_variant(0xab).raw(), 0x1234_56ab);
    assert!(k.matches(0x1234_5678));
    assert!(!k.matches(0x1234_5679));
    assert!(k.same_index(Key::from_raw(0x1234_5600)));
    // The DMA L_Key (0) names no MR.
    assert_eq!(KeyKind::of_key(Key::from_raw(0)), None);
}

#[test]
fn new_keys() {
    assert_eq!(KeyKind::Mr.new_key(5, 0x42).map(Key::raw), Ok(0x0000_0542));
    assert_eq!(
        KeyKind::Mr.new_key(MIN_MW_INDEX, 0),
        Err(KeyError::WrongRange {
            kind: KeyKind::Mr,
            index: MIN_MW_INDEX
        })
    );
    assert_eq!(
        KeyKind::Mw.new_key(0, 0),
        Err(KeyError::WrongRange {
            kind: KeyKind::Mw,
            index: 0
        })
    );
    assert!(KeyKind::Mw.new_key(MAX_MW_INDEX, 0xff).is_ok());
}

#[test]
fn fast_reg_and_bind() {
    let mr = Key::new(77, 0x10).unwrap();
    assert_eq!(
        fast_reg_key(mr, 0x0000_4d99),
        Ok(Key::from_raw(0x0000_4d99))
    );
    assert_eq!(fast_reg_key(mr, mr.raw()), Ok(mr));
    assert_eq!(
        fast_reg_key(mr, 0x0000_4e10),
        Err(KeyError::IndexChanged {
            current: mr,
            requested: Key::from_raw(0x0000_4e10)
        })
    );
    let mw = Key::new(MIN_MW_INDEX, 0x01).unwrap();
    // Only the work request's key byte is taken.
    assert_eq!(
        bind_mw_key(mw, 0xdead_be7f).raw(),
        (MIN_MW_INDEX << 8) | 0x7f
    );
}

/// Any index of `kind`.
fn arb_index(kind: KeyKind) -> impl Strategy<Value = u32> {
    kind.min_index()..=kind.max_index()
}

proptest! {
    #[test]
    fn next_variant_is_ib_inc_rkey(raw in any::<u32>()) {
        prop_assert_eq!(Key::from_raw(raw).next_variant().raw(), ib_inc_rkey(raw));
    }

    #[test]
    fn roundtrip(index in 0..=MAX_INDEX, variant in any::<u8>()) {
        let k = Key::new(index, variant).unwrap();
        prop_assert_eq!((k.index(), k.variant()), (index, variant));
        prop_assert_eq!(Key::from_raw(k.raw()), k);
    }

    #[test]
    fn reuse_never_repeats_recent_keys(
        index in prop_oneof![arb_index(KeyKind::Mr), arb_index(KeyKind::Mw)],
        first in any::<u8>(),
        n in 1usize..256,
    ) {
        let kind = KeyKind::of_index(index).unwrap();
        let mut history: Vec<Key> = Vec::new();
        let mut key = kind.new_key(index, first).unwrap();
        for _ in 0..n {
            history.push(key);
            key = key.next_variant();
        }
        // After n < 256 reuses, no earlier key still matches.
        for old in &history {
            prop_assert!(!key.matches(old.raw()));
            prop_assert!(key.same_index(*old));
        }
        prop_assert_eq!(KeyKind::of_key(key), Some(kind));
    }

    #[test]
    fn mr_and_mw_keys_disjoint(
        mr in arb_index(KeyKind::Mr),
        mw in arb_index(KeyKind::Mw),
        v in any::<u8>(),
        w in any::<u8>(),
    ) {
        let mr_key = KeyKind::Mr.new_key(mr, v).unwrap();
        let mw_key = KeyKind::Mw.new_key(mw, w).unwrap();
        prop_assert_eq!(KeyKind::of_key(mr_key), Some(KeyKind::Mr));
        prop_assert_eq!(KeyKind::of_key(mw_key), Some(KeyKind::Mw));
        prop_assert!(KeyKind::Mw.parse(mr_key.raw()).is_err());
        prop_assert!(KeyKind::Mr.parse(mw_key.raw()).is_err());
        prop_assert_eq!(KeyKind::Mr.parse(mr_key.raw()), Ok(mr_key));
        prop_assert_eq!(KeyKind::Mw.parse(mw_key.raw()), Ok(mw_key));
        // Variant changes never move a key to the other range.
        prop_assert_eq!(KeyKind::of_key(mr_key.with_variant(w)), Some(KeyKind::Mr));
        prop_assert_eq!(KeyKind::of_key(mw_key.next_variant()), Some(KeyKind::Mw));
        prop_assert_ne!(mr_key.raw(), mw_key.raw());
    }

    #[test]
    fn parse_any(raw in any::<u32>()) {
        let index = raw >> 8;
        let kind = KeyKind::of_key(Key::from_raw(raw));
        prop_assert_eq!(KeyKind::Mr.parse(raw).is_ok(), kind == Some(KeyKind::Mr));
        prop_assert_eq!(KeyKind::Mw.parse(raw).is_ok(), kind == Some(KeyKind::Mw));
        // rxe's rkey_is_mw.
        prop_assert_eq!(
            kind == Some(KeyKind::Mw),
            (0x8_0001..=0x10_0000).contains(&index)
        );
    }

    #[test]
    fn fast_reg_only_changes_variant(cur in any::<u32>(), req in any::<u32>()) {
        let current = Key::from_raw(cur);
        let got = fast_reg_key(current, req);
        prop_assert_eq!(got.is_ok(), cur >> 8 == req >> 8);
        if let Ok(k) = got {
            prop_assert_eq!(k.raw(), req);
        }
        prop_assert_eq!(bind_mw_key(current, req).raw(), (cur & !0xff) | (req & 0xff));
    }

    #[test]
    fn fresh_variant_never_previous(previous in any::<u8>(), random in any::<u32>()) {
        prop_assert_ne!(fresh_variant(previous, random), previous);
    }
}
