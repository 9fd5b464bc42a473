// SPDX-License-Identifier: GPL-2.0

//! Round-robin search for a free table index (QP numbers, MR key indices),
//! so that an index is not handed out again right after it was freed.

use core::sync::atomic::{AtomicU32, Ordering};

/// The position of a round-robin search over `min..min + span`.
pub(crate) struct RoundRobin {
    next: AtomicU32,
}

impl RoundRobin {
    /// A search that starts at the first index.
    pub(crate) const fn new() -> Self {
        Self {
            next: AtomicU32::new(0),
        }
    }

    /// The first index of `min..min + span`, from where the last search
    /// stopped, that `is_free` accepts, with the running allocation count
    /// that chose it. `None` if all are taken.
    /// Callers serialise searches with the stores that fill the indices.
    pub(crate) fn find(
        &self,
        min: u32,
        span: u32,
        is_free: impl Fn(u32) -> bool,
    ) -> Option<(u32, u32)> {
        (0..span).find_map(|_| {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            let index = min + n % span;
            is_free(index).then_some((index, n))
        })
    }
}
