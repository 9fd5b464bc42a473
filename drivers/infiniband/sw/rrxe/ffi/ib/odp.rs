// SPDX-License-Identifier: GPL-2.0

//! On-demand paging (`struct ib_umem_odp`): a range of a process's address
//! space that the RDMA core tracks with an MMU interval notifier instead of
//! pinning it ([`UmemOdp`]), and the table of the pages that back it now,
//! which a software device's data path reads ([`OdpMirror`]).
//!
//! The core keeps a table of its own (the umem's `pfn_list`), which
//! `hmm_range_fault` writes without a lock and which is read under a mutex:
//! neither is for a data path that runs in softirq context. So the driver
//! keeps a second table, the mirror, under a spinlock that turns interrupts
//! off:
//!
//! - a fault ([`UmemOdp::map`], process context, may sleep) has the core
//!   fault the pages in and copies their entries into the mirror while it
//!   holds the umem's mutex, right after the core checked that no
//!   invalidation raced with the fault;
//! - an invalidation (the notifier's callback, which the kernel calls
//!   before it unmaps, migrates or write-protects pages of the range)
//!   takes the same mutex and clears the entries of its range under the
//!   mirror's spinlock before it returns;
//! - the data path copies to and from the pages only under the mirror's
//!   spinlock ([`OdpMirror::lock`]).
//!
//! So once the callback has returned, which is when the kernel may free or
//! move the pages, no access to them is in progress and none can start.
//! Nothing is pinned: a page stays the process's, and the mirror only says
//! which page backs an address until the next invalidation says otherwise.

use super::{IbDevice, Operations, PageRef};
use crate::ffi::{rt, sys};
use core::{ops::Range, ptr::NonNull};
use kernel::{
    alloc::flags::{GFP_KERNEL_ACCOUNT, __GFP_NOWARN},
    error::from_err_ptr,
    ffi::c_ulong,
    new_spinlock_irq,
    page::{PAGE_SHIFT, PAGE_SIZE},
    prelude::*,
    sync::{
        lock::{spinlock::SpinLockIrqBackend, Guard},
        Arc, SpinLockIrq,
    },
};

/// Whether the kernel was built with on-demand paging
/// (`CONFIG_INFINIBAND_ON_DEMAND_PAGING`): without it, [`UmemOdp::get`]
/// fails with `EOPNOTSUPP`.
pub(crate) fn odp_enabled() -> bool {
    // SAFETY: no precondition.
    unsafe { sys::rrxe_odp_enabled() }
}

/// How [`UmemOdp::map`] maps pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OdpFault {
    /// Faults the pages in for reading (a page not yet written may be the
    /// shared zero page).
    Read,
    /// Faults the pages in for writing (breaking copy-on-write).
    Write,
    /// Maps only the pages already present, as they are; faults nothing.
    Snapshot,
}

/// The entries of the mirror's table.
///
/// # Invariants
///
/// Each entry of `slots` is 0 (no page) or the address of a `struct page`
/// (at least 8-byte aligned) with [`WRITABLE`] set if the page may be
/// written. A non-zero entry names the page that backs the same page of
/// the umem's range, which stays allocated until the entry is cleared: it
/// is only set by [`UmemOdp::map`], under the umem's mutex, right after
/// a successful `ib_umem_odp_map_dma_and_lock` of it (so no invalidation
/// of it has run since the page was looked up), and every invalidation of
/// the range clears it under the table's lock before the kernel may free
/// the page. Every change of an entry is made under the umem's mutex too
/// (a fault, an invalidation, the release). Once `released`, no entry is
/// set again, and the release empties the table before it drops the
/// umem's mutex.
struct Slots {
    /// One entry per page of the range, from the page-aligned start.
    slots: KVVec<usize>,
    /// The umem was released (or is being): the table is, or is about to
    /// be, empty for good.
    released: bool,
}

/// In an entry of [`Slots`]: the page may be written.
const WRITABLE: usize = 1;

/// The pages that back an ODP umem's range now, for the data path.
#[pin_data]
pub(crate) struct OdpMirror {
    /// The page-aligned user address of entry 0.
    base: u64,
    /// The entries, one per page of the umem's range.
    #[pin]
    table: SpinLockIrq<Slots>,
}

/// The mirror's table, locked: its pages may be accessed while this is
/// held. Holds off every invalidation of the range, and spins with
/// interrupts off: access a few pages, then drop it.
pub(crate) struct MirrorGuard<'a> {
    guard: Guard<'a, Slots, SpinLockIrqBackend>,
}

