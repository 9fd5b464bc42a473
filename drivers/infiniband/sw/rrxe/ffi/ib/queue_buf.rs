// SPDX-License-Identifier: GPL-2.0

//! Queue memory shared with user space.
//!
//! A driver's queues that a process maps (work, receive and completion
//! rings, as rxe has them) live in one `vmalloc_user` buffer each, which
//! the process maps through the uverbs file (`rdma_user_mmap_entry`). Both sides access it concurrently, so the
//! kernel never forms a Rust reference into it: every access is a bounded,
//! volatile or atomic access through this type, and a value read from it is
//! a plain number to be validated, never a trusted index.
//!
//! Lifetime: a buffer that was never exposed is freed on drop. Once exposed,
//! it belongs to its mmap entry: drop removes the entry (no new mappings),
//! and the core calls `mmap_free`, which `vfree`s the buffer, once no
//! `mmap` call holds the entry. Pages already mapped into a process are
//! inserted with their own page references (`remap_vmalloc_range`), so they
//! stay allocated until the process unmaps them: a process that keeps a
//! queue mapped after destroying it only ever sees memory nobody else uses.

use crate::ffi::sys;
use core::{
    ptr::NonNull,
    sync::atomic::{AtomicU32, Ordering},
};
use kernel::{error::to_result, page::PAGE_SIZE, prelude::*, types::Opaque};

use super::Udata;

/// The mmap entry of an exposed buffer, owned by the core once inserted.
#[repr(C)]
struct MmapEntry {
    entry: Opaque<sys::rdma_user_mmap_entry>,
    buf: NonNull<u8>,
    len: usize,
}

/// A zeroed, page-granular buffer that user space may map.
///
/// # Invariants
///
/// `buf` is a `vmalloc_user` allocation of at least `len` bytes. If `entry`
/// is set, the buffer belongs to that inserted mmap entry, on which this
/// object holds the insertion reference; otherwise this object owns `buf`.
pub(crate) struct QueueBuf {
    buf: NonNull<u8>,
    len: usize,
    entry: Option<NonNull<MmapEntry>>,
}

// SAFETY: the buffer is plain memory accessed only through atomic or
// volatile operations; the mmap entry may be removed from any thread.
unsafe impl Send for QueueBuf {}
// SAFETY: as above; shared access goes through atomics and volatile copies.
unsafe impl Sync for QueueBuf {}

impl QueueBuf {
    /// Allocates `len` zeroed bytes.
    pub(crate) fn new(len: usize) -> Result<Self> {
        if len == 0 {
            return Err(EINVAL);
        }
        // SAFETY: plain allocation; NULL on failure.
        let raw = unsafe { sys::rrxe_vmalloc_user(len) };
        let buf = NonNull::new(raw.cast::<u8>()).ok_or(ENOMEM)?;
        // INVARIANT: freshly allocated and owned.
        Ok(Self {
            buf,
            len,
            entry: None,
        })
    }

    /// Makes the buffer mappable by the process behind `udata` and returns
    /// the offset its provider passes to `mmap` (with the buffer's size).
    pub(crate) fn expose(&mut self, udata: &Udata) -> Result<u64> {
        if self.entry.is_some() {
            return Err(EINVAL);
        }
        let entry = KBox::new(
            MmapEntry {
                entry: Opaque::zeroed(),
                buf: self.buf,
                len: self.len,
            },
            GFP_KERNEL,
        )?;
        let entry = KBox::into_raw(entry);
        // SAFETY: `entry` is a valid, zeroed mmap entry at offset 0 of our
        // box; the context is the one issuing this command.
        let ret = unsafe {
            sys::rdma_user_mmap_entry_insert(udata.ucontext(), (*entry).entry.get(), self.len)
        };
        if let Err(e) = to_result(ret) {
            // SAFETY: the core did not take the entry; we still own the box.
            drop(unsafe { KBox::from_raw(entry) });
            return Err(e);
        }
        // SAFETY: the entry is inserted and stays valid while we hold the
        // insertion reference.
        let offset = unsafe { sys::rrxe_mmap_offset((*entry).entry.get()) };
        // INVARIANT: from now on the buffer belongs to the entry.
        // SAFETY: `entry` came from `KBox::into_raw`, so it is not NULL.
        self.entry = Some(unsafe { NonNull::new_unchecked(entry) });
        Ok(offset)
    }

    fn word(&self, offset: usize) -> Option<&AtomicU32> {
        if offset % 4 != 0 || offset.checked_add(4)? > self.len {
            return None;
        }
        // SAFETY: in bounds and aligned (vmalloc memory is page-aligned); the
        // memory is only ever accessed atomically at this offset.
        Some(unsafe { AtomicU32::from_ptr(self.buf.as_ptr().add(offset).cast()) })
    }

    /// Reads the 32-bit word at `offset` with acquire ordering (an index the
    /// other side publishes). Out of bounds reads as 0.
    pub(crate) fn load_acquire(&self, offset: usize) -> u32 {
        self.word(offset).map_or(0, |w| w.load(Ordering::Acquire))
    }

