// SPDX-License-Identifier: GPL-2.0

//! The responder's pure rules (logic::resp): RETH lengths, UD fit, the
//! error class of a length error per QP type, duplicate READ replay.

use proptest::prelude::*;

use crate::logic::qp_state::QpType;
use crate::logic::resp::{
    dma_len_ok, on_length_error, ud_fits, LengthError, ReadReq, GRH_LEN, MAX_DMA_LEN,
};
use crate::logic::segment::packet_count;
use crate::proto::headers::Reth;
use crate::proto::psn::Psn;

use super::{arb_psn, arb_reth};

const MTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];

#[test]
fn dma_length_limit_is_2_pow_31() {
    // IBA C9-94, and rxe's `reth_len(pkt) > (1U << 31)`.
    assert!(dma_len_ok(0));
    assert!(dma_len_ok(4096));
    assert!(dma_len_ok(1 << 31));
    assert!(!dma_len_ok((1 << 31) + 1));
    assert!(!dma_len_ok(u32::MAX));
    assert_eq!(MAX_DMA_LEN, 0x8000_0000);
    // At the smallest path MTU, the largest READ still takes at most half
    // of the PSN space: a request can never look new again.
    assert!(packet_count(MAX_DMA_LEN, 256) <= Psn::HALF);
    assert!(packet_count(u32::MAX, 256) > Psn::HALF);
}

#[test]
fn ud_fit_known_answers() {
    // The MAD layer's GSI receives: a 40-byte GRH and a 256-byte MAD.
    assert!(ud_fits(256, 296));
    assert!(!ud_fits(257, 296));
    assert!(!ud_fits(512, 296));
    assert!(ud_fits(0, GRH_LEN));
    assert!(!ud_fits(0, GRH_LEN - 1));
    assert!(!ud_fits(usize::MAX, u32::MAX));
}

#[test]
fn length_errors_by_qp_type() {
    // rxe's RESPST_ERR_LENGTH: RC class C, UC/UD class E on an SRQ and
    // class D on an RQ; only RC takes the QP to the error state.
    assert_eq!(on_length_error(QpType::Rc, false), LengthError::Fatal);
    assert_eq!(on_length_error(QpType::Rc, true), LengthError::Fatal);
    for ty in [QpType::Uc, QpType::Ud, QpType::Gsi] {
        assert_eq!(on_length_error(ty, false), LengthError::Drop);
        assert_eq!(on_length_error(ty, true), LengthError::CompleteInError);
    }
}

fn read(va: u64, len: u32, psn: u32) -> ReadReq {
    ReadReq::new(
        Reth {
            va,
            rkey: 0x1234,
            len,
        },
        Psn::new(psn),
        1024,
    )
}

#[test]
fn duplicate_read_known_answers() {
    let orig = read(0x10000, 3000, 100);
    assert_eq!(orig.npkts, 3);
    assert!(orig.holds(Psn::new(100)) && orig.holds(Psn::new(102)));
    assert!(!orig.holds(Psn::new(99)) && !orig.holds(Psn::new(103)));
    // The whole READ again.
    let r = orig.replay(
        Psn::new(100),
        Reth {
            va: 0x10000,
            rkey: 0x1234,
            len: 3000,
        },
        1024,
    );
    assert_eq!(r, Some(orig));
    // The rest from the second response, as C rxe's requester asks.
    let r = orig
        .replay(
            Psn::new(101),
            Reth {
                va: 0x10400,
                rkey: 0x1234,
                len: 1976,
            },
            1024,
        )
        .unwrap();
    assert_eq!(
        (r.va, r.len, r.first_psn, r.npkts),
        (0x10400, 1976, Psn::new(101), 2)
    );
    // Another key, memory before or after the original: dropped.
    let dup = |va, rkey, len| orig.replay(Psn::new(101), Reth { va, rkey, len }, 1024);
    assert_eq!(dup(0x10400, 0x5678, 1976), None);
    assert_eq!(dup(0xfc00, 0x1234, 1976), None);
    assert_eq!(dup(0x10400, 0x1234, 4000), None);
    assert_eq!(dup(u64::MAX - 10, 0x1234, 100), None);
    // A PSN outside the READ's responses.
    assert_eq!(
        orig.replay(
            Psn::new(103),
            Reth {
                va: 0x10000,
                rkey: 0x1234,
                len: 10
            },
            1024
        ),
        None
    );
    // More packets than the original had left are never sent: the whole
    // range again from the last PSN gets one response.
    let r = orig
        .replay(
            Psn::new(102),
            Reth {
                va: 0x10000,
                rkey: 0x1234,
                len: 3000,
            },
            1024,
        )
        .unwrap();
    assert_eq!(r.npkts, 1);
    // Zero-length READs touch no memory: replayed whatever the key.
    let z = read(0, 0, 5);
    assert!(z
        .replay(
            Psn::new(5),
            Reth {
                va: 7,
                rkey: 9,
                len: 0
            },
            1024
        )
        .is_some());
}

proptest! {
    /// A replay never names a byte or a PSN the original READ did not, and
    /// always keeps the original's key.
    #[test]
    fn replay_stays_inside_the_original(
        orig_reth in arb_reth(),
        psn in arb_psn(),
        dup in arb_reth(),
        off in 0u32..64,
        mtu in proptest::sample::select(MTUS.to_vec()),
    ) {
        let orig_reth = Reth { len: orig_reth.len % (1 << 20), ..orig_reth };
        let orig = ReadReq::new(orig_reth, psn, mtu);
        let at = psn.add(off);
        if let Some(r) = orig.replay(at, dup, mtu) {
            prop_assert!(orig.holds(at));
            prop_assert_eq!(r.rkey, orig.rkey);
            prop_assert_eq!(r.first_psn, at);
            prop_assert!(r.npkts >= 1);
            prop_assert!(r.npkts <= orig.npkts - orig.first_psn.distance(at));
            if r.len != 0 {
                prop_assert!(r.va >= orig.va);
                prop_assert!(u128::from(r.va) + u128::from(r.len)
                    <= u128::from(orig.va) + u128::from(orig.len));
            }
        }
    }

    /// A well-behaved requester's duplicate (the rest of the READ from any
    /// of its responses) is always replayed, with the bytes it asks for.
    #[test]
    fn replay_of_the_rest_is_taken(
        va in 0u64..(1 << 48),
        len in 1u32..(1 << 20),
        psn in arb_psn(),
        k in 0u32..1024,
        mtu in proptest::sample::select(MTUS.to_vec()),
    ) {
        let orig = ReadReq::new(Reth { va, rkey: 7, len }, psn, mtu);
        let k = k % orig.npkts;
        let off = k * mtu;
        let dup = Reth { va: va + u64::from(off), rkey: 7, len: len - off };
        let r = orig.replay(psn.add(k), dup, mtu).unwrap();
        prop_assert_eq!((r.va, r.len, r.npkts), (dup.va, dup.len, orig.npkts - k));
    }
}
