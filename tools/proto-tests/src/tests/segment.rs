// SPDX-License-Identifier: GPL-2.0

//! Messages into packets (logic::segment) and flow entropy and windows
//! (logic::flow).

use proptest::prelude::*;

use crate::logic::flow::{
    backed_off, flow_label, qp_sport, udp_sport, SendWindow, MAX_UNACKED_PSNS, RETRY_WINDOW,
    SPORT_MIN,
};
use crate::logic::segment::{
    packet_count, packet_span, position, read_response_opcode, request_opcode, Position, ReqKind,
};
use crate::proto::opcode::{ExtHeader, Opcode, Transport};
use crate::proto::psn::Psn;

const MTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];

#[test]
fn counts_and_spans_known_answers() {
    assert_eq!(packet_count(0, 1024), 1);
    assert_eq!(packet_count(1, 1024), 1);
    assert_eq!(packet_count(1024, 1024), 1);
    assert_eq!(packet_count(1025, 1024), 2);
    assert_eq!(packet_count(65536, 1024), 64);
    assert_eq!(packet_count(1 << 31, 256), 1 << 23);
    assert_eq!(packet_span(0, 1024, 0), Some((0, 0)));
    assert_eq!(packet_span(2500, 1024, 2), Some((2048, 452)));
    assert_eq!(packet_span(2500, 1024, 3), None);
    // A zero MTU cannot divide by zero.
    assert_eq!(packet_count(10, 0), 10);
}

#[test]
fn positions() {
    assert_eq!(position(0, 1), Position::Only);
    assert_eq!(position(0, 3), Position::First);
    assert_eq!(position(1, 3), Position::Middle);
    assert_eq!(position(2, 3), Position::Last);
}

proptest! {
    /// The spans of a message tile it exactly, each at most one MTU and all
    /// but the last exactly one.
    #[test]
    fn spans_tile_the_message(len in 0u32..(1 << 20), mtu_i in 0usize..5) {
        let mtu = MTUS[mtu_i];
        let n = packet_count(len, mtu);
        let mut next = 0u32;
        for i in 0..n {
            let (off, l) = packet_span(len, mtu, i).unwrap();
            prop_assert_eq!(off, next);
            prop_assert!(l <= mtu);
            if i + 1 < n {
                prop_assert_eq!(l, mtu);
            }
            next = off + l;
        }
        prop_assert_eq!(next, len);
        prop_assert_eq!(packet_span(len, mtu, n), None);
    }
}

#[test]
fn request_opcodes_per_transport() {
    let send = ReqKind::Send {
        imm: false,
        inv: false,
    };
    let imm = ReqKind::Send {
        imm: true,
        inv: false,
    };
    let inv = ReqKind::Send {
        imm: false,
        inv: true,
    };
    assert_eq!(
        request_opcode(Transport::Rc, send, Position::First),
        Some(Opcode::RcSendFirst)
    );
    assert_eq!(
        request_opcode(Transport::Rc, inv, Position::Only),
        Some(Opcode::RcSendOnlyWithInvalidate)
    );
    assert_eq!(
        request_opcode(Transport::Uc, imm, Position::Last),
        Some(Opcode::UcSendLastWithImmediate)
    );
    assert_eq!(
        request_opcode(Transport::Ud, imm, Position::Only),
        Some(Opcode::UdSendOnlyWithImmediate)
    );
    assert_eq!(
        request_opcode(Transport::Uc, ReqKind::Write { imm: false }, Position::Only),
        Some(Opcode::UcRdmaWriteOnly)
    );
    assert_eq!(
        request_opcode(Transport::Rc, ReqKind::Read, Position::Only),
        Some(Opcode::RcRdmaReadRequest)
    );
    assert_eq!(
        request_opcode(Transport::Rc, ReqKind::CmpSwap, Position::Only),
        Some(Opcode::RcCompareSwap)
    );
    assert_eq!(
        request_opcode(Transport::Rc, ReqKind::FetchAdd, Position::Only),
        Some(Opcode::RcFetchAdd)
    );
    assert_eq!(
        request_opcode(Transport::Rc, ReqKind::Flush, Position::Only),
        Some(Opcode::RcFlush)
    );
    assert_eq!(
        request_opcode(Transport::Rc, ReqKind::AtomicWrite, Position::Only),
        Some(Opcode::RcAtomicWrite)
    );
    // What a transport does not have.
    for kind in [ReqKind::Flush, ReqKind::AtomicWrite] {
        assert_eq!(request_opcode(Transport::Uc, kind, Position::Only), None);
        assert_eq!(request_opcode(Transport::Ud, kind, Position::Only), None);
        assert_eq!(request_opcode(Transport::Rc, kind, Position::First), None);
    }
    assert_eq!(request_opcode(Transport::Ud, send, Position::First), None);
    assert_eq!(
        request_opcode(Transport::Uc, ReqKind::Read, Position::Only),
        None
    );
    assert_eq!(request_opcode(Transport::Uc, inv, Position::Only), None);
    assert_eq!(
        request_opcode(Transport::Rc, ReqKind::Read, Position::First),
        None
    );
}

