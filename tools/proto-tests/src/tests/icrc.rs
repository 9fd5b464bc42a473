// SPDX-License-Identifier: GPL-2.0

//! The RoCEv2 invariant CRC, checked against an independent bitwise model
//! and against ICRCs produced by other implementations.

use proptest::prelude::*;
use std::vec;
use std::vec::Vec;

use crate::proto::icrc::{
    self as p, crc32_le_table as crc32_le, from_wire, to_wire, IcrcError, IpHeader, TableCrc32,
    BTH_LEN, CRC32_TABLE, ICRC_SEED, UDP_HDR_LEN,
};

// `proto::icrc` with the host's CRC-32, the reference table (the module
// passes the kernel's, which a KUnit test checks against it).

/// An incremental CRC-32 over the reference table.
type Crc32 = p::Crc32<TableCrc32>;

/// [`p::crc32`] over the reference table.
fn crc32(data: &[u8]) -> u32 {
    p::crc32::<TableCrc32>(data)
}

/// [`p::icrc_start`] over the reference table.
fn icrc_start(ip: IpHeader<'_>, udp: &[u8; UDP_HDR_LEN], bth: &[u8; BTH_LEN]) -> Crc32 {
    p::icrc_start::<TableCrc32>(ip, udp, bth)
}

/// [`p::icrc`] over the reference table.
fn icrc(ip: IpHeader<'_>, udp: &[u8; UDP_HDR_LEN], ib: &[u8]) -> Result<u32, IcrcError> {
    p::icrc::<TableCrc32>(ip, udp, ib)
}

/// [`p::verify`] over the reference table.
fn verify(ip: IpHeader<'_>, udp: &[u8; UDP_HDR_LEN], packet: &[u8]) -> Result<(), IcrcError> {
    p::verify::<TableCrc32>(ip, udp, packet)
}

/// CRC-32 one bit at a time, straight from the definition (reflected
/// polynomial, register preset to all ones, result inverted).
fn bitwise_crc32(data: &[u8]) -> u32 {
    let mut reg = 0xffff_ffffu32;
    for &byte in data {
        reg ^= u32::from(byte);
        for _ in 0..8 {
            let lsb = reg & 1;
            reg >>= 1;
            if lsb == 1 {
                reg ^= 0xedb8_8320;
            }
        }
    }
    !reg
}

/// The ICRC as IBA/rxe define it, built the slow way: a copy of the
/// headers with the variant fields overwritten by ones, preceded by eight
/// 0xff bytes for the LRH, then a bitwise CRC-32 over it all.
fn model_icrc(ip: &[u8], udp: &[u8], ib: &[u8]) -> u32 {
    let mut ip = ip.to_vec();
    match ip.len() {
        20 => {
            ip[1] = 0xff; // TOS
            ip[8] = 0xff; // TTL
            ip[10] = 0xff; // header checksum
            ip[11] = 0xff;
        }
        40 => {
            ip[0] |= 0x0f; // traffic class, high nibble
            ip[1] = 0xff; // traffic class low nibble, flow label
            ip[2] = 0xff; // flow label
            ip[3] = 0xff;
            ip[7] = 0xff; // hop limit
        }
        n => panic!("bad IP header length {n}"),
    }
    let mut udp = udp.to_vec();
    udp[6] = 0xff; // checksum
    udp[7] = 0xff;
    let unmasked = ib;
    let mut ib = ib.to_vec();
    ib[4] = 0xff; // BTH resv8a (FECN, BECN, reserved)

    let mut all = vec![0xff; 8];
    all.extend_from_slice(&ip);
    all.extend_from_slice(&udp);
    all.extend_from_slice(&ib);
    // C rxe's RC FLUSH: the whole IB part again, unmasked.
    if unmasked[0] == 0x1c {
        all.extend_from_slice(unmasked);
    }
    bitwise_crc32(&all)
}

fn ip_of(bytes: &[u8]) -> IpHeader<'_> {
    IpHeader::from_slice(bytes).unwrap()
}

/// A hand-built RC SEND_ONLY over IPv4 carrying "hello", with every
/// variant field set to something non-trivial: (IP, UDP, IB part without
/// ICRC).
fn sample_ipv4() -> ([u8; 20], [u8; 8], Vec<u8>) {
    let ip = [
        0x45, 0x02, 0x00, 0x35, // version/IHL, TOS (ECT0), total length 53
        0x12, 0x34, 0x40, 0x00, // id, DF
        0x40, 0x11, 0xbe, 0xef, // TTL 64, UDP, checksum (any: masked)
        0x0a, 0x00, 0x00, 0x01, // 10.0.0.1
        0x0a, 0x00, 0x00, 0x02, // 10.0.0.2
    ];
    let udp = [0xc0, 0x01, 0x12, 0xb7, 0x00, 0x21, 0x5a, 0x5a];
    let mut ib = vec![
        0x04, 0x70, 0xff, 0xff, // SEND_ONLY, migreq, pad 3, P_Key
        0x00, 0x00, 0x00, 0x11, // resv8a, dest QPN 0x11
        0x80, 0x12, 0x34, 0x56, // ack req, PSN 0x123456
    ];
    ib.extend_from_slice(b"hello\0\0\0");
    (ip, udp, ib)
}

