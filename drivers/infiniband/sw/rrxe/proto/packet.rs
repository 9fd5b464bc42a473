// SPDX-License-Identifier: GPL-2.0

//! Whole-packet parsing and header building.
//!
//! A RoCEv2 packet, as seen after the UDP header, is
//!
//! ```text
//! | BTH | extension headers | payload | pad (0..=3) | ICRC (4) |
//! ```
//!
//! where the opcode in the BTH decides which extension headers follow.
//! [`parse_layout`] validates a received packet against the opcode table
//! and computes where everything is; [`parse_packet`] additionally decodes
//! every header. [`Headers::build`] is the inverse used on transmit: it
//! writes the BTH and exactly the extension headers the opcode requires.

use super::error::{BuildError, ParseError};
use super::headers::{
    Aeth, AtomicAckEth, AtomicEth, AtomicWriteData, Bth, Deth, Feth, Ieth, ImmDt, Reth, WireHeader,
};
use super::opcode::{lookup, ExtHeader, Opcode, OpcodeInfo};
use super::wire::{Reader, Writer};

/// Size of the invariant CRC that ends every packet.
pub(crate) const ICRC_LEN: usize = 4;

/// Pad bytes needed after a payload of `payload_len` bytes to reach a
/// multiple of 4.
pub(crate) const fn pad_len(payload_len: usize) -> u8 {
    match payload_len % 4 {
        1 => 3,
        2 => 2,
        3 => 1,
        _ => 0,
    }
}

/// Bytes after the UDP header of a packet with opcode `info` and
/// `payload_len` payload bytes (headers, payload, pad and ICRC), or `None`
/// on overflow.
pub(crate) const fn packet_len(info: &OpcodeInfo, payload_len: usize) -> Option<usize> {
    // Same rounding as `pad_len`, kept in `usize`.
    let pad = (4 - payload_len % 4) % 4;
    match info.header_len().checked_add(payload_len) {
        Some(len) => len.checked_add(pad + ICRC_LEN),
        None => None,
    }
}

/// Where the parts of a validated packet are, relative to the BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PacketLayout {
    /// Table entry of the packet's opcode; gives the extension header
    /// offsets through [`OpcodeInfo::offset`].
    pub(crate) info: &'static OpcodeInfo,
    /// Length of the whole packet, BTH to ICRC inclusive.
    pub(crate) total_len: usize,
    /// Offset of the payload (equal to the length of all headers).
    pub(crate) payload_offset: usize,
    /// Length of the payload, excluding pad and ICRC.
    pub(crate) payload_len: usize,
    /// Number of pad bytes after the payload.
    pub(crate) pad: usize,
    /// Offset of the 4-byte ICRC.
    pub(crate) icrc_offset: usize,
}

impl PacketLayout {
    /// The packet's opcode.
    pub(crate) const fn opcode(&self) -> Opcode {
        self.info.opcode()
    }

    /// Offset of extension header `hdr`, or `None` if the opcode does not
    /// carry it.
    pub(crate) const fn offset(&self, hdr: ExtHeader) -> Option<usize> {
        self.info.offset(hdr)
    }
}

/// Validates the framing of a received packet and locates its parts.
///
/// `buf` must be exactly the UDP payload: from the first byte of the BTH to
/// the last byte of the ICRC (trim any Ethernet padding using the UDP
/// length first). The checks are the ones the C rxe receive path makes
/// before looking at the QP: the opcode must be implemented, the transport
/// version must be 0, the buffer must hold the opcode's headers and the
/// ICRC, and the pad count must fit in what is left. In addition, opcodes
/// that carry no payload must have nothing between headers and ICRC.
///
/// The ICRC itself is not checked here.
pub(crate) fn parse_layout(buf: &[u8]) -> Result<PacketLayout, ParseError> {
    let bth = Bth::parse(buf)?;
    let info = lookup(bth.opcode).ok_or(ParseError::UnknownOpcode(bth.opcode))?;
    if bth.tver != 0 {
        return Err(ParseError::BadTransportVersion(bth.tver));
    }
    let truncated = ParseError::Truncated {
        needed: info.header_len().saturating_add(ICRC_LEN),
        available: buf.len(),
    };
    // Bytes between the end of the headers and the start of the ICRC.
    let room = buf
        .len()
        .checked_sub(info.header_len())
        .and_then(|n| n.checked_sub(ICRC_LEN))
        .ok_or(truncated)?;
    let pad = usize::from(bth.pad);
    let payload_len = room.checked_sub(pad).ok_or(ParseError::PadTooLarge {
        pad: bth.pad,
        available: room,
    })?;
    if room != 0 && !info.has_payload() {
        return Err(ParseError::UnexpectedPayload {
            opcode: bth.opcode,
            len: room,
        });
    }
    Ok(PacketLayout {
        info,
        total_len: buf.len(),
        payload_offset: info.header_len(),
        payload_len,
        pad,
        // `room` was computed by subtracting these from `buf.len()`.
        icrc_offset: buf.len().saturating_sub(ICRC_LEN),
    })
}

