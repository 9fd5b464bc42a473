// SPDX-License-Identifier: GPL-2.0

//! `struct ib_umem`: user memory pinned for a registration.

use crate::sys;
use core::ptr::NonNull;
use kernel::{error::from_err_ptr, prelude::*};

use super::{IbDevice, Operations};

/// User pages pinned by the core's umem machinery; unpinned on drop.
///
/// # Invariants
///
/// `ptr` is a umem returned by `ib_umem_get` and not yet released.
pub(crate) struct Umem {
    ptr: NonNull<sys::ib_umem>,
}

// SAFETY: a umem is plain kernel bookkeeping; releasing it from any thread
// is allowed.
unsafe impl Send for Umem {}
// SAFETY: `&Umem` exposes nothing that mutates it.
unsafe impl Sync for Umem {}

impl Umem {
    /// Pins `[addr, addr + len)` of the calling process with `access`
    /// (`IB_ACCESS_*`; writable pinning when any write access is asked).
    pub(crate) fn get<T: Operations>(
        dev: &IbDevice<T>,
        addr: u64,
        len: u64,
        access: u32,
    ) -> Result<Self> {
        let len = usize::try_from(len).map_err(|_| EINVAL)?;
        // SAFETY: the device is valid; the core validates the user range
        // against the calling process and returns an ERR_PTR on failure.
        let raw = unsafe { sys::rrxe_umem_get(dev.as_raw(), addr, len, access as i32) };
        let ptr = from_err_ptr(raw)?;
        // INVARIANT: `from_err_ptr` succeeded, so this is a live umem.
        Ok(Self {
            ptr: NonNull::new(ptr).ok_or(EINVAL)?,
        })
    }
}

impl Drop for Umem {
    fn drop(&mut self) {
        // SAFETY: we own the umem by the type invariant.
        unsafe { sys::ib_umem_release(self.ptr.as_ptr()) };
    }
}
