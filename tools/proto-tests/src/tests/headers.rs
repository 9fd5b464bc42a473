// SPDX-License-Identifier: GPL-2.0

//! Single-header codecs: round trips, robustness and known byte images.

use core::fmt::Debug;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::vec;
use std::vec::Vec;

use super::{
    arb_aeth, arb_atomic_ack_eth, arb_atomic_eth, arb_atomic_write, arb_bth, arb_deth, arb_feth,
    arb_ieth, arb_immdt, arb_reth,
};
use crate::proto::error::{BuildError, ParseError};
use crate::proto::headers::{
    rnr_timeout_usecs, Aeth, AtomicAckEth, AtomicEth, AtomicWriteData, Bth, Deth, Feth, Ieth,
    ImmDt, NakCode, Reth, Syndrome, WireHeader, DEFAULT_PKEY,
};
use crate::proto::opcode::Opcode;
use crate::proto::psn::Psn;

/// parse(build(h)) == h, into an exact and an oversized buffer; and a short
/// buffer is refused without being touched.
fn check_roundtrip<H>(h: H, extra: usize) -> Result<(), TestCaseError>
where
    H: WireHeader + PartialEq + Debug + Copy,
{
    let mut buf = vec![0xa5u8; H::SIZE + extra];
    prop_assert_eq!(h.build(&mut buf), Ok(H::SIZE));
    prop_assert_eq!(H::parse(&buf), Ok(h));
    // Bytes past the header are not written.
    prop_assert!(buf.iter().skip(H::SIZE).all(|&b| b == 0xa5));
    for short in 0..H::SIZE {
        let mut small = vec![0x5au8; short];
        prop_assert_eq!(
            h.build(&mut small),
            Err(BuildError::BufferTooShort {
                needed: H::SIZE,
                available: short,
            })
        );
        prop_assert!(small.iter().all(|&b| b == 0x5a));
    }
    Ok(())
}

/// Any byte string parses iff it is long enough, and a parsed header
/// rebuilds to the same bytes once reserved bits are cleared.
fn check_bytes<H>(bytes: &[u8], clear_reserved: fn(&mut [u8])) -> Result<(), TestCaseError>
where
    H: WireHeader + PartialEq + Debug,
{
    match H::parse(bytes) {
        Ok(h) => {
            prop_assert!(bytes.len() >= H::SIZE);
            let mut expected: Vec<u8> = bytes.iter().copied().take(H::SIZE).collect();
            clear_reserved(&mut expected);
            let mut rebuilt = vec![0u8; H::SIZE];
            prop_assert_eq!(h.build(&mut rebuilt), Ok(H::SIZE));
            prop_assert_eq!(rebuilt, expected);
        }
        Err(e) => {
            prop_assert!(bytes.len() < H::SIZE);
            prop_assert_eq!(
                e,
                ParseError::Truncated {
                    needed: H::SIZE,
                    available: bytes.len(),
                }
            );
        }
    }
    Ok(())
}

fn no_reserved(_: &mut [u8]) {}

fn bth_reserved(b: &mut [u8]) {
    // resv6a next to F/B, resv7 next to A.
    if let Some(x) = b.get_mut(4) {
        *x &= 0xc0;
    }
    if let Some(x) = b.get_mut(8) {
        *x &= 0x80;
    }
}

fn deth_reserved(b: &mut [u8]) {
    if let Some(x) = b.get_mut(4) {
        *x = 0;
    }
}

fn feth_reserved(b: &mut [u8]) {
    for (i, x) in b.iter_mut().enumerate() {
        *x &= if i == 3 { 0x3f } else { 0 };
    }
}

