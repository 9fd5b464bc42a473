// SPDX-License-Identifier: GPL-2.0

//! The BTH opcode table.
//!
//! Each opcode fixes, for its packet, the transport service, which
//! extension headers follow the BTH and in what order, whether a payload
//! follows them, and the packet's role in a message (request or response,
//! first/middle/last/only). Everything else in the driver that needs to know
//! "what kind of packet is this" asks this table, so it is the single place
//! where those facts live.
//!
//! The table covers exactly the opcodes the C rxe driver handles for RC, UC
//! and UD queue pairs (RD is not supported). Each entry is declared as a
//! class, a position and a list of extension headers in wire order; the
//! header offsets, the header length and the rxe-style [`Mask`] are derived
//! from that list at compile time so they cannot disagree with it.

use core::ops::BitOr;

use super::error::ParseError;
use super::headers::{
    Aeth, AtomicAckEth, AtomicEth, Bth, Deth, Feth, Ieth, ImmDt, Reth, WireHeader,
};

/// An extension header that may follow the BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ExtHeader {
    /// RDMA extended transport header: virtual address, rkey, DMA length.
    Reth,
    /// ACK extended transport header: syndrome and MSN.
    Aeth,
    /// Atomic extended transport header: address, rkey, operands.
    AtomicEth,
    /// Atomic ACK extended transport header: original remote value.
    AtomicAckEth,
    /// Invalidate extended transport header: rkey to invalidate.
    Ieth,
    /// Datagram extended transport header: Q_Key and source QP.
    Deth,
    /// Immediate data.
    ImmDt,
    /// FLUSH extended transport header: placement type and selectivity.
    Feth,
}

impl ExtHeader {
    /// All extension headers.
    pub(crate) const ALL: [ExtHeader; 8] = [
        ExtHeader::Reth,
        ExtHeader::Aeth,
        ExtHeader::AtomicEth,
        ExtHeader::AtomicAckEth,
        ExtHeader::Ieth,
        ExtHeader::Deth,
        ExtHeader::ImmDt,
        ExtHeader::Feth,
    ];

    /// Size of the header on the wire, in bytes.
    pub(crate) const fn size(self) -> usize {
        match self {
            ExtHeader::Reth => Reth::SIZE,
            ExtHeader::Aeth => Aeth::SIZE,
            ExtHeader::AtomicEth => AtomicEth::SIZE,
            ExtHeader::AtomicAckEth => AtomicAckEth::SIZE,
            ExtHeader::Ieth => Ieth::SIZE,
            ExtHeader::Deth => Deth::SIZE,
            ExtHeader::ImmDt => ImmDt::SIZE,
            ExtHeader::Feth => Feth::SIZE,
        }
    }

    /// The [`Mask`] bit that says an opcode carries this header.
    pub(crate) const fn mask(self) -> Mask {
        match self {
            ExtHeader::Reth => Mask::RETH,
            ExtHeader::Aeth => Mask::AETH,
            ExtHeader::AtomicEth => Mask::ATMETH,
            ExtHeader::AtomicAckEth => Mask::ATMACK,
            ExtHeader::Ieth => Mask::IETH,
            ExtHeader::Deth => Mask::DETH,
            ExtHeader::ImmDt => Mask::IMMDT,
            ExtHeader::Feth => Mask::FETH,
        }
    }
}

/// A set of per-opcode properties, with the same meaning as the C rxe
/// driver's `RXE_*_MASK` bits, so checks like "is this a read or an atomic"
/// read the same way: `info.mask().intersects(Mask::READ_OR_ATOMIC)`.
///
/// The bit positions are private to this driver and are not rxe's values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Mask(u32);

