// SPDX-License-Identifier: GPL-2.0

//! Opcode table consistency, and agreement with the C rxe table.

use crate::proto::error::ParseError;
use crate::proto::headers::{Bth, WireHeader};
use crate::proto::opcode::{
    lookup, ExtHeader, Mask, OpClass, Opcode, Position, Transport, NUM_OPCODES, OPCODE_TABLE,
};

/// The masks and header lengths of Linux 7.3's `rxe_opcode[]` for every
/// RC, UC and UD opcode, transcribed independently of the table under test
/// (with `RXE_ACK_MASK` written as [`Mask::RESP`]).
fn rxe_reference() -> [(u8, usize, Mask); 39] {
    const PAYLOAD: Mask = Mask::PAYLOAD;
    const REQ: Mask = Mask::REQ;
    const ACK: Mask = Mask::RESP;
    const RWR: Mask = Mask::RWR;
    const COMP: Mask = Mask::COMP;
    const SEND: Mask = Mask::SEND;
    const WRITE: Mask = Mask::WRITE;
    const START: Mask = Mask::START;
    const MIDDLE: Mask = Mask::MIDDLE;
    const END: Mask = Mask::END;
    const IMMDT: Mask = Mask::IMMDT;
    const RETH: Mask = Mask::RETH;
    const AETH: Mask = Mask::AETH;
    let send_first = PAYLOAD | REQ | RWR | SEND | START;
    let send_middle = PAYLOAD | REQ | SEND | MIDDLE;
    let send_last = PAYLOAD | REQ | COMP | SEND | END;
    let send_last_imm = IMMDT | send_last;
    let send_only = PAYLOAD | REQ | COMP | RWR | SEND | START | END;
    let send_only_imm = IMMDT | send_only;
    let write_first = RETH | PAYLOAD | REQ | WRITE | START;
    let write_middle = PAYLOAD | REQ | WRITE | MIDDLE;
    let write_last = PAYLOAD | REQ | WRITE | END;
    let write_last_imm = IMMDT | PAYLOAD | REQ | WRITE | COMP | RWR | END;
    let write_only = RETH | PAYLOAD | REQ | WRITE | START | END;
    let write_only_imm = RETH | IMMDT | PAYLOAD | REQ | WRITE | COMP | RWR | START | END;
    let atomic = Mask::ATMETH | REQ | Mask::ATOMIC | START | END;
    [
        (0x00, 12, send_first),
        (0x01, 12, send_middle),
        (0x02, 12, send_last),
        (0x03, 16, send_last_imm),
        (0x04, 12, send_only),
        (0x05, 16, send_only_imm),
        (0x06, 28, write_first),
        (0x07, 12, write_middle),
        (0x08, 12, write_last),
        (0x09, 16, write_last_imm),
        (0x0a, 28, write_only),
        (0x0b, 32, write_only_imm),
        (0x0c, 28, RETH | REQ | Mask::READ | START | END),
        (0x0d, 16, AETH | PAYLOAD | ACK | START),
        (0x0e, 12, PAYLOAD | ACK | MIDDLE),
        (0x0f, 16, AETH | PAYLOAD | ACK | END),
        (0x10, 16, AETH | PAYLOAD | ACK | START | END),
        (0x11, 16, AETH | ACK | START | END),
        (0x12, 24, AETH | Mask::ATMACK | ACK | START | END),
        (0x13, 40, atomic),
        (0x14, 40, atomic),
        (0x16, 16, Mask::IETH | PAYLOAD | REQ | COMP | SEND | END),
        (
            0x17,
            16,
            Mask::IETH | PAYLOAD | REQ | COMP | RWR | SEND | END | START,
        ),
        (
            0x1c,
            32,
            Mask::FETH | RETH | Mask::FLUSH | START | END | REQ,
        ),
        (
            0x1d,
            28,
            RETH | PAYLOAD | REQ | Mask::ATOMIC_WRITE | START | END,
        ),
        (0x20, 12, send_first),
        (0x21, 12, send_middle),
        (0x22, 12, send_last),
        (0x23, 16, send_last_imm),
        (0x24, 12, send_only),
        (0x25, 16, send_only_imm),
        (0x26, 28, write_first),
        (0x27, 12, write_middle),
        (0x28, 12, write_last),
        (0x29, 16, write_last_imm),
        (0x2a, 28, write_only),
        (0x2b, 32, write_only_imm),
        (0x64, 20, Mask::DETH | send_only),
        (0x65, 24, Mask::DETH | send_only_imm),
    ]
}

#[test]
fn matches_rxe_masks_and_lengths() {
    let reference = rxe_reference();
    for (value, len, mask) in reference {
        let info = lookup(value).unwrap_or_else(|| panic!("{value:#x} missing"));
        assert_eq!(info.header_len(), len, "{}", info.name());
        assert_eq!(info.mask(), mask, "{}", info.name());
    }
    let known = (0..=u8::MAX).filter(|v| lookup(*v).is_some()).count();
    assert_eq!(known, reference.len());
}