/// C rxe computes an RC FLUSH's ICRC over the headers, then over the
/// whole IB part again (its opcode table has no payload offset for FLUSH):
/// what rxe sends and accepts.
#[test]
fn rc_flush_icrc_is_rxes() {
    let (ip, udp, mut ib) = sample_ipv4();
    ib.truncate(12);
    ib[0] = 0x1c; // RC_FLUSH
    ib[1] &= !0x30; // no pad
    ib.extend_from_slice(&[0, 0, 0, 0x01]); // FETH: global, range
    ib.extend_from_slice(&[0x11; 16]); // RETH
    let mut crc = icrc_start(IpHeader::V4(&ip), &udp, ib[..12].try_into().unwrap());
    crc.update(&ib[12..]);
    crc.update(&ib);
    let want = crc.finish();
    assert_eq!(icrc(IpHeader::V4(&ip), &udp, &ib), Ok(want));
    assert_eq!(model_icrc(&ip, &udp, &ib), want);
    // Not the IBA's ICRC.
    let mut iba = icrc_start(IpHeader::V4(&ip), &udp, ib[..12].try_into().unwrap());
    iba.update(&ib[12..]);
    assert_ne!(iba.finish(), want);
}

#[test]
fn crc32_check_values() {
    assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    assert_eq!(bitwise_crc32(b"123456789"), 0xcbf4_3926);
    assert_eq!(crc32(b""), 0);
    // The kernel's crc32_le has no inversions of its own.
    assert_eq!(!crc32_le(!0, b"123456789"), 0xcbf4_3926);
    assert_eq!(CRC32_TABLE[0], 0);
    assert_eq!(CRC32_TABLE[1], 0x7707_3096);
    assert_eq!(CRC32_TABLE[255], 0x2d02_ef8d);
}

#[test]
fn seed_is_masked_lrh() {
    // rxe's comment says the seed comes from 8 bytes of 0xff fed into a
    // fresh register; check that rather than trusting the constant.
    assert_eq!(crc32_le(0xffff_ffff, &[0xff; 8]), ICRC_SEED);
    let mut crc = Crc32::new();
    crc.update(&[0xff; 8]);
    assert_eq!(crc.state(), ICRC_SEED);
}

#[test]
fn hand_built_ipv4_packet() {
    let (ip, udp, ib) = sample_ipv4();
    let want = model_icrc(&ip, &udp, &ib);
    assert_eq!(icrc(IpHeader::V4(&ip), &udp, &ib), Ok(want));

    let mut packet = ib.clone();
    packet.extend_from_slice(&to_wire(want));
    assert_eq!(verify(IpHeader::V4(&ip), &udp, &packet), Ok(()));
    // Least significant byte first on the wire.
    assert_eq!(packet[packet.len() - 4], want.to_le_bytes()[0]);
}

#[test]
fn scapy_uc_send_only() {
    // The UC SEND_ONLY example of scapy's RoCE regression tests
    // (test/contrib/roce.uts), whose ICRC field reads 0x78f353f3 as
    // big-endian wire bytes.
    let ip = [
        0x45, 0x01, 0x00, 0x40, 0x04, 0x78, 0x40, 0x00, 0x40, 0x11, 0xb4, 0xd5, 0xc0, 0xa8, 0x00,
        0x07, 0xc0, 0xa8, 0x00, 0x07,
    ];
    let udp = [0xc0, 0x00, 0x12, 0xb7, 0x00, 0x2c, 0xac, 0xa2];
    let mut ib = vec![
        0x24, 0x60, 0xff, 0xff, 0x00, 0x00, 0x00, 0xd3, 0x00, 0xcf, 0x17, 0x10,
    ];
    ib.extend_from_slice(b"F0\x81\x8b\xe2\x895\xd9\x0e\x9a\x95PT\x01\xbe\x88^P\x00\x00");
    let wire = [0x78, 0xf3, 0x53, 0xf3];

    let got = icrc(IpHeader::V4(&ip), &udp, &ib).unwrap();
    assert_eq!(to_wire(got), wire);
    assert_eq!(got, model_icrc(&ip, &udp, &ib));
}

