// SPDX-License-Identifier: GPL-2.0

//! Runtime helpers missing from the kernel crate: flushing and cancelling
//! work items (and queueing them on one CPU's BH queue or kworker), CPUs, the
//! monotonic clock, soft hrtimers owned through
//! an `Arc`, and random numbers. Written to be independent of rrxe, like `net/`.

pub(crate) mod cpu;
pub(crate) mod time;
pub(crate) mod timer;
pub(crate) mod trace;
pub(crate) mod work;

pub(crate) use cpu::{cpu_online, next_online_cpu, this_cpu};
pub(crate) use time::now_ns;
pub(crate) use timer::{SoftTimer, SoftTimerOwner};
pub(crate) use work::{cancel_work_sync, enqueue_bh_on, enqueue_task_on, BhOff};

/// The kernel's `crc32_le`: feeds `data` into the raw CRC-32 register
/// `crc` (no inversion), with the fastest implementation the CPU has.
pub(crate) fn crc32_le(crc: u32, data: &[u8]) -> u32 {
    // SAFETY: `data` is valid for reads of its length.
    unsafe { crate::ffi::sys::crc32_le(crc, data.as_ptr().cast(), data.len()) }
}

/// Waits until every RCU read-side section (and so every softirq) that
/// started before the call has finished.
pub(crate) fn synchronize_rcu() {
    // SAFETY: may sleep; callers are in process context.
    unsafe { crate::ffi::sys::rrxe_synchronize_rcu() };
}

/// A uniformly random `u32` from the kernel's cryptographically secure
/// generator (`get_random_u32`), for values others must not predict.
pub(crate) fn random_u32() -> u32 {
    // SAFETY: `get_random_u32` takes no arguments and may be called from
    // any context.
    unsafe { crate::ffi::sys::get_random_u32() }
}
