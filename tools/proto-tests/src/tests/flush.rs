// SPDX-License-Identifier: GPL-2.0

//! Tests of the FLUSH and ATOMIC WRITE responder rules.

use crate::logic::flush::*;
use crate::logic::mr::{FLUSH_GLOBAL, FLUSH_PERSISTENT, REMOTE_WRITE};
use crate::proto::headers::{Feth, Reth};

#[test]
fn flush_access_follows_the_placement_type() {
    assert_eq!(flush_access(0), 0);
    assert_eq!(flush_access(Feth::PLT_GLOBAL), FLUSH_GLOBAL);
    assert_eq!(flush_access(Feth::PLT_PERSISTENT), FLUSH_PERSISTENT);
    assert_eq!(flush_access(0x3), FLUSH_GLOBAL | FLUSH_PERSISTENT);
    // Reserved placement bits ask for nothing more.
    assert_eq!(flush_access(0xc | Feth::PLT_GLOBAL), FLUSH_GLOBAL);
}

#[test]
fn qp_must_allow_each_placement_type() {
    assert!(qp_allows_flush(FLUSH_GLOBAL, Feth::PLT_GLOBAL));
    assert!(!qp_allows_flush(FLUSH_GLOBAL, Feth::PLT_PERSISTENT));
    assert!(!qp_allows_flush(FLUSH_GLOBAL, 0x3));
    assert!(qp_allows_flush(
        FLUSH_GLOBAL | FLUSH_PERSISTENT | REMOTE_WRITE,
        0x3
    ));
    assert!(!qp_allows_flush(REMOTE_WRITE, Feth::PLT_GLOBAL));
    assert!(qp_allows_flush(0, 0));
}

#[test]
fn flush_range_by_level() {
    assert_eq!(flush_range(Feth::SEL_RANGE, 0x10, 0x20), Some((0x10, 0x20)));
    assert_eq!(flush_range(Feth::SEL_MR, 0x10, 0x20), None);
    // Reserved levels are checked as ranges, as rxe does.
    assert_eq!(flush_range(2, 0x10, 0x20), Some((0x10, 0x20)));
    assert_eq!(
        flush_range(3, u64::MAX, u32::MAX),
        Some((u64::MAX, u64::from(u32::MAX)))
    );
}

#[test]
fn atomic_write_is_exactly_eight_bytes() {
    assert!(atomic_write_ok(8, 8, 0));
    assert!(!atomic_write_ok(4, 8, 0));
    assert!(!atomic_write_ok(8, 4, 0));
    assert!(!atomic_write_ok(16, 16, 0));
    assert!(!atomic_write_ok(8, 8, 1));
    assert!(!atomic_write_ok(0, 0, 0));
}

#[test]
fn flush_request_headers_carry_the_range_and_placement() {
    let wr = FlushWr {
        remote_addr: 0x1234_5678_9abc,
        rkey: 0x55aa,
        length: 4096,
        placement_type: Feth::PLT_GLOBAL,
        level: Feth::SEL_RANGE,
    };
    let (reth, feth) = wr.headers();
    assert_eq!(
        reth,
        Reth {
            va: 0x1234_5678_9abc,
            rkey: 0x55aa,
            len: 4096,
        }
    );
    assert_eq!(
        feth,
        Feth {
            placement_type: Feth::PLT_GLOBAL,
            selectivity: Feth::SEL_RANGE,
        }
    );
}

#[test]
fn atomic_write_request_names_8_bytes() {
    let wr = AtomicWriteWr {
        remote_addr: 0x1000,
        rkey: 7,
        value: *b"abcdefgh",
    };
    assert_eq!(
        wr.reth(),
        Reth {
            va: 0x1000,
            rkey: 7,
            len: ATOMIC_WRITE_LEN,
        }
    );
}