proptest! {
    #[test]
    fn bth_roundtrip(h in arb_bth(), extra in 0usize..8) {
        check_roundtrip(h, extra)?;
    }

    #[test]
    fn reth_roundtrip(h in arb_reth(), extra in 0usize..8) {
        check_roundtrip(h, extra)?;
    }

    #[test]
    fn aeth_roundtrip(h in arb_aeth(), extra in 0usize..8) {
        check_roundtrip(h, extra)?;
    }

    #[test]
    fn atomic_eth_roundtrip(h in arb_atomic_eth(), extra in 0usize..8) {
        check_roundtrip(h, extra)?;
    }

    #[test]
    fn atomic_ack_eth_roundtrip(h in arb_atomic_ack_eth(), extra in 0usize..8) {
        check_roundtrip(h, extra)?;
    }

    #[test]
    fn deth_roundtrip(h in arb_deth(), extra in 0usize..8) {
        check_roundtrip(h, extra)?;
    }

    #[test]
    fn immdt_roundtrip(h in arb_immdt(), extra in 0usize..8) {
        check_roundtrip(h, extra)?;
    }

    #[test]
    fn ieth_roundtrip(h in arb_ieth(), extra in 0usize..8) {
        check_roundtrip(h, extra)?;
    }

    #[test]
    fn feth_roundtrip(h in arb_feth(), extra in 0usize..8) {
        check_roundtrip(h, extra)?;
    }

    #[test]
    fn atomic_write_roundtrip(h in arb_atomic_write(), extra in 0usize..8) {
        check_roundtrip(h, extra)?;
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
        check_bytes::<Bth>(&bytes, bth_reserved)?;
        check_bytes::<Reth>(&bytes, no_reserved)?;
        check_bytes::<Aeth>(&bytes, no_reserved)?;
        check_bytes::<AtomicEth>(&bytes, no_reserved)?;
        check_bytes::<AtomicAckEth>(&bytes, no_reserved)?;
        check_bytes::<Deth>(&bytes, deth_reserved)?;
        check_bytes::<ImmDt>(&bytes, no_reserved)?;
        check_bytes::<Ieth>(&bytes, no_reserved)?;
        check_bytes::<Feth>(&bytes, feth_reserved)?;
        check_bytes::<AtomicWriteData>(&bytes, no_reserved)?;
    }

    #[test]
    fn wide_fields_are_masked(qpn in any::<u32>(), msn in any::<u32>(), pad in any::<u8>()) {
        let mut bth = Bth::new(Opcode::RcSendOnly, 0, Psn::ZERO);
        bth.dest_qpn = qpn;
        bth.pad = pad;
        let mut buf = [0u8; 12];
        prop_assert_eq!(bth.build(&mut buf), Ok(12));
        let back = Bth::parse(&buf).unwrap();
        prop_assert_eq!(back.dest_qpn, qpn & 0xff_ffff);
        prop_assert_eq!(back.pad, pad & 3);
        let aeth = Aeth { syndrome: Syndrome::ACK_UNLIMITED, msn };
        let mut abuf = [0u8; 4];
        prop_assert_eq!(aeth.build(&mut abuf), Ok(4));
        prop_assert_eq!(Aeth::parse(&abuf).unwrap().msn, msn & 0xff_ffff);
    }
}

#[test]
fn bth_known_answer() {
    // RC SEND_ONLY to QPN 0x11, PSN 0x123456, P_Key 0xffff.
    let bth = Bth::new(Opcode::RcSendOnly, 0x11, Psn::new(0x12_3456));
    let expected = [
        0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x00, 0x12, 0x34, 0x56,
    ];
    let mut buf = [0u8; 12];
    assert_eq!(bth.build(&mut buf), Ok(12));
    assert_eq!(buf, expected);
    assert_eq!(Bth::parse(&expected), Ok(bth));
    assert_eq!(bth.pkey, DEFAULT_PKEY);
    assert_eq!(bth.opcode(), Some(Opcode::RcSendOnly));

    // Every flag set: SE, M, pad 3, F, B, A.
    let flagged = Bth {
        solicited: true,
        migrated: true,
        pad: 3,
        fecn: true,
        becn: true,
        ack_req: true,
        pkey: 0x8001,
        ..bth
    };
    assert_eq!(flagged.build(&mut buf), Ok(12));
    assert_eq!(
        buf,
        [0x04, 0xf0, 0x80, 0x01, 0xc0, 0x00, 0x00, 0x11, 0x80, 0x12, 0x34, 0x56]
    );

    // Reserved bits are ignored on parse; tver is reported as is.
    let noisy = [
        0x0c, 0x05, 0xff, 0xff, 0x3f, 0xab, 0xcd, 0xef, 0x7f, 0xff, 0xff, 0xff,
    ];
    let parsed = Bth::parse(&noisy).unwrap();
    assert_eq!(parsed.tver, 5);
    assert_eq!(parsed.dest_qpn, 0xab_cdef);
    assert!(!parsed.fecn && !parsed.becn && !parsed.ack_req);
    assert_eq!(parsed.psn, Psn::MAX);
}

