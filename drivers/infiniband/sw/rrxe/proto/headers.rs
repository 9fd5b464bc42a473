// SPDX-License-Identifier: GPL-2.0

//! IBA transport header layouts: the BTH and each extension header.
//!
//! Each header is a plain value type implementing [`WireHeader`], which
//! gives it a fixed wire size, a `parse` from the front of a byte slice and
//! a `build` into the front of a mutable byte slice. All multi-byte fields
//! are big-endian on the wire. Reserved bits are written as zero and
//! ignored when read, as IBA requires.
//!
//! Fields narrower than their Rust type (the 24-bit QPNs and MSN, the 2-bit
//! pad, ...) are masked to their width when built, like the C rxe
//! accessors do, so a value that fits round-trips exactly.

use super::error::{BuildError, ParseError};
use super::opcode::Opcode;
use super::psn::Psn;
use super::wire::{Reader, Writer};

/// Mask of a 24-bit field (QPN, MSN, EEN).
pub(crate) const MASK_24: u32 = 0x00ff_ffff;

/// The default (full membership) partition key.
pub(crate) const DEFAULT_PKEY: u16 = 0xffff;

/// Q_Key that GSI (QP1) datagrams must carry.
pub(crate) const GSI_QKEY: u32 = 0x8001_0000;

/// A header with a fixed size and a big-endian wire encoding.
pub(crate) trait WireHeader: Sized {
    /// Size on the wire, in bytes.
    const SIZE: usize;

    /// Reads the header from the front of `r`; `None` if `r` runs out.
    fn decode(r: &mut Reader<'_>) -> Option<Self>;

    /// Writes the header to the front of `w`; `None` if `w` runs out.
    fn encode(&self, w: &mut Writer<'_>) -> Option<()>;

    /// Parses the header from the first [`Self::SIZE`] bytes of `buf`.
    /// Extra bytes after it are ignored.
    fn parse(buf: &[u8]) -> Result<Self, ParseError> {
        Self::decode(&mut Reader::new(buf)).ok_or(ParseError::Truncated {
            needed: Self::SIZE,
            available: buf.len(),
        })
    }

    /// Writes the header into the first [`Self::SIZE`] bytes of `buf` and
    /// returns [`Self::SIZE`]. If `buf` is too short nothing is written.
    fn build(&self, buf: &mut [u8]) -> Result<usize, BuildError> {
        let too_short = BuildError::BufferTooShort {
            needed: Self::SIZE,
            available: buf.len(),
        };
        // Check up front so a failure never leaves a half-written header.
        if buf.len() < Self::SIZE {
            return Err(too_short);
        }
        self.encode(&mut Writer::new(buf)).ok_or(too_short)?;
        Ok(Self::SIZE)
    }
}

/// Base transport header, present in every packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Bth {
    /// Opcode byte; see [`Opcode`] for the values this driver implements.
    pub(crate) opcode: u8,
    /// Solicited event (SE).
    pub(crate) solicited: bool,
    /// Migration state (M).
    pub(crate) migrated: bool,
    /// Pad count, 0..=3: bytes added after the payload to align it to 4.
    pub(crate) pad: u8,
    /// Transport header version, 4 bits; must be 0.
    pub(crate) tver: u8,
    /// Partition key.
    pub(crate) pkey: u16,
    /// Forward explicit congestion notification (F).
    pub(crate) fecn: bool,
    /// Backward explicit congestion notification (B).
    pub(crate) becn: bool,
    /// Destination QP number, 24 bits.
    pub(crate) dest_qpn: u32,
    /// Acknowledge request (A).
    pub(crate) ack_req: bool,
    /// Packet sequence number.
    pub(crate) psn: Psn,
}

impl Bth {
    const SE: u8 = 0x80;
    const MIG: u8 = 0x40;
    const PAD_SHIFT: u32 = 4;
    const PAD_MASK: u8 = 0x3;
    const TVER_MASK: u8 = 0x0f;
    const FECN: u32 = 0x8000_0000;
    const BECN: u32 = 0x4000_0000;
    const ACK_REQ: u32 = 0x8000_0000;