impl OdpMirror {
    /// An empty mirror of `pages` pages from `base`.
    fn new(base: u64, pages: usize) -> Result<impl PinInit<Self>> {
        // As the core's own table: a registration too large for memory is
        // refused (ENOMEM), not warned about. Charged to the registering
        // process's memory cgroup, which sizes it (8 bytes a page of the
        // range, whatever is mapped).
        let slots = KVVec::from_elem(0usize, pages, GFP_KERNEL_ACCOUNT | __GFP_NOWARN)?;
        Ok(pin_init!(Self {
            base,
            table <- new_spinlock_irq!(Slots {
                slots,
                released: false,
            }),
        }))
    }

    /// Locks the table for an access to the pages; `EINVAL` once the umem
    /// was released (no page will be mapped again: the region is gone, and
    /// no fault is to be asked for).
    pub(crate) fn lock(&self) -> Result<MirrorGuard<'_>> {
        let guard = self.table.lock();
        if guard.released {
            return Err(EINVAL);
        }
        Ok(MirrorGuard { guard })
    }

    /// Clears the entries that the invalidation of the user addresses
    /// `[start, end)` concerns, and marks their pages dirty where they may
    /// have been written. Once this returns, no access to their pages is
    /// in progress and none can start.
    ///
    /// # Safety
    ///
    /// The caller holds the umem's mutex, as the invalidation callback
    /// does (see [`Self::forget`]).
    unsafe fn invalidate(&self, start: u64, end: u64) {
        let range = invalidated(self.base, self.table.lock().slots.len(), start, end);
        // SAFETY: the caller holds the umem's mutex.
        unsafe { self.forget(range) };
    }

    /// The umem is being released: the table is marked released first (an
    /// access from then on fails with `EINVAL` and asks for no fault),
    /// then every entry is cleared, its page marked dirty where it may
    /// have been written, and the table freed here, in process context (it
    /// may be vmalloc'ed: the mirror's last reference may go anywhere, with
    /// the region's).
    ///
    /// # Safety
    ///
    /// The caller holds the umem's mutex (see [`Self::forget`]).
    unsafe fn release(&self) {
        let all = {
            let mut t = self.table.lock();
            t.released = true;
            0..t.slots.len()
        };
        // SAFETY: the caller holds the umem's mutex.
        unsafe { self.forget(all) };
        let slots = core::mem::take(&mut self.table.lock().slots);
        drop(slots);
    }

    /// Clears the entries `range` and marks dirty the pages of those that
    /// were mapped for writing, as the core does for a hardware device's
    /// mappings when it unmaps them (`ib_umem_odp_unmap_dma_pages`, which
    /// skips a software device's): the device writes through the kernel's
    /// mapping, which leaves the process's PTE clean, and a page whose PTE
    /// is clean may be dropped without being written back (`MADV_FREE`,
    /// clean page cache). Marked once cleared, so that no write of the
    /// device can come after the mark.
    ///
    /// A batch of [`BATCH`] entries at a time under the table's lock,
    /// which turns interrupts off and which the data path takes per
    /// access: a range may hold millions of entries. Every batch is
    /// cleared before this returns, so the caller's guarantee (no access
    /// once it returns) holds all the same; the scheduler may run between
    /// batches (this is process context, where the callback may block).
    /// The pages are marked outside the lock: marking a folio dirty takes
    /// the file system's locks, which are not softirq-safe.
    ///
    /// # Safety
    ///
    /// The caller holds the umem's mutex: every change of an entry (a
    /// fault filling it, an invalidation or the release clearing it) is
    /// made under that mutex, and the kernel frees or moves a page of the
    /// range only once the invalidation that concerns it, which waits for
    /// that mutex, has returned. So the pages of the entries read stay
    /// allocated until the caller drops the mutex (or, in the callback,
    /// returns), cleared or not.
    unsafe fn forget(&self, range: Range<usize>) {
        for batch in batches(range) {
            let mut entries = [0usize; BATCH];
            let n = {
                let mut t = self.table.lock();
                let Some(slots) = t.slots.get_mut(batch) else {
                    return;
                };
                let n = slots.len();
                entries[..n].copy_from_slice(slots);
                slots.fill(0);
                n
            };
            for &entry in &entries[..n] {
                if entry & WRITABLE == 0 {
                    continue;
                }
                if let Some(page) = NonNull::new((entry & !WRITABLE) as *mut sys::page) {
                    // SAFETY: the entry named the page backing it, which
                    // stays allocated while the caller holds the umem's
                    // mutex (above); marking a folio dirty may take
                    // spinlocks, not sleep.
                    unsafe { sys::rrxe_odp_page_dirty(page.as_ptr()) };
                }
            }
            rt::cond_resched();
        }
    }
}

