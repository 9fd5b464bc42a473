// SPDX-License-Identifier: GPL-2.0

//! The RoCEv2 invariant CRC (ICRC), computed exactly as C rxe does.
//!
//! The ICRC is the standard reflected CRC-32 (polynomial `0xedb88320`,
//! initial value all ones, final inversion) over
//!
//! ```text
//! | 8 x 0xff | IP header | UDP header | BTH | ext headers | payload | pad |
//! ```
//!
//! with the fields a router may rewrite replaced by all-ones bits. The eight
//! `0xff` bytes stand for the masked LRH of native InfiniBand; rxe does not
//! feed them but starts from [`ICRC_SEED`], the CRC state they produce. The
//! masked fields are
//!
//! - IPv4: TOS, TTL and header checksum;
//! - IPv6: traffic class, flow label and hop limit;
//! - UDP: checksum;
//! - BTH: the reserved byte before the destination QPN (`resv8a`).
//!
//! Byte order: C rxe stores the final `u32` with a plain native store, so on
//! the little-endian hosts it runs on the ICRC goes on the wire least
//! significant byte first. Every value this module returns as a `u32` is the
//! CRC as a number; [`to_wire`] and [`from_wire`] convert it to and from the
//! four wire bytes (little-endian, whatever the host's byte order).
//!
//! [`Crc32`] is incremental, so the driver can feed the non-contiguous pieces
//! of a socket buffer: start with [`icrc_start`] and then
//! [`Crc32::update`] with every following byte up to the ICRC.
//!
//! The CRC-32 itself is a type parameter, a [`Crc32Le`]: this module is also
//! built on the host and names nothing of the kernel, so the module's
//! callers pass the kernel's accelerated `crc32_le`
//! (`crate::ffi::rxe_abi::KernelCrc32`, where a KUnit test checks it
//! against the table) and the host tests pass [`TableCrc32`], the
//! reference. Each caller's code is monomorphised: a direct call, as if the
//! implementation were named here.

use super::packet::ICRC_LEN;
use core::marker::PhantomData;

/// The reflected CRC-32 polynomial (IEEE 802.3), as the kernel's
/// `crc32_le` uses it.
pub(crate) const CRC32_POLY: u32 = 0xedb8_8320;

/// Builds the byte-at-a-time lookup table for [`CRC32_POLY`].
const fn crc32_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        // `n < 256`, so the cast is lossless; `u32::from` is not const.
        let mut crc = n as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ CRC32_POLY
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[n] = crc;
        n += 1;
    }
    table
}

/// `CRC32_TABLE[b]` is the CRC-32 register update for the byte `b`.
pub(crate) const CRC32_TABLE: [u32; 256] = crc32_table();

/// An implementation of the kernel's `crc32_le(crc, data)`, which the ICRC
/// is computed with.
///
/// Implemented by types that are never values, only type parameters: the
/// kernel's own `crc32_le` (accelerated where the CPU allows) in the
/// module, [`TableCrc32`] on the host.
pub(crate) trait Crc32Le {
    /// Feeds `data` into the raw CRC register `crc` with no inversion on
    /// entry or exit, and returns the new register.
    fn update(crc: u32, data: &[u8]) -> u32;
}

/// The reference [`Crc32Le`], [`crc32_le_table`]: what the host tests check
/// and the kernel's `crc32_le` is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TableCrc32;

impl Crc32Le for TableCrc32 {
    fn update(crc: u32, data: &[u8]) -> u32 {
        crc32_le_table(crc, data)
    }
}

/// The kernel's `crc32_le` one byte at a time through [`CRC32_TABLE`].
pub(crate) fn crc32_le_table(crc: u32, data: &[u8]) -> u32 {
    data.iter().fold(crc, |crc, &b| {
        // Only the low byte of the register selects the table entry.
        let idx = (crc as u8) ^ b;
        (crc >> 8) ^ CRC32_TABLE[usize::from(idx)]
    })
}

/// An incremental CRC-32 computation, with the CRC-32 `C`.
///
/// [`Crc32::new`] gives the standard CRC-32; [`icrc_start`] gives one primed
/// for an ICRC. Feeding the same bytes in any number of pieces yields the
/// same result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Crc32<C> {
    /// The CRC register as `crc32_le` sees it (not inverted).
    state: u32,
    /// The implementation, a type only.
    crc: PhantomData<C>,
}

impl<C: Crc32Le> Crc32<C> {
    /// Starts a standard CRC-32 (register all ones).
    pub(crate) const fn new() -> Crc32<C> {
        Crc32::from_state(!0)
    }