    /// A BTH with the default P_Key, version 0 and every flag clear.
    pub(crate) const fn new(opcode: Opcode, dest_qpn: u32, psn: Psn) -> Bth {
        Bth {
            opcode: opcode.value(),
            solicited: false,
            migrated: false,
            pad: 0,
            tver: 0,
            pkey: DEFAULT_PKEY,
            fecn: false,
            becn: false,
            dest_qpn: dest_qpn & MASK_24,
            ack_req: false,
            psn,
        }
    }

    /// The opcode, if this driver implements it.
    pub(crate) fn opcode(&self) -> Option<Opcode> {
        Opcode::from_u8(self.opcode)
    }
}

/// Returns `flag` if `set`, else 0, for assembling flag words.
const fn bit_if<T: Copy>(set: bool, flag: T, zero: T) -> T {
    if set {
        flag
    } else {
        zero
    }
}

impl WireHeader for Bth {
    const SIZE: usize = 12;

    fn decode(r: &mut Reader<'_>) -> Option<Bth> {
        let opcode = r.u8()?;
        let flags = r.u8()?;
        let pkey = r.be16()?;
        let qpn_word = r.be32()?;
        let psn_word = r.be32()?;
        Some(Bth {
            opcode,
            solicited: flags & Bth::SE != 0,
            migrated: flags & Bth::MIG != 0,
            pad: (flags >> Bth::PAD_SHIFT) & Bth::PAD_MASK,
            tver: flags & Bth::TVER_MASK,
            pkey,
            fecn: qpn_word & Bth::FECN != 0,
            becn: qpn_word & Bth::BECN != 0,
            dest_qpn: qpn_word & MASK_24,
            ack_req: psn_word & Bth::ACK_REQ != 0,
            psn: Psn::new(psn_word),
        })
    }

    fn encode(&self, w: &mut Writer<'_>) -> Option<()> {
        let flags = bit_if(self.solicited, Bth::SE, 0)
            | bit_if(self.migrated, Bth::MIG, 0)
            | ((self.pad & Bth::PAD_MASK) << Bth::PAD_SHIFT)
            | (self.tver & Bth::TVER_MASK);
        // The 6 reserved bits next to F/B and the 7 next to A stay zero.
        let qpn_word = bit_if(self.fecn, Bth::FECN, 0)
            | bit_if(self.becn, Bth::BECN, 0)
            | (self.dest_qpn & MASK_24);
        let psn_word = bit_if(self.ack_req, Bth::ACK_REQ, 0) | self.psn.get();
        w.u8(self.opcode)?;
        w.u8(flags)?;
        w.be16(self.pkey)?;
        w.be32(qpn_word)?;
        w.be32(psn_word)
    }
}

/// RDMA extended transport header: the remote buffer of a WRITE, READ,
/// ATOMIC WRITE or FLUSH.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Reth {
    /// Remote virtual address.
    pub(crate) va: u64,
    /// Remote key.
    pub(crate) rkey: u32,
    /// Length of the whole transfer, in bytes.
    pub(crate) len: u32,
}

impl WireHeader for Reth {
    const SIZE: usize = 16;

    fn decode(r: &mut Reader<'_>) -> Option<Reth> {
        Some(Reth {
            va: r.be64()?,
            rkey: r.be32()?,
            len: r.be32()?,
        })
    }

    fn encode(&self, w: &mut Writer<'_>) -> Option<()> {
        w.be64(self.va)?;
        w.be32(self.rkey)?;
        w.be32(self.len)
    }
}

/// Reason code of a NAK (syndrome type `0b11`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum NakCode {
    /// PSN sequence error: the responder expected an earlier PSN.
    PsnSequenceError,
    /// Invalid request.
    InvalidRequest,
    /// Remote access error (bad rkey, bounds or permissions).
    RemoteAccessError,
    /// Remote operational error.
    RemoteOperationalError,
    /// Invalid RD request.
    InvalidRdRequest,
    /// A reserved code (5..=31), kept so that it round-trips.
    Reserved(u8),
}

impl NakCode {
    /// Decodes the 5-bit NAK code.
    pub(crate) const fn from_bits(code: u8) -> NakCode {
        match code & Syndrome::VALUE_MASK {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            4 => NakCode::InvalidRdRequest,
            other => NakCode::Reserved(other),
        }
    }