/// The decoded BTH and extension headers of one packet.
///
/// An extension header field is `Some` exactly when the opcode carries that
/// header: [`parse_packet`] guarantees it, and [`Headers::build`] refuses
/// headers that do not match the opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Headers {
    /// Base transport header.
    pub(crate) bth: Bth,
    /// RDMA extended transport header.
    pub(crate) reth: Option<Reth>,
    /// ACK extended transport header.
    pub(crate) aeth: Option<Aeth>,
    /// Atomic extended transport header.
    pub(crate) atomic_eth: Option<AtomicEth>,
    /// Atomic ACK extended transport header.
    pub(crate) atomic_ack_eth: Option<AtomicAckEth>,
    /// Invalidate extended transport header.
    pub(crate) ieth: Option<Ieth>,
    /// Datagram extended transport header.
    pub(crate) deth: Option<Deth>,
    /// Immediate data.
    pub(crate) immdt: Option<ImmDt>,
    /// FLUSH extended transport header.
    pub(crate) feth: Option<Feth>,
}

impl Headers {
    /// Headers with the given BTH and no extension header; fill in the
    /// ones the opcode needs before building.
    pub(crate) const fn new(bth: Bth) -> Headers {
        Headers {
            bth,
            reth: None,
            aeth: None,
            atomic_eth: None,
            atomic_ack_eth: None,
            ieth: None,
            deth: None,
            immdt: None,
            feth: None,
        }
    }

    /// True if extension header `hdr` is present.
    pub(crate) const fn has(&self, hdr: ExtHeader) -> bool {
        match hdr {
            ExtHeader::Reth => self.reth.is_some(),
            ExtHeader::Aeth => self.aeth.is_some(),
            ExtHeader::AtomicEth => self.atomic_eth.is_some(),
            ExtHeader::AtomicAckEth => self.atomic_ack_eth.is_some(),
            ExtHeader::Ieth => self.ieth.is_some(),
            ExtHeader::Deth => self.deth.is_some(),
            ExtHeader::ImmDt => self.immdt.is_some(),
            ExtHeader::Feth => self.feth.is_some(),
        }
    }

    /// Decodes the extension header `hdr` from `r` into its field.
    fn decode_ext(&mut self, hdr: ExtHeader, r: &mut Reader<'_>) -> Option<()> {
        match hdr {
            ExtHeader::Reth => self.reth = Some(Reth::decode(r)?),
            ExtHeader::Aeth => self.aeth = Some(Aeth::decode(r)?),
            ExtHeader::AtomicEth => self.atomic_eth = Some(AtomicEth::decode(r)?),
            ExtHeader::AtomicAckEth => self.atomic_ack_eth = Some(AtomicAckEth::decode(r)?),
            ExtHeader::Ieth => self.ieth = Some(Ieth::decode(r)?),
            ExtHeader::Deth => self.deth = Some(Deth::decode(r)?),
            ExtHeader::ImmDt => self.immdt = Some(ImmDt::decode(r)?),
            ExtHeader::Feth => self.feth = Some(Feth::decode(r)?),
        }
        Some(())
    }

    /// Encodes extension header `hdr` into `w`; `None` if it is absent or
    /// `w` is too short.
    fn encode_ext(&self, hdr: ExtHeader, w: &mut Writer<'_>) -> Option<()> {
        match hdr {
            ExtHeader::Reth => self.reth?.encode(w),
            ExtHeader::Aeth => self.aeth?.encode(w),
            ExtHeader::AtomicEth => self.atomic_eth?.encode(w),
            ExtHeader::AtomicAckEth => self.atomic_ack_eth?.encode(w),
            ExtHeader::Ieth => self.ieth?.encode(w),
            ExtHeader::Deth => self.deth?.encode(w),
            ExtHeader::ImmDt => self.immdt?.encode(w),
            ExtHeader::Feth => self.feth?.encode(w),
        }
    }