#[test]
fn table_indexing() {
    assert_eq!(OPCODE_TABLE.len(), NUM_OPCODES);
    assert_eq!(Opcode::ALL.len(), 39);
    let mut prev = None;
    for op in Opcode::ALL {
        // ALL is strictly increasing, hence free of duplicates.
        assert!(prev < Some(op.value()));
        prev = Some(op.value());
        let info = lookup(op.value()).unwrap();
        assert_eq!(info.opcode(), op);
        assert_eq!(*info, op.info());
        assert_eq!(Opcode::from_u8(op.value()), Some(op));
        assert_eq!(Opcode::try_from(op.value()), Ok(op));
        assert_eq!(u8::from(op), op.value());
    }
    for v in 0..=u8::MAX {
        let in_all = Opcode::ALL.iter().any(|op| op.value() == v);
        assert_eq!(lookup(v).is_some(), in_all, "{v:#x}");
        if !in_all {
            assert_eq!(Opcode::try_from(v), Err(ParseError::UnknownOpcode(v)));
        }
    }
    // Reserved RC values, all of RD, CNP and the manufacturer range.
    for v in [
        0x15, 0x18, 0x1b, 0x1e, 0x1f, 0x2c, 0x40, 0x4a, 0x5f, 0x60, 0x80, 0xe0, 0xff,
    ] {
        assert!(lookup(v).is_none(), "{v:#x}");
    }
}

#[test]
fn header_layout_is_consistent() {
    for op in Opcode::ALL {
        let info = op.info();
        let name = info.name();
        let mut offset = Bth::SIZE;
        for hdr in info.headers() {
            // Offsets are back to back, in increasing order, after the BTH.
            assert_eq!(info.offset(*hdr), Some(offset), "{name} {hdr:?}");
            offset += hdr.size();
        }
        assert_eq!(info.header_len(), offset, "{name}");
        assert_eq!(info.payload_offset(), offset, "{name}");
        for hdr in ExtHeader::ALL {
            let listed = info.headers().contains(&hdr);
            assert_eq!(info.has(hdr), listed, "{name} {hdr:?}");
            assert_eq!(info.offset(hdr).is_some(), listed, "{name} {hdr:?}");
            assert_eq!(info.mask().contains(hdr.mask()), listed, "{name} {hdr:?}");
        }
    }
}

#[test]
fn known_offsets() {
    let off = |op: Opcode, h| op.info().offset(h);
    assert_eq!(
        off(Opcode::RcRdmaWriteOnlyWithImmediate, ExtHeader::Reth),
        Some(12)
    );
    assert_eq!(
        off(Opcode::RcRdmaWriteOnlyWithImmediate, ExtHeader::ImmDt),
        Some(28)
    );
    assert_eq!(off(Opcode::RcAtomicAcknowledge, ExtHeader::Aeth), Some(12));
    assert_eq!(
        off(Opcode::RcAtomicAcknowledge, ExtHeader::AtomicAckEth),
        Some(16)
    );
    assert_eq!(off(Opcode::RcFlush, ExtHeader::Feth), Some(12));
    assert_eq!(off(Opcode::RcFlush, ExtHeader::Reth), Some(16));
    assert_eq!(
        off(Opcode::UdSendOnlyWithImmediate, ExtHeader::Deth),
        Some(12)
    );
    assert_eq!(
        off(Opcode::UdSendOnlyWithImmediate, ExtHeader::ImmDt),
        Some(20)
    );
    assert_eq!(off(Opcode::RcCompareSwap, ExtHeader::AtomicEth), Some(12));
    assert_eq!(off(Opcode::RcSendOnly, ExtHeader::Reth), None);
    assert_eq!(Opcode::RcCompareSwap.info().header_len(), 40);
}