    /// Resumes from a raw register value, such as [`ICRC_SEED`] or one
    /// returned by [`Crc32::state`].
    pub(crate) const fn from_state(state: u32) -> Crc32<C> {
        Crc32 {
            state,
            crc: PhantomData,
        }
    }

    /// The raw register value (what C rxe keeps between `rxe_crc32` calls).
    pub(crate) const fn state(&self) -> u32 {
        self.state
    }

    /// Feeds `data`.
    pub(crate) fn update(&mut self, data: &[u8]) {
        self.state = C::update(self.state, data);
    }

    /// Feeds `data` with every bit set in `mask` forced to one, which is how
    /// the ICRC hides mutable fields. Only the first `min(data, mask)` bytes
    /// are fed.
    fn update_masked(&mut self, data: &[u8], mask: &[u8]) {
        let mut buf = [0u8; 40];
        let n = data.len().min(mask.len()).min(buf.len());
        for ((o, &b), &m) in buf.iter_mut().zip(data).zip(mask).take(n) {
            *o = b | m;
        }
        self.update(buf.get(..n).unwrap_or(&[]));
    }

    /// The CRC of everything fed so far (the register inverted). Does not
    /// consume the state, so more bytes may still be fed afterwards.
    pub(crate) const fn finish(&self) -> u32 {
        !self.state
    }
}

impl<C: Crc32Le> Default for Crc32<C> {
    fn default() -> Crc32<C> {
        Crc32::new()
    }
}

/// The standard CRC-32 of `data` (the "123456789" check value is
/// `0xcbf43926`).
pub(crate) fn crc32<C: Crc32Le>(data: &[u8]) -> u32 {
    let mut crc = Crc32::<C>::new();
    crc.update(data);
    crc.finish()
}

/// Register value after feeding eight `0xff` bytes (the masked LRH) into a
/// fresh CRC-32; C rxe hard-codes it as its ICRC starting value.
pub(crate) const ICRC_SEED: u32 = 0xdebb_20e3;

/// Size of an IPv4 header without options, the only kind rxe sends.
pub(crate) const IPV4_HDR_LEN: usize = 20;
/// Size of the fixed IPv6 header.
pub(crate) const IPV6_HDR_LEN: usize = 40;
/// Size of the UDP header.
pub(crate) const UDP_HDR_LEN: usize = 8;
/// Size of the BTH.
pub(crate) const BTH_LEN: usize = 12;

/// IPv4 bits hidden from the ICRC: TOS (byte 1), TTL (byte 8) and header
/// checksum (bytes 10-11).
const IPV4_MASK: [u8; IPV4_HDR_LEN] = [
    0x00, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00,
];

/// IPv6 bits hidden from the ICRC: traffic class (low nibble of byte 0 and
/// high nibble of byte 1), flow label (rest of bytes 1-3) and hop limit
/// (byte 7). The addresses that follow are all covered.
const IPV6_MASK: [u8; IPV6_HDR_LEN] = {
    let mut mask = [0u8; IPV6_HDR_LEN];
    mask[0] = 0x0f;
    mask[1] = 0xff;
    mask[2] = 0xff;
    mask[3] = 0xff;
    mask[7] = 0xff;
    mask
};

/// UDP bits hidden from the ICRC: the checksum (bytes 6-7).
const UDP_MASK: [u8; UDP_HDR_LEN] = [0, 0, 0, 0, 0, 0, 0xff, 0xff];

/// BTH bits hidden from the ICRC: the reserved byte 4 (`resv8a`).
const BTH_MASK: [u8; BTH_LEN] = [0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0];