impl Mask {
    /// No property.
    pub(crate) const EMPTY: Mask = Mask(0);
    /// Carries a RETH.
    pub(crate) const RETH: Mask = Mask(1 << 0);
    /// Carries an AETH.
    pub(crate) const AETH: Mask = Mask(1 << 1);
    /// Carries an AtomicETH.
    pub(crate) const ATMETH: Mask = Mask(1 << 2);
    /// Carries an AtomicAckETH.
    pub(crate) const ATMACK: Mask = Mask(1 << 3);
    /// Carries an IETH.
    pub(crate) const IETH: Mask = Mask(1 << 4);
    /// Carries a DETH.
    pub(crate) const DETH: Mask = Mask(1 << 5);
    /// Carries immediate data.
    pub(crate) const IMMDT: Mask = Mask(1 << 6);
    /// Carries a FETH.
    pub(crate) const FETH: Mask = Mask(1 << 7);
    /// May carry a payload after the headers.
    pub(crate) const PAYLOAD: Mask = Mask(1 << 8);
    /// Sent by a requester (handled by the responder).
    pub(crate) const REQ: Mask = Mask(1 << 9);
    /// Sent by a responder (handled by the completer); rxe's `RXE_ACK_MASK`.
    pub(crate) const RESP: Mask = Mask(1 << 10);
    /// Part of a SEND message.
    pub(crate) const SEND: Mask = Mask(1 << 11);
    /// Part of an RDMA WRITE message.
    pub(crate) const WRITE: Mask = Mask(1 << 12);
    /// An RDMA READ request.
    pub(crate) const READ: Mask = Mask(1 << 13);
    /// An atomic (compare & swap or fetch & add) request.
    pub(crate) const ATOMIC: Mask = Mask(1 << 14);
    /// A FLUSH request.
    pub(crate) const FLUSH: Mask = Mask(1 << 15);
    /// An ATOMIC WRITE request.
    pub(crate) const ATOMIC_WRITE: Mask = Mask(1 << 16);
    /// Consumes a receive WQE at the responder.
    pub(crate) const RWR: Mask = Mask(1 << 17);
    /// Completes a receive WQE at the responder.
    pub(crate) const COMP: Mask = Mask(1 << 18);
    /// First (or only) packet of a message.
    pub(crate) const START: Mask = Mask(1 << 19);
    /// Middle packet of a message.
    pub(crate) const MIDDLE: Mask = Mask(1 << 20);
    /// Last (or only) packet of a message.
    pub(crate) const END: Mask = Mask(1 << 21);

    /// RDMA READ or atomic request.
    pub(crate) const READ_OR_ATOMIC: Mask = Mask::READ.union(Mask::ATOMIC);
    /// RDMA WRITE or SEND request.
    pub(crate) const WRITE_OR_SEND: Mask = Mask::WRITE.union(Mask::SEND);
    /// RDMA READ or WRITE request.
    pub(crate) const READ_OR_WRITE: Mask = Mask::READ.union(Mask::WRITE);
    /// Any request that names remote memory with an rkey.
    pub(crate) const RDMA_OP: Mask = Mask::READ_OR_WRITE
        .union(Mask::ATOMIC_WRITE)
        .union(Mask::FLUSH)
        .union(Mask::ATOMIC);

    /// The raw bits.
    pub(crate) const fn bits(self) -> u32 {
        self.0
    }

    /// Both sets together.
    pub(crate) const fn union(self, other: Mask) -> Mask {
        Mask(self.0 | other.0)
    }

    /// True if every property in `other` is in `self`.
    pub(crate) const fn contains(self, other: Mask) -> bool {
        self.0 & other.0 == other.0
    }

    /// True if at least one property in `other` is in `self`.
    pub(crate) const fn intersects(self, other: Mask) -> bool {
        self.0 & other.0 != 0
    }

    /// True if no property is set.
    pub(crate) const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl BitOr for Mask {
    type Output = Mask;

    fn bitor(self, rhs: Mask) -> Mask {
        self.union(rhs)
    }
}

/// The transport service an opcode belongs to (its top three bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Transport {
    /// Reliable connected, opcodes `0x00..=0x1f`.
    Rc,
    /// Unreliable connected, opcodes `0x20..=0x3f`.
    Uc,
    /// Unreliable datagram, opcodes `0x60..=0x7f`.
    Ud,
}

