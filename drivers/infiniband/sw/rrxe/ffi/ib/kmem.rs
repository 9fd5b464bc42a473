// SPDX-License-Identifier: GPL-2.0

//! Access to the memory behind memory regions: pages that a region keeps
//! allocated (`PageRef`, mapped with `kmap_local_page` for each access) and
//! kernel virtual addresses that kernel consumers hand to a software RDMA
//! device (`KernelMemory`).
//!
//! The memory is shared with its owner (a process, or a kernel consumer),
//! which may read or write it while the device does: as with DMA by real
//! hardware, the contents are then unspecified, which is the owner's
//! business. Copies are plain byte copies (every byte value is valid), and
//! atomic operations use the CPU's atomic instructions, so they are atomic
//! against the owner's own atomics on the same word.

use super::{Operations, Pd};
use crate::ffi::{rt::Sink, sys};
use core::{marker::PhantomData, ptr::NonNull};
use kernel::{
    page::PAGE_SIZE,
    prelude::*,
    sync::atomic::{Atomic, Full},
};

/// Size of the operand of an atomic operation.
const WORD: usize = size_of::<u64>();

/// An 8-byte atomic operation on memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AtomicOp {
    /// Stores `swap` if the word equals `compare`.
    CmpSwap {
        /// The value expected.
        compare: u64,
        /// The value stored if the expected one is found.
        swap: u64,
    },
    /// Adds (wrapping) to the word.
    FetchAdd(u64),
    /// Stores the value (an ATOMIC WRITE).
    Write(u64),
}

impl AtomicOp {
    /// Applies the operation to `word`, fully ordered (as the C atomics
    /// that return a value); returns the value the word had before.
    fn apply(self, word: &Atomic<u64>) -> u64 {
        match self {
            AtomicOp::CmpSwap { compare, swap } => {
                word.cmpxchg(compare, swap, Full).unwrap_or_else(|old| old)
            }
            AtomicOp::FetchAdd(add) => word.fetch_add(add, Full),
            AtomicOp::Write(value) => word.xchg(value, Full),
        }
    }
}

/// A page that its owner keeps allocated for `'a` (pinned user memory, or
/// a kernel consumer's buffer).
///
/// # Invariants
///
/// `ptr` is a `struct page` that stays allocated for `'a`; if `writable` is
/// false, the page must not be written (it may be pinned read-only: a
/// shared zero page, or page cache of a file mapped read-only).
#[derive(Clone, Copy)]
pub(crate) struct PageRef<'a> {
    ptr: NonNull<sys::page>,
    writable: bool,
    _owner: PhantomData<&'a ()>,
}

impl PageRef<'_> {
    /// Borrows the page `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` is a `struct page` that stays allocated for the returned
    /// lifetime, and that may be written if `writable` is true.
    pub(crate) unsafe fn from_raw(ptr: NonNull<sys::page>, writable: bool) -> Self {
        // INVARIANT: guaranteed by the caller.
        Self {
            ptr,
            writable,
            _owner: PhantomData,
        }
    }

    /// Runs `f` on the address of `len` bytes at `offset` in the page,
    /// mapped for the duration of the call, after checking they lie in the
    /// page.
    fn with_mapped<R>(&self, offset: usize, len: usize, f: impl FnOnce(*mut u8) -> R) -> Result<R> {
        match offset.checked_add(len) {
            Some(end) if end <= PAGE_SIZE => {}
            _ => return Err(EINVAL),
        }
        // SAFETY: the page is allocated (type invariant); a local mapping
        // neither sleeps nor allocates, so this is fine in any context.
        let base = unsafe { sys::rrxe_kmap_local_page(self.ptr.as_ptr()) }.cast::<u8>();
        // SAFETY: `offset <= PAGE_SIZE`, so the result is inside the mapped
        // page or one past its end.
        let r = f(unsafe { base.add(offset) });
        // SAFETY: unmaps the mapping made above; `f` cannot have made
        // another local mapping that is still live (each is undone before
        // its own call returns), so the mappings nest as required.
        unsafe { sys::rrxe_kunmap_local(base.cast_const().cast()) };
        Ok(r)
    }

    /// Fills the next `len` bytes of `dst` from `offset` in the page.
    /// `EINVAL` (nothing filled) if they are not all in the page or not
    /// all left in `dst`.
    pub(crate) fn read_into(&self, offset: usize, len: usize, dst: &mut Sink<'_>) -> Result {
        self.with_mapped(offset, len, |src| {
            // SAFETY: `src` is valid for `len` bytes of the mapped page,
            // which is not the sink's memory (borrowed mutably); the owner
            // may change them concurrently, which only makes the bytes
            // copied unspecified (see the module documentation).
            unsafe { dst.put_raw(src, len) }
        })?
    }

    /// Copies `src` into the page at `offset`. `EINVAL` if it does not fit
    /// in the page, `EACCES` if the page is read-only.
    pub(crate) fn write(&self, offset: usize, src: &[u8]) -> Result {
        if !self.writable {
            return Err(EACCES);
        }
        self.with_mapped(offset, src.len(), |dst| {
            // SAFETY: `dst` is valid for `src.len()` bytes of the mapped
            // page, which may be written (type invariant); concurrent use by
            // the owner only makes the contents unspecified.
            unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) }
        })
    }

    /// Performs `op` on the 8-byte word at `offset` in the page; returns
    /// its previous value. `EINVAL` if `offset` is not a multiple of 8 or
    /// not in the page, `EACCES` if the page is read-only.
    pub(crate) fn atomic(&self, offset: usize, op: AtomicOp) -> Result<u64> {
        if !self.writable {
            return Err(EACCES);
        }
        if offset % WORD != 0 {
            return Err(EINVAL);
        }
        self.with_mapped(offset, WORD, |word| {
            // SAFETY: the word is in the mapped page, which may be written,
            // and 8-byte aligned (the mapping is page aligned, the offset a
            // multiple of 8). Other accesses to it are the owner's; its
            // atomics are atomic against this one, and a plain access by the
            // owner racing with it is the owner's bug, as it would be
            // against a real device.
            op.apply(unsafe { Atomic::from_ptr(word.cast::<u64>()) })
        })
    }
}

