// SPDX-License-Identifier: GPL-2.0

//! Whole-packet parsing and header building.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::vec;
use std::vec::Vec;

use super::{arb_all_ext, arb_bth, arb_bth_with, arb_opcode, headers_for, AllExt};
use crate::proto::error::{BuildError, ParseError};
use crate::proto::headers::{Aeth, AtomicWriteData, Bth, Deth, ImmDt, Reth, WireHeader, GSI_QKEY};
use crate::proto::opcode::{ExtHeader, Opcode};
use crate::proto::packet::{packet_len, pad_len, parse_layout, parse_packet, Headers, ICRC_LEN};
use crate::proto::psn::Psn;

/// Assembles a packet: headers, payload, pad of zeros and the given ICRC.
fn assemble(headers: &Headers, payload: &[u8], icrc: [u8; 4]) -> Vec<u8> {
    let info = headers.check().unwrap();
    let mut buf = vec![0u8; info.header_len()];
    assert_eq!(headers.build(&mut buf), Ok(info.header_len()));
    buf.extend_from_slice(payload);
    buf.extend(core::iter::repeat_n(0, usize::from(headers.bth.pad)));
    buf.extend_from_slice(&icrc);
    buf
}

/// Builds a packet for `op` and checks that parsing gives everything back.
fn check_packet_roundtrip(
    op: Opcode,
    bth: Bth,
    ext: &AllExt,
    payload: &[u8],
    icrc: [u8; 4],
) -> Result<(), TestCaseError> {
    let info = op.info();
    let payload = if info.has_payload() { payload } else { &[] };
    let mut headers = headers_for(op, bth, ext);
    headers.bth.pad = pad_len(payload.len());
    let bytes = assemble(&headers, payload, icrc);
    prop_assert_eq!(Some(bytes.len()), packet_len(&info, payload.len()));

    let pkt = parse_packet(&bytes).map_err(|e| TestCaseError::fail(std::format!("{e:?}")))?;
    prop_assert_eq!(pkt.headers, headers);
    prop_assert_eq!(pkt.payload, payload);
    prop_assert_eq!(pkt.icrc, icrc);
    prop_assert_eq!(pkt.opcode(), op);
    prop_assert_eq!(*pkt.info(), info);
    let layout = pkt.layout;
    prop_assert_eq!(layout.total_len, bytes.len());
    prop_assert_eq!(layout.payload_offset, info.header_len());
    prop_assert_eq!(layout.payload_len, payload.len());
    prop_assert_eq!(layout.pad, usize::from(headers.bth.pad));
    prop_assert_eq!(layout.icrc_offset, bytes.len() - ICRC_LEN);
    prop_assert_eq!(
        (layout.payload_offset + layout.payload_len + layout.pad) % 4,
        0
    );
    for hdr in ExtHeader::ALL {
        prop_assert_eq!(layout.offset(hdr), info.offset(hdr));
    }
    // Each extension header also parses on its own at its offset.
    if let Some(off) = layout.offset(ExtHeader::Reth) {
        prop_assert_eq!(Reth::parse(&bytes[off..]).ok(), headers.reth);
    }
    if let Some(off) = layout.offset(ExtHeader::Aeth) {
        prop_assert_eq!(Aeth::parse(&bytes[off..]).ok(), headers.aeth);
    }
    if let Some(off) = layout.offset(ExtHeader::ImmDt) {
        prop_assert_eq!(ImmDt::parse(&bytes[off..]).ok(), headers.immdt);
    }
    prop_assert_eq!(parse_layout(&bytes), Ok(layout));
    Ok(())
}