/// Checks one opcode's properties against what its IBA name says.
fn check_name(op: Opcode) {
    let info = op.info();
    let name = info.name();
    let has = |s: &str| name.contains(s);

    // Transport: name prefix and top bits agree.
    let transport = match &name[..3] {
        "RC_" => Transport::Rc,
        "UC_" => Transport::Uc,
        "UD_" => Transport::Ud,
        other => panic!("bad prefix {other}"),
    };
    assert_eq!(info.transport(), transport, "{name}");
    assert_eq!(
        Transport::from_opcode(op.value()),
        Some(transport),
        "{name}"
    );
    assert_eq!(op.value() & 0xe0, transport.opcode_base(), "{name}");

    // Position from the name's suffix word.
    let position = if has("_FIRST") {
        Position::First
    } else if has("_MIDDLE") {
        Position::Middle
    } else if has("_LAST") {
        Position::Last
    } else {
        Position::Only
    };
    assert_eq!(info.position(), position, "{name}");
    assert_eq!(
        info.is_first(),
        matches!(position, Position::First | Position::Only)
    );
    assert_eq!(
        info.is_last(),
        matches!(position, Position::Last | Position::Only)
    );
    assert_eq!(
        info.mask().contains(Mask::MIDDLE),
        position == Position::Middle
    );

    // Operation category.
    let send = has("_SEND_");
    let write = has("RDMA_WRITE");
    let read_req = has("READ_REQUEST");
    let read_resp = has("READ_RESPONSE");
    let atomic = has("COMPARE_SWAP") || has("FETCH_ADD");
    let atomic_write = has("ATOMIC_WRITE");
    let flush = has("FLUSH");
    let ack = name.ends_with("_ACKNOWLEDGE");
    assert_eq!(info.is_send(), send, "{name}");
    assert_eq!(info.is_write(), write, "{name}");
    assert_eq!(info.is_read(), read_req, "{name}");
    assert_eq!(info.is_atomic(), atomic, "{name}");
    assert_eq!(info.is_atomic_write(), atomic_write, "{name}");
    assert_eq!(info.is_flush(), flush, "{name}");
    let categories = [
        send,
        write,
        read_req,
        read_resp,
        atomic,
        atomic_write,
        flush,
        ack,
    ];
    assert_eq!(categories.iter().filter(|c| **c).count(), 1, "{name}");
    let class = match () {
        () if send => OpClass::Send,
        () if write => OpClass::Write,
        () if read_req => OpClass::ReadRequest,
        () if read_resp => OpClass::ReadResponse,
        () if atomic => OpClass::Atomic,
        () if atomic_write => OpClass::AtomicWrite,
        () if flush => OpClass::Flush,
        () if has("ATOMIC_ACK") => OpClass::AtomicAck,
        () => OpClass::Ack,
    };
    assert_eq!(info.class(), class, "{name}");

    // Requests and responses partition the table.
    let response = read_resp || ack;
    assert_eq!(info.is_response(), response, "{name}");
    assert_eq!(info.is_request(), !response, "{name}");
    assert_eq!(info.class().is_response(), response, "{name}");

    // Payload: data-moving packets only.
    let payload = send || write || read_resp || atomic_write;
    assert_eq!(info.has_payload(), payload, "{name}");

    // Extension headers implied by the name.
    assert_eq!(info.has(ExtHeader::ImmDt), has("IMMEDIATE"), "{name}");
    assert_eq!(info.has(ExtHeader::Ieth), has("INVALIDATE"), "{name}");
    assert_eq!(
        info.has(ExtHeader::Deth),
        transport == Transport::Ud,
        "{name}"
    );
    assert_eq!(info.has(ExtHeader::AtomicEth), atomic, "{name}");
    assert_eq!(
        info.has(ExtHeader::AtomicAckEth),
        has("ATOMIC_ACK"),
        "{name}"
    );
    assert_eq!(info.has(ExtHeader::Feth), flush, "{name}");
    let reth = ((write || atomic_write) && position.starts()) || read_req || flush;
    assert_eq!(info.has(ExtHeader::Reth), reth, "{name}");
    let aeth = ack || (read_resp && position != Position::Middle);
    assert_eq!(info.has(ExtHeader::Aeth), aeth, "{name}");

    // Receive WQE use at the responder.
    let uses_recv_wqe = send || (write && has("IMMEDIATE"));
    assert_eq!(
        info.mask().contains(Mask::RWR),
        uses_recv_wqe && (write || position.starts()),
        "{name}"
    );
    assert_eq!(
        info.mask().contains(Mask::COMP),
        uses_recv_wqe && (write || position.ends()),
        "{name}"
    );
}

/// Small helpers for the name checks.
trait PositionExt {
    fn starts(self) -> bool;
    fn ends(self) -> bool;
}

impl PositionExt for Position {
    fn starts(self) -> bool {
        matches!(self, Position::First | Position::Only)
    }

    fn ends(self) -> bool {
        matches!(self, Position::Last | Position::Only)
    }
}

#[test]
fn flags_agree_with_names() {
    for op in Opcode::ALL {
        check_name(op);
    }
}

#[test]
fn mask_operations() {
    let m = Mask::READ | Mask::REQ;
    assert!(m.contains(Mask::READ));
    assert!(!m.contains(Mask::READ_OR_ATOMIC));
    assert!(m.intersects(Mask::READ_OR_ATOMIC));
    assert!(!m.intersects(Mask::WRITE_OR_SEND));
    assert!(Mask::EMPTY.is_empty());
    assert_eq!(m.bits(), Mask::READ.bits() | Mask::REQ.bits());
    for op in Opcode::ALL {
        let info = op.info();
        let rdma = info.is_read()
            || info.is_write()
            || info.is_atomic()
            || info.is_atomic_write()
            || info.is_flush();
        assert_eq!(
            info.mask().intersects(Mask::RDMA_OP),
            rdma,
            "{}",
            info.name()
        );
    }
}
