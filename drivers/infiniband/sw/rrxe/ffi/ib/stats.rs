// SPDX-License-Identifier: GPL-2.0

//! Hardware counter descriptions (`struct rdma_stat_desc`), which the core
//! keeps pointers to for as long as the device exists: they live in
//! statics.

use crate::ffi::sys;

/// The description of one counter.
#[repr(transparent)]
pub(crate) struct StatDesc(sys::rdma_stat_desc);

// SAFETY: a description is immutable and only points to a static string.
unsafe impl Sync for StatDesc {}

impl StatDesc {
    /// A counter named `name`.
    // `as_char_ptr` is not a `const fn`, and these live in statics; the
    // cast gives the kernel's (unsigned) `char`, as `as_char_ptr` would.
    #[allow(clippy::disallowed_methods)]
    pub(crate) const fn new(name: &'static core::ffi::CStr) -> Self {
        Self(sys::rdma_stat_desc {
            name: name.as_ptr().cast(),
            flags: 0,
            priv_: core::ptr::null(),
        })
    }

    pub(super) fn as_raw(descs: &'static [StatDesc]) -> *const sys::rdma_stat_desc {
        descs.as_ptr().cast()
    }
}
