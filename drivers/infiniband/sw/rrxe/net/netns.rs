// SPDX-License-Identifier: GPL-2.0

//! `struct net`: a network namespace, borrowed.

use crate::sys;
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

    /// A value that identifies this namespace while it is alive.
    pub(crate) fn id(&self) -> usize {
        self.0.get() as usize
    }
}