/// The entries of a table of `pages` pages from the page-aligned address
/// `base` that an invalidation of `[start, end)` concerns: every page a
/// byte of the range falls in, none if the two do not meet.
fn invalidated(base: u64, pages: usize, start: u64, end: u64) -> Range<usize> {
    let page = 1u64 << PAGE_SHIFT;
    let Some(rel_end) = end.checked_sub(base) else {
        return 0..0;
    };
    let first = start.saturating_sub(base) >> PAGE_SHIFT;
    let last = rel_end.saturating_add(page - 1) >> PAGE_SHIFT;
    let clamp = |n: u64| usize::try_from(n).map_or(pages, |n| n.min(pages));
    let (first, last) = (clamp(first), clamp(last));
    if first < last {
        first..last
    } else {
        0..0
    }
}

impl MirrorGuard<'_> {
    /// The page of entry `index`, if one backs it now (and may be written,
    /// if `write`): `None` asks for a fault. It may be accessed as long as
    /// the guard is held.
    pub(crate) fn page(&self, index: usize, write: bool) -> Option<PageRef<'_>> {
        let entry = *self.guard.slots.get(index)?;
        let writable = entry & WRITABLE != 0;
        if write && !writable {
            return None;
        }
        let page = NonNull::new((entry & !WRITABLE) as *mut sys::page)?;
        // SAFETY: a non-zero entry names a page that stays allocated until
        // an invalidation clears the entry, which takes the lock this guard
        // holds, so for as long as the result borrows the guard; it may be
        // written if the entry says so (the invariants of `Slots`).
        Some(unsafe { PageRef::from_raw(page, writable) })
    }
}

/// A registration of a process's memory without pinning
/// (`ib_umem_odp_get`), with its mirror. Released on drop (process
/// context: releasing sleeps).
///
/// # Invariants
///
/// `ptr` is a umem returned by `ib_umem_odp_get` (an explicit region) or
/// `ib_umem_odp_alloc_child` (a child of an implicit one, see
/// [`ImplicitRoot`]) with [`NOTIFIER_OPS`] and not yet released. Its `private` is `Arc::as_ptr(&self.mirror)`, set
/// under the umem's mutex before any fault (NULL until then), and the
/// mirror has one entry per page of its range, from `base`; its pages are
/// `1 << PAGE_SHIFT` bytes. `first_offset`, `len` and `writable` are the
/// umem's.
pub(crate) struct UmemOdp {
    /// The core's umem, ours until dropped.
    ptr: NonNull<sys::ib_umem_odp>,
    /// The pages that back the range now; the umem's `private`, and
    /// shared with the data path, for which it outlives the umem.
    mirror: Arc<OdpMirror>,
    /// The page-aligned address of the range's first page (entry 0).
    base: u64,
    /// Pages of the range: the mirror's entries.
    pages: usize,
    /// Offset of the registration's first byte in the first page.
    first_offset: usize,
    /// Length of the registration in bytes.
    len: usize,
    /// Registered with a right that writes (`ib_access_writable`): faults
    /// for writing are refused otherwise.
    writable: bool,
}

// SAFETY: the umem is the core's bookkeeping, usable from any thread; its
// mutex and the mirror's lock serialise what changes it.
unsafe impl Send for UmemOdp {}
// SAFETY: `&UmemOdp` only reads fields that never change, and the mirror,
// which is `Sync`; faulting takes `&mut`.
unsafe impl Sync for UmemOdp {}

/// The invalidation callback of every ODP umem of this module.
static NOTIFIER_OPS: sys::mmu_interval_notifier_ops = sys::mmu_interval_notifier_ops {
    invalidate: Some(invalidate),
    invalidate_start: None,
    invalidate_finish: None,
};