/// The IP header of a RoCEv2 packet, as rxe covers it with the ICRC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IpHeader<'a> {
    /// An IPv4 header without options.
    V4(&'a [u8; IPV4_HDR_LEN]),
    /// The fixed IPv6 header (no extension headers).
    V6(&'a [u8; IPV6_HDR_LEN]),
}

impl<'a> IpHeader<'a> {
    /// Takes `bytes` as an IPv4 header if it is 20 bytes long or as an IPv6
    /// header if it is 40. Any other length is rejected: rxe never sends IP
    /// options, and it would cover the wrong bytes on receiving them.
    pub(crate) fn from_slice(bytes: &'a [u8]) -> Result<IpHeader<'a>, IcrcError> {
        if let Ok(v4) = <&[u8; IPV4_HDR_LEN]>::try_from(bytes) {
            Ok(IpHeader::V4(v4))
        } else if let Ok(v6) = <&[u8; IPV6_HDR_LEN]>::try_from(bytes) {
            Ok(IpHeader::V6(v6))
        } else {
            Err(IcrcError::BadIpHeaderLen(bytes.len()))
        }
    }

    /// Feeds the header into `crc` with its mutable fields masked.
    fn feed<C: Crc32Le>(self, crc: &mut Crc32<C>) {
        match self {
            IpHeader::V4(h) => crc.update_masked(h, &IPV4_MASK),
            IpHeader::V6(h) => crc.update_masked(h, &IPV6_MASK),
        }
    }
}

/// Why an ICRC could not be computed or did not verify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IcrcError {
    /// The IP header slice is neither 20 (IPv4) nor 40 (IPv6) bytes.
    BadIpHeaderLen(usize),
    /// The IB part is shorter than its BTH (plus ICRC, when verifying).
    Truncated {
        /// Bytes needed.
        needed: usize,
        /// Bytes present.
        available: usize,
    },
    /// The received ICRC differs from the one computed.
    Mismatch {
        /// ICRC computed over the packet.
        computed: u32,
        /// ICRC found in the packet's last four bytes.
        received: u32,
    },
}

/// Starts an ICRC: a CRC state that has covered the masked LRH, IP and UDP
/// headers and BTH. Feed it everything after the BTH up to (not including)
/// the ICRC, then [`Crc32::finish`] gives the ICRC value.
pub(crate) fn icrc_start<C: Crc32Le>(
    ip: IpHeader<'_>,
    udp: &[u8; UDP_HDR_LEN],
    bth: &[u8; BTH_LEN],
) -> Crc32<C> {
    let mut crc = Crc32::from_state(ICRC_SEED);
    ip.feed(&mut crc);
    crc.update_masked(udp, &UDP_MASK);
    crc.update_masked(bth, &BTH_MASK);
    crc
}

/// The RC FLUSH opcode, whose ICRC C rxe computes its own way.
const RC_FLUSH: u8 = 0x1c;

/// Computes the ICRC of a packet whose IB part (BTH through pad, without
/// the ICRC) is the contiguous slice `ib`.
///
/// For RC FLUSH, the ICRC is C rxe's rather than the IBA's: rxe's opcode
/// table gives that opcode no payload offset, so its ICRC goes on over the
/// "payload" at offset 0, which is the whole IB part again (BTH unmasked,
/// FETH, RETH, pad) after the headers. rxe drops a FLUSH whose ICRC is
/// computed otherwise, so this is the only one that interoperates.
pub(crate) fn icrc<C: Crc32Le>(
    ip: IpHeader<'_>,
    udp: &[u8; UDP_HDR_LEN],
    ib: &[u8],
) -> Result<u32, IcrcError> {
    let (bth, rest) = ib
        .split_first_chunk::<BTH_LEN>()
        .ok_or(IcrcError::Truncated {
            needed: BTH_LEN,
            available: ib.len(),
        })?;
    let mut crc = icrc_start::<C>(ip, udp, bth);
    crc.update(rest);
    if bth[0] == RC_FLUSH {
        crc.update(ib);
    }
    Ok(crc.finish())
}

/// The four wire bytes of ICRC value `icrc`, in the order rxe transmits
/// them (least significant byte first).
pub(crate) const fn to_wire(icrc: u32) -> [u8; ICRC_LEN] {
    icrc.to_le_bytes()
}

/// The ICRC value carried by the four wire bytes `bytes`.
pub(crate) const fn from_wire(bytes: [u8; ICRC_LEN]) -> u32 {
    u32::from_le_bytes(bytes)
}

/// Checks the ICRC of a received packet whose IB part, from the BTH through
/// the trailing ICRC, is the contiguous slice `packet`.
pub(crate) fn verify<C: Crc32Le>(
    ip: IpHeader<'_>,
    udp: &[u8; UDP_HDR_LEN],
    packet: &[u8],
) -> Result<(), IcrcError> {
    let truncated = IcrcError::Truncated {
        needed: BTH_LEN + ICRC_LEN,
        available: packet.len(),
    };
    if packet.len() < BTH_LEN + ICRC_LEN {
        return Err(truncated);
    }
    let (ib, trailer) = packet.split_last_chunk::<ICRC_LEN>().ok_or(truncated)?;
    let computed = icrc::<C>(ip, udp, ib)?;
    let received = from_wire(*trailer);
    if computed == received {
        Ok(())
    } else {
        Err(IcrcError::Mismatch { computed, received })
    }
}