    /// Checks that the extension headers present are exactly the ones the
    /// BTH opcode carries, and returns its table entry.
    pub(crate) fn check(&self) -> Result<&'static OpcodeInfo, BuildError> {
        let info = lookup(self.bth.opcode).ok_or(BuildError::UnknownOpcode(self.bth.opcode))?;
        for hdr in ExtHeader::ALL {
            match (info.has(hdr), self.has(hdr)) {
                (true, false) => return Err(BuildError::MissingHeader(hdr)),
                (false, true) => return Err(BuildError::UnexpectedHeader(hdr)),
                _ => {}
            }
        }
        Ok(info)
    }

    /// Writes the BTH and the opcode's extension headers, in wire order, to
    /// the front of `buf` and returns the number of bytes written (the
    /// payload offset). Payload, pad and ICRC are left to the caller.
    ///
    /// Nothing is written on error.
    pub(crate) fn build(&self, buf: &mut [u8]) -> Result<usize, BuildError> {
        let info = self.check()?;
        let len = info.header_len();
        let too_short = BuildError::BufferTooShort {
            needed: len,
            available: buf.len(),
        };
        if buf.len() < len {
            return Err(too_short);
        }
        let mut w = Writer::new(buf);
        self.bth.encode(&mut w).ok_or(too_short)?;
        for hdr in info.headers() {
            self.encode_ext(*hdr, &mut w).ok_or(too_short)?;
        }
        Ok(len)
    }

    /// Decodes the BTH and the extension headers `info` lists from the
    /// front of `buf`.
    fn decode(info: &OpcodeInfo, buf: &[u8]) -> Option<Headers> {
        let mut r = Reader::new(buf);
        let mut headers = Headers::new(Bth::decode(&mut r)?);
        for hdr in info.headers() {
            headers.decode_ext(*hdr, &mut r)?;
        }
        Some(headers)
    }
}

/// A validated received packet with all its headers decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Packet<'a> {
    /// Where everything is.
    pub(crate) layout: PacketLayout,
    /// The decoded headers.
    pub(crate) headers: Headers,
    /// The payload, without pad or ICRC.
    pub(crate) payload: &'a [u8],
    /// The ICRC bytes as received.
    pub(crate) icrc: [u8; ICRC_LEN],
}

impl Packet<'_> {
    /// The packet's opcode.
    pub(crate) const fn opcode(&self) -> Opcode {
        self.layout.info.opcode()
    }

    /// The packet's opcode table entry.
    pub(crate) const fn info(&self) -> &'static OpcodeInfo {
        self.layout.info
    }

    /// The 8 bytes of an ATOMIC WRITE request, if this is one and its
    /// payload is exactly 8 bytes with no pad (IBA oA19-28). `None`
    /// otherwise, in which case the responder should NAK with an invalid
    /// request, as C rxe does.
    pub(crate) fn atomic_write_data(&self) -> Option<AtomicWriteData> {
        if !self.layout.info.is_atomic_write()
            || self.layout.pad != 0
            || self.payload.len() != AtomicWriteData::SIZE
        {
            return None;
        }
        AtomicWriteData::parse(self.payload).ok()
    }
}

/// Validates a received packet (see [`parse_layout`]) and decodes its
/// headers.
pub(crate) fn parse_packet(buf: &[u8]) -> Result<Packet<'_>, ParseError> {
    let layout = parse_layout(buf)?;
    // `parse_layout` has checked the lengths, so the failures below cannot
    // happen; they still map to an error rather than a panic.
    let truncated = ParseError::Truncated {
        needed: layout.payload_offset.saturating_add(ICRC_LEN),
        available: buf.len(),
    };
    let headers = Headers::decode(layout.info, buf).ok_or(truncated)?;
    let (_, after_headers) = buf
        .split_at_checked(layout.payload_offset)
        .ok_or(truncated)?;
    let (payload, _) = after_headers
        .split_at_checked(layout.payload_len)
        .ok_or(truncated)?;
    let (_, icrc) = buf.split_last_chunk::<ICRC_LEN>().ok_or(truncated)?;
    Ok(Packet {
        layout,
        headers,
        payload,
        icrc: *icrc,
    })
}