    /// The 5-bit NAK code.
    pub(crate) const fn bits(self) -> u8 {
        match self {
            NakCode::PsnSequenceError => 0,
            NakCode::InvalidRequest => 1,
            NakCode::RemoteAccessError => 2,
            NakCode::RemoteOperationalError => 3,
            NakCode::InvalidRdRequest => 4,
            NakCode::Reserved(code) => code & Syndrome::VALUE_MASK,
        }
    }
}

/// The decoded AETH syndrome byte.
///
/// Bit 7 is reserved, bits 6..5 give the type and bits 4..0 its value. The
/// C rxe driver treats a syndrome with bit 7 set, or of the reserved type
/// `0b10`, as an error; those decode to [`Syndrome::Reserved`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Syndrome {
    /// Positive acknowledgement with an end-to-end credit count
    /// (`0x1f` = [`Syndrome::CREDITS_UNLIMITED`]).
    Ack {
        /// 5-bit credit count.
        credits: u8,
    },
    /// Receiver not ready; retry after the encoded delay.
    RnrNak {
        /// 5-bit RNR timer code; see [`rnr_timeout_usecs`].
        timer: u8,
    },
    /// Negative acknowledgement.
    Nak(NakCode),
    /// Any other byte, kept raw so that it round-trips.
    Reserved(u8),
}

impl Syndrome {
    const TYPE_MASK: u8 = 0xe0;
    const VALUE_MASK: u8 = 0x1f;
    const TYPE_ACK: u8 = 0x00;
    const TYPE_RNR_NAK: u8 = 0x20;
    const TYPE_NAK: u8 = 0x60;

    /// Credit count meaning "no end-to-end flow control".
    pub(crate) const CREDITS_UNLIMITED: u8 = 0x1f;

    /// The ACK the C rxe responder sends: unlimited credits.
    pub(crate) const ACK_UNLIMITED: Syndrome = Syndrome::Ack {
        credits: Syndrome::CREDITS_UNLIMITED,
    };

    /// Decodes a raw syndrome byte. Every byte decodes to something, and
    /// [`Syndrome::to_u8`] gives the byte back.
    pub(crate) const fn from_u8(raw: u8) -> Syndrome {
        let value = raw & Syndrome::VALUE_MASK;
        match raw & Syndrome::TYPE_MASK {
            Syndrome::TYPE_ACK => Syndrome::Ack { credits: value },
            Syndrome::TYPE_RNR_NAK => Syndrome::RnrNak { timer: value },
            Syndrome::TYPE_NAK => Syndrome::Nak(NakCode::from_bits(value)),
            _ => Syndrome::Reserved(raw),
        }
    }

    /// Encodes the syndrome byte; values wider than 5 bits are masked.
    pub(crate) const fn to_u8(self) -> u8 {
        match self {
            Syndrome::Ack { credits } => Syndrome::TYPE_ACK | (credits & Syndrome::VALUE_MASK),
            Syndrome::RnrNak { timer } => Syndrome::TYPE_RNR_NAK | (timer & Syndrome::VALUE_MASK),
            Syndrome::Nak(code) => Syndrome::TYPE_NAK | code.bits(),
            Syndrome::Reserved(raw) => raw,
        }
    }
}

/// RNR NAK timer codes in microseconds, indexed by code, as IBA defines
/// them. (C rxe has 61_410 for code 25, a typo for 61.44 ms.)
const RNR_TIMEOUT_USECS: [u32; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560, 3_840,
    5_120, 7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840,
    245_760, 327_680, 491_520,
];

/// The delay, in microseconds, that RNR timer code `timer` (5 bits; higher
/// bits ignored) asks the requester to wait before retrying.
pub(crate) fn rnr_timeout_usecs(timer: u8) -> u32 {
    let index = usize::from(timer & Syndrome::VALUE_MASK);
    // The index is masked to 0..32, so the fallback is never used.
    RNR_TIMEOUT_USECS.get(index).copied().unwrap_or(655_360)
}

