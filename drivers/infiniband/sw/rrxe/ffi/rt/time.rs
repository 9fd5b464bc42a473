// SPDX-License-Identifier: GPL-2.0

//! Jiffies: the kernel's tick counter.

use crate::ffi::sys;

/// Microseconds in a second.
const USEC_PER_SEC: u64 = 1_000_000;

/// The current time in jiffies (`get_jiffies_64`).
pub(crate) fn jiffies() -> u64 {
    // SAFETY: reading the tick counter has no preconditions.
    unsafe { sys::rrxe_get_jiffies_64() }
}

/// Ticks per second (`HZ`).
pub(crate) fn hz() -> u64 {
    // SAFETY: returns a constant.
    u64::from(unsafe { sys::rrxe_hz() })
}

/// `us` microseconds in jiffies, rounded up (so at least 1 for a nonzero
/// duration); saturates at `u64::MAX`.
pub(crate) fn usecs_to_jiffies(us: u64) -> u64 {
    us.saturating_mul(hz()).div_ceil(USEC_PER_SEC)
}

/// `ms` milliseconds in jiffies, rounded up; saturates at `u64::MAX`.
pub(crate) fn msecs_to_jiffies(ms: u64) -> u64 {
    usecs_to_jiffies(ms.saturating_mul(1000))
}

/// Whether jiffies value `a` is after `b`, correct across wrap-around
/// (`time_after64`).
pub(crate) fn time_after(a: u64, b: u64) -> bool {
    (b.wrapping_sub(a) as i64) < 0
}
