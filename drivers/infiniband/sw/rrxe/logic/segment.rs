// SPDX-License-Identifier: GPL-2.0

//! How a message becomes packets: the packet count for a length and path
//! MTU, and the opcode of each packet.
//!
//! The requester and the responder (for READ responses) both number the
//! packets of a message `0..count`; packet `i` always carries the bytes
//! `i * mtu ..` of the message, so a retransmission from any PSN rebuilds
//! exactly the packets sent the first time.

use crate::proto::opcode::{Opcode, Transport};

/// What a request message does, as far as its opcodes are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReqKind {
    /// SEND, optionally with immediate data or an invalidated key.
    Send {
        /// Carries immediate data (last or only packet).
        imm: bool,
        /// Carries an invalidate key (last or only packet; RC only).
        inv: bool,
    },
    /// RDMA WRITE, optionally with immediate data.
    Write {
        /// Carries immediate data (last or only packet).
        imm: bool,
    },
    /// RDMA READ request (one packet).
    Read,
    /// Atomic compare and swap (one packet).
    CmpSwap,
    /// Atomic fetch and add (one packet).
    FetchAdd,
    /// FLUSH (one packet, no payload; RC only).
    Flush,
    /// ATOMIC WRITE (one packet of 8 bytes; RC only).
    AtomicWrite,
}

/// Where a packet is in its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Position {
    /// The only packet.
    Only,
    /// The first of several.
    First,
    /// Neither first nor last.
    Middle,
    /// The last of several.
    Last,
}

/// The number of packets of a `len`-byte message at `mtu` bytes per packet
/// (a zero-length message still takes one). `mtu` 0 is treated as 1.
pub(crate) const fn packet_count(len: u32, mtu: u32) -> u32 {
    let mtu = if mtu == 0 { 1 } else { mtu };
    if len == 0 {
        1
    } else {
        len.div_ceil(mtu)
    }
}

/// The position of packet `index` of `count`.
pub(crate) const fn position(index: u32, count: u32) -> Position {
    if count <= 1 {
        Position::Only
    } else if index == 0 {
        Position::First
    } else if index + 1 >= count {
        Position::Last
    } else {
        Position::Middle
    }
}

/// The payload bytes of packet `index` of a `len`-byte message: offset and
/// length, or `None` if there is no such packet.
pub(crate) const fn packet_span(len: u32, mtu: u32, index: u32) -> Option<(u32, u32)> {
    let mtu = if mtu == 0 { 1 } else { mtu };
    if index >= packet_count(len, mtu) {
        return None;
    }
    // index < count <= len / mtu + 1, so the product cannot overflow len.
    let offset = index * mtu;
    let rest = len - offset;
    Some((offset, if rest < mtu { rest } else { mtu }))
}

/// The low five bits of a request opcode, as IBA numbers them within each
/// transport.
const fn request_low_bits(kind: ReqKind, pos: Position) -> Option<u8> {
    use Position::*;
    Some(match (kind, pos) {
        (ReqKind::Send { .. }, First) => 0x00,
        (ReqKind::Send { .. }, Middle) => 0x01,
        (
            ReqKind::Send {
                imm: false,
                inv: false,
            },
            Last,
        ) => 0x02,
        (
            ReqKind::Send {
                imm: true,
                inv: false,
            },
            Last,
        ) => 0x03,
        (
            ReqKind::Send {
                imm: false,
                inv: true,
            },
            Last,
        ) => 0x16,
        (
            ReqKind::Send {
                imm: false,
                inv: false,
            },
            Only,
        ) => 0x04,
        (
            ReqKind::Send {
                imm: true,
                inv: false,
            },
            Only,
        ) => 0x05,
        (
            ReqKind::Send {
                imm: false,
                inv: true,
            },
            Only,
        ) => 0x17,
        (ReqKind::Write { .. }, First) => 0x06,
        (ReqKind::Write { .. }, Middle) => 0x07,
        (ReqKind::Write { imm: false }, Last) => 0x08,
        (ReqKind::Write { imm: true }, Last) => 0x09,
        (ReqKind::Write { imm: false }, Only) => 0x0a,
        (ReqKind::Write { imm: true }, Only) => 0x0b,
        (ReqKind::Read, Only) => 0x0c,
        (ReqKind::CmpSwap, Only) => 0x13,
        (ReqKind::FetchAdd, Only) => 0x14,
        (ReqKind::Flush, Only) => 0x1c,
        (ReqKind::AtomicWrite, Only) => 0x1d,
        _ => return None,
    })
}

/// The opcode of a request packet at `pos` in a message of `kind` on
/// `transport`, or `None` if the transport has no such opcode (UD only
/// sends single packets; UC has no READ, atomics or invalidation).
pub(crate) fn request_opcode(transport: Transport, kind: ReqKind, pos: Position) -> Option<Opcode> {
    let low = request_low_bits(kind, pos)?;
    let low = match transport {
        Transport::Ud => match (kind, pos) {
            (
                ReqKind::Send {
                    imm: false,
                    inv: false,
                },
                Position::Only,
            ) => 0x04,
            (
                ReqKind::Send {
                    imm: true,
                    inv: false,
                },
                Position::Only,
            ) => 0x05,
            _ => return None,
        },
        _ => low,
    };
    let op = Opcode::from_u8(transport.opcode_base() | low)?;
    // The table tells which opcodes exist on which transport.
    (op.info().transport() == transport).then_some(op)
}

/// The opcode of READ response packet `pos`.
pub(crate) const fn read_response_opcode(pos: Position) -> Opcode {
    match pos {
        Position::Only => Opcode::RcRdmaReadResponseOnly,
        Position::First => Opcode::RcRdmaReadResponseFirst,
        Position::Middle => Opcode::RcRdmaReadResponseMiddle,
        Position::Last => Opcode::RcRdmaReadResponseLast,
    }
}