/// Invariants of any successfully parsed packet.
fn check_parsed_invariants(bytes: &[u8]) -> Result<(), TestCaseError> {
    let Ok(pkt) = parse_packet(bytes) else {
        return Ok(());
    };
    let l = pkt.layout;
    prop_assert_eq!(l.total_len, bytes.len());
    prop_assert_eq!(
        l.payload_offset + l.payload_len + l.pad + ICRC_LEN,
        bytes.len()
    );
    prop_assert_eq!(l.payload_offset, l.info.header_len());
    prop_assert_eq!(pkt.payload.len(), l.payload_len);
    prop_assert_eq!(pkt.headers.bth.tver, 0);
    prop_assert!(l.info.has_payload() || l.payload_len + l.pad == 0);
    // The decoded headers are a valid header set and rebuild to the same
    // decoded values.
    prop_assert_eq!(pkt.headers.check(), Ok(l.info));
    let mut rebuilt = vec![0u8; l.payload_offset];
    prop_assert_eq!(pkt.headers.build(&mut rebuilt), Ok(l.payload_offset));
    let mut reparsed_bytes = rebuilt.clone();
    reparsed_bytes.extend_from_slice(&bytes[l.payload_offset..]);
    let again = parse_packet(&reparsed_bytes).unwrap();
    prop_assert_eq!(again.headers, pkt.headers);
    Ok(())
}

proptest! {
    #[test]
    fn every_opcode_roundtrips(
        op in arb_opcode(),
        bth in arb_bth(),
        ext in arb_all_ext(),
        payload in proptest::collection::vec(any::<u8>(), 0..70),
        icrc in any::<[u8; 4]>(),
    ) {
        check_packet_roundtrip(op, bth, &ext, &payload, icrc)?;
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
        check_parsed_invariants(&bytes)?;
    }

    // Random bytes rarely get past the opcode check, so also fuzz starting
    // from a valid BTH of a known opcode with tver 0.
    #[test]
    fn random_bodies_never_panic(
        op in arb_opcode(),
        bth in arb_bth(),
        body in proptest::collection::vec(any::<u8>(), 0..80),
    ) {
        let mut bth = bth;
        bth.opcode = op.value();
        bth.tver = 0;
        let mut bytes = vec![0u8; Bth::SIZE];
        prop_assert_eq!(bth.build(&mut bytes), Ok(Bth::SIZE));
        bytes.extend_from_slice(&body);
        check_parsed_invariants(&bytes)?;
    }

    #[test]
    fn mutated_packets_never_panic(
        op in arb_opcode(),
        bth in arb_bth(),
        ext in arb_all_ext(),
        payload in proptest::collection::vec(any::<u8>(), 0..20),
        flip in any::<(usize, u8)>(),
        cut in any::<usize>(),
    ) {
        let mut headers = headers_for(op, bth, &ext);
        let payload = if op.info().has_payload() { &payload[..] } else { &[] };
        headers.bth.pad = pad_len(payload.len());
        let mut bytes = assemble(&headers, payload, [0; 4]);
        let at = flip.0 % bytes.len();
        bytes[at] ^= flip.1;
        bytes.truncate(cut % (bytes.len() + 1));
        check_parsed_invariants(&bytes)?;
    }

    #[test]
    fn truncation_is_rejected(
        op in arb_opcode(),
        ext in arb_all_ext(),
        short in 0usize..4,
    ) {
        let headers = headers_for(op, Bth::new(op, 1, Psn::ZERO), &ext);
        let bytes = assemble(&headers, &[], [0; 4]);
        // Drop part of the ICRC: the packet no longer holds headers + ICRC.
        let cut = &bytes[..bytes.len() - 1 - short];
        prop_assert_eq!(
            parse_packet(cut).map(|_| ()),
            Err(ParseError::Truncated {
                needed: op.info().header_len() + ICRC_LEN,
                available: cut.len(),
            })
        );
    }

    #[test]
    fn bth_strategy_respects_opcode(bth in arb_bth_with(Just(0x11u8))) {
        prop_assert_eq!(bth.opcode, 0x11);
    }
}

#[test]
fn every_opcode_roundtrips_exhaustively() {
    let ext = AllExt {
        reth: Reth {
            va: 0x1122_3344_5566_7788,
            rkey: 0x99aa_bbcc,
            len: 4096,
        },
        aeth: Aeth::ack(7),
        atomic_eth: crate::proto::headers::AtomicEth {
            va: 8,
            rkey: 9,
            swap_add: 10,
            compare: 11,
        },
        atomic_ack_eth: crate::proto::headers::AtomicAckEth { orig: 12 },
        ieth: crate::proto::headers::Ieth { rkey: 13 },
        deth: Deth {
            qkey: GSI_QKEY,
            src_qpn: 1,
        },
        immdt: ImmDt { imm: 0xcafe_f00d },
        feth: crate::proto::headers::Feth {
            placement_type: 3,
            selectivity: 1,
        },
    };
    for op in Opcode::ALL {
        for len in [0usize, 1, 2, 3, 4, 5, 8, 1024] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let bth = Bth::new(op, 0x11, Psn::new(0x12_3456));
            check_packet_roundtrip(op, bth, &ext, &payload, [1, 2, 3, 4]).unwrap();
        }
    }
}

