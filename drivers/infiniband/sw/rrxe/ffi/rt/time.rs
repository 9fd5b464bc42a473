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

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kernel::prelude::kunit_tests(rrxe_rt_time))]
#[cfg_attr(dropin, kernel::prelude::kunit_tests(rrxe_rt_time_dropin))]
mod tests {
    use super::{hz, jiffies, msecs_to_jiffies, time_after, usecs_to_jiffies};

    #[test]
    fn usecs_round_up_to_jiffies() {
        let hz = hz();
        assert_eq!(usecs_to_jiffies(0), 0);
        assert_eq!(usecs_to_jiffies(1), 1);
        assert_eq!(usecs_to_jiffies(1_000_000), hz);
        assert_eq!(usecs_to_jiffies(1_000_001), hz + 1);
        assert_eq!(usecs_to_jiffies(u64::MAX), u64::MAX / 1_000_000 + 1);
        assert_eq!(msecs_to_jiffies(1000), hz);
        assert!(time_after(5, u64::MAX - 5));
        assert!(!time_after(u64::MAX - 5, 5));
    }

    #[test]
    fn jiffies_advance() {
        let before = jiffies();
        kernel::time::delay::fsleep(kernel::time::Delta::from_millis(20));
        assert!(time_after(jiffies(), before));
    }
}