/// Access to kernel virtual addresses that a kernel consumer hands to a
/// software RDMA device: in the SGEs of its work requests and in the page
/// lists of its fast-registration MRs (`ib_map_mr_sg`), and, through the
/// R_Key of a DMA MR it chose to share, in its peers' requests.
///
/// A software device has no DMA: the RDMA core gives kernel consumers the
/// kernel virtual address of their memory as its "DMA address"
/// (`ib_uses_virt_dma`; the driver turns it back into a pointer as
/// `ib_virt_dma_to_ptr` does). What an address means is therefore up to
/// the consumer, and the RDMA core's contract with kernel consumers is what
/// makes accesses sound: **a kernel consumer only names memory it owns and
/// keeps allocated while the device may access it** (until the work
/// request completes, or the fast MR is invalidated or deregistered; a
/// consumer that gives out a DMA MR's R_Key with remote access grants its
/// peer all of memory, which is why the core calls that an unsafe global
/// R_Key). The driver cannot check this; it only checks that each page it
/// touches is ordinary memory of the kernel's linear map (`virt_addr_valid`)
/// rather than an address that would fault.
///
/// # Invariants
///
/// Exists only for regions of kernel consumers: every address passed to its
/// methods was named by a kernel consumer, as above.
pub(crate) struct KernelMemory {
    _private: (),
}

impl KernelMemory {
    /// Access for a region of the protection domain `pd`: `EINVAL` unless
    /// the PD belongs to a kernel consumer (a process's PD has the user
    /// object it was created through).
    pub(crate) fn for_pd<T: Operations>(pd: &Pd<T>) -> Result<Self> {
        // SAFETY: `pd` is a live PD; `uobject` is set before the driver
        // sees the PD and never changes afterwards.
        let uobject = unsafe { (*pd.as_raw()).uobject };
        if !uobject.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: the PD is a kernel consumer's, so its regions' addresses
        // come from a kernel consumer.
        Ok(unsafe { Self::new() })
    }

    /// Access without a PD to check.
    ///
    /// # Safety
    ///
    /// Every address passed to the methods of the result must be one a
    /// kernel consumer named, under the contract described on the type.
    pub(crate) unsafe fn new() -> Self {
        // INVARIANT: guaranteed by the caller.
        Self { _private: () }
    }

    /// The page of the linear map holding `addr`, with `addr`'s offset in
    /// it. `EFAULT` if `addr` is not in the linear map.
    fn page(&self, addr: u64) -> Result<(PageRef<'_>, usize)> {
        let addr = usize::try_from(addr).map_err(|_| EFAULT)?;
        // SAFETY: only computes; `NULL` unless `virt_addr_valid(addr)`.
        let page = unsafe { sys::rrxe_virt_to_page(addr) };
        let page = NonNull::new(page).ok_or(EFAULT)?;
        // SAFETY: a kernel consumer named this address (type invariant), so
        // the page holds its memory, which it keeps allocated and which the
        // device may write, for at least this call.
        Ok((unsafe { PageRef::from_raw(page, true) }, addr % PAGE_SIZE))
    }

    /// Calls `f` on each piece of `[addr, addr + len)` that lies in one
    /// page, with the page, the offset in it and the range of the piece
    /// relative to `addr`.
    fn for_each_page(
        &self,
        addr: u64,
        len: usize,
        mut f: impl FnMut(PageRef<'_>, usize, core::ops::Range<usize>) -> Result,
    ) -> Result {
        let mut done = 0usize;
        while done < len {
            let at = addr.checked_add(done as u64).ok_or(EFAULT)?;
            let (page, offset) = self.page(at)?;
            let n = (PAGE_SIZE - offset).min(len - done);
            f(page, offset, done..done + n)?;
            done += n;
        }
        Ok(())
    }

    /// Fills the next `len` bytes of `dst` from kernel address `addr`.
    /// `EFAULT` if a page of the range is not in the linear map (nothing
    /// past that page is filled), `EINVAL` if fewer than `len` are left in
    /// `dst` (part may have been filled).
    pub(crate) fn read_into(&self, addr: u64, len: usize, dst: &mut Sink<'_>) -> Result {
        self.for_each_page(addr, len, |page, offset, span| {
            page.read_into(offset, span.len(), dst)
        })
    }

    /// Copies `src` to kernel address `addr`. `EFAULT` as for `read`.
    pub(crate) fn write(&self, addr: u64, src: &[u8]) -> Result {
        self.for_each_page(addr, src.len(), |page, offset, span| {
            page.write(offset, src.get(span).ok_or(EINVAL)?)
        })
    }

    /// Performs `op` on the 8-byte word at kernel address `addr`; returns
    /// its previous value. `EINVAL` if `addr` is not 8-byte aligned,
    /// `EFAULT` if it is not in the linear map.
    pub(crate) fn atomic(&self, addr: u64, op: AtomicOp) -> Result<u64> {
        if addr % WORD as u64 != 0 {
            return Err(EINVAL);
        }
        let (page, offset) = self.page(addr)?;
        page.atomic(offset, op)
    }
}
