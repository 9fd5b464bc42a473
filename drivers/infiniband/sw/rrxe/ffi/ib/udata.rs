// SPDX-License-Identifier: GPL-2.0

//! `struct ib_udata`: the driver-specific part of a user verbs command.

use crate::ffi::sys;
use kernel::{error::to_result, prelude::*, transmute::AsBytes};

/// The driver part of a command from user space: an input buffer and room
/// for a response, both in user memory.
///
/// # Invariants
///
/// `ptr` is a valid `ib_udata` of a command in progress, for the lifetime of
/// the borrow that produced this object.
pub(crate) struct Udata {
    ptr: *mut sys::ib_udata,
}

impl Udata {
    /// Wraps the udata a callback received; `None` for kernel callers.
    ///
    /// # Safety
    ///
    /// `ptr` is NULL or a valid `ib_udata` that outlives the returned value.
    pub(crate) unsafe fn from_raw(ptr: *mut sys::ib_udata) -> Option<Self> {
        // INVARIANT: the caller guarantees validity.
        (!ptr.is_null()).then_some(Self { ptr })
    }

    /// The user context that issued the command.
    pub(crate) fn ucontext(&self) -> *mut sys::ib_ucontext {
        // SAFETY: the udata is valid by the type invariant and belongs to a
        // command bundle, as every udata the core hands to drivers does.
        unsafe { sys::rrxe_udata_ucontext(self.ptr) }
    }

    /// How many response bytes user space has room for.
    pub(crate) fn outlen(&self) -> usize {
        // SAFETY: the udata is valid by the type invariant.
        unsafe { (*self.ptr).outlen }
    }

    /// Reads the first `size_of::<T>()` bytes of the command's input;
    /// `EINVAL` if user space sent less.
    pub(crate) fn read<T: kernel::transmute::FromBytes + Default>(&self) -> Result<T> {
        let mut value = T::default();
        // SAFETY: the udata is valid; `value` is writable for its size and
        // any bytes form a valid `T`.
        to_result(unsafe {
            sys::rrxe_udata_read(self.ptr, (&raw mut value).cast(), size_of::<T>())
        })?;
        Ok(value)
    }

    /// Copies `value` to the user address `uaddr` of the calling process
    /// (for ABIs that pass a response pointer inside the command).
    pub(crate) fn write_user<T: AsBytes>(&self, uaddr: u64, value: &T) -> Result {
        // SAFETY: `value` is readable for its size; the user address is
        // checked by `copy_to_user`.
        to_result(unsafe {
            sys::rrxe_copy_to_user(uaddr, core::ptr::from_ref(value).cast(), size_of::<T>())
        })
    }

    /// Writes `resp` as the command's response. `EINVAL` if user space left
    /// less room than the ABI's response size, `EFAULT` on a bad buffer.
    pub(crate) fn respond<T: AsBytes>(&self, resp: &T) -> Result {
        // SAFETY: the udata is valid; `resp` is readable for its size.
        to_result(unsafe {
            sys::rrxe_udata_respond(self.ptr, core::ptr::from_ref(resp).cast(), size_of::<T>())
        })
    }
}