/// ACK extended transport header: syndrome and message sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Aeth {
    /// What kind of acknowledgement this is.
    pub(crate) syndrome: Syndrome,
    /// Message sequence number, 24 bits.
    pub(crate) msn: u32,
}

impl Aeth {
    /// A positive ACK with unlimited credits, as rxe sends.
    pub(crate) const fn ack(msn: u32) -> Aeth {
        Aeth {
            syndrome: Syndrome::ACK_UNLIMITED,
            msn: msn & MASK_24,
        }
    }

    /// An RNR NAK asking for a retry after RNR timer code `timer`.
    pub(crate) const fn rnr_nak(timer: u8, msn: u32) -> Aeth {
        Aeth {
            syndrome: Syndrome::RnrNak {
                timer: timer & Syndrome::VALUE_MASK,
            },
            msn: msn & MASK_24,
        }
    }

    /// A NAK with reason `code`.
    pub(crate) const fn nak(code: NakCode, msn: u32) -> Aeth {
        Aeth {
            syndrome: Syndrome::Nak(code),
            msn: msn & MASK_24,
        }
    }
}

impl WireHeader for Aeth {
    const SIZE: usize = 4;

    fn decode(r: &mut Reader<'_>) -> Option<Aeth> {
        let word = r.be32()?;
        let [syndrome, ..] = word.to_be_bytes();
        Some(Aeth {
            syndrome: Syndrome::from_u8(syndrome),
            msn: word & MASK_24,
        })
    }

    fn encode(&self, w: &mut Writer<'_>) -> Option<()> {
        w.be32((u32::from(self.syndrome.to_u8()) << 24) | (self.msn & MASK_24))
    }
}

/// Atomic extended transport header: target and operands of a compare &
/// swap or fetch & add.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct AtomicEth {
    /// Remote virtual address (8-byte aligned).
    pub(crate) va: u64,
    /// Remote key.
    pub(crate) rkey: u32,
    /// Swap value (compare & swap) or addend (fetch & add).
    pub(crate) swap_add: u64,
    /// Compare value (compare & swap only).
    pub(crate) compare: u64,
}

impl WireHeader for AtomicEth {
    const SIZE: usize = 28;

    fn decode(r: &mut Reader<'_>) -> Option<AtomicEth> {
        Some(AtomicEth {
            va: r.be64()?,
            rkey: r.be32()?,
            swap_add: r.be64()?,
            compare: r.be64()?,
        })
    }

    fn encode(&self, w: &mut Writer<'_>) -> Option<()> {
        w.be64(self.va)?;
        w.be32(self.rkey)?;
        w.be64(self.swap_add)?;
        w.be64(self.compare)
    }
}

/// Atomic ACK extended transport header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct AtomicAckEth {
    /// Value of the remote location before the atomic operation.
    pub(crate) orig: u64,
}

impl WireHeader for AtomicAckEth {
    const SIZE: usize = 8;

    fn decode(r: &mut Reader<'_>) -> Option<AtomicAckEth> {
        Some(AtomicAckEth { orig: r.be64()? })
    }

    fn encode(&self, w: &mut Writer<'_>) -> Option<()> {
        w.be64(self.orig)
    }
}

/// Datagram extended transport header, carried by UD packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Deth {
    /// Queue key the destination QP must hold.
    pub(crate) qkey: u32,
    /// Source QP number, 24 bits.
    pub(crate) src_qpn: u32,
}

impl WireHeader for Deth {
    const SIZE: usize = 8;

    fn decode(r: &mut Reader<'_>) -> Option<Deth> {
        Some(Deth {
            qkey: r.be32()?,
            src_qpn: r.be32()? & MASK_24,
        })
    }

    fn encode(&self, w: &mut Writer<'_>) -> Option<()> {
        w.be32(self.qkey)?;
        w.be32(self.src_qpn & MASK_24)
    }
}

/// Immediate data header.
///
/// `imm` is the numeric value of the big-endian wire field. The verbs API
/// passes immediate data as a `__be32` (already in wire byte order); convert
/// it with `u32::from_be` before storing it here, and back with
/// `u32::to_be`, so the bytes on the wire are the ones the user gave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct ImmDt {
    /// Immediate value.
    pub(crate) imm: u32,
}