impl Transport {
    /// The transport encoded in the top three bits of `opcode`, or `None`
    /// for RD, CNP and the reserved and manufacturer-specific ranges.
    pub(crate) const fn from_opcode(opcode: u8) -> Option<Transport> {
        match opcode >> 5 {
            0 => Some(Transport::Rc),
            1 => Some(Transport::Uc),
            3 => Some(Transport::Ud),
            _ => None,
        }
    }

    /// The value of the opcode's top three bits for this transport.
    pub(crate) const fn opcode_base(self) -> u8 {
        match self {
            Transport::Rc => 0x00,
            Transport::Uc => 0x20,
            Transport::Ud => 0x60,
        }
    }
}

/// Where a packet sits within its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Position {
    /// First packet of a multi-packet message.
    First,
    /// Neither first nor last packet of a message.
    Middle,
    /// Last packet of a multi-packet message.
    Last,
    /// The whole message in one packet (also used for single-packet
    /// operations such as ACKs, READ requests and atomics).
    Only,
}

impl Position {
    /// The START/MIDDLE/END [`Mask`] bits for this position.
    pub(crate) const fn mask(self) -> Mask {
        match self {
            Position::First => Mask::START,
            Position::Middle => Mask::MIDDLE,
            Position::Last => Mask::END,
            Position::Only => Mask::START.union(Mask::END),
        }
    }
}

/// The operation a packet is part of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum OpClass {
    /// SEND request (with or without immediate or invalidate).
    Send,
    /// RDMA WRITE request (with or without immediate).
    Write,
    /// RDMA READ request.
    ReadRequest,
    /// RDMA READ response carrying data.
    ReadResponse,
    /// ACK or NAK.
    Ack,
    /// ACK of an atomic request, carrying the original value.
    AtomicAck,
    /// Compare & swap or fetch & add request.
    Atomic,
    /// ATOMIC WRITE request.
    AtomicWrite,
    /// FLUSH request.
    Flush,
}

impl OpClass {
    /// True for packets a requester sends.
    pub(crate) const fn is_request(self) -> bool {
        !self.is_response()
    }

    /// True for packets a responder sends.
    pub(crate) const fn is_response(self) -> bool {
        matches!(
            self,
            OpClass::ReadResponse | OpClass::Ack | OpClass::AtomicAck
        )
    }

    /// True if packets of this class may carry payload bytes.
    pub(crate) const fn has_payload(self) -> bool {
        matches!(
            self,
            OpClass::Send | OpClass::Write | OpClass::ReadResponse | OpClass::AtomicWrite
        )
    }

    /// The request/response and operation [`Mask`] bits for this class.
    pub(crate) const fn mask(self) -> Mask {
        let role = if self.is_response() {
            Mask::RESP
        } else {
            Mask::REQ
        };
        let op = match self {
            OpClass::Send => Mask::SEND,
            OpClass::Write => Mask::WRITE,
            OpClass::ReadRequest => Mask::READ,
            OpClass::Atomic => Mask::ATOMIC,
            OpClass::AtomicWrite => Mask::ATOMIC_WRITE,
            OpClass::Flush => Mask::FLUSH,
            OpClass::ReadResponse | OpClass::Ack | OpClass::AtomicAck => Mask::EMPTY,
        };
        let payload = if self.has_payload() {
            Mask::PAYLOAD
        } else {
            Mask::EMPTY
        };
        role.union(op).union(payload)
    }
}