/// The kernel is about to unmap, migrate or write-protect `range` of the
/// process's address space, which meets an ODP umem's: its mirror forgets
/// those pages before this returns. Refused (`false`, the kernel tries
/// again later) where it may not sleep, as the core's own drivers do: the
/// umem's mutex may wait for a fault in progress.
///
/// # Safety
///
/// Called by the MMU notifier core only, with the interval notifier of a
/// live ODP umem of [`UmemOdp`] (`mni`), a valid `range` and the sequence
/// number to record.
unsafe extern "C" fn invalidate(
    mni: *mut sys::mmu_interval_notifier,
    range: *const sys::mmu_notifier_range,
    cur_seq: c_ulong,
) -> bool {
    // SAFETY: `range` is valid for the call.
    if !unsafe { sys::rrxe_mmu_range_blockable(range) } {
        return false;
    }
    // SAFETY: `mni` is the notifier embedded in a live ODP umem.
    let odp = unsafe { sys::rrxe_odp_of_notifier(mni) };
    // SAFETY: the umem is live; its mutex may be taken here (process
    // context, blockable).
    unsafe { sys::rrxe_odp_lock(odp) };
    // SAFETY: under the umem's mutex, the lock its faults check the
    // sequence under.
    unsafe { sys::rrxe_mmu_set_seq(mni, cur_seq) };
    let (mut start, mut end) = (0u64, 0u64);
    // SAFETY: `range` is valid; the out-parameters are ours.
    unsafe { sys::rrxe_mmu_range_bounds(range, &mut start, &mut end) };
    // SAFETY: read under the umem's mutex, under which `UmemOdp::get` sets
    // it.
    let private = unsafe { (*odp).private }.cast::<OdpMirror>();
    // SAFETY: NULL, or the mirror of the `UmemOdp` that owns the umem,
    // which keeps it alive until the umem is released, and releasing waits
    // for this callback (the type invariants of `UmemOdp`).
    if let Some(mirror) = unsafe { private.as_ref() } {
        // SAFETY: the umem's mutex is held (above).
        unsafe { mirror.invalidate(start, end) };
    }
    // SAFETY: under the umem's mutex, as the core requires; it clamps the
    // range to the umem's.
    unsafe { sys::rrxe_odp_unmap(odp, start, end) };
    // SAFETY: taken above.
    unsafe { sys::rrxe_odp_unlock(odp) };
    true
}

impl UmemOdp {
    /// Registers `[addr, addr + len)` of the calling process with `access`
    /// (`IB_ACCESS_*`, with `IB_ACCESS_ON_DEMAND`), pinning nothing, and
    /// maps the pages already present ([`OdpFault::Snapshot`]), as rxe
    /// does.
    pub(crate) fn get<T: Operations>(
        dev: &IbDevice<T>,
        addr: u64,
        len: u64,
        access: u32,
    ) -> Result<Self> {
        let size = usize::try_from(len).map_err(|_| EINVAL)?;
        // SAFETY: the device is valid; the core checks the range against
        // the calling process and returns an ERR_PTR on failure.
        let raw =
            unsafe { sys::rrxe_odp_get(dev.as_raw(), addr, size, access as i32, &NOTIFIER_OPS) };
        let ptr = NonNull::new(from_err_ptr(raw)?).ok_or(EINVAL)?;
        // SAFETY: a new umem of `ib_umem_odp_get` with our callback.
        let mut umem = unsafe { Self::adopt(ptr) }?;
        if umem.pages > 0 {
            umem.map(0..umem.pages, OdpFault::Snapshot)?;
        }
        Ok(umem)
    }

