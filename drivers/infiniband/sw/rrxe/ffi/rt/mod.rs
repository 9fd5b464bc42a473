// SPDX-License-Identifier: GPL-2.0

//! Runtime helpers missing from the kernel crate: a fixed-capacity inline
//! vector, flushing and cancelling
//! work items (and queueing them on one CPU's BH queue or kworker), CPUs, the
//! monotonic clock, soft hrtimers owned through
//! an `Arc`, and random numbers. Written to be independent of rrxe, like `net/`.

use core::marker::PhantomData;

pub(crate) mod array;
pub(crate) mod cpu;
pub(crate) mod lock;
pub(crate) mod sink;
pub(crate) mod time;
pub(crate) mod timer;
pub(crate) mod trace;
pub(crate) mod work;

pub(crate) use array::ArrayBuf;
pub(crate) use cpu::{cpu_online, next_online_cpu, this_cpu};
pub(crate) use lock::{new_spinlock_bh, SpinLockBh, SpinLockBhGuard, TakenIn};
pub(crate) use sink::Sink;
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

/// Lets other tasks run if one is due (`cond_resched`), between the steps
/// of a long loop in process context. May sleep: no spinlock held.
pub(crate) fn cond_resched() {
    // SAFETY: callers are in process context, holding no spinlock (a mutex
    // may be held).
    unsafe { crate::ffi::sys::rrxe_cond_resched() };
}

/// A reader of the receive path's SRCU domain, from a QP's lookup by
/// number to the end of what it does with the QP: [`wait_for_rx_readers`]
/// waits for it. Ends when dropped, on the CPU it began on (it is not
/// `Send`).
pub(crate) struct RxReading {
    idx: i32,
    _not_send: PhantomData<*mut ()>,
}

impl RxReading {
    /// Begins a read-side section. Any context but NMI.
    pub(crate) fn begin() -> Self {
        // SAFETY: the domain is the module's static one, set up before the
        // module's code runs; SRCU readers may be in any context but NMI.
        let idx = unsafe { crate::ffi::sys::rrxe_rx_read_lock() };
        Self {
            idx,
            _not_send: PhantomData,
        }
    }
}

impl Drop for RxReading {
    fn drop(&mut self) {
        // SAFETY: `idx` came from this section's `rrxe_rx_read_lock`, and
        // the section ends once.
        unsafe { crate::ffi::sys::rrxe_rx_read_unlock(self.idx) };
    }
}

/// Waits until every [`RxReading`] that began before the call has ended.
/// Process context (it sleeps); an expedited SRCU grace period, which
/// only waits for the receive path's readers, without IPIs.
pub(crate) fn wait_for_rx_readers() {
    // SAFETY: may sleep; callers are in process context, and never inside
    // an `RxReading` (which would wait for itself).
    unsafe { crate::ffi::sys::rrxe_rx_synchronize() };
}

/// A uniformly random `u32` from the kernel's cryptographically secure
/// generator (`get_random_u32`), for values others must not predict.
pub(crate) fn random_u32() -> u32 {
    // SAFETY: `get_random_u32` takes no arguments and may be called from
    // any context.
    unsafe { crate::ffi::sys::get_random_u32() }
}
