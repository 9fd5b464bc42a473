// SPDX-License-Identifier: GPL-2.0

//! Shared ring index arithmetic, including hostile index values.

use proptest::prelude::*;
use std::collections::VecDeque;
use std::vec;

use crate::logic::queue::{
    End, Queue, QueueError, QueueType, Ring, CONSUMER_INDEX_OFFSET, HEADER_LEN, INDEX_MASK_OFFSET,
    LOG2_ELEM_SIZE_OFFSET, MAX_ELEM_SIZE, MAX_SLOTS, PRODUCER_INDEX_OFFSET,
};

#[test]
fn header_layout_matches_uapi() {
    // struct rxe_queue_buf: two u32, pad_1[30], producer, pad_2[31],
    // consumer, pad_3[31], then data.
    assert_eq!(LOG2_ELEM_SIZE_OFFSET, 0);
    assert_eq!(INDEX_MASK_OFFSET, 4);
    assert_eq!(PRODUCER_INDEX_OFFSET, 4 * (2 + 30));
    assert_eq!(CONSUMER_INDEX_OFFSET, 4 * (2 + 30 + 1 + 31));
    assert_eq!(HEADER_LEN, 4 * (2 + 30 + 1 + 31 + 1 + 31));
}

#[test]
fn sizing_like_rxe_queue_init() {
    // (requested elements, element size) -> (slots, slot size)
    let cases = [
        (0, 1, 1, 64),
        (1, 64, 2, 64),
        (2, 65, 4, 128),
        (3, 100, 4, 128),
        (4, 128, 8, 128),
        (255, 200, 256, 256),
        (256, 0, 512, 64),
        ((1 << 20) - 1, 1024, 1 << 20, 1024),
        (1 << 20, 1024, 1 << 21, 1024),
    ];
    for (n, size, slots, slot_size) in cases {
        let r = Ring::new(n, size).unwrap();
        assert_eq!(r.num_slots(), slots, "{n} x {size}");
        assert_eq!(r.elem_size(), slot_size, "{n} x {size}");
        assert_eq!(r.capacity(), slots - 1);
        assert!(r.capacity() >= n);
        assert_eq!(r.index_mask(), slots - 1);
        assert_eq!(1usize << r.log2_elem_size(), slot_size);
        assert_eq!(r.data_len(), slots as usize * slot_size);
        assert_eq!(r.buf_len(), HEADER_LEN + r.data_len());
    }
    // A larger cache line pads small elements further.
    let r = Ring::with_cache_line(10, 8, 128).unwrap();
    assert_eq!((r.num_slots(), r.elem_size()), (16, 128));
}

#[test]
fn sizing_limits() {
    assert!(Ring::new(MAX_SLOTS - 1, 64).is_ok());
    assert_eq!(
        Ring::new(MAX_SLOTS, 64),
        Err(QueueError::TooManyElems(MAX_SLOTS))
    );
    assert_eq!(
        Ring::new(u32::MAX, 64),
        Err(QueueError::TooManyElems(u32::MAX))
    );
    assert_eq!(
        Ring::new(1 << 31, 64),
        Err(QueueError::TooManyElems(1 << 31))
    );
    assert!(Ring::new(1, MAX_ELEM_SIZE).is_ok());
    assert_eq!(
        Ring::new(1, MAX_ELEM_SIZE + 1),
        Err(QueueError::ElemTooLarge(MAX_ELEM_SIZE + 1))
    );
    assert_eq!(
        Ring::new(1, u32::MAX),
        Err(QueueError::ElemTooLarge(u32::MAX))
    );
    // 2^24 slots of 64 KiB is 1 TiB.
    assert_eq!(
        Ring::new(MAX_SLOTS - 1, MAX_ELEM_SIZE),
        Err(QueueError::TooLarge)
    );
    // Exactly 4 GiB of slots plus the header is over the limit.
    assert_eq!(Ring::new((1 << 16) - 1, 1 << 16), Err(QueueError::TooLarge));
    assert!(Ring::new((1 << 15) - 1, 1 << 16).is_ok());
    for bad in [0, 3, 48, u32::MAX] {
        assert_eq!(
            Ring::with_cache_line(1, 1, bad),
            Err(QueueError::BadCacheLine(bad))
        );
    }
}