    /// Gives a new umem its mirror and takes ownership of it; releases it
    /// on failure.
    ///
    /// # Safety
    ///
    /// `ptr` is a live ODP umem with a range (not an implicit root), just
    /// returned by the core with [`NOTIFIER_OPS`], owned by the caller and
    /// given to no one else; its `private` is NULL.
    unsafe fn adopt(ptr: NonNull<sys::ib_umem_odp>) -> Result<Self> {
        let mut g = sys::rrxe_odp_geometry::default();
        // SAFETY: the umem is live; `g` is ours.
        unsafe { sys::rrxe_odp_geometry(ptr.as_ptr(), &mut g) };
        let made = (|| {
            // Pages of another size (`IB_ACCESS_HUGETLB`) are refused before.
            if g.page_shift != PAGE_SHIFT as u32 {
                return Err(EOPNOTSUPP);
            }
            // The registration starts in the first page.
            let first_offset = usize::try_from(g.address.wrapping_sub(g.base))
                .ok()
                .filter(|&o| o < PAGE_SIZE)
                .ok_or(EINVAL)?;
            let mirror = Arc::pin_init(OdpMirror::new(g.base, g.pages)?, GFP_KERNEL)?;
            Ok((mirror, first_offset))
        })();
        let (mirror, first_offset) = match made {
            Ok(m) => m,
            Err(e) => {
                // SAFETY: ours, not released yet, and no mirror was handed
                // to it.
                unsafe { sys::rrxe_odp_release(ptr.as_ptr()) };
                return Err(e);
            }
        };
        // SAFETY: the umem is live; `private` is written under its mutex,
        // as the callback reads it.
        unsafe {
            sys::rrxe_odp_lock(ptr.as_ptr());
            (*ptr.as_ptr()).private = Arc::as_ptr(&mirror).cast_mut().cast();
            sys::rrxe_odp_unlock(ptr.as_ptr());
        }
        // INVARIANT: the umem is ours with our callback, its `private` is
        // the mirror's address, the mirror has an entry per page.
        Ok(Self {
            ptr,
            mirror,
            base: g.base,
            pages: g.pages,
            first_offset,
            len: g.length,
            writable: g.writable,
        })
    }

    /// The mirror of the range, for the data path.
    pub(crate) fn mirror(&self) -> &Arc<OdpMirror> {
        &self.mirror
    }

    /// Length of the registration in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Offset of the registration's first byte in the first page.
    pub(crate) fn first_offset(&self) -> usize {
        self.first_offset
    }

    /// Number of pages (entries of the mirror).
    pub(crate) fn page_count(&self) -> usize {
        self.pages
    }

    /// Whether the registration may be written (faults for writing are
    /// refused otherwise).
    pub(crate) fn writable(&self) -> bool {
        self.writable
    }

    /// Maps the entries `pages` of the mirror as `how` asks: faults them in
    /// (in the registering process's address space, whoever calls) and
    /// records the pages that back them. Process context: sleeps. `EFAULT`
    /// (or another errno of the core) if a page cannot be faulted in: no
    /// memory mapped there, or not with the rights asked for; `EFAULT`
    /// too, for [`OdpFault::Read`] and [`OdpFault::Write`], if a page the
    /// kernel cannot read where the data path maps it backs the range
    /// (see [`readable`]): its entry is left empty, the rest mapped.
    pub(crate) fn map(&mut self, pages: Range<usize>, how: OdpFault) -> Result {
        if pages.start >= pages.end {
            return Ok(());
        }
        if pages.end > self.pages {
            return Err(EINVAL);
        }
        let write = how == OdpFault::Write;
        if write && !self.writable {
            return Err(EACCES);
        }
        let at = |i: usize| {
            u64::try_from(i)
                .ok()
                .and_then(|i| i.checked_shl(PAGE_SHIFT as u32))
                .and_then(|off| self.base.checked_add(off))
                .ok_or(EINVAL)
        };
        let (start, end) = (at(pages.start)?, at(pages.end)?);
        let ptr = self.ptr.as_ptr();
        // SAFETY: the umem is live (type invariants) and the range inside
        // it; on success the call returns with the umem's mutex held.
        let r = unsafe {
            sys::rrxe_odp_map_and_lock(ptr, start, end - start, write, how != OdpFault::Snapshot)
        };
        if r < 0 {
            return Err(Error::from_errno(r));
        }
        // In batches: the table's lock turns interrupts off, and a
        // registration's snapshot may cover millions of pages, so the
        // scheduler may run between batches too (process context).
        // Nothing invalidates meanwhile: the umem's mutex is held
        // throughout. Each batch's entries are worked out between two
        // holds of the lock, for the probe of the pages new to the mirror
        // (a read of memory each) to run with interrupts on.
        let mut unreadable = false;
        for batch in batches(pages) {
            let n = batch.len();
            let mut entries = [0usize; BATCH];
            {
                let t = self.mirror.table.lock();
                if let Some(old) = t.slots.get(batch.clone()) {
                    entries[..n].copy_from_slice(old);
                }
            }
            for (entry, i) in entries.iter_mut().zip(batch.clone()) {
                let mut writable = false;
                // SAFETY: under the umem's mutex, after a successful map of
                // a range holding entry `i` (in the pfn list: `i < pages`).
                let page = unsafe { sys::rrxe_odp_page(ptr, i, &mut writable) };
                let Some(page) = NonNull::new(page) else {
                    *entry = 0;
                    continue;
                };
                // A page the mirror had already was probed when it came.
                let known = *entry & !WRITABLE == page.as_ptr() as usize;
                // SAFETY: the page backs entry `i` and stays allocated
                // while the umem's mutex is held (no invalidation of it
                // can run).
                if !known && !unsafe { readable(page) } {
                    unreadable = true;
                    *entry = 0;
                    continue;
                }
                // INVARIANT: the page backs entry `i` now, and no
                // invalidation can run before the umem's mutex is dropped.
                *entry = page.as_ptr() as usize | if writable { WRITABLE } else { 0 };
            }
            {
                let mut t = self.mirror.table.lock();
                if let Some(slots) = t.slots.get_mut(batch) {
                    slots.copy_from_slice(&entries[..n]);
                }
            }
            rt::cond_resched();
        }
        // SAFETY: taken by the successful map above.
        unsafe { sys::rrxe_odp_unlock(ptr) };
        // The access that asked fails cleanly, rather than asking for the
        // same fault forever. A snapshot maps what it can: a registration
        // over such memory succeeds, and its accesses fail.
        if unreadable && how != OdpFault::Snapshot {
            return Err(EFAULT);
        }
        Ok(())
    }
}