/// Every BTH opcode this driver implements; the discriminant is the value
/// carried in the BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub(crate) enum Opcode {
    /// RC SEND, first packet.
    RcSendFirst = 0x00,
    /// RC SEND, middle packet.
    RcSendMiddle = 0x01,
    /// RC SEND, last packet.
    RcSendLast = 0x02,
    /// RC SEND with immediate, last packet.
    RcSendLastWithImmediate = 0x03,
    /// RC SEND, only packet.
    RcSendOnly = 0x04,
    /// RC SEND with immediate, only packet.
    RcSendOnlyWithImmediate = 0x05,
    /// RC RDMA WRITE, first packet.
    RcRdmaWriteFirst = 0x06,
    /// RC RDMA WRITE, middle packet.
    RcRdmaWriteMiddle = 0x07,
    /// RC RDMA WRITE, last packet.
    RcRdmaWriteLast = 0x08,
    /// RC RDMA WRITE with immediate, last packet.
    RcRdmaWriteLastWithImmediate = 0x09,
    /// RC RDMA WRITE, only packet.
    RcRdmaWriteOnly = 0x0a,
    /// RC RDMA WRITE with immediate, only packet.
    RcRdmaWriteOnlyWithImmediate = 0x0b,
    /// RC RDMA READ request.
    RcRdmaReadRequest = 0x0c,
    /// RC RDMA READ response, first packet.
    RcRdmaReadResponseFirst = 0x0d,
    /// RC RDMA READ response, middle packet.
    RcRdmaReadResponseMiddle = 0x0e,
    /// RC RDMA READ response, last packet.
    RcRdmaReadResponseLast = 0x0f,
    /// RC RDMA READ response, only packet.
    RcRdmaReadResponseOnly = 0x10,
    /// RC ACK/NAK.
    RcAcknowledge = 0x11,
    /// RC atomic ACK.
    RcAtomicAcknowledge = 0x12,
    /// RC atomic compare & swap request.
    RcCompareSwap = 0x13,
    /// RC atomic fetch & add request.
    RcFetchAdd = 0x14,
    /// RC SEND with invalidate, last packet.
    RcSendLastWithInvalidate = 0x16,
    /// RC SEND with invalidate, only packet.
    RcSendOnlyWithInvalidate = 0x17,
    /// RC FLUSH request.
    RcFlush = 0x1c,
    /// RC ATOMIC WRITE request.
    RcAtomicWrite = 0x1d,
    /// UC SEND, first packet.
    UcSendFirst = 0x20,
    /// UC SEND, middle packet.
    UcSendMiddle = 0x21,
    /// UC SEND, last packet.
    UcSendLast = 0x22,
    /// UC SEND with immediate, last packet.
    UcSendLastWithImmediate = 0x23,
    /// UC SEND, only packet.
    UcSendOnly = 0x24,
    /// UC SEND with immediate, only packet.
    UcSendOnlyWithImmediate = 0x25,
    /// UC RDMA WRITE, first packet.
    UcRdmaWriteFirst = 0x26,
    /// UC RDMA WRITE, middle packet.
    UcRdmaWriteMiddle = 0x27,
    /// UC RDMA WRITE, last packet.
    UcRdmaWriteLast = 0x28,
    /// UC RDMA WRITE with immediate, last packet.
    UcRdmaWriteLastWithImmediate = 0x29,
    /// UC RDMA WRITE, only packet.
    UcRdmaWriteOnly = 0x2a,
    /// UC RDMA WRITE with immediate, only packet.
    UcRdmaWriteOnlyWithImmediate = 0x2b,
    /// UD SEND, only packet.
    UdSendOnly = 0x64,
    /// UD SEND with immediate, only packet.
    UdSendOnlyWithImmediate = 0x65,
}

