// SPDX-License-Identifier: GPL-2.0

//! The per-byte limit `make bench` holds the data path against: what one
//! pass of `memcpy` and one of CRC-32 over a message's payload cost on this
//! CPU, measured in the kernel when the module is loaded with
//! `measure_limit=1` (the bench guest does; nobody else needs to).
//!
//! A driver has to copy every payload byte once on each side (from the
//! sender's memory region into the packet, from the packet into the
//! receiver's region) and run the ICRC over it once on each side. With the
//! two sides on CPUs of their own, the fastest such a driver can move one
//! QP's bytes is one copy plus one CRC pass per byte:
//! `1 / (1 / memcpy + 1 / crc32)`. The bench prints each bandwidth row as a
//! fraction of that ceiling (Documentation/testing.rst, "Benchmarks").

use crate::{ffi::rxe_abi::KernelCrc32, proto::icrc::Crc32Le};
use core::hint::black_box;
use kernel::{
    prelude::*,
    time::{Instant, Monotonic},
};

/// The buffer each pass goes over: the bench's largest message.
const BUF: usize = 64 * 1024;

/// How long each rate is measured for, in nanoseconds.
const MEASURE_NS: i64 = 250_000_000;

/// Bytes in a MiB.
const MIB: u64 = 1 << 20;

/// The rate, in MiB/s, at which `pass` goes over [`BUF`] bytes, measured
/// for [`MEASURE_NS`].
fn rate(mut pass: impl FnMut()) -> u64 {
    let start = Instant::<Monotonic>::now();
    let mut bytes: u64 = 0;
    loop {
        pass();
        bytes = bytes.saturating_add(BUF as u64);
        let ns = start.elapsed().as_nanos();
        if ns >= MEASURE_NS {
            // Whole milliseconds (at least 250): no 128-bit division in
            // the kernel, and a quarter of a second of bytes times 1000
            // is far from overflowing.
            let ms = ns.unsigned_abs() / 1_000_000;
            return bytes.saturating_mul(1000) / ms / MIB;
        }
    }
}

/// The ceiling of a driver that copies and checksums each byte once per
/// side, with one CPU per side, in MiB/s.
fn ceiling(memcpy: u64, crc: u64) -> u64 {
    if memcpy == 0 || crc == 0 {
        return 0;
    }
    // 1 / (1/m + 1/c) = m * c / (m + c)
    memcpy.saturating_mul(crc) / memcpy.saturating_add(crc)
}

/// Measures and logs the limit (one line, which `make bench` reads).
pub(crate) fn measure() -> Result {
    let src = KVVec::from_elem(0x5au8, BUF, GFP_KERNEL)?;
    let mut dst = KVVec::from_elem(0u8, BUF, GFP_KERNEL)?;
    let memcpy = rate(|| {
        dst.copy_from_slice(black_box(&src[..]));
        black_box(&mut dst[..]);
    });
    let mut acc = 0u32;
    let crc = rate(|| {
        acc = KernelCrc32::update(acc, black_box(&src[..]));
    });
    black_box(acc);
    pr_info!(
        "limit: memcpy {} MiB/s, crc32 {} MiB/s, ceiling {} MiB/s ({} KiB buffers)\n",
        memcpy,
        crc,
        ceiling(memcpy, crc),
        BUF / 1024
    );
    Ok(())
}
