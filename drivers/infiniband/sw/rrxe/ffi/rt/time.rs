// SPDX-License-Identifier: GPL-2.0

//! The monotonic clock, which QPs time their retransmit timeouts by.

use crate::ffi::sys;

/// The monotonic clock in nanoseconds (`ktime_get_ns`).
pub(crate) fn now_ns() -> u64 {
    // SAFETY: reading the clock has no preconditions.
    unsafe { sys::rrxe_ktime_get_ns() }
}

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kernel::prelude::kunit_tests(rrxe_rt_time))]
#[cfg_attr(dropin, kernel::prelude::kunit_tests(rrxe_rt_time_dropin))]
mod tests {
    use super::now_ns;

    #[test]
    fn the_clock_advances_by_what_was_slept() {
        let before = now_ns();
        kernel::time::delay::fsleep(kernel::time::Delta::from_millis(20));
        // A sleep this long is msleep(), counted in jiffies from the
        // current one, which may be nearly over: it can end up to a tick
        // early (seen: CI, HZ=1000). The point is the unit (nanoseconds,
        // not microseconds or jiffies): 15 ms leaves room for any HZ >= 250.
        assert!(now_ns().wrapping_sub(before) >= 15_000_000);
    }
}