impl Opcode {
    /// Every opcode, in increasing numeric order.
    pub(crate) const ALL: [Opcode; 39] = [
        Opcode::RcSendFirst,
        Opcode::RcSendMiddle,
        Opcode::RcSendLast,
        Opcode::RcSendLastWithImmediate,
        Opcode::RcSendOnly,
        Opcode::RcSendOnlyWithImmediate,
        Opcode::RcRdmaWriteFirst,
        Opcode::RcRdmaWriteMiddle,
        Opcode::RcRdmaWriteLast,
        Opcode::RcRdmaWriteLastWithImmediate,
        Opcode::RcRdmaWriteOnly,
        Opcode::RcRdmaWriteOnlyWithImmediate,
        Opcode::RcRdmaReadRequest,
        Opcode::RcRdmaReadResponseFirst,
        Opcode::RcRdmaReadResponseMiddle,
        Opcode::RcRdmaReadResponseLast,
        Opcode::RcRdmaReadResponseOnly,
        Opcode::RcAcknowledge,
        Opcode::RcAtomicAcknowledge,
        Opcode::RcCompareSwap,
        Opcode::RcFetchAdd,
        Opcode::RcSendLastWithInvalidate,
        Opcode::RcSendOnlyWithInvalidate,
        Opcode::RcFlush,
        Opcode::RcAtomicWrite,
        Opcode::UcSendFirst,
        Opcode::UcSendMiddle,
        Opcode::UcSendLast,
        Opcode::UcSendLastWithImmediate,
        Opcode::UcSendOnly,
        Opcode::UcSendOnlyWithImmediate,
        Opcode::UcRdmaWriteFirst,
        Opcode::UcRdmaWriteMiddle,
        Opcode::UcRdmaWriteLast,
        Opcode::UcRdmaWriteLastWithImmediate,
        Opcode::UcRdmaWriteOnly,
        Opcode::UcRdmaWriteOnlyWithImmediate,
        Opcode::UdSendOnly,
        Opcode::UdSendOnlyWithImmediate,
    ];

    /// The value carried in the BTH.
    pub(crate) const fn value(self) -> u8 {
        self as u8
    }

    /// The opcode with BTH value `value`, if this driver implements it.
    pub(crate) fn from_u8(value: u8) -> Option<Opcode> {
        lookup(value).map(OpcodeInfo::opcode)
    }

    /// Everything the table knows about this opcode.
    ///
    /// This is computed rather than looked up, so it is available in const
    /// context and needs no fallible table access.
    pub(crate) const fn info(self) -> OpcodeInfo {
        describe(self)
    }
}

impl From<Opcode> for u8 {
    fn from(op: Opcode) -> u8 {
        op.value()
    }
}

impl TryFrom<u8> for Opcode {
    type Error = ParseError;

    fn try_from(value: u8) -> Result<Opcode, ParseError> {
        Opcode::from_u8(value).ok_or(ParseError::UnknownOpcode(value))
    }
}

/// Static description of one opcode: its role and its header layout.
///
/// The layout is BTH at offset 0, then the extension headers in
/// [`OpcodeInfo::headers`] order, back to back, then the payload (if any)
/// at [`OpcodeInfo::header_len`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OpcodeInfo {
    opcode: Opcode,
    name: &'static str,
    transport: Transport,
    class: OpClass,
    position: Position,
    headers: &'static [ExtHeader],
    mask: Mask,
    header_len: usize,
}

impl OpcodeInfo {
    /// Derives the mask and length from the declared class, position and
    /// header list, so that they agree by construction.
    const fn new(
        opcode: Opcode,
        name: &'static str,
        class: OpClass,
        position: Position,
        headers: &'static [ExtHeader],
    ) -> OpcodeInfo {
        let mut mask = class.mask().union(position.mask());
        let mut header_len = Bth::SIZE;
        let mut rest = headers;
        while let Some((hdr, tail)) = rest.split_first() {
            mask = mask.union(hdr.mask());
            header_len += hdr.size();
            rest = tail;
        }
        // A packet that starts a SEND, or a WRITE that delivers immediate
        // data, takes a receive WQE; the one that ends it completes the WQE.
        let imm = mask.contains(Mask::IMMDT);
        let send = matches!(class, OpClass::Send);
        let write_imm = matches!(class, OpClass::Write) && imm;
        if write_imm || (send && mask.contains(Mask::START)) {
            mask = mask.union(Mask::RWR);
        }
        if write_imm || (send && mask.contains(Mask::END)) {
            mask = mask.union(Mask::COMP);
        }
        OpcodeInfo {
            opcode,
            name,
            transport: transport_of(opcode),
            class,
            position,
            headers,
            mask,
            header_len,
        }
    }

    /// The opcode described.
    pub(crate) const fn opcode(&self) -> Opcode {
        self.opcode
    }

