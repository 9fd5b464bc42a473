// SPDX-License-Identifier: GPL-2.0

//! A rate limit for kernel log lines that the network or a process can
//! cause at will (a QP entering ERR from the data path): at most `burst`
//! lines per `interval`, and the first line of the next interval says how
//! many were left out. The kernel crate has no `printk_ratelimited`; this
//! is the same rule in lock-free form, with the clock passed in so that
//! it is tested on the host.
//!
//! Racing CPUs may let a line or two more through at an interval's
//! boundary, which is harmless: the limit is there to bound the log, not
//! to count exactly.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// A rate limit, usable from any context (atomics only).
pub(crate) struct RateLimit {
    /// Length of an interval, nanoseconds.
    interval_ns: u64,
    /// Lines allowed per interval.
    burst: u32,
    /// When the current interval began (0: none yet).
    start: AtomicU64,
    /// Lines allowed in the current interval.
    used: AtomicU32,
    /// Lines refused since the last one allowed.
    missed: AtomicU32,
}

impl RateLimit {
    /// At most `burst` lines per `interval_ns`.
    pub(crate) const fn new(interval_ns: u64, burst: u32) -> Self {
        Self {
            interval_ns,
            burst,
            start: AtomicU64::new(0),
            used: AtomicU32::new(0),
            missed: AtomicU32::new(0),
        }
    }

    /// Whether a line may be logged at `now_ns`: `Some(n)` if so, `n` the
    /// lines refused before it (to be said in it), `None` if not.
    pub(crate) fn allow(&self, now_ns: u64) -> Option<u32> {
        let start = self.start.load(Ordering::Relaxed);
        if start == 0 || now_ns.wrapping_sub(start) >= self.interval_ns {
            // A new interval; one CPU starts it, the others count in it.
            if self
                .start
                .compare_exchange(start, now_ns.max(1), Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                self.used.store(0, Ordering::Relaxed);
            }
        }
        if self.used.fetch_add(1, Ordering::Relaxed) < self.burst {
            Some(self.missed.swap(0, Ordering::Relaxed))
        } else {
            self.missed.fetch_add(1, Ordering::Relaxed);
            None
        }
    }
}