#[test]
fn connectx_cnp_capture() {
    // A CNP captured from a ConnectX-4 Lx NIC (also in scapy's RoCE tests):
    // hardware-generated, BECN set in the masked BTH byte.
    let ip = [
        0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00, 0x11,
        0x01, 0x0a, 0x00, 0x12, 0x01,
    ];
    let udp = [0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00];
    let mut packet = vec![
        0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00,
    ];
    packet.extend_from_slice(&[0; 16]);
    packet.extend_from_slice(&[0x82, 0xfd, 0x00, 0x2a]);

    assert_eq!(verify(IpHeader::V4(&ip), &udp, &packet), Ok(()));
    assert_eq!(from_wire([0x82, 0xfd, 0x00, 0x2a]), 0x2a00_fd82);
}

#[test]
fn ipv6_against_model() {
    let mut ip = [0u8; 40];
    ip[0] = 0x6b; // version 6, traffic class 0xb_
    ip[1] = 0xc1; // ... class _c, flow label 0x1....
    ip[2] = 0x23;
    ip[3] = 0x45;
    ip[4..6].copy_from_slice(&[0x00, 0x24]); // payload length
    ip[6] = 17; // next header UDP
    ip[7] = 63; // hop limit
    for (i, b) in ip[8..].iter_mut().enumerate() {
        *b = 0xfe ^ i as u8; // addresses
    }
    let udp = [0xd0, 0x00, 0x12, 0xb7, 0x00, 0x24, 0x12, 0x34];
    let (_, _, ib) = sample_ipv4();
    let got = icrc(IpHeader::V6(&ip), &udp, &ib).unwrap();
    assert_eq!(got, model_icrc(&ip, &udp, &ib));
    // Version and payload length are covered.
    let mut other = ip;
    other[0] = 0x4b;
    assert_ne!(icrc(IpHeader::V6(&other), &udp, &ib).unwrap(), got);
    other = ip;
    other[5] ^= 1;
    assert_ne!(icrc(IpHeader::V6(&other), &udp, &ib).unwrap(), got);
}

#[test]
fn errors() {
    let (ip, udp, ib) = sample_ipv4();
    assert_eq!(
        IpHeader::from_slice(&[0u8; 24]),
        Err(IcrcError::BadIpHeaderLen(24))
    );
    assert!(matches!(
        IpHeader::from_slice(&[0u8; 40]),
        Ok(IpHeader::V6(_))
    ));
    assert_eq!(
        icrc(IpHeader::V4(&ip), &udp, &ib[..11]),
        Err(IcrcError::Truncated {
            needed: 12,
            available: 11
        })
    );
    assert_eq!(
        verify(IpHeader::V4(&ip), &udp, &ib[..15]),
        Err(IcrcError::Truncated {
            needed: 16,
            available: 15
        })
    );
    // A BTH with no ICRC after it is too short to verify; one with an
    // ICRC and nothing else is not.
    let mut bare = ib[..12].to_vec();
    bare.extend_from_slice(&to_wire(icrc(IpHeader::V4(&ip), &udp, &ib[..12]).unwrap()));
    assert_eq!(verify(IpHeader::V4(&ip), &udp, &bare), Ok(()));
    let mut bad = ib.clone();
    bad.extend_from_slice(&[0; 4]);
    let computed = icrc(IpHeader::V4(&ip), &udp, &ib).unwrap();
    assert_eq!(
        verify(IpHeader::V4(&ip), &udp, &bad),
        Err(IcrcError::Mismatch {
            computed,
            received: 0
        })
    );
}

/// An arbitrary packet: IPv4 or IPv6 header bytes, UDP header bytes and an
/// IB part of at least a BTH.
fn arb_packet() -> impl Strategy<Value = (Vec<u8>, [u8; 8], Vec<u8>)> {
    (
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 20),
            proptest::collection::vec(any::<u8>(), 40)
        ],
        any::<[u8; 8]>(),
        proptest::collection::vec(any::<u8>(), 12..200),
    )
}

/// (byte position, bit mask) pairs of bits the ICRC ignores.
type Masks = Vec<(usize, u8)>;

/// The ignored bits of the IP header of length `ip_len`, the UDP header
/// and the IB part.
fn masked_bits(ip_len: usize) -> (Masks, Masks, Masks) {
    let ip = if ip_len == 20 {
        vec![(1, 0xff), (8, 0xff), (10, 0xff), (11, 0xff)]
    } else {
        vec![(0, 0x0f), (1, 0xff), (2, 0xff), (3, 0xff), (7, 0xff)]
    };
    (ip, vec![(6, 0xff), (7, 0xff)], vec![(4, 0xff)])
}

fn mask_at(masks: &[(usize, u8)], pos: usize) -> u8 {
    masks
        .iter()
        .filter(|&&(p, _)| p == pos)
        .map(|&(_, m)| m)
        .fold(0, |a, m| a | m)
}