    /// IBA name without the `IB_OPCODE_` prefix, e.g. `"RC_SEND_ONLY"`.
    pub(crate) const fn name(&self) -> &'static str {
        self.name
    }

    /// Transport service (RC, UC or UD).
    pub(crate) const fn transport(&self) -> Transport {
        self.transport
    }

    /// Operation class.
    pub(crate) const fn class(&self) -> OpClass {
        self.class
    }

    /// Position within the message.
    pub(crate) const fn position(&self) -> Position {
        self.position
    }

    /// Extension headers after the BTH, in wire order.
    pub(crate) const fn headers(&self) -> &'static [ExtHeader] {
        self.headers
    }

    /// The rxe-style property mask.
    pub(crate) const fn mask(&self) -> Mask {
        self.mask
    }

    /// Length of the BTH plus all extension headers; also the payload
    /// offset.
    pub(crate) const fn header_len(&self) -> usize {
        self.header_len
    }

    /// Offset of the payload from the start of the BTH.
    pub(crate) const fn payload_offset(&self) -> usize {
        self.header_len
    }

    /// True if the opcode carries extension header `hdr`.
    pub(crate) const fn has(&self, hdr: ExtHeader) -> bool {
        self.mask.contains(hdr.mask())
    }

    /// Offset of extension header `hdr` from the start of the BTH, or
    /// `None` if the opcode does not carry it.
    pub(crate) const fn offset(&self, hdr: ExtHeader) -> Option<usize> {
        let mut offset = Bth::SIZE;
        let mut rest = self.headers;
        while let Some((h, tail)) = rest.split_first() {
            if h.mask().bits() == hdr.mask().bits() {
                return Some(offset);
            }
            offset += h.size();
            rest = tail;
        }
        None
    }

    /// True if payload bytes may follow the headers.
    pub(crate) const fn has_payload(&self) -> bool {
        self.mask.contains(Mask::PAYLOAD)
    }

    /// True if a requester sends this packet.
    pub(crate) const fn is_request(&self) -> bool {
        self.mask.contains(Mask::REQ)
    }

    /// True if a responder sends this packet.
    pub(crate) const fn is_response(&self) -> bool {
        self.mask.contains(Mask::RESP)
    }

    /// True for SEND request packets.
    pub(crate) const fn is_send(&self) -> bool {
        self.mask.contains(Mask::SEND)
    }

    /// True for RDMA WRITE request packets.
    pub(crate) const fn is_write(&self) -> bool {
        self.mask.contains(Mask::WRITE)
    }

    /// True for RDMA READ requests (not responses).
    pub(crate) const fn is_read(&self) -> bool {
        self.mask.contains(Mask::READ)
    }

    /// True for compare & swap and fetch & add requests.
    pub(crate) const fn is_atomic(&self) -> bool {
        self.mask.contains(Mask::ATOMIC)
    }

    /// True for ATOMIC WRITE requests.
    pub(crate) const fn is_atomic_write(&self) -> bool {
        self.mask.contains(Mask::ATOMIC_WRITE)
    }

    /// True for FLUSH requests.
    pub(crate) const fn is_flush(&self) -> bool {
        self.mask.contains(Mask::FLUSH)
    }

    /// True for the first or only packet of a message.
    pub(crate) const fn is_first(&self) -> bool {
        self.mask.contains(Mask::START)
    }

    /// True for the last or only packet of a message.
    pub(crate) const fn is_last(&self) -> bool {
        self.mask.contains(Mask::END)
    }
}

/// The transport from the opcode's top bits. Every [`Opcode`] is RC, UC or
/// UD; the compile-time check below proves it, so the UD fallback for other
/// patterns is never taken.
const fn transport_of(opcode: Opcode) -> Transport {
    match Transport::from_opcode(opcode.value()) {
        Some(t) => t,
        None => Transport::Ud,
    }
}

