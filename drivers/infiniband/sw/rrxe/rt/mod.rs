// SPDX-License-Identifier: GPL-2.0

//! Runtime helpers missing from the kernel crate: flushing and cancelling
//! work items, and jiffies. Written to be independent of rrxe, like `net/`.

pub(crate) mod time;
pub(crate) mod work;

#[cfg(CONFIG_KUNIT)]
mod kunit;

pub(crate) use time::{jiffies, usecs_to_jiffies};
pub(crate) use work::{flush_delayed_work, flush_work};

/// Waits until every RCU read-side section (and so every softirq) that
/// started before the call has finished.
pub(crate) fn synchronize_rcu() {
    // SAFETY: may sleep; callers are in process context.
    unsafe { crate::sys::rrxe_synchronize_rcu() };
}