/// Whether the kernel can read `page` where the data path maps it
/// (`kmap_local_page`, which for a page not in high memory is its address
/// in the direct map). `hmm_range_fault` maps every page of a process's
/// memory, those of `memfd_secret` too, which are taken out of the direct
/// map (`mm/secretmem.c`; only GUP refuses them): an access to one would
/// oops in softirq context. The kernel exports no test of a page
/// (`kernel_page_present`) nor of a mapping (`vma_is_secretmem`), so one
/// byte of the page is read there with `copy_from_kernel_nofault`, which
/// fails where the read would fault (and so finds any other page taken
/// out of the direct map too).
///
/// # Safety
///
/// `page` stays allocated during the call.
unsafe fn readable(page: NonNull<sys::page>) -> bool {
    // SAFETY: the page is allocated (the caller); the read cannot fault.
    unsafe { sys::rrxe_page_readable(page.as_ptr()) }
}

/// Entries the mirror's lock is held for at most while a fault fills them,
/// or an invalidation or the release clears them.
const BATCH: usize = 64;

/// `pages` in consecutive runs of at most [`BATCH`] entries.
fn batches(pages: Range<usize>) -> impl Iterator<Item = Range<usize>> {
    let end = pages.end;
    pages
        .step_by(BATCH)
        .map(move |start| start..start.saturating_add(BATCH).min(end))
}

/// The root of an implicit ODP registration
/// (`ib_umem_odp_alloc_implicit`): the whole address space of the process
/// that registered, with no range, no notifier and no pages of its own.
/// It only makes children ([`ImplicitRoot::child`]), each an ODP umem over
/// a range, with its notifier and its mirror, as [`UmemOdp::get`]'s.
/// Released on drop (process context), after its children.
///
/// # Invariants
///
/// `ptr` is a root returned by `rrxe_odp_alloc_implicit` (which also holds
/// a reference to the process's `mm_struct`, so that a child can be made
/// after the process exited: it then fails) and not yet released.
pub(crate) struct ImplicitRoot {
    /// The core's root, ours until dropped.
    ptr: NonNull<sys::ib_umem_odp>,
    /// Registered with a right that writes: so are its children.
    writable: bool,
}

// SAFETY: the root is the core's bookkeeping, usable from any thread;
// nothing of it changes after its creation.
unsafe impl Send for ImplicitRoot {}
// SAFETY: `&ImplicitRoot` only reads what never changes; making a child
// reads the root, as the core allows from any thread.
unsafe impl Sync for ImplicitRoot {}

impl ImplicitRoot {
    /// The root of an implicit registration of the calling process with
    /// `access` (`IB_ACCESS_*`, with `IB_ACCESS_ON_DEMAND`). `EOPNOTSUPP`
    /// without on-demand paging in the kernel.
    pub(crate) fn get<T: Operations>(dev: &IbDevice<T>, access: u32) -> Result<Self> {
        // SAFETY: the device is valid; called in the registering process
        // (reg_user_mr); an ERR_PTR on failure.
        let raw = unsafe { sys::rrxe_odp_alloc_implicit(dev.as_raw(), access as i32) };
        let ptr = NonNull::new(from_err_ptr(raw)?).ok_or(EINVAL)?;
        // SAFETY: the root is live; its `umem` is set up by the core.
        let writable = unsafe { (*ptr.as_ptr()).umem.writable() } != 0;
        // INVARIANT: a root of `rrxe_odp_alloc_implicit`, not released.
        Ok(Self { ptr, writable })
    }

