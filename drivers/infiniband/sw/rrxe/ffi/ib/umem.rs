// SPDX-License-Identifier: GPL-2.0

//! `struct ib_umem`: user memory pinned for a registration, with its pages
//! in an array so that the data path finds the page of any byte at once.

use crate::ffi::sys;
use core::ptr::NonNull;
use kernel::{error::from_err_ptr, page::PAGE_SIZE, prelude::*};

use super::{IbDevice, Operations, PageRef};

/// User pages pinned by the core's umem machinery; unpinned on drop.
///
/// # Invariants
///
/// `ptr` is a umem returned by `ib_umem_get` and not yet released.
/// `pages` are its pinned pages in address order, the first one holding
/// the byte at `address` (the start of the registration), `first_offset`
/// bytes into it; they stay pinned as long as the umem. `writable` says
/// whether they were pinned for writing.
pub(crate) struct Umem {
    ptr: NonNull<sys::ib_umem>,
    pages: KVVec<*mut sys::page>,
    first_offset: usize,
    len: usize,
    writable: bool,
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
        let ptr = NonNull::new(from_err_ptr(raw)?).ok_or(EINVAL)?;
        // Released by `Self::drop` from here on, also if filling the page
        // array fails.
        let mut umem = Self {
            ptr,
            pages: KVVec::new(),
            first_offset: 0,
            len: 0,
            writable: false,
        };
        umem.fill_pages()?;
        Ok(umem)
    }

    /// Builds the page array from the umem's scatterlist.
    fn fill_pages(&mut self) -> Result {
        let raw = self.ptr.as_ptr();
        // SAFETY: the umem is live (type invariant) and nothing changes it.
        let (address, len, writable, count) = unsafe {
            (
                (*raw).address,
                (*raw).length,
                (*raw).writable() != 0,
                sys::rrxe_umem_num_pages(raw),
            )
        };
        let mut pages = KVVec::from_elem(core::ptr::null_mut(), count, GFP_KERNEL)?;
        // SAFETY: the umem is live; `pages` has room for `count` entries.
        let filled = unsafe { sys::rrxe_umem_pages(raw, pages.as_mut_ptr(), count) };
        // The scatterlist holds exactly the pages pinned for the range.
        if filled != count || pages.iter().any(|p| p.is_null()) {
            return Err(EINVAL);
        }
        // INVARIANT: these are the umem's pages, from the one holding
        // `address`, which `ib_umem_get` pinned (for writing if `writable`).
        self.pages = pages;
        self.first_offset = address % PAGE_SIZE;
        self.len = len;
        self.writable = writable;
        Ok(())
    }

    /// Length of the registration in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Offset of the registration's first byte in the first page.
    pub(crate) fn first_offset(&self) -> usize {
        self.first_offset
    }

    /// Number of pages pinned.
    pub(crate) fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// The `index`th page, which stays pinned while `self` lives. Writing
    /// it fails unless the memory was pinned for writing.
    pub(crate) fn page(&self, index: usize) -> Option<PageRef<'_>> {
        let page = NonNull::new(*self.pages.get(index)?)?;
        // SAFETY: a page of this umem, pinned until `drop` releases the
        // umem, so for as long as `self` is borrowed (type invariant);
        // writable only if it was pinned for writing.
        Some(unsafe { PageRef::from_raw(page, self.writable) })
    }
}

impl Drop for Umem {
    fn drop(&mut self) {
        // SAFETY: we own the umem by the type invariant.
        unsafe { sys::ib_umem_release(self.ptr.as_ptr()) };
    }
}