#[test]
fn every_request_opcode_is_a_request_of_its_transport() {
    let kinds = [
        ReqKind::Send {
            imm: false,
            inv: false,
        },
        ReqKind::Send {
            imm: true,
            inv: false,
        },
        ReqKind::Send {
            imm: false,
            inv: true,
        },
        ReqKind::Write { imm: false },
        ReqKind::Write { imm: true },
        ReqKind::Read,
        ReqKind::CmpSwap,
        ReqKind::FetchAdd,
        ReqKind::Flush,
        ReqKind::AtomicWrite,
    ];
    let positions = [
        Position::Only,
        Position::First,
        Position::Middle,
        Position::Last,
    ];
    for t in [Transport::Rc, Transport::Uc, Transport::Ud] {
        for k in kinds {
            for p in positions {
                if let Some(op) = request_opcode(t, k, p) {
                    let info = op.info();
                    assert_eq!(info.transport(), t);
                    assert!(info.is_request());
                    assert_eq!(
                        info.is_first(),
                        matches!(p, Position::Only | Position::First)
                    );
                    assert_eq!(info.is_last(), matches!(p, Position::Only | Position::Last));
                    assert_eq!(
                        info.has(ExtHeader::ImmDt),
                        matches!(
                            k,
                            ReqKind::Send { imm: true, .. } | ReqKind::Write { imm: true }
                        ) && info.is_last()
                    );
                }
            }
        }
    }
}

#[test]
fn read_responses_carry_an_aeth_except_in_the_middle() {
    for p in [
        Position::Only,
        Position::First,
        Position::Middle,
        Position::Last,
    ] {
        let info = read_response_opcode(p).info();
        assert!(info.is_response());
        assert_eq!(info.has(ExtHeader::Aeth), p != Position::Middle);
    }
}

#[test]
fn udp_source_ports() {
    // rdma_get_udp_sport: a flow label folds into 0xc000..=0xffff.
    assert_eq!(udp_sport(0x12345, 1, 2), (0x2345 ^ 0x4) as u16 | SPORT_MIN);
    assert_eq!(udp_sport(0, 17, 18), udp_sport(flow_label(17, 18), 17, 18));
    assert!(qp_sport(17) >= SPORT_MIN);
    for q in 0..1000 {
        assert!(udp_sport(0, q, q + 1) >= SPORT_MIN);
    }
}

#[test]
fn window() {
    let w = SendWindow::new();
    let a = Psn::new(100);
    assert!(w.open(a, a, 1));
    assert!(w.open(a, a, MAX_UNACKED_PSNS));
    // A message longer than the window starts when the window is empty.
    assert!(w.open(a, a, MAX_UNACKED_PSNS + 1));
    assert!(!w.open(a, a.add(1), MAX_UNACKED_PSNS));
    assert!(w.open(a, a.add(127), 1));
    assert!(!w.open(a, a.add(128), 1));
    // Across the wrap.
    let top = Psn::new(0xff_fff0);
    assert!(w.open(top, top.add(100), 28));
    assert!(!w.open(top, top.add(100), 29));
    // Nothing opens while `next` is "behind" `oldest`.
    assert!(!w.open(a.add(1), a, 1));
}

#[test]
fn window_after_timeout() {
    let mut w = SendWindow::new();
    let a = Psn::new(7);
    w.timed_out();
    assert_eq!(w.limit(), RETRY_WINDOW);
    assert!(w.open(a, a.add(RETRY_WINDOW - 1), 1));
    assert!(!w.open(a, a.add(RETRY_WINDOW), 1));
    // A long message may start in the small window.
    assert!(w.open(a, a, 100));
    // Each acknowledgement doubles it, up to the full window.
    let mut limits = [0u32; 6];
    for l in limits.iter_mut() {
        w.acked();
        *l = w.limit();
    }
    assert_eq!(limits, [16, 32, 64, 128, 128, 128]);
    assert_eq!(w, SendWindow::new());
}

#[test]
fn timeout_backoff() {
    assert_eq!(backed_off(10, 0), 10);
    assert_eq!(backed_off(10, 1), 20);
    assert_eq!(backed_off(10, 2), 40);
    assert_eq!(backed_off(10, 200), 40);
    assert_eq!(backed_off(u64::MAX, 2), u64::MAX);
}

proptest! {
    #[test]
    fn window_never_exceeds_its_limit(
        oldest in 0u32..0x100_0000,
        used in 0u32..300,
        count in 1u32..300,
        timeouts in 0u8..3,
        acks in 0u8..8,
    ) {
        let mut w = SendWindow::new();
        for _ in 0..timeouts { w.timed_out(); }
        for _ in 0..acks { w.acked(); }
        prop_assert!(w.limit() >= RETRY_WINDOW && w.limit() <= MAX_UNACKED_PSNS);
        let o = Psn::new(oldest);
        if w.open(o, o.add(used), count) {
            prop_assert!(used + count.min(w.limit()) <= w.limit());
        }
    }
}
