// SPDX-License-Identifier: GPL-2.0

//! `struct net`: a network namespace, borrowed.

use crate::ffi::sys;
use kernel::types::Opaque;

/// A network namespace, borrowed for as long as the caller keeps it alive.
///
/// # Invariants
///
/// The wrapped `struct net` is valid for the lifetime of any `&Net`.
#[repr(transparent)]
pub(crate) struct Net(Opaque<sys::net>);

impl Net {
    /// Borrows a raw `struct net`.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a valid `struct net` that stays valid for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut sys::net) -> &'a Net {
        // SAFETY: `Net` is a transparent wrapper of the C struct and the caller
        // guarantees validity for `'a`.
        unsafe { &*ptr.cast::<Net>() }
    }

    /// The initial network namespace, which lives as long as the kernel.
    // Only the KUnit tests need it so far.
    #[cfg_attr(not(CONFIG_KUNIT), expect(dead_code))]
    pub(crate) fn init() -> &'static Net {
        // SAFETY: `init_net` is a static that is never freed.
        unsafe { Net::from_raw(sys::rrxe_init_net()) }
    }

    /// The raw pointer, for the FFI layer.
    pub(crate) fn as_raw(&self) -> *mut sys::net {
        self.0.get()
    }

    /// A value that identifies this namespace while it is alive.
    pub(crate) fn id(&self) -> usize {
        self.0.get() as usize
    }
}