#[test]
fn index_math_small_ring() {
    let r = Ring::new(3, 64).unwrap(); // 4 slots
    assert_eq!(r.next(3), 0);
    assert_eq!(r.next(u32::MAX), 0);
    assert_eq!(r.count(1, 3), 2);
    assert!(r.is_empty(2, 2));
    assert!(r.is_empty(6, 2)); // high garbage bits
    assert!(r.is_full(2, 3));
    assert_eq!(r.free_slots(2, 3), 0);
    assert!(r.is_in_use(1, 3, 3));
    assert!(r.is_in_use(1, 3, 0));
    assert!(!r.is_in_use(1, 3, 1));
    assert!(!r.is_in_use(1, 3, 2));
    assert_eq!(r.slot_offset(5), Some(64));
    assert_eq!(r.buf_offset(5), Some(HEADER_LEN + 64));
    assert_eq!(r.index_at(192), Some(3));
    assert_eq!(r.index_at(256), None);
    assert_eq!(r.index_at(65), None);
    assert!(r.can_hold(3) && !r.can_hold(4));
}

#[test]
fn queue_types() {
    assert_eq!(QueueType::ToClient.local_end(), End::Producer);
    assert_eq!(QueueType::FromClient.local_end(), End::Consumer);
    assert_eq!(QueueType::FromUlp.local_end(), End::Producer);
    assert_eq!(QueueType::ToUlp.local_end(), End::Consumer);
    assert!(QueueType::ToClient.peer_may_be_user());
    assert!(QueueType::FromClient.peer_may_be_user());
    assert!(!QueueType::FromUlp.peer_may_be_user());
    assert!(!QueueType::ToUlp.peer_may_be_user());
}

#[test]
fn empty_ring_of_one_slot() {
    // num_elem == 0 is allowed by rxe: one slot, never anything in it.
    let r = Ring::new(0, 64).unwrap();
    let mut q = Queue::new(r, QueueType::ToClient);
    assert!(q.is_full(0) && q.is_empty(0));
    assert_eq!(q.advance(0), Err(QueueError::Full));
    let mut c = Queue::new(r, QueueType::FromClient);
    assert_eq!(c.advance(12345), Err(QueueError::Empty));
}

#[test]
fn consume_all_takes_what_the_peer_published_and_no_more() {
    let r = Ring::new(7, 64).unwrap();
    let mut c = Queue::new(r, QueueType::FromClient);
    // Garbage high bits in the peer's index are masked.
    assert_eq!(c.consume_all(0xffff_0005), (5, 5));
    assert!(c.is_empty(5));
    // A peer index behind ours counts the wrapped distance, within capacity.
    let (next, n) = c.consume_all(3);
    assert_eq!(next, 3);
    assert!(n <= r.capacity());
    // A producer's view never moves.
    let mut p = Queue::new(r, QueueType::ToClient);
    assert_eq!(p.consume_all(4), (0, 0));
}

/// Any valid ring of modest size.
fn arb_ring() -> impl Strategy<Value = Ring> {
    (0u32..(1 << 12), 0u32..2048, 6u32..9)
        .prop_map(|(n, size, line)| Ring::with_cache_line(n, size, 1 << line).unwrap())
}