    /// Whether the registration may be written.
    pub(crate) fn writable(&self) -> bool {
        self.writable
    }

    /// Whether the process has a mapping that meets `[start, end)`: a
    /// child is only made where there is memory to fault in, so that an
    /// access to a range of the address space the process never mapped
    /// (a peer's R_Key may name any) fails without allocating a child's
    /// tables. Process context: takes the process's `mmap_lock`.
    pub(crate) fn has_memory(&self, start: u64, end: u64) -> bool {
        // SAFETY: the root is live (type invariants), and so is its
        // `mm_struct` (the reference it holds).
        unsafe { sys::rrxe_odp_has_vma(self.ptr.as_ptr(), start, end) }
    }

    /// A child over `[addr, addr + len)` of the process, with its own
    /// notifier and mirror, no page mapped yet (its first fault maps
    /// what it needs). Process context: sleeps.
    pub(crate) fn child(&self, addr: u64, len: u64) -> Result<UmemOdp> {
        // SAFETY: the root is live for the call (type invariants); the
        // core returns a new umem or an ERR_PTR.
        let raw = unsafe { sys::rrxe_odp_alloc_child(self.ptr.as_ptr(), addr, len, &NOTIFIER_OPS) };
        let ptr = NonNull::new(from_err_ptr(raw)?).ok_or(EINVAL)?;
        // SAFETY: a new umem of `ib_umem_odp_alloc_child` with our
        // callback, ours, its `private` NULL (the core zeroes it).
        unsafe { UmemOdp::adopt(ptr) }
    }
}

impl Drop for ImplicitRoot {
    fn drop(&mut self) {
        // SAFETY: we own the root (type invariants). It has no notifier:
        // nothing of the core refers to it any more (a child is
        // independent of it once made).
        unsafe { sys::rrxe_odp_release_implicit(self.ptr.as_ptr()) };
    }
}

impl Drop for UmemOdp {
    fn drop(&mut self) {
        let ptr = self.ptr.as_ptr();
        // The data path first: no access in progress, none later. Under
        // the umem's mutex, as every change of the mirror's entries.
        // SAFETY: we own the live umem (type invariants); its mutex may be
        // taken here (process context).
        unsafe { sys::rrxe_odp_lock(ptr) };
        // SAFETY: the umem's mutex is held.
        unsafe { self.mirror.release() };
        // SAFETY: taken above.
        unsafe { sys::rrxe_odp_unlock(ptr) };
        // SAFETY: we own the umem (type invariants). Releasing removes the
        // notifier, waiting for a callback in progress; the mirror it
        // points to lives on in `self.mirror` until after this.
        unsafe { sys::rrxe_odp_release(ptr) };
    }
}

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kernel::prelude::kunit_tests(rrxe_ib_odp))]
#[cfg_attr(dropin, kernel::prelude::kunit_tests(rrxe_ib_odp_dropin))]
mod tests {
    use super::invalidated;
    use kernel::page::PAGE_SIZE;

    #[test]
    fn invalidation_covers_the_pages_it_meets() {
        let p = PAGE_SIZE as u64;
        let base = 16 * p;
        assert_eq!(invalidated(base, 4, base, base + 4 * p), 0..4);
        assert_eq!(invalidated(base, 4, base + p, base + 2 * p), 1..2);
        assert_eq!(invalidated(base, 4, 0, base + 1), 0..1);
        assert_eq!(invalidated(base, 4, base + p - 1, base + p + 1), 0..2);
        assert_eq!(invalidated(base, 4, base + 3 * p + 5, u64::MAX), 3..4);
        // Disjoint, empty or reversed ranges: nothing.
        assert_eq!(invalidated(base, 4, 0, base), 0..0);
        assert_eq!(invalidated(base, 4, base + 4 * p, u64::MAX), 0..0);
        assert_eq!(invalidated(base, 4, base + p, base + p), 0..0);
        assert_eq!(invalidated(base, 4, base + 2 * p, base + p), 0..0);
    }
}
