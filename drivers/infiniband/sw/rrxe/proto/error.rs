// SPDX-License-Identifier: GPL-2.0

//! Errors returned by the wire-format parsers and builders.
//!
//! Every parser and builder in [`super`] reports failure through these
//! types instead of panicking, so a malformed packet from the network can
//! only ever cause the packet to be dropped.

use super::opcode::ExtHeader;

/// Why a received byte sequence is not a valid header or packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParseError {
    /// The buffer ends before the header (or the header plus ICRC) does.
    Truncated {
        /// Bytes the header layout requires.
        needed: usize,
        /// Bytes actually present.
        available: usize,
    },
    /// The BTH opcode is not one this driver implements (includes RD, CNP
    /// and the reserved and manufacturer-specific ranges).
    UnknownOpcode(u8),
    /// The BTH transport header version is not 0.
    BadTransportVersion(u8),
    /// The BTH pad count is larger than the bytes left after the headers
    /// and ICRC, which would make the payload length negative.
    PadTooLarge {
        /// Pad count from the BTH.
        pad: u8,
        /// Bytes between the end of the headers and the ICRC.
        available: usize,
    },
    /// The opcode carries no payload but the packet has bytes (payload or
    /// pad) between its headers and its ICRC.
    UnexpectedPayload {
        /// Opcode of the packet.
        opcode: u8,
        /// Bytes found between the headers and the ICRC.
        len: usize,
    },
}

/// Why a header could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BuildError {
    /// The output buffer is shorter than the header(s) to write. Nothing
    /// has been written.
    BufferTooShort {
        /// Bytes the header(s) need.
        needed: usize,
        /// Bytes available in the buffer.
        available: usize,
    },
    /// The BTH opcode is not one this driver implements.
    UnknownOpcode(u8),
    /// The opcode requires this extension header but none was supplied.
    MissingHeader(ExtHeader),
    /// An extension header was supplied that the opcode does not carry.
    UnexpectedHeader(ExtHeader),
}
