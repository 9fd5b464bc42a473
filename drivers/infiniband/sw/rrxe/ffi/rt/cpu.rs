// SPDX-License-Identifier: GPL-2.0

//! CPUs: which one runs the caller, which are online.

use crate::ffi::sys;

/// The CPU running the caller. Where preemption is on this is only a
/// hint: the caller may move right after.
pub(crate) fn this_cpu() -> u32 {
    // SAFETY: no preconditions.
    unsafe { sys::rrxe_this_cpu() }
}

/// Whether `cpu` is online.
pub(crate) fn cpu_online(cpu: u32) -> bool {
    // SAFETY: no preconditions; out-of-range CPUs are offline.
    unsafe { sys::rrxe_cpu_online(cpu) }
}

/// The next online CPU after `cpu`, wrapping around.
pub(crate) fn next_online_cpu(cpu: u32) -> u32 {
    // SAFETY: no preconditions.
    unsafe { sys::rrxe_next_online_cpu(cpu) }
}