#[test]
fn reth_known_answer() {
    let reth = Reth {
        va: 0x0102_0304_0506_0708,
        rkey: 0x1122_3344,
        len: 0x0000_1000,
    };
    let mut buf = [0u8; 16];
    assert_eq!(reth.build(&mut buf), Ok(16));
    assert_eq!(
        buf,
        [1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x22, 0x33, 0x44, 0, 0, 0x10, 0]
    );
}

#[test]
fn atomic_eth_known_answer() {
    let eth = AtomicEth {
        va: 0x1000,
        rkey: 0xdead_beef,
        swap_add: 0x0a0b_0c0d_0e0f_1011,
        compare: 0xffff_ffff_ffff_fffe,
    };
    let mut buf = [0u8; 28];
    assert_eq!(eth.build(&mut buf), Ok(28));
    assert_eq!(
        buf,
        [
            0, 0, 0, 0, 0, 0, 0x10, 0, 0xde, 0xad, 0xbe, 0xef, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
            0x10, 0x11, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe
        ]
    );
    let ack = AtomicAckEth { orig: 0x42 };
    let mut abuf = [0u8; 8];
    assert_eq!(ack.build(&mut abuf), Ok(8));
    assert_eq!(abuf, [0, 0, 0, 0, 0, 0, 0, 0x42]);
}

#[test]
fn small_headers_known_answers() {
    let mut buf = [0u8; 8];
    let deth = Deth {
        qkey: 0x8001_0000,
        src_qpn: 0x00_0001,
    };
    assert_eq!(deth.build(&mut buf), Ok(8));
    assert_eq!(buf, [0x80, 0x01, 0, 0, 0, 0, 0, 1]);

    let mut w = [0u8; 4];
    assert_eq!(ImmDt { imm: 0x0102_0304 }.build(&mut w), Ok(4));
    assert_eq!(w, [1, 2, 3, 4]);
    assert_eq!(Ieth { rkey: 0xa0b0_c0d0 }.build(&mut w), Ok(4));
    assert_eq!(w, [0xa0, 0xb0, 0xc0, 0xd0]);

    // FETH as rxe's feth_init(type = GLOBAL|PERSISTENT, level = MR).
    let feth = Feth {
        placement_type: Feth::PLT_GLOBAL | Feth::PLT_PERSISTENT,
        selectivity: Feth::SEL_MR,
    };
    assert_eq!(feth.build(&mut w), Ok(4));
    assert_eq!(w, [0, 0, 0, 0x13]);
    assert_eq!(
        Feth::parse(&[0xff, 0xff, 0xff, 0xff]).unwrap(),
        Feth {
            placement_type: 0xf,
            selectivity: 3,
        }
    );

    let data = AtomicWriteData {
        data: [1, 2, 3, 4, 5, 6, 7, 8],
    };
    assert_eq!(data.build(&mut buf), Ok(8));
    assert_eq!(buf, [1, 2, 3, 4, 5, 6, 7, 8]);
}