proptest! {
    #[test]
    fn offsets_stay_inside(r in arb_ring(), index in any::<u32>()) {
        let off = r.slot_offset(index).unwrap();
        prop_assert!(off < r.data_len());
        prop_assert!(off + r.elem_size() <= r.data_len());
        prop_assert_eq!(off % r.elem_size(), 0);
        prop_assert_eq!(r.index_at(off), Some(r.mask(index)));
        prop_assert_eq!(r.buf_offset(index), Some(HEADER_LEN + off));
        prop_assert!(r.mask(index) < r.num_slots());
        prop_assert!(r.next(index) < r.num_slots());
    }

    #[test]
    fn counts_bounded(r in arb_ring(), prod in any::<u32>(), cons in any::<u32>()) {
        let count = r.count(prod, cons);
        prop_assert!(count <= r.capacity());
        prop_assert_eq!(r.free_slots(prod, cons), r.capacity() - count);
        prop_assert_eq!(r.is_empty(prod, cons), count == 0);
        prop_assert_eq!(r.is_full(prod, cons), count == r.capacity());
        // Garbage above the mask changes nothing.
        prop_assert_eq!(r.count(r.mask(prod), r.mask(cons)), count);
    }

    #[test]
    fn index_at_rejects_outside(r in arb_ring(), off in any::<usize>()) {
        match r.index_at(off) {
            Some(i) => {
                prop_assert!(i < r.num_slots());
                prop_assert_eq!(r.slot_offset(i), Some(off));
            }
            None => prop_assert!(off >= r.data_len() || off % r.elem_size() != 0),
        }
    }

    #[test]
    fn in_use_slots(r in arb_ring(), prod in any::<u32>(), cons in any::<u32>()) {
        let count = r.count(prod, cons);
        let mut used = 0;
        for k in 0..r.num_slots().min(64) {
            let i = cons.wrapping_add(k);
            prop_assert_eq!(r.is_in_use(prod, cons, i), k < count);
            used += u32::from(r.is_in_use(prod, cons, i));
        }
        prop_assert_eq!(used, count.min(64));
    }

    /// A producer and a consumer view share a ring; random operations,
    /// with each side's published index read by the other (sometimes with
    /// garbage high bits, as a user could write), track a model queue.
    #[test]
    fn produce_consume_model(
        n in 0u32..9,
        ops in proptest::collection::vec((any::<bool>(), any::<u8>()), 0..400),
        producer_side in prop_oneof![Just(QueueType::ToClient), Just(QueueType::FromUlp)],
        consumer_side in prop_oneof![Just(QueueType::FromClient), Just(QueueType::ToUlp)],
    ) {
        let r = Ring::new(n, 32).unwrap();
        let mut prod = Queue::new(r, producer_side);
        let mut cons = Queue::new(r, consumer_side);
        let mut shared_prod = 0u32;
        let mut shared_cons = 0u32;
        let mut model = VecDeque::new();
        let mut slots = vec![None; r.num_slots() as usize];
        let mut seq = 0u32;
        for (produce, junk) in ops {
            let noise = u32::from(junk) << 24;
            if produce {
                let off = prod.local_slot_offset().unwrap();
                match prod.advance(shared_cons.wrapping_add(noise)) {
                    Ok(p) => {
                        slots[off / r.elem_size()] = Some(seq);
                        model.push_back(seq);
                        seq += 1;
                        shared_prod = p;
                    }
                    Err(e) => {
                        prop_assert_eq!(e, QueueError::Full);
                        prop_assert_eq!(model.len() as u32, r.capacity());
                    }
                }
            } else {
                let off = cons.local_slot_offset().unwrap();
                match cons.advance(shared_prod.wrapping_add(noise)) {
                    Ok(c) => {
                        prop_assert_eq!(slots[off / r.elem_size()], model.pop_front());
                        shared_cons = c;
                    }
                    Err(e) => {
                        prop_assert_eq!(e, QueueError::Empty);
                        prop_assert!(model.is_empty());
                    }
                }
            }
            let len = model.len() as u32;
            prop_assert_eq!(prod.count(shared_cons), len);
            prop_assert_eq!(cons.count(shared_prod), len);
            prop_assert!(len <= r.capacity());
            prop_assert_eq!(prod.is_full(shared_cons), len == r.capacity());
            prop_assert_eq!(cons.is_empty(shared_prod), len == 0);
            prop_assert_eq!(prod.indices(shared_cons), (shared_prod, shared_cons));
            prop_assert_eq!(cons.indices(shared_prod), (shared_prod, shared_cons));
            prop_assert_eq!(prod.local_index(), shared_prod);
            prop_assert!(shared_prod < r.num_slots() && shared_cons < r.num_slots());
        }
        prop_assert_eq!(prod.ring(), cons.ring());
        prop_assert_eq!(prod.kind(), producer_side);
    }
}