proptest! {
    #[test]
    fn table_matches_bitwise(data in proptest::collection::vec(any::<u8>(), 0..300)) {
        prop_assert_eq!(crc32(&data), bitwise_crc32(&data));
    }

    #[test]
    fn matches_model((ip, udp, ib) in arb_packet()) {
        prop_assert_eq!(icrc(ip_of(&ip), &udp, &ib).unwrap(), model_icrc(&ip, &udp, &ib));
    }

    #[test]
    fn masked_fields_ignored(
        (ip, udp, ib) in arb_packet(),
        noise in any::<[u8; 40]>(),
    ) {
        let want = icrc(ip_of(&ip), &udp, &ib).unwrap();
        let (ip_m, udp_m, _) = masked_bits(ip.len());
        let (mut ip2, mut udp2, mut ib2) = (ip.clone(), udp, ib.clone());
        for (i, &(p, m)) in ip_m.iter().enumerate() {
            ip2[p] = (ip2[p] & !m) | (noise[i] & m);
        }
        for (i, &(p, m)) in udp_m.iter().enumerate() {
            udp2[p] ^= noise[10 + i] & m;
        }
        // (C rxe's RC FLUSH covers its BTH a second time, unmasked.)
        if ib2[0] != 0x1c {
            ib2[4] = noise[20];
        }
        prop_assert_eq!(icrc(ip_of(&ip2), &udp2, &ib2).unwrap(), want);
    }

    #[test]
    fn other_bit_flips_detected(
        (ip, udp, ib) in arb_packet(),
        which in 0usize..3,
        pos in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let want = icrc(ip_of(&ip), &udp, &ib).unwrap();
        let (ip_m, udp_m, ib_m) = masked_bits(ip.len());
        let (mut ip2, mut udp2, mut ib2) = (ip.clone(), udp, ib.clone());
        let (bytes, masks): (&mut [u8], _) = match which {
            0 => (&mut ip2, &ip_m),
            1 => (&mut udp2, &udp_m),
            _ => (&mut ib2, &ib_m),
        };
        let p = pos.index(bytes.len());
        let flip = 1u8 << bit;
        if mask_at(masks, p) & flip == 0 {
            bytes[p] ^= flip;
            prop_assert_ne!(icrc(ip_of(&ip2), &udp2, &ib2).unwrap(), want);
        } else {
            bytes[p] ^= flip;
            prop_assert_eq!(icrc(ip_of(&ip2), &udp2, &ib2).unwrap(), want);
        }
    }

    #[test]
    fn ib_single_bit_flip_outside_resv8a(
        (ip, udp, ib) in arb_packet(),
        pos in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let p = pos.index(ib.len());
        prop_assume!(p != 4);
        let mut ib2 = ib.clone();
        ib2[p] ^= 1 << bit;
        prop_assert_ne!(
            icrc(ip_of(&ip), &udp, &ib2).unwrap(),
            icrc(ip_of(&ip), &udp, &ib).unwrap()
        );
    }

    #[test]
    fn incremental_equals_one_shot(
        (ip, udp, ib) in arb_packet(),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        // RC FLUSH's ICRC is C rxe's (headers twice), not the
        // incremental IBA one this checks.
        prop_assume!(ib[0] != 0x1c);
        let want = icrc(ip_of(&ip), &udp, &ib).unwrap();
        let (bth, rest) = ib.split_first_chunk::<12>().unwrap();
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(rest.len() + 1)).collect();
        points.sort_unstable();
        let mut crc = icrc_start(ip_of(&ip), &udp, bth);
        let mut from = 0;
        for &to in &points {
            crc.update(&rest[from..to]);
            from = to;
        }
        crc.update(&rest[from..]);
        prop_assert_eq!(crc.finish(), want);

        // The same for the plain CRC, resuming from a saved register.
        let mut plain = Crc32::new();
        let mid = points.first().copied().unwrap_or(0);
        plain.update(&ib[..mid]);
        let mut resumed = Crc32::from_state(plain.state());
        resumed.update(&ib[mid..]);
        prop_assert_eq!(resumed.finish(), crc32(&ib));
    }

    #[test]
    fn verify_roundtrip((ip, udp, ib) in arb_packet(), flip in any::<prop::sample::Index>()) {
        let value = icrc(ip_of(&ip), &udp, &ib).unwrap();
        let mut packet = ib.clone();
        packet.extend_from_slice(&to_wire(value));
        prop_assert_eq!(verify(ip_of(&ip), &udp, &packet), Ok(()));
        prop_assert_eq!(from_wire(to_wire(value)), value);
        // Corrupting the ICRC itself is caught too.
        let p = ib.len() + flip.index(4);
        packet[p] ^= 0x01;
        let is_mismatch = matches!(
            verify(ip_of(&ip), &udp, &packet),
            Err(IcrcError::Mismatch { .. })
        );
        prop_assert!(is_mismatch);
    }
}