/// The declaration of each opcode: name, class, position and extension
/// headers in wire order. Everything else is derived in [`OpcodeInfo::new`].
const fn describe(op: Opcode) -> OpcodeInfo {
    use ExtHeader::{Aeth, AtomicAckEth, AtomicEth, Deth, Feth, Ieth, ImmDt, Reth};
    use OpClass as C;
    use Position as P;

    let (name, class, pos, hdrs): (&str, OpClass, Position, &'static [ExtHeader]) = match op {
        Opcode::RcSendFirst => ("RC_SEND_FIRST", C::Send, P::First, &[]),
        Opcode::RcSendMiddle => ("RC_SEND_MIDDLE", C::Send, P::Middle, &[]),
        Opcode::RcSendLast => ("RC_SEND_LAST", C::Send, P::Last, &[]),
        Opcode::RcSendLastWithImmediate => {
            ("RC_SEND_LAST_WITH_IMMEDIATE", C::Send, P::Last, &[ImmDt])
        }
        Opcode::RcSendOnly => ("RC_SEND_ONLY", C::Send, P::Only, &[]),
        Opcode::RcSendOnlyWithImmediate => {
            ("RC_SEND_ONLY_WITH_IMMEDIATE", C::Send, P::Only, &[ImmDt])
        }
        Opcode::RcRdmaWriteFirst => ("RC_RDMA_WRITE_FIRST", C::Write, P::First, &[Reth]),
        Opcode::RcRdmaWriteMiddle => ("RC_RDMA_WRITE_MIDDLE", C::Write, P::Middle, &[]),
        Opcode::RcRdmaWriteLast => ("RC_RDMA_WRITE_LAST", C::Write, P::Last, &[]),
        Opcode::RcRdmaWriteLastWithImmediate => (
            "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
            C::Write,
            P::Last,
            &[ImmDt],
        ),
        Opcode::RcRdmaWriteOnly => ("RC_RDMA_WRITE_ONLY", C::Write, P::Only, &[Reth]),
        Opcode::RcRdmaWriteOnlyWithImmediate => (
            "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
            C::Write,
            P::Only,
            &[Reth, ImmDt],
        ),
        Opcode::RcRdmaReadRequest => ("RC_RDMA_READ_REQUEST", C::ReadRequest, P::Only, &[Reth]),
        Opcode::RcRdmaReadResponseFirst => (
            "RC_RDMA_READ_RESPONSE_FIRST",
            C::ReadResponse,
            P::First,
            &[Aeth],
        ),
        Opcode::RcRdmaReadResponseMiddle => (
            "RC_RDMA_READ_RESPONSE_MIDDLE",
            C::ReadResponse,
            P::Middle,
            &[],
        ),
        Opcode::RcRdmaReadResponseLast => (
            "RC_RDMA_READ_RESPONSE_LAST",
            C::ReadResponse,
            P::Last,
            &[Aeth],
        ),
        Opcode::RcRdmaReadResponseOnly => (
            "RC_RDMA_READ_RESPONSE_ONLY",
            C::ReadResponse,
            P::Only,
            &[Aeth],
        ),
        Opcode::RcAcknowledge => ("RC_ACKNOWLEDGE", C::Ack, P::Only, &[Aeth]),
        Opcode::RcAtomicAcknowledge => (
            "RC_ATOMIC_ACKNOWLEDGE",
            C::AtomicAck,
            P::Only,
            &[Aeth, AtomicAckEth],
        ),
        Opcode::RcCompareSwap => ("RC_COMPARE_SWAP", C::Atomic, P::Only, &[AtomicEth]),
        Opcode::RcFetchAdd => ("RC_FETCH_ADD", C::Atomic, P::Only, &[AtomicEth]),
        Opcode::RcSendLastWithInvalidate => {
            ("RC_SEND_LAST_WITH_INVALIDATE", C::Send, P::Last, &[Ieth])
        }
        Opcode::RcSendOnlyWithInvalidate => {
            ("RC_SEND_ONLY_WITH_INVALIDATE", C::Send, P::Only, &[Ieth])
        }
        Opcode::RcFlush => ("RC_FLUSH", C::Flush, P::Only, &[Feth, Reth]),
        Opcode::RcAtomicWrite => ("RC_ATOMIC_WRITE", C::AtomicWrite, P::Only, &[Reth]),
        Opcode::UcSendFirst => ("UC_SEND_FIRST", C::Send, P::First, &[]),
        Opcode::UcSendMiddle => ("UC_SEND_MIDDLE", C::Send, P::Middle, &[]),
        Opcode::UcSendLast => ("UC_SEND_LAST", C::Send, P::Last, &[]),
        Opcode::UcSendLastWithImmediate => {
            ("UC_SEND_LAST_WITH_IMMEDIATE", C::Send, P::Last, &[ImmDt])
        }
        Opcode::UcSendOnly => ("UC_SEND_ONLY", C::Send, P::Only, &[]),
        Opcode::UcSendOnlyWithImmediate => {
            ("UC_SEND_ONLY_WITH_IMMEDIATE", C::Send, P::Only, &[ImmDt])
        }
        Opcode::UcRdmaWriteFirst => ("UC_RDMA_WRITE_FIRST", C::Write, P::First, &[Reth]),
        Opcode::UcRdmaWriteMiddle => ("UC_RDMA_WRITE_MIDDLE", C::Write, P::Middle, &[]),
        Opcode::UcRdmaWriteLast => ("UC_RDMA_WRITE_LAST", C::Write, P::Last, &[]),
        Opcode::UcRdmaWriteLastWithImmediate => (
            "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
            C::Write,
            P::Last,
            &[ImmDt],
        ),
        Opcode::UcRdmaWriteOnly => ("UC_RDMA_WRITE_ONLY", C::Write, P::Only, &[Reth]),
        Opcode::UcRdmaWriteOnlyWithImmediate => (
            "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
            C::Write,
            P::Only,
            &[Reth, ImmDt],
        ),
        Opcode::UdSendOnly => ("UD_SEND_ONLY", C::Send, P::Only, &[Deth]),
        Opcode::UdSendOnlyWithImmediate => (
            "UD_SEND_ONLY_WITH_IMMEDIATE",
            C::Send,
            P::Only,
            &[Deth, ImmDt],
        ),
    };
    OpcodeInfo::new(op, name, class, pos, hdrs)
}