#[test]
fn known_packet() {
    // RC SEND_ONLY, QPN 0x11, PSN 0x123456, 5 payload bytes, pad 3.
    let bytes = [
        0x04, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x12, 0x34, 0x56, // BTH
        b'h', b'e', b'l', b'l', b'o', // payload
        0, 0, 0, // pad
        0xde, 0xad, 0xbe, 0xef, // ICRC
    ];
    let pkt = parse_packet(&bytes).unwrap();
    assert_eq!(pkt.opcode(), Opcode::RcSendOnly);
    assert_eq!(pkt.payload, b"hello");
    assert_eq!(pkt.icrc, [0xde, 0xad, 0xbe, 0xef]);
    assert_eq!(pkt.layout.pad, 3);
    assert_eq!(pkt.layout.icrc_offset, 20);
    let bth = pkt.headers.bth;
    assert!(bth.ack_req);
    assert_eq!(
        (bth.dest_qpn, bth.psn.get(), bth.pkey),
        (0x11, 0x12_3456, 0xffff)
    );

    // The same packet as the builder makes it.
    let mut headers = Headers::new(Bth::new(Opcode::RcSendOnly, 0x11, Psn::new(0x12_3456)));
    headers.bth.ack_req = true;
    headers.bth.pad = pad_len(5);
    assert_eq!(
        assemble(&headers, b"hello", [0xde, 0xad, 0xbe, 0xef]),
        bytes
    );
}

#[test]
fn known_ack_packet() {
    // RC ACKNOWLEDGE with a PSN sequence error NAK, MSN 3.
    let bytes = [
        0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00, 0x09, // BTH
        0x60, 0x00, 0x00, 0x03, // AETH
        0, 0, 0, 0, // ICRC
    ];
    let pkt = parse_packet(&bytes).unwrap();
    assert_eq!(
        pkt.headers.aeth,
        Some(Aeth::nak(
            crate::proto::headers::NakCode::PsnSequenceError,
            3
        ))
    );
    assert!(pkt.payload.is_empty());
}

#[test]
fn rejects_bad_packets() {
    let send_only = |flags: u8, extra: &[u8]| {
        let mut v = vec![0x04, flags, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 0];
        v.extend_from_slice(extra);
        v
    };
    // Too short for a BTH.
    assert_eq!(
        parse_packet(&[0x04; 11]).map(|_| ()),
        Err(ParseError::Truncated {
            needed: 12,
            available: 11
        })
    );
    // Unknown opcodes: reserved RC value, RD, CNP.
    for op in [0x15u8, 0x40, 0x81] {
        let mut v = send_only(0, &[0; 4]);
        v[0] = op;
        assert_eq!(
            parse_packet(&v).map(|_| ()),
            Err(ParseError::UnknownOpcode(op))
        );
    }
    // Transport version 1.
    assert_eq!(
        parse_packet(&send_only(0x01, &[0; 4])).map(|_| ()),
        Err(ParseError::BadTransportVersion(1))
    );
    // No room for the ICRC.
    assert_eq!(
        parse_packet(&send_only(0, &[0; 3])).map(|_| ()),
        Err(ParseError::Truncated {
            needed: 16,
            available: 15
        })
    );
    // Pad 2 with only one byte before the ICRC.
    assert_eq!(
        parse_packet(&send_only(0x20, &[0; 5])).map(|_| ()),
        Err(ParseError::PadTooLarge {
            pad: 2,
            available: 1
        })
    );
    // Zero-length SEND with pad 0 is fine; with pad 1 and one byte is fine.
    assert!(parse_packet(&send_only(0, &[0; 4])).is_ok());
    assert_eq!(
        parse_packet(&send_only(0x10, &[0; 5]))
            .unwrap()
            .payload
            .len(),
        0
    );
    // ACK carrying payload bytes.
    let mut ack = vec![0x11, 0, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 0, 0x1f, 0, 0, 0];
    ack.extend_from_slice(&[0; 8]);
    assert_eq!(
        parse_packet(&ack).map(|_| ()),
        Err(ParseError::UnexpectedPayload {
            opcode: 0x11,
            len: 4
        })
    );
    // READ request with only pad.
    let mut read = vec![0x0c, 0x10, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 0];
    read.extend_from_slice(&[0; 16 + 1 + 4]);
    assert_eq!(
        parse_packet(&read).map(|_| ()),
        Err(ParseError::UnexpectedPayload {
            opcode: 0x0c,
            len: 1
        })
    );
}