#[test]
fn aeth_known_answers() {
    let mut w = [0u8; 4];
    assert_eq!(Aeth::ack(5).build(&mut w), Ok(4));
    assert_eq!(w, [0x1f, 0, 0, 5]);
    assert_eq!(Aeth::rnr_nak(14, 0x12_3456).build(&mut w), Ok(4));
    assert_eq!(w, [0x2e, 0x12, 0x34, 0x56]);
    let naks = [
        (NakCode::PsnSequenceError, 0x60),
        (NakCode::InvalidRequest, 0x61),
        (NakCode::RemoteAccessError, 0x62),
        (NakCode::RemoteOperationalError, 0x63),
        (NakCode::InvalidRdRequest, 0x64),
    ];
    for (code, byte) in naks {
        assert_eq!(Aeth::nak(code, 0).build(&mut w), Ok(4));
        assert_eq!(w, [byte, 0, 0, 0]);
        assert_eq!(Syndrome::from_u8(byte), Syndrome::Nak(code));
    }
    assert_eq!(Syndrome::from_u8(0x00), Syndrome::Ack { credits: 0 });
    assert_eq!(Syndrome::from_u8(0x1f), Syndrome::ACK_UNLIMITED);
    assert_eq!(Syndrome::from_u8(0x3f), Syndrome::RnrNak { timer: 31 });
    assert_eq!(Syndrome::from_u8(0x65), Syndrome::Nak(NakCode::Reserved(5)));
    assert_eq!(Syndrome::from_u8(0x40), Syndrome::Reserved(0x40));
    assert_eq!(Syndrome::from_u8(0x80), Syndrome::Reserved(0x80));
}

#[test]
fn syndrome_exhaustive() {
    for raw in 0..=u8::MAX {
        let syn = Syndrome::from_u8(raw);
        assert_eq!(syn.to_u8(), raw, "{raw:#x}");
        // The classification is rxe's: switch on (syn & 0xe0).
        let expected_kind = match raw & 0xe0 {
            0x00 => "ack",
            0x20 => "rnr",
            0x60 => "nak",
            _ => "reserved",
        };
        let kind = match syn {
            Syndrome::Ack { credits } => {
                assert_eq!(credits, raw & 0x1f);
                "ack"
            }
            Syndrome::RnrNak { timer } => {
                assert_eq!(timer, raw & 0x1f);
                "rnr"
            }
            Syndrome::Nak(code) => {
                assert_eq!(code.bits(), raw & 0x1f);
                "nak"
            }
            Syndrome::Reserved(r) => {
                assert_eq!(r, raw);
                "reserved"
            }
        };
        assert_eq!(kind, expected_kind, "{raw:#x}");
    }
}

#[test]
fn rnr_timer_table() {
    assert_eq!(rnr_timeout_usecs(0), 655_360);
    assert_eq!(rnr_timeout_usecs(1), 10);
    assert_eq!(rnr_timeout_usecs(14), 1_280);
    assert_eq!(rnr_timeout_usecs(25), 61_440);
    assert_eq!(rnr_timeout_usecs(31), 491_520);
    // Only the low five bits count.
    assert_eq!(rnr_timeout_usecs(0x21), 10);
    for t in 2..32u8 {
        assert!(rnr_timeout_usecs(t) > rnr_timeout_usecs(t - 1));
    }
}

/// Immediate data goes on the wire as the bytes the work request stores
/// (`__be32`), and comes back into a completion the same way, as in C rxe.
#[test]
fn immediate_data_keeps_the_stored_bytes() {
    let stored = u32::from_ne_bytes([0x00, 0x00, 0x00, 0x01]);
    let imm = ImmDt::from_stored(stored);
    assert_eq!(imm.imm, 1);
    let mut buf = [0u8; 4];
    assert_eq!(imm.build(&mut buf), Ok(4));
    assert_eq!(buf, [0x00, 0x00, 0x00, 0x01]);
    let back = ImmDt::parse(&buf).map(ImmDt::stored);
    assert_eq!(back, Ok(stored));
    assert_eq!(back.map(u32::to_ne_bytes), Ok([0, 0, 0, 1]));
}