    /// Writes the 32-bit word at `offset` with release ordering (publishes
    /// the slots written before). Out of bounds is ignored.
    pub(crate) fn store_release(&self, offset: usize, value: u32) {
        if let Some(w) = self.word(offset) {
            w.store(value, Ordering::Release);
        }
    }

    /// Copies `dst.len()` bytes from `offset` out of the buffer. `EINVAL` if
    /// the range is not inside it.
    pub(crate) fn read(&self, offset: usize, dst: &mut [u8]) -> Result {
        self.check(offset, dst.len())?;
        // SAFETY: the range is inside the buffer; user space may change it
        // concurrently, which only affects the values copied (they are
        // validated by the caller), as with `copy_from_user`.
        unsafe {
            core::ptr::copy_nonoverlapping(
                self.buf.as_ptr().add(offset),
                dst.as_mut_ptr(),
                dst.len(),
            )
        };
        Ok(())
    }

    /// Copies `src` into the buffer at `offset`. `EINVAL` if the range is
    /// not inside it.
    pub(crate) fn write(&self, offset: usize, src: &[u8]) -> Result {
        self.check(offset, src.len())?;
        // SAFETY: the range is inside the buffer, which we may write.
        unsafe {
            core::ptr::copy_nonoverlapping(src.as_ptr(), self.buf.as_ptr().add(offset), src.len())
        };
        Ok(())
    }

    /// Copies the bytes of `value` (padding included) into the buffer at
    /// `offset`. `EINVAL` if they do not fit there.
    pub(crate) fn write_value<V>(&self, offset: usize, value: &V) -> Result {
        self.check(offset, size_of::<V>())?;
        // SAFETY: the range is inside the buffer, which we may write; a
        // byte copy (memcpy) may include uninitialised padding.
        unsafe {
            core::ptr::copy_nonoverlapping(
                core::ptr::from_ref(value).cast::<u8>(),
                self.buf.as_ptr().add(offset),
                size_of::<V>(),
            )
        };
        Ok(())
    }

    /// Zeroes `len` bytes at `offset`. `EINVAL` if the range is not inside
    /// the buffer.
    pub(crate) fn zero(&self, offset: usize, len: usize) -> Result {
        self.check(offset, len)?;
        // SAFETY: the range is inside the buffer, which we may write.
        unsafe { core::ptr::write_bytes(self.buf.as_ptr().add(offset), 0, len) };
        Ok(())
    }

    fn check(&self, offset: usize, len: usize) -> Result {
        match offset.checked_add(len) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(EINVAL),
        }
    }
}

impl Drop for QueueBuf {
    fn drop(&mut self) {
        match self.entry {
            // SAFETY: we hold the insertion reference; `mmap_free` frees the
            // buffer once no mapping is left.
            Some(entry) => unsafe {
                sys::rdma_user_mmap_entry_remove((*entry.as_ptr()).entry.get())
            },
            // SAFETY: we own the never-exposed allocation.
            None => unsafe { sys::vfree(self.buf.as_ptr().cast()) },
        }
    }
}

/// The `mmap` operation: maps the queue whose entry matches the offset.
///
/// # Safety
///
/// Called only by the RDMA core as `ib_device_ops.mmap`.
pub(crate) unsafe extern "C" fn mmap(
    uctx: *mut sys::ib_ucontext,
    vma: *mut sys::vm_area_struct,
) -> i32 {
    // SAFETY: valid arguments from the core; returns a referenced entry or NULL.
    let raw = unsafe { sys::rdma_user_mmap_entry_get(uctx, vma) };
    if raw.is_null() {
        return EINVAL.to_errno();
    }
    let entry = raw.cast::<MmapEntry>();
    // SAFETY: every entry rrxe inserts is the first field of an `MmapEntry`,
    // alive while we hold the reference taken above.
    let (buf, len) = unsafe { ((*entry).buf, (*entry).len) };
    // SAFETY: `vma` is valid.
    let ret = if unsafe { sys::rrxe_vma_len(vma) } as usize > len.next_multiple_of(PAGE_SIZE) {
        EINVAL.to_errno()
    } else {
        // SAFETY: `buf` is a live `vmalloc_user` buffer (we hold the entry)
        // at least as large as the mapping; mapped pages keep their own
        // references after the buffer is freed.
        unsafe { sys::remap_vmalloc_range(vma, buf.as_ptr().cast(), 0) }
    };
    // SAFETY: drops the reference taken above.
    unsafe { sys::rdma_user_mmap_entry_put(raw) };
    ret
}

/// The `mmap_free` operation: the entry is gone and unmapped everywhere.
///
/// # Safety
///
/// Called only by the RDMA core as `ib_device_ops.mmap_free`, once per entry.
pub(crate) unsafe extern "C" fn mmap_free(raw: *mut sys::rdma_user_mmap_entry) {
    // SAFETY: rrxe's entries are `KBox<MmapEntry>`s given to the core in
    // `expose`; this is the last use.
    let entry = unsafe { KBox::from_raw(raw.cast::<MmapEntry>()) };
    // SAFETY: the buffer belongs to the entry and nothing maps it any more.
    unsafe { sys::vfree(entry.buf.as_ptr().cast()) };
}