impl ImmDt {
    /// The immediate data of a work request, stored as verbs store it: a
    /// `__be32`, whose bytes in memory are the bytes on the wire, read as
    /// a native `u32`. C rxe copies those bytes unchanged.
    pub(crate) const fn from_stored(stored: u32) -> ImmDt {
        ImmDt {
            imm: u32::from_be(stored),
        }
    }

    /// The immediate data as a work completion stores it (`__be32`, as
    /// [`ImmDt::from_stored`]).
    pub(crate) const fn stored(self) -> u32 {
        self.imm.to_be()
    }
}

impl WireHeader for ImmDt {
    const SIZE: usize = 4;

    fn decode(r: &mut Reader<'_>) -> Option<ImmDt> {
        Some(ImmDt { imm: r.be32()? })
    }

    fn encode(&self, w: &mut Writer<'_>) -> Option<()> {
        w.be32(self.imm)
    }
}

/// Invalidate extended transport header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Ieth {
    /// Remote key the responder must invalidate.
    pub(crate) rkey: u32,
}

impl WireHeader for Ieth {
    const SIZE: usize = 4;

    fn decode(r: &mut Reader<'_>) -> Option<Ieth> {
        Some(Ieth { rkey: r.be32()? })
    }

    fn encode(&self, w: &mut Writer<'_>) -> Option<()> {
        w.be32(self.rkey)
    }
}

/// FLUSH extended transport header: one big-endian word whose low six bits
/// are the selectivity level (bits 5..4) and placement type (bits 3..0);
/// the rest is reserved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Feth {
    /// Placement type, 4 bits: a set of `Feth::PLT_*` flags.
    pub(crate) placement_type: u8,
    /// Selectivity level, 2 bits: one of `Feth::SEL_*`.
    pub(crate) selectivity: u8,
}

impl Feth {
    const PLT_MASK: u32 = 0x0f;
    const SEL_MASK: u32 = 0x30;
    const SEL_SHIFT: u32 = 4;

    /// Placement type: make the data globally visible.
    pub(crate) const PLT_GLOBAL: u8 = 1 << 0;
    /// Placement type: make the data persistent.
    pub(crate) const PLT_PERSISTENT: u8 = 1 << 1;
    /// Selectivity: flush the RETH's address range.
    pub(crate) const SEL_RANGE: u8 = 0;
    /// Selectivity: flush the whole memory region.
    pub(crate) const SEL_MR: u8 = 1;
}

impl WireHeader for Feth {
    const SIZE: usize = 4;

    fn decode(r: &mut Reader<'_>) -> Option<Feth> {
        let bits = r.be32()?;
        // Both values are masked to at most six bits, so the low byte holds
        // them in full.
        let [.., plt] = (bits & Feth::PLT_MASK).to_be_bytes();
        let [.., sel] = ((bits & Feth::SEL_MASK) >> Feth::SEL_SHIFT).to_be_bytes();
        Some(Feth {
            placement_type: plt,
            selectivity: sel,
        })
    }

    fn encode(&self, w: &mut Writer<'_>) -> Option<()> {
        let plt = u32::from(self.placement_type) & Feth::PLT_MASK;
        let sel = (u32::from(self.selectivity) << Feth::SEL_SHIFT) & Feth::SEL_MASK;
        w.be32(sel | plt)
    }
}

/// The 8-byte payload of an ATOMIC WRITE request (it follows the RETH).
///
/// The bytes are stored to remote memory exactly as they appear on the
/// wire, with no byte-order conversion, as the C rxe driver does; so they
/// are kept here as raw bytes rather than as a number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct AtomicWriteData {
    /// The bytes to store.
    pub(crate) data: [u8; 8],
}

impl WireHeader for AtomicWriteData {
    const SIZE: usize = 8;

    fn decode(r: &mut Reader<'_>) -> Option<AtomicWriteData> {
        Some(AtomicWriteData { data: r.array()? })
    }

    fn encode(&self, w: &mut Writer<'_>) -> Option<()> {
        w.array(self.data)
    }
}