/// Number of possible BTH opcode values.
pub(crate) const NUM_OPCODES: usize = 256;

/// Places each opcode's description at the index of its BTH value.
const fn build_table() -> [Option<OpcodeInfo>; NUM_OPCODES] {
    let mut table = [None; NUM_OPCODES];
    let mut rest: &[Opcode] = &Opcode::ALL;
    while let Some((op, tail)) = rest.split_first() {
        // Only evaluated at compile time; a u8 index into 256 entries is
        // always in bounds.
        table[op.value() as usize] = Some(describe(*op));
        rest = tail;
    }
    table
}

/// Compile-time sanity check of the table: every opcode in
/// [`Opcode::ALL`] got its own slot and sits in a transport range.
const fn table_is_consistent(table: &[Option<OpcodeInfo>; NUM_OPCODES]) -> bool {
    let mut filled = 0;
    let mut rest: &[Option<OpcodeInfo>] = table;
    while let Some((entry, tail)) = rest.split_first() {
        if let Some(info) = entry {
            if Transport::from_opcode(info.opcode.value()).is_none() {
                return false;
            }
            filled += 1;
        }
        rest = tail;
    }
    filled == Opcode::ALL.len()
}

const TABLE: [Option<OpcodeInfo>; NUM_OPCODES] = build_table();

const _: () = assert!(table_is_consistent(&TABLE));

/// Opcode descriptions indexed by BTH opcode value; `None` for opcodes this
/// driver does not implement.
pub(crate) static OPCODE_TABLE: [Option<OpcodeInfo>; NUM_OPCODES] = TABLE;

/// Looks up the BTH opcode `value`; `None` if it is not implemented.
pub(crate) fn lookup(value: u8) -> Option<&'static OpcodeInfo> {
    OPCODE_TABLE.get(usize::from(value))?.as_ref()
}