#[test]
fn atomic_write_payload() {
    let mut headers = Headers::new(Bth::new(Opcode::RcAtomicWrite, 5, Psn::new(1)));
    headers.reth = Some(Reth {
        va: 0x1000,
        rkey: 7,
        len: 8,
    });
    let data = [1, 2, 3, 4, 5, 6, 7, 8];
    let bytes = assemble(&headers, &data, [0; 4]);
    let pkt = parse_packet(&bytes).unwrap();
    assert_eq!(pkt.atomic_write_data(), Some(AtomicWriteData { data }));

    // Wrong length or a pad: not a valid ATOMIC WRITE payload.
    let bytes = assemble(&headers, &data[..4], [0; 4]);
    assert_eq!(parse_packet(&bytes).unwrap().atomic_write_data(), None);
    headers.bth.pad = 1;
    let bytes = assemble(&headers, &data[..7], [0; 4]);
    assert_eq!(parse_packet(&bytes).unwrap().atomic_write_data(), None);

    // Not an ATOMIC WRITE at all.
    let send = Headers::new(Bth::new(Opcode::RcSendOnly, 5, Psn::new(1)));
    let bytes = assemble(&send, &data, [0; 4]);
    assert_eq!(parse_packet(&bytes).unwrap().atomic_write_data(), None);
}

#[test]
fn build_errors() {
    let reth = Reth::default();
    // Missing RETH.
    let h = Headers::new(Bth::new(Opcode::RcRdmaWriteFirst, 1, Psn::ZERO));
    let mut buf = [0x77u8; 64];
    assert_eq!(
        h.build(&mut buf),
        Err(BuildError::MissingHeader(ExtHeader::Reth))
    );
    // Extra IETH.
    let mut h = Headers::new(Bth::new(Opcode::RcSendOnly, 1, Psn::ZERO));
    h.ieth = Some(crate::proto::headers::Ieth { rkey: 1 });
    assert_eq!(
        h.build(&mut buf),
        Err(BuildError::UnexpectedHeader(ExtHeader::Ieth))
    );
    // Unknown opcode.
    let mut h = Headers::new(Bth::new(Opcode::RcSendOnly, 1, Psn::ZERO));
    h.bth.opcode = 0x15;
    assert_eq!(h.build(&mut buf), Err(BuildError::UnknownOpcode(0x15)));
    // Buffer too short: nothing written.
    let mut h = Headers::new(Bth::new(Opcode::RcRdmaWriteOnlyWithImmediate, 1, Psn::ZERO));
    h.reth = Some(reth);
    h.immdt = Some(ImmDt { imm: 1 });
    let mut small = [0x77u8; 31];
    assert_eq!(
        h.build(&mut small),
        Err(BuildError::BufferTooShort {
            needed: 32,
            available: 31
        })
    );
    assert!(small.iter().all(|&b| b == 0x77));
    assert!(buf.iter().all(|&b| b == 0x77));
    assert_eq!(h.build(&mut buf), Ok(32));
}

#[test]
fn pad_and_length_helpers() {
    assert_eq!([0, 1, 2, 3, 4, 5].map(pad_len), [0, 3, 2, 1, 0, 3]);
    let info = Opcode::UdSendOnly.info();
    assert_eq!(packet_len(&info, 5), Some(20 + 5 + 3 + 4));
    assert_eq!(packet_len(&info, usize::MAX), None);
    // No pad needed: exactly fits.
    assert_eq!(packet_len(&info, usize::MAX - 27), Some(usize::MAX - 3));
    // One pad byte pushes it past usize::MAX.
    assert_eq!(packet_len(&info, usize::MAX - 24), None);
}
