// SPDX-License-Identifier: GPL-2.0

//! Memory regions: registration (user pages pinned through the core's umem
//! machinery, all of memory for kernel consumers, or a fast-registration
//! page list that `REG_MR` work requests make a region of), keys, the table
//! the data path resolves keys with, and the data path's access to a
//! region's bytes.
//!
//! The data path first resolves a key and an address range with
//! [`MrTable::lookup`] (which checks key, PD, bounds and access rights) and
//! then copies at the offset it returned with [`MrInner::write_at`],
//! [`MrInner::read_at`] or [`MrInner::atomic_at`]. Those check the range
//! again against the region's memory, so no offset can reach outside the
//! pinned pages, the mirrored pages or the page list, whatever the caller
//! passes.
//!
//! A process's region may also be paged on demand (`IB_ACCESS_ON_DEMAND`):
//! nothing is pinned, and an access that finds a page not mapped (or not
//! for writing) fails with `EAGAIN` rather than wait; the caller asks for
//! the fault ([`MrInner::fault_in`], in process context) and tries again
//! once it is done (see [`super::odp`]). So may the whole address space of
//! the process (implicit ODP, [`super::implicit`]), an offset then being an
//! address.

use crate::{
    dev::key_table::{KeyTable, Keyed},
    ffi::ib::{IbDevice, ImplicitRoot, MrKeys, OdpFault, OdpMirror, Umem, UmemOdp},
    logic::{
        keys::{fast_reg_key, Key, KeyKind},
        mr::{
            check_reg_access, check_user_reg_access, fast_reg_range, Chunk, MrError, MrRange,
            PageLayout, ATOMIC_SIZE, FLUSH_PERSISTENT, ON_DEMAND,
        },
        odp::{child_parts, fault_span, is_implicit, pages_of},
    },
    mem::implicit::{ImplicitOdp, CHILD_PAGES},
};
use crate::{
    dev::params,
    ffi::ib::{KernelMemory, MrType, Operations, PageRef},
    ffi::rt::{new_spinlock_bh, Sink, SpinLockBh, TakenIn},
};
use core::{
    ops::Range,
    sync::atomic::{AtomicU32, AtomicUsize, Ordering},
};
use kernel::{
    new_mutex, new_spinlock_irq,
    page::{PAGE_SHIFT, PAGE_SIZE},
    prelude::*,
    sync::{Arc, Mutex, SpinLockIrq},
};

/// An 8-byte atomic operation on a region.
pub(crate) use crate::ffi::ib::AtomicOp;

/// A registered region, shared between its verbs object and the device's
/// MR table.
pub(crate) struct MrInner {
    /// The key the region was created with. Its index stays the region's;
    /// only a fast MR's variant byte changes (see [`FastState::key`]).
    key: Key,
    /// The PD it belongs to (its address: an identity, never dereferenced);
    /// `rereg_mr` may move it.
    pd: AtomicUsize,
    mem: Memory,
    /// Memory windows bound to the region, and [`DEREGISTERED`] once
    /// `dereg_mr` has begun: see [`MrInner::bind_window`].
    windows: AtomicU32,
}

/// In [`MrInner::windows`]: the region is being deregistered, nothing may
/// bind to it any more.
const DEREGISTERED: u32 = 1 << 31;

/// What memory a region covers.
enum Memory {
    /// A process's pages, pinned until `dereg_mr` takes them
    /// ([`MrInner::retire`]); offset 0 is the byte at the registration's
    /// start address. The data path copies under the lock, so `dereg_mr`
    /// knows when no copy is in progress without waiting for a grace
    /// period, and unpins the pages itself, in process context, whoever
    /// holds the last reference.
    User {
        umem: Pin<KBox<SpinLockBh<Option<Umem>>>>,
        range: MrRange,
    },
    /// A process's memory, paged on demand: nothing pinned. The data path
    /// copies under the mirror's lock, which every invalidation of the
    /// process's mapping takes to clear the pages it concerns, so no page
    /// is touched once the kernel may free or move it.
    Odp {
        /// The pages that back the region now.
        mirror: Arc<OdpMirror>,
        /// Where the region's bytes lie on the mirror's pages.
        layout: PageLayout,
        /// The region may be written (its umem's `writable`): faults for
        /// writing are refused otherwise.
        writable: bool,
        /// The core's umem, through which pages are faulted in (one fault
        /// at a time: the mutex, which may be held across the fault), until
        /// `dereg_mr` takes it out and releases it ([`MrInner::retire`]).
        umem: Pin<KBox<Mutex<Option<UmemOdp>>>>,
        range: MrRange,
    },
    /// The whole address space of a process, paged on demand (implicit
    /// ODP): an offset is an address. Its pages lie in children of 1 GiB,
    /// each with its own mirror, made by the first fault that reaches
    /// them; otherwise as `Odp`.
    Implicit { odp: ImplicitOdp, range: MrRange },
    /// All of memory, by kernel virtual address (the DMA MR of a kernel
    /// consumer): an offset is an address.
    Kernel { kmem: KernelMemory, range: MrRange },
    /// A fast-registration MR of a kernel consumer.
    Fast {
        kmem: KernelMemory,
        state: Pin<KBox<SpinLockIrq<FastState>>>,
    },
    /// No memory: a range for tests of the key and range checks.
    #[cfg(CONFIG_KUNIT)]
    Bare(MrRange),
}

/// The state of a fast-registration MR. The data path holds its lock while
/// it copies, so once `invalidate` returns no access to the old pages is
/// in progress and the consumer may unmap them.
struct FastState {
    /// Kernel virtual addresses of `page_size`-byte pages, from
    /// `ib_map_mr_sg`.
    pages: KVec<u64>,
    /// Room allocated at creation (`max_num_sg`): the list never grows in
    /// `mr_set_page`, which may run in atomic context.
    max: usize,
    page_size: u32,
    /// The current L_Key and R_Key: `REG_MR` may change the variant byte.
    key: Key,
    /// The range and access rights of the last `REG_MR`.
    range: MrRange,
    /// Registered (rxe's VALID state), or not (FREE: never registered, or
    /// invalidated since).
    valid: bool,
    /// The length the last `ib_map_mr_sg` mapped, which `REG_MR` registers
    /// (at the address posted with it).
    mapped_len: u64,
    /// `dereg_mr` has begun: never registered again ([`MrInner::retire`]).
    retired: bool,
}

impl FastState {
    /// Where `[offset, offset + len)` of the registered region lies on the
    /// page list; `EINVAL` if the region is not registered or the range is
    /// not inside it and the list.
    fn layout(&self, offset: u64, len: u64) -> Result<PageLayout> {
        if !self.valid {
            return Err(EINVAL);
        }
        within(self.range.length, offset, len)?;
        let layout = PageLayout::for_iova(self.page_size.into(), self.range.iova, self.pages.len())
            .map_err(|_| EINVAL)?;
        layout.check(offset, len).map_err(|_| EINVAL)?;
        Ok(layout)
    }

    /// The kernel address of a piece of an access.
    fn address(&self, chunk: Chunk) -> Result<u64> {
        let page = self.pages.get(chunk.page).ok_or(EFAULT)?;
        page.checked_add(chunk.offset as u64).ok_or(EFAULT)
    }
}

/// Where one piece of an access goes.
enum Place<'a> {
    /// Bytes at an offset in a page.
    Page(PageRef<'a>, usize),
    /// Bytes at a kernel virtual address.
    Kernel(&'a KernelMemory, u64),
}

impl Place<'_> {
    fn read_into(&self, len: usize, dst: &mut Sink<'_>) -> Result {
        match self {
            Place::Page(page, offset) => page.read_into(*offset, len, dst),
            Place::Kernel(kmem, addr) => kmem.read_into(*addr, len, dst),
        }
    }

    fn write(&self, src: &[u8]) -> Result {
        match self {
            Place::Page(page, offset) => page.write(*offset, src),
            Place::Kernel(kmem, addr) => kmem.write(*addr, src),
        }
    }

    fn atomic(&self, op: AtomicOp) -> Result<u64> {
        match self {
            Place::Page(page, offset) => page.atomic(*offset, op),
            Place::Kernel(kmem, addr) => kmem.atomic(*addr, op),
        }
    }
}

/// `EINVAL` unless `[offset, offset + len)` lies in `length` bytes.
fn within(length: u64, offset: u64, len: u64) -> Result {
    match offset.checked_add(len) {
        Some(end) if end <= length => Ok(()),
        _ => Err(EINVAL),
    }
}

/// Where `[offset, offset + len)` of a user region lies on its pinned
/// pages; `EINVAL` if it is not inside the region and the pages.
fn user_layout(umem: &Umem, range: &MrRange, offset: u64, len: u64) -> Result<PageLayout> {
    within(range.length, offset, len)?;
    within(umem.len() as u64, offset, len)?;
    let layout = PageLayout::new(
        PAGE_SIZE as u64,
        umem.first_offset() as u64,
        umem.page_count(),
    )
    .map_err(|_| EINVAL)?;
    layout.check(offset, len).map_err(|_| EINVAL)?;
    Ok(layout)
}

/// Calls `f` on each piece of `[offset, offset + len)` in `layout`, with
/// the piece's range relative to `offset`; `EINVAL` if the access does not
/// lie in the layout.
fn each_chunk(
    layout: PageLayout,
    offset: u64,
    len: usize,
    mut f: impl FnMut(Chunk, Range<usize>) -> Result,
) -> Result {
    let mut done = 0usize;
    for chunk in layout.chunks(offset, len).map_err(|_| EINVAL)? {
        let end = done.checked_add(chunk.len).ok_or(EINVAL)?;
        f(chunk, done..end)?;
        done = end;
    }
    // The pieces always add up to the access; never report a short copy
    // as done.
    if done == len {
        Ok(())
    } else {
        Err(EFAULT)
    }
}

/// How the bytes of a child of an implicit region lie on its mirror's
/// pages: from its first address, [`CHILD_PAGES`] kernel pages.
fn child_layout() -> Result<PageLayout> {
    PageLayout::new(PAGE_SIZE as u64, 0, CHILD_PAGES).map_err(|_| EINVAL)
}

/// [`each_chunk`] for `[addr, addr + len)` of an implicit region, child by
/// child: each part is copied under its own child's lock, which is
/// dropped before the next is taken (never two at once). A child not made
/// yet, or a page not mapped, is an `EAGAIN` (parts before it may have
/// been copied, as in an explicit region); the pieces' ranges are
/// relative to `addr`.
fn implicit_places(
    odp: &ImplicitOdp,
    addr: u64,
    len: usize,
    write: bool,
    mut f: impl FnMut(Place<'_>, Range<usize>) -> Result,
) -> Result {
    let layout = child_layout()?;
    let len64 = u64::try_from(len).map_err(|_| EINVAL)?;
    for part in child_parts(addr, len64).ok_or(EINVAL)? {
        let done = usize::try_from(part.done).map_err(|_| EINVAL)?;
        let n = usize::try_from(part.len).map_err(|_| EINVAL)?;
        let mirror = odp.mirror(part.index)?;
        let mapped = mirror.lock()?;
        each_chunk(layout, part.offset, n, |c, span| {
            let page = mapped.page(c.page, write).ok_or(EAGAIN)?;
            let start = span.start.checked_add(done).ok_or(EINVAL)?;
            let end = span.end.checked_add(done).ok_or(EINVAL)?;
            f(Place::Page(page, c.offset), start..end)
        })?;
    }
    Ok(())
}

/// The driver data of an MR.
pub(crate) struct RrxeMr {
    pub(crate) inner: Arc<MrInner>,
}

/// The errno for a refused registration.
pub(crate) fn reg_error(e: MrError) -> Error {
    match e {
        MrError::Unsupported(_) => EOPNOTSUPP,
        _ => EINVAL,
    }
}

/// What a new region will be, before it has a key.
pub(crate) struct MrSpec {
    mem: SpecMemory,
    pd: usize,
}

/// The memory of a region to be.
enum SpecMemory {
    User {
        umem: Umem,
        range: MrRange,
    },
    Odp {
        umem: UmemOdp,
        range: MrRange,
    },
    Implicit {
        root: ImplicitRoot,
        range: MrRange,
    },
    Kernel {
        kmem: KernelMemory,
        range: MrRange,
    },
    Fast {
        kmem: KernelMemory,
        max: u32,
    },
    #[cfg(CONFIG_KUNIT)]
    Bare(MrRange),
}

impl MrSpec {
    /// The region of a user registration of `[start, start + length)`,
    /// addressed as `iova`: checks the access flags, then pins the pages,
    /// or, with `IB_ACCESS_ON_DEMAND`, registers them to be paged on
    /// demand.
    pub(crate) fn user<T: Operations>(
        dev: &IbDevice<T>,
        pd: usize,
        start: u64,
        length: u64,
        iova: u64,
        access: u32,
    ) -> Result<Self> {
        check_user_reg_access(access).map_err(reg_error)?;
        // As rxe on pages that are not persistent memory, which is all
        // rrxe ever registers: such a region cannot be flushed to
        // persistence.
        if access & FLUSH_PERSISTENT != 0 {
            return Err(EINVAL);
        }
        let range = MrRange {
            iova,
            length,
            access,
        };
        let mem = if access & ON_DEMAND != 0 {
            if is_implicit(start, length) {
                return Self::implicit(dev, pd, range);
            }
            SpecMemory::Odp {
                umem: UmemOdp::get(dev, start, length, access)?,
                range,
            }
        } else {
            SpecMemory::User {
                umem: Umem::get(dev, start, length, access)?,
                range,
            }
        };
        Ok(Self { mem, pd })
    }

    /// The region of an implicit ODP registration (the whole address space
    /// of the calling process, `range` being address 0, length
    /// `u64::MAX`): an offset in it is an address. As mlx5, at iova 0
    /// only (else `EINVAL`): the data path reads the offsets as addresses.
    fn implicit<T: Operations>(dev: &IbDevice<T>, pd: usize, range: MrRange) -> Result<Self> {
        if range.iova != 0 {
            return Err(EINVAL);
        }
        Ok(Self {
            mem: SpecMemory::Implicit {
                root: ImplicitRoot::get(dev, range.access)?,
                range,
            },
            pd,
        })
    }

    /// The all-of-memory region of a kernel consumer (`get_dma_mr`) in PD
    /// `pd`, given access to kernel memory (which only a kernel consumer's
    /// PD grants: see [`KernelMemory::for_pd`]).
    pub(crate) fn dma(pd: usize, kmem: KernelMemory, access: u32) -> Result<Self> {
        check_reg_access(access).map_err(reg_error)?;
        Ok(Self {
            mem: SpecMemory::Kernel {
                kmem,
                range: MrRange {
                    iova: 0,
                    length: u64::MAX,
                    access,
                },
            },
            pd,
        })
    }

    /// A fast-registration MR of a kernel consumer (`alloc_mr`) in PD `pd`
    /// for up to `max_num_sg` pages, given access to kernel memory (as
    /// [`MrSpec::dma`]). Until a `REG_MR` work request registers it, it
    /// covers no memory.
    pub(crate) fn fast(
        pd: usize,
        kmem: KernelMemory,
        mr_type: MrType,
        max_num_sg: u32,
    ) -> Result<Self> {
        if mr_type != MrType::MEM_REG {
            return Err(EINVAL);
        }
        if max_num_sg == 0 || max_num_sg > params::MAX_FAST_REG_ALLOC {
            return Err(EINVAL);
        }
        Ok(Self {
            mem: SpecMemory::Fast {
                kmem,
                max: max_num_sg,
            },
            pd,
        })
    }

    /// A region without memory, for tests of the key and range checks.
    #[cfg(CONFIG_KUNIT)]
    pub(crate) fn test_region(iova: u64, length: u64, access: u32) -> Self {
        Self {
            mem: SpecMemory::Bare(MrRange {
                iova,
                length,
                access,
            }),
            pd: 0,
        }
    }

    /// The region under `key`.
    pub(crate) fn finish(self, key: Key) -> Result<Arc<MrInner>> {
        let mem = match self.mem {
            SpecMemory::User { umem, range } => Memory::User {
                umem: KBox::pin_init(new_spinlock_bh!(Some(umem), TakenIn::Softirq), GFP_KERNEL)?,
                range,
            },
            SpecMemory::Odp { umem, range } => {
                // The data path checks accesses against `range` alone: it
                // must be what the core registered.
                if u64::try_from(umem.len()) != Ok(range.length) {
                    return Err(EINVAL);
                }
                let layout = PageLayout::new(
                    PAGE_SIZE as u64,
                    umem.first_offset() as u64,
                    umem.page_count(),
                )
                .map_err(|_| EINVAL)?;
                Memory::Odp {
                    mirror: umem.mirror().clone(),
                    layout,
                    writable: umem.writable(),
                    umem: KBox::pin_init(new_mutex!(Some(umem)), GFP_KERNEL)?,
                    range,
                }
            }
            SpecMemory::Implicit { root, range } => Memory::Implicit {
                odp: ImplicitOdp::new(root)?,
                range,
            },
            SpecMemory::Kernel { kmem, range } => Memory::Kernel { kmem, range },
            SpecMemory::Fast { kmem, max } => {
                let max = max as usize;
                let pages = KVec::with_capacity(max, GFP_KERNEL)?;
                let state = KBox::pin_init(
                    new_spinlock_irq!(FastState {
                        pages,
                        max,
                        page_size: 0,
                        key,
                        range: MrRange {
                            iova: 0,
                            length: 0,
                            access: 0,
                        },
                        valid: false,
                        mapped_len: 0,
                        retired: false,
                    }),
                    GFP_KERNEL,
                )?;
                Memory::Fast { kmem, state }
            }
            #[cfg(CONFIG_KUNIT)]
            SpecMemory::Bare(range) => Memory::Bare(range),
        };
        Ok(Arc::new(
            MrInner {
                key,
                pd: AtomicUsize::new(self.pd),
                mem,
                windows: AtomicU32::new(0),
            },
            GFP_KERNEL,
        )?)
    }
}

impl MrInner {
    /// The state of a fast MR; `EINVAL` for other regions.
    fn fast(&self) -> Result<&SpinLockIrq<FastState>> {
        match &self.mem {
            Memory::Fast { state, .. } => Ok(&**state),
            _ => Err(EINVAL),
        }
    }

    /// `ib_map_mr_sg` starts a new page list of `page_size`-byte pages. As
    /// in rxe, the MR page size must be a multiple or a divisor of the
    /// system page size.
    pub(crate) fn start_pages(&self, page_size: u32) -> Result {
        let fast = self.fast()?;
        let ps = page_size as usize;
        if !page_size.is_power_of_two() || (ps % PAGE_SIZE != 0 && PAGE_SIZE % ps != 0) {
            return Err(EINVAL);
        }
        let mut f = fast.lock();
        f.pages.clear();
        f.page_size = page_size;
        Ok(())
    }

    /// Appends a page to the list `start_pages` began.
    pub(crate) fn add_page(&self, addr: u64) -> Result {
        let mut f = self.fast()?.lock();
        if f.pages.len() >= f.max {
            return Err(ENOMEM);
        }
        // Cannot allocate: the room was reserved at creation.
        f.pages.push(addr, GFP_ATOMIC).map_err(|_| ENOMEM)
    }

    /// Records the length the last `ib_map_mr_sg` mapped.
    pub(crate) fn set_mapping(&self, len: u64) {
        if let Ok(f) = self.fast() {
            f.lock().mapped_len = len;
        }
    }

    /// `REG_MR`: registers the pages and length the last `ib_map_mr_sg`
    /// mapped at `iova`, the `ib_mr`'s address when the request was
    /// posted: a consumer may change it after mapping (rpcrdma does), and
    /// rxe registers at the posted one too.
    pub(crate) fn register_mapped(&self, key: u32, access: u32, iova: u64) -> Result {
        let len = self.fast()?.lock().mapped_len;
        self.fast_register(key, access, iova, len)
    }

    /// The number of pages mapped and their size.
    pub(crate) fn fast_pages(&self) -> Option<(usize, u32)> {
        let f = self.fast().ok()?.lock();
        Some((f.pages.len(), f.page_size))
    }

    /// Moves the region to another PD (`rereg_mr`).
    pub(crate) fn set_pd(&self, pd: usize) {
        self.pd.store(pd, Ordering::Release);
    }

    /// Whether the region belongs to the PD `pd`.
    pub(crate) fn in_pd(&self, pd: usize) -> bool {
        self.pd.load(Ordering::Acquire) == pd
    }

    /// The keys to report at creation. As in rxe, the R_Key equals the
    /// L_Key even without remote access: permissions are checked when a
    /// request uses the key, not by hiding it.
    pub(crate) fn keys(&self) -> MrKeys {
        MrKeys {
            lkey: self.key.raw(),
            rkey: self.key.raw(),
        }
    }

    /// The key that names the region now.
    fn current_key(&self) -> Key {
        match &self.mem {
            Memory::Fast { state, .. } => state.lock().key,
            _ => self.key,
        }
    }

    /// The current key and range of the region; `EINVAL` for a fast MR
    /// that is not registered.
    fn current(&self) -> Result<(Key, MrRange)> {
        match &self.mem {
            Memory::User { range, .. }
            | Memory::Odp { range, .. }
            | Memory::Implicit { range, .. }
            | Memory::Kernel { range, .. } => Ok((self.key, *range)),
            #[cfg(CONFIG_KUNIT)]
            Memory::Bare(range) => Ok((self.key, *range)),
            Memory::Fast { state, .. } => {
                let f = state.lock();
                if f.valid {
                    Ok((f.key, f.range))
                } else {
                    Err(EINVAL)
                }
            }
        }
    }

    /// Where `[va, va + len)` lies in the region, if `key` is this region's
    /// current key (a stale variant does not match), the region is
    /// registered and it grants `need`. What the data path asks before
    /// touching memory.
    pub(crate) fn check(&self, key: u32, va: u64, len: u64, need: u32) -> Result<u64> {
        let (current, range) = self.current()?;
        if !current.matches(key) {
            return Err(EINVAL);
        }
        range.check(va, len, need).map_err(|_| EACCES)
    }

    /// The range and rights of the region, for a window bind; `EINVAL` for
    /// a fast MR that is not registered.
    pub(crate) fn range(&self) -> Result<MrRange> {
        self.current().map(|(_, range)| range)
    }

    /// Counts a memory window bound to the region. `EINVAL` once
    /// deregistration has begun.
    ///
    /// A window holds a reference on its region while bound, and drops it
    /// (and the count) with interrupts off, under its lock. Deregistration
    /// only goes on when the count is zero ([`Self::start_dereg`], which
    /// also stops new binds), and then releases the pages itself
    /// ([`Self::retire`]), so a window's reference, even the last one,
    /// never releases pages in atomic context.
    pub(crate) fn bind_window(&self) -> Result {
        self.windows
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                // Far more windows than the MW range holds: refuse rather
                // than reach the flag bit.
                (n & DEREGISTERED == 0 && n < DEREGISTERED - 1).then_some(n + 1)
            })
            .map(|_| ())
            .map_err(|_| EINVAL)
    }

    /// Uncounts a window [`Self::bind_window`] counted.
    pub(crate) fn unbind_window(&self) {
        let _ = self
            .windows
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n & !DEREGISTERED != 0).then_some(n - 1)
            });
    }

    /// Whether memory windows are bound to the region.
    pub(crate) fn has_windows(&self) -> bool {
        self.windows.load(Ordering::Acquire) & !DEREGISTERED != 0
    }

    /// After [`Self::start_dereg`] and the region's removal from the
    /// table: makes sure the data path no longer touches its memory, and
    /// releases a process's pages. Process context. Returns whether that
    /// is so already.
    ///
    /// For a fast MR and a process's MR it is: the data path copies under
    /// the region's lock (an ODP region's: its mirror's), so taking it
    /// waits for a copy in progress, and the region, unregistered or
    /// without pages for good, refuses every later one (a lookup made
    /// before the removal included). What is left
    /// to free may be freed in any context, whichever reference is last.
    /// `dereg_mr` then needs no RCU grace period, which takes milliseconds
    /// on an idle machine and more on a busy one: the kernel's ULPs
    /// deregister hundreds of fast MRs when they disconnect, and processes
    /// (MPI's and UCX's registration caches) deregister at any time.
    ///
    /// A kernel consumer's DMA MR returns `false`: the data path reaches
    /// memory through it without a lock (it serves every SGE of a ULP, on
    /// every CPU), so only a grace period after the removal tells that no
    /// access is in progress. A ULP deregisters it once, with its PD.
    pub(crate) fn retire(&self) -> bool {
        match &self.mem {
            Memory::Fast { state, .. } => {
                let mut f = state.lock();
                f.valid = false;
                f.retired = true;
                true
            }
            Memory::User { umem, .. } => {
                // Unpinned outside the lock: releasing may sleep.
                let pages = umem.lock().take();
                drop(pages);
                true
            }
            Memory::Odp { umem, .. } => {
                // A fault in progress holds the mutex: it finishes first.
                // Releasing clears the mirror under its lock (waiting for
                // a copy in progress) and removes the notifier.
                let odp = umem.lock().take();
                drop(odp);
                true
            }
            Memory::Implicit { odp, .. } => {
                // The same, child by child (their lock waits for a copy
                // in progress), after a fault in progress.
                odp.retire();
                true
            }
            _ => false,
        }
    }

    /// `dereg_mr` begins: `EINVAL` (as rxe, IBA 10.6.7.2.6) while windows
    /// are bound; otherwise no window can bind to the region any more.
    pub(crate) fn start_dereg(&self) -> Result {
        self.windows
            .compare_exchange(0, DEREGISTERED, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
            .map_err(|_| EINVAL)
    }

    /// Where `[va, va + len)` lies in the region, without a key or access
    /// check: for an access through a memory window bound to the region,
    /// whose own R_Key, range and rights were checked instead. `EINVAL` if
    /// the region is not registered, `EACCES` if the range is not inside.
    pub(crate) fn offset_of(&self, va: u64, len: u64) -> Result<u64> {
        let (_, range) = self.current()?;
        range.check(va, len, 0).map_err(|_| EACCES)
    }
}

/// Data access, from the data path (softirq, or with spinlocks held):
/// nothing here sleeps or allocates.
impl MrInner {
    /// Calls `f` with the place of each piece of `[offset, offset + len)`
    /// and the piece's range relative to `offset`; `write`: the pieces are
    /// to be written (an ODP region's pages must be mapped for writing).
    fn for_each_place(
        &self,
        offset: u64,
        len: usize,
        write: bool,
        mut f: impl FnMut(Place<'_>, Range<usize>) -> Result,
    ) -> Result {
        let len64 = u64::try_from(len).map_err(|_| EINVAL)?;
        match &self.mem {
            Memory::Odp {
                mirror,
                layout,
                range,
                ..
            } => {
                let mapped = mirror.lock()?;
                within(range.length, offset, len64)?;
                each_chunk(*layout, offset, len, |c, span| {
                    // Not mapped (for this access) now: the caller faults
                    // it in and comes back.
                    let page = mapped.page(c.page, write).ok_or(EAGAIN)?;
                    f(Place::Page(page, c.offset), span)
                })
            }
            Memory::Implicit { odp, range } => {
                within(range.length, offset, len64)?;
                implicit_places(odp, offset, len, write, f)
            }
            Memory::User { umem, range } => {
                let pinned = umem.lock();
                let umem = pinned.as_ref().ok_or(EINVAL)?;
                let layout = user_layout(umem, range, offset, len64)?;
                each_chunk(layout, offset, len, |c, span| {
                    let page = umem.page(c.page).ok_or(EFAULT)?;
                    f(Place::Page(page, c.offset), span)
                })
            }
            // The whole of memory: the offset is the address.
            Memory::Kernel { kmem, .. } => {
                offset.checked_add(len64).ok_or(EINVAL)?;
                f(Place::Kernel(kmem, offset), 0..len)
            }
            Memory::Fast { kmem, state } => {
                let s = state.lock();
                let layout = s.layout(offset, len64)?;
                each_chunk(layout, offset, len, |c, span| {
                    f(Place::Kernel(kmem, s.address(c)?), span)
                })
            }
            #[cfg(CONFIG_KUNIT)]
            Memory::Bare(_) => Err(EFAULT),
        }
    }

    /// Copies `src` into the region at byte `offset` from the start of the
    /// region (the offset [`MrTable::lookup`] and [`MrInner::check`]
    /// return). `EINVAL` if the range is not inside the region (or a fast
    /// MR is not registered, or an ODP region deregistered), `EFAULT` if
    /// memory behind it is missing, `EACCES` if the user pages were pinned
    /// read-only, `EAGAIN` if pages of an ODP region are not mapped for
    /// writing now ([`MrInner::fault_in`]; part of the bytes may have been
    /// copied). A zero-length copy always succeeds.
    pub(crate) fn write_at(&self, offset: u64, src: &[u8]) -> Result {
        if src.is_empty() {
            return Ok(());
        }
        self.for_each_place(offset, src.len(), true, |place, span| {
            place.write(src.get(span).ok_or(EINVAL)?)
        })
    }

    /// Copies from the region at `offset` into `dst`. Errors as for
    /// [`MrInner::write_at`] (but read-only pages can be read).
    pub(crate) fn read_at(&self, offset: u64, dst: &mut [u8]) -> Result {
        self.read_into(offset, dst.len(), &mut Sink::over(dst))
    }

    /// Fills the next `len` bytes of `dst` from the region at `offset`.
    /// Errors as for [`MrInner::read_at`], and `EINVAL` if fewer than `len`
    /// bytes are left in `dst` (part may have been filled).
    pub(crate) fn read_into(&self, offset: u64, len: usize, dst: &mut Sink<'_>) -> Result {
        if len == 0 {
            return Ok(());
        }
        self.for_each_place(offset, len, false, |place, span| {
            place.read_into(span.len(), dst)
        })
    }

    /// Performs `op` on the naturally aligned 8-byte word at `offset` (in
    /// CPU byte order, as rxe); returns the word's previous value. `EINVAL`
    /// if the word is not 8-byte aligned in memory or not inside the region,
    /// otherwise errors as for [`MrInner::write_at`]. Atomic against other
    /// atomic operations on the same memory from any CPU, the owner's
    /// included.
    pub(crate) fn atomic_at(&self, offset: u64, op: AtomicOp) -> Result<u64> {
        match &self.mem {
            Memory::Odp {
                mirror,
                layout,
                range,
                ..
            } => {
                let mapped = mirror.lock()?;
                within(range.length, offset, ATOMIC_SIZE)?;
                let word = layout.atomic_word(offset).map_err(|_| EINVAL)?;
                let page = mapped.page(word.page, true).ok_or(EAGAIN)?;
                Place::Page(page, word.offset).atomic(op)
            }
            Memory::Implicit { odp, range } => {
                within(range.length, offset, ATOMIC_SIZE)?;
                // One part: an aligned word lies in one page, so in one
                // child (a word across two is misaligned).
                let part = child_parts(offset, ATOMIC_SIZE)
                    .and_then(|mut p| p.next())
                    .filter(|p| p.len == ATOMIC_SIZE)
                    .ok_or(EINVAL)?;
                let word = child_layout()?
                    .atomic_word(part.offset)
                    .map_err(|_| EINVAL)?;
                let mirror = odp.mirror(part.index)?;
                let mapped = mirror.lock()?;
                let page = mapped.page(word.page, true).ok_or(EAGAIN)?;
                Place::Page(page, word.offset).atomic(op)
            }
            Memory::User { umem, range } => {
                let pinned = umem.lock();
                let umem = pinned.as_ref().ok_or(EINVAL)?;
                let layout = user_layout(umem, range, offset, ATOMIC_SIZE)?;
                let word = layout.atomic_word(offset).map_err(|_| EINVAL)?;
                let page = umem.page(word.page).ok_or(EFAULT)?;
                Place::Page(page, word.offset).atomic(op)
            }
            Memory::Kernel { kmem, .. } => kmem.atomic(offset, op),
            Memory::Fast { kmem, state } => {
                let s = state.lock();
                let layout = s.layout(offset, ATOMIC_SIZE)?;
                let word = layout.atomic_word(offset).map_err(|_| EINVAL)?;
                kmem.atomic(s.address(word)?, op)
            }
            #[cfg(CONFIG_KUNIT)]
            Memory::Bare(_) => Err(EFAULT),
        }
    }
}

/// On-demand paging: faults sleep (process context).
impl MrInner {
    /// Whether the region is paged on demand.
    pub(crate) fn is_odp(&self) -> bool {
        matches!(self.mem, Memory::Odp { .. } | Memory::Implicit { .. })
    }

    /// Whether an ODP region may be written (was registered with a right
    /// that writes: `ib_access_writable`).
    pub(crate) fn is_writable(&self) -> bool {
        match &self.mem {
            Memory::Odp { writable, .. } => *writable,
            Memory::Implicit { odp, .. } => odp.writable(),
            _ => false,
        }
    }

    /// Maps the pages of `[offset, offset + len)` of an ODP region as
    /// `how` asks (see [`OdpFault`]), in the registering process, whoever
    /// calls. `EINVAL` if the range is not inside the region, the region
    /// is not paged on demand or is deregistered; `EACCES` for a write
    /// fault on a region registered without write access; `EFAULT` (or
    /// another errno of the core) if the process has no memory there with
    /// the rights asked for.
    pub(crate) fn fault_in(&self, offset: u64, len: u64, how: OdpFault) -> Result {
        let (umem, range) = match &self.mem {
            Memory::Odp { umem, range, .. } => (umem, range),
            Memory::Implicit { odp, range } => {
                within(range.length, offset, len)?;
                // The offset is the address; the children it meets are
                // made as needed.
                return odp.fault_in(offset, len, how);
            }
            _ => return Err(EINVAL),
        };
        within(range.length, offset, len)?;
        let mut held = umem.lock();
        let odp = Option::as_mut(&mut *held).ok_or(EINVAL)?;
        let first = odp.first_offset() as u64;
        let pages =
            pages_of(first, PAGE_SHIFT as u32, odp.page_count(), offset, len).ok_or(EINVAL)?;
        odp.map(pages, how)
    }

    /// The fault the data path asked for: `[offset, offset + len)`, for
    /// writing if `write`, and what follows it up to
    /// [`FAULT_AHEAD`](crate::logic::odp::FAULT_AHEAD) bytes (the rest of
    /// the message will want it), or, if that fails, the access alone.
    pub(crate) fn fault_ahead(&self, offset: u64, len: u64, write: bool) -> Result {
        let (Memory::Odp { range, .. } | Memory::Implicit { range, .. }) = &self.mem else {
            return Err(EINVAL);
        };
        let how = if write {
            OdpFault::Write
        } else {
            OdpFault::Read
        };
        let (at, span) = fault_span(range.length, offset, len);
        match self.fault_in(at, span, how) {
            Err(_) if span > len => self.fault_in(offset, len, how),
            done => done,
        }
    }
}

/// Fast registration and invalidation (work requests of kernel consumers).
impl MrInner {
    /// `REG_MR`: makes a fast-registration MR cover `[iova, iova + len)` of
    /// the pages `map_mr_sg` set, with `access`, under `key` (the MR's index
    /// with any variant byte: `ib_update_fast_reg_key`). `EINVAL` if this is
    /// not a fast MR, if it is registered already (as rxe: it must be
    /// invalidated first), if `key` has another index, if `access` is not
    /// valid for a registration, or if the range does not fit the page
    /// list. The caller checks that the QP's PD is the MR's ([`Self::in_pd`]).
    pub(crate) fn fast_register(&self, key: u32, access: u32, iova: u64, len: u64) -> Result {
        let mut f = self.fast()?.lock();
        if f.valid || f.retired {
            return Err(EINVAL);
        }
        let key = fast_reg_key(f.key, key).map_err(|_| EINVAL)?;
        let range = fast_reg_range(f.page_size.into(), f.pages.len(), iova, len, access)
            .map_err(|_| EINVAL)?;
        f.key = key;
        f.range = range;
        f.valid = true;
        Ok(())
    }

    /// `LOCAL_INV`, or the invalidation of `SEND_WITH_INV`: if `key` is the
    /// MR's current key, the MR covers no memory until registered again;
    /// accesses in progress finish first. As in rxe, only fast MRs can be
    /// invalidated: `EINVAL` for other regions, on a key mismatch and while
    /// memory windows are bound to the region.
    /// Invalidating an MR that is not registered succeeds.
    pub(crate) fn invalidate(&self, key: u32) -> Result {
        let mut f = self.fast()?.lock();
        if !f.key.matches(key) {
            return Err(EINVAL);
        }
        // As rxe: not while memory windows are bound to it.
        if self.has_windows() {
            return Err(EINVAL);
        }
        f.valid = false;
        Ok(())
    }

    /// [`MrInner::invalidate`] on behalf of a QP of the PD `pd`: `EINVAL`
    /// for a region of another PD, as for any other use of a key. A
    /// `SEND_WITH_INV` from the peer of any QP of the device must not reach
    /// a kernel ULP's region in another PD. (C rxe 7.3's
    /// `rxe_invalidate_mr` does not check the PD.)
    pub(crate) fn invalidate_in_pd(&self, pd: usize, key: u32) -> Result {
        if !self.in_pd(pd) {
            return Err(EINVAL);
        }
        self.invalidate(key)
    }
}

/// A device's memory regions.
pub(crate) type MrTable = KeyTable<MrInner>;

impl Keyed for MrInner {
    fn key(&self) -> Key {
        self.current_key()
    }
}

impl MrTable {
    /// An empty table.
    pub(crate) fn new_mrs() -> impl PinInit<Self> {
        KeyTable::new(KeyKind::Mr)
    }

    /// Gives `spec` a free index and key and enters it.
    pub(crate) fn insert_spec(&self, spec: MrSpec) -> Result<Arc<MrInner>> {
        self.insert(|key| spec.finish(key))
    }

    /// The region `key` names, with the offset of `[va, va + len)` in it, if
    /// the key is the region's current key, the region is registered (a
    /// fast MR between `REG_MR` and invalidation), in the PD `pd`, and the
    /// access is inside and allowed.
    pub(crate) fn lookup(
        &self,
        key: u32,
        pd: usize,
        va: u64,
        len: u64,
        need: u32,
    ) -> Result<(Arc<MrInner>, u64)> {
        let mr = self.get(key).ok_or(EINVAL)?;
        if !mr.in_pd(pd) {
            return Err(EACCES);
        }
        let offset = mr.check(key, va, len, need)?;
        Ok((mr, offset))
    }
}

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kunit_tests(rrxe_mem_mr))]
#[cfg_attr(dropin, kunit_tests(rrxe_mem_mr_dropin))]
mod tests {
    use super::{AtomicOp, MrSpec, MrTable};
    use crate::{
        ffi::ib::{self, KernelMemory},
        logic::keys::{Key, KeyKind},
        logic::mr::{LOCAL_WRITE, REMOTE_ATOMIC, REMOTE_READ, REMOTE_WRITE},
    };
    use kernel::error::code::{EACCES, EFAULT, EINVAL, ENOMEM};
    use kernel::{page::PAGE_SIZE, prelude::*};

    /// Access to kernel memory for the regions of these tests.
    #[allow(unsafe_code)] // A test's own contract, stated below.
    fn test_kmem() -> KernelMemory {
        // SAFETY: the regions built over it are only accessed at addresses
        // of buffers the tests allocate and free after removing the region,
        // or at addresses outside the linear map, which are refused before
        // any access.
        unsafe { KernelMemory::new() }
    }

    /// A zeroed kmalloc'ed buffer of `len` bytes.
    fn buffer(len: usize) -> KVec<u8> {
        let Ok(buf) = KVec::from_elem(0u8, len, GFP_KERNEL) else {
            panic!("no memory for the buffer");
        };
        buf
    }

    /// The kernel virtual address of `buf[at]`, as a kernel consumer puts
    /// it in an SGE of a software device.
    fn addr(buf: &KVec<u8>, at: usize) -> u64 {
        (buf.as_ptr() as u64) + at as u64
    }

    /// The 8 bytes of `buf` at `at`, as the CPU reads a u64.
    fn word(buf: &KVec<u8>, at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&buf[at..at + 8]);
        u64::from_ne_bytes(w)
    }

    #[test]
    fn mr_lookup_checks_key_bounds_and_access() {
        let Ok(table) = KBox::pin_init(MrTable::new_mrs(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let spec = MrSpec::test_region(0x10000, 0x2000, LOCAL_WRITE | REMOTE_READ);
        let Ok(mr) = table.insert_spec(spec) else {
            panic!("insert failed");
        };
        let key = mr.keys().lkey;
        assert_eq!(
            table
                .lookup(key, 0, 0x10800, 0x100, REMOTE_READ)
                .map(|r| r.1),
            Ok(0x800)
        );
        assert_eq!(
            table.lookup(key, 0, 0x11f00, 0x100, 0).map(|r| r.1),
            Ok(0x1f00)
        );
        // Past the end, before the start, wrapping around.
        assert_eq!(table.lookup(key, 0, 0x11f00, 0x101, 0).err(), Some(EACCES));
        assert_eq!(table.lookup(key, 0, 0xffff, 1, 0).err(), Some(EACCES));
        assert_eq!(table.lookup(key, 0, u64::MAX, 2, 0).err(), Some(EACCES));
        // A permission the region does not grant.
        assert_eq!(
            table.lookup(key, 0, 0x10000, 8, REMOTE_WRITE).err(),
            Some(EACCES)
        );
        // Another PD's request.
        assert_eq!(table.lookup(key, 1, 0x10000, 8, 0).err(), Some(EACCES));
        // Same index, another variant: a stale key.
        assert_eq!(table.lookup(key ^ 1, 0, 0x10000, 8, 0).err(), Some(EINVAL));
        table.remove(&mr);
        assert_eq!(table.lookup(key, 0, 0x10000, 8, 0).err(), Some(EINVAL));
        // The index comes back with a different key.
        // A key of the right index but stale variant does not match either.
        assert!(table.get(key).is_none());
        let spec = MrSpec::test_region(0, 0x1000, 0);
        if let Ok(again) = table.insert_spec(spec) {
            assert_ne!(again.keys().lkey, key);
            table.remove(&again);
        }
    }

    /// The keys of `n` regions entered into a fresh MR table, in order.
    fn first_keys(n: usize) -> KVec<u32> {
        let Ok(table) = KBox::pin_init(MrTable::new_mrs(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let mut keys = KVec::new();
        let mut mrs = KVec::new();
        for _ in 0..n {
            let Ok(mr) = table.insert_spec(MrSpec::test_region(0, 0x1000, 0)) else {
                panic!("insert failed");
            };
            assert!(keys.push(mr.keys().lkey, GFP_KERNEL).is_ok());
            assert!(mrs.push(mr, GFP_KERNEL).is_ok());
        }
        for mr in &mrs {
            table.remove(mr);
        }
        keys
    }

    #[test]
    fn fresh_tables_hand_out_unpredictable_keys() {
        // Two devices (or one created again) must not hand out the same
        // keys: with the allocation count as the variant both gave 0x100,
        // 0x201, 0x302, ... (a chance of 2^-128 here).
        let (a, b) = (first_keys(16), first_keys(16));
        assert!(a[..] != b[..]);
        for (i, key) in a.iter().enumerate() {
            assert_eq!(key >> 8, KeyKind::Mr.min_index() + i as u32);
        }
    }

    #[test]
    fn reused_index_never_gets_its_previous_key() {
        // 256 indices, one region at a time: each index comes back every
        // 256 allocations, which gave it the same key every time when the
        // variant was the allocation count's low byte.
        const SPAN: usize = 256;
        let Ok(table) = KBox::pin_init(MrTable::with_span(KeyKind::Mr, SPAN as u32), GFP_KERNEL)
        else {
            panic!("no memory for the table");
        };
        let mut last = buffer(SPAN * 4);
        let mut changed = 0;
        for n in 0..SPAN * 4 {
            let Ok(mr) = table.insert_spec(MrSpec::test_region(0, 0x1000, 0)) else {
                panic!("insert failed");
            };
            let key = mr.keys().lkey;
            let i = (key >> 8) as usize - KeyKind::Mr.min_index() as usize;
            assert_eq!(i, n % SPAN);
            let mut prev = [0u8; 4];
            prev.copy_from_slice(&last[i * 4..i * 4 + 4]);
            let prev = u32::from_ne_bytes(prev);
            if n >= SPAN {
                assert_ne!(key, prev);
                changed += 1;
            }
            last[i * 4..i * 4 + 4].copy_from_slice(&key.to_ne_bytes());
            table.remove(&mr);
            // Not a fast MR: its deregistration waits for a grace period.
            assert!(!mr.retire());
        }
        assert_eq!(changed, SPAN * 3);
    }

    #[test]
    fn fast_mr_page_list_is_bounded() {
        let Ok(table) = KBox::pin_init(MrTable::new_mrs(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let fast = |ty, n| MrSpec::fast(0, test_kmem(), ty, n);
        assert!(fast(ib::MrType::SG_GAPS, 4).is_err());
        assert!(fast(ib::MrType::MEM_REG, 0).is_err());
        let Ok(spec) = fast(ib::MrType::MEM_REG, 3) else {
            panic!("fast MR refused");
        };
        let Ok(mr) = table.insert_spec(spec) else {
            panic!("insert failed");
        };
        // Not registered yet: the key names no memory.
        assert!(table.lookup(mr.keys().lkey, 0, 0, 1, 0).is_err());
        assert_eq!(mr.start_pages(3000).err(), Some(EINVAL));
        assert_eq!(mr.start_pages(4096), Ok(()));
        for i in 0..3 {
            assert_eq!(mr.add_page(0x1000 * i), Ok(()));
        }
        assert_eq!(mr.add_page(0x9000).err(), Some(ENOMEM));
        assert_eq!(mr.fast_pages(), Some((3, 4096)));
        // A new mapping starts over.
        assert_eq!(mr.start_pages(1 << 21), Ok(()));
        assert_eq!(mr.fast_pages(), Some((0, 1 << 21)));
        table.remove(&mr);
    }

    const ALL: u32 = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;

    #[test]
    fn dma_mr_copies_and_atomics_by_address() {
        let Ok(table) = KBox::pin_init(MrTable::new_mrs(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let Ok(spec) = MrSpec::dma(0, test_kmem(), ALL) else {
            panic!("DMA MR refused");
        };
        let Ok(mr) = table.insert_spec(spec) else {
            panic!("insert failed");
        };
        let key = mr.keys().lkey;
        let len = 3 * PAGE_SIZE;
        let mut buf = buffer(len);
        // An access across two page boundaries: the offset is the address.
        let (at, n) = (100, 2 * PAGE_SIZE + 50);
        let Ok((_, offset)) = table.lookup(key, 0, addr(&buf, at), n as u64, REMOTE_WRITE) else {
            panic!("lookup failed");
        };
        assert_eq!(offset, addr(&buf, at));
        let mut data = KVec::new();
        for i in 0..n {
            assert!(data.push((i % 251) as u8, GFP_KERNEL).is_ok());
        }
        assert_eq!(mr.write_at(offset, &data), Ok(()));
        assert!(buf[at..at + n] == data[..]);
        assert!(buf[..at].iter().all(|&b| b == 0));
        assert!(buf[at + n..].iter().all(|&b| b == 0));
        let mut back = buffer(n);
        assert_eq!(mr.read_at(offset, &mut back), Ok(()));
        assert!(back[..] == data[..]);
        assert_eq!(mr.write_at(offset, &[]), Ok(()));

        // Atomics on an aligned word, in CPU byte order.
        buf[8..16].copy_from_slice(&5u64.to_ne_bytes());
        let w = addr(&buf, 8);
        let cas = |compare, swap| AtomicOp::CmpSwap { compare, swap };
        assert_eq!(mr.atomic_at(w, cas(4, 9)), Ok(5));
        assert_eq!(word(&buf, 8), 5);
        assert_eq!(mr.atomic_at(w, cas(5, 9)), Ok(5));
        assert_eq!(word(&buf, 8), 9);
        assert_eq!(mr.atomic_at(w, AtomicOp::FetchAdd(u64::MAX)), Ok(9));
        assert_eq!(word(&buf, 8), 8);
        assert_eq!(mr.atomic_at(w, AtomicOp::Write(0x1234)), Ok(8));
        assert_eq!(word(&buf, 8), 0x1234);
        assert_eq!(
            mr.atomic_at(w + 4, AtomicOp::FetchAdd(1)).err(),
            Some(EINVAL)
        );

        // Addresses outside the linear map are refused, not dereferenced.
        assert_eq!(mr.write_at(0x10, &[1]).err(), Some(EFAULT));
        assert_eq!(
            mr.atomic_at(0x10, AtomicOp::FetchAdd(1)).err(),
            Some(EFAULT)
        );
        assert_eq!(mr.read_at(u64::MAX - 15, &mut [0; 8]).err(), Some(EFAULT));
        assert_eq!(mr.read_at(u64::MAX, &mut [0; 8]).err(), Some(EINVAL));
        // Only fast MRs are registered and invalidated by work requests.
        assert_eq!(mr.fast_register(key, ALL, 0, 8).err(), Some(EINVAL));
        assert_eq!(mr.invalidate(key).err(), Some(EINVAL));
        table.remove(&mr);
        drop(mr);
        drop(buf);
    }

    #[test]
    fn fast_mr_registers_copies_and_invalidates() {
        let Ok(table) = KBox::pin_init(MrTable::new_mrs(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let Ok(spec) = MrSpec::fast(0, test_kmem(), ib::MrType::MEM_REG, 4) else {
            panic!("fast MR refused");
        };
        let Ok(mr) = table.insert_spec(spec) else {
            panic!("insert failed");
        };
        let key = mr.keys().lkey;
        // Two page-aligned pages inside a buffer, mapped in reverse order.
        let mut buf = buffer(3 * PAGE_SIZE);
        let base = (PAGE_SIZE - (addr(&buf, 0) as usize % PAGE_SIZE)) % PAGE_SIZE;
        let (p0, p1) = (base, base + PAGE_SIZE);
        assert_eq!(mr.start_pages(PAGE_SIZE as u32), Ok(()));
        assert_eq!(mr.add_page(addr(&buf, p1)), Ok(()));
        assert_eq!(mr.add_page(addr(&buf, p0)), Ok(()));

        // Not registered: the key names nothing, data access is refused.
        assert_eq!(table.lookup(key, 0, 0, 1, 0).err(), Some(EINVAL));
        assert_eq!(mr.write_at(0, &[1]).err(), Some(EINVAL));

        // REG_MR with a new key byte; the region starts 0x100 into page 1.
        let new_key = Key::from_raw(key).next_variant().raw();
        let iova = 0x7_0000_0100u64;
        let len = 2 * PAGE_SIZE as u64 - 0x100;
        let other_index = key.wrapping_add(0x100);
        assert_eq!(
            mr.fast_register(other_index, ALL, iova, len).err(),
            Some(EINVAL)
        );
        assert_eq!(
            mr.fast_register(new_key, ALL, iova, len + 1).err(),
            Some(EINVAL)
        );
        assert_eq!(
            mr.fast_register(new_key, REMOTE_WRITE, iova, len).err(),
            Some(EINVAL)
        );
        assert_eq!(mr.fast_register(new_key, ALL, iova, len), Ok(()));
        // Registered already: it must be invalidated first.
        assert_eq!(
            mr.fast_register(new_key, ALL, iova, len).err(),
            Some(EINVAL)
        );
        assert_eq!(table.lookup(key, 0, iova, 8, 0).err(), Some(EINVAL));
        assert_eq!(
            table
                .lookup(new_key, 0, iova + 0x10, 0x20, REMOTE_WRITE)
                .map(|r| r.1),
            Ok(0x10)
        );
        assert_eq!(
            table.lookup(new_key, 0, iova + len - 1, 2, 0).err(),
            Some(EACCES)
        );
        // Through a memory window: no key, same bounds.
        assert_eq!(mr.offset_of(iova + 0x10, 0x20), Ok(0x10));
        assert_eq!(mr.offset_of(iova - 1, 1).err(), Some(EACCES));

        // A copy across the end of the first listed page lands in p1, then p0.
        let first = PAGE_SIZE - 0x100;
        let mut data = KVec::new();
        for i in 0..first + 0x80 {
            assert!(data.push((i % 253) as u8 + 1, GFP_KERNEL).is_ok());
        }
        assert_eq!(mr.write_at(0, &data), Ok(()));
        assert!(buf[p1 + 0x100..p1 + PAGE_SIZE] == data[..first]);
        assert!(buf[p0..p0 + 0x80] == data[first..]);
        assert!(buf[p1..p1 + 0x100].iter().all(|&b| b == 0));
        let mut back = buffer(data.len());
        assert_eq!(mr.read_at(0, &mut back), Ok(()));
        assert!(back[..] == data[..]);
        // The last byte, and one past the region.
        assert_eq!(mr.write_at(len - 1, &[0xee]), Ok(()));
        assert_eq!(buf[p0 + PAGE_SIZE - 1], 0xee);
        assert_eq!(mr.write_at(len - 1, &[1, 2]).err(), Some(EINVAL));
        assert_eq!(mr.read_at(u64::MAX, &mut [0]).err(), Some(EINVAL));

        // Atomics: region offset 8 is p1 + 0x108.
        buf[p1 + 0x108..p1 + 0x110].copy_from_slice(&40u64.to_ne_bytes());
        assert_eq!(mr.atomic_at(8, AtomicOp::FetchAdd(2)), Ok(40));
        assert_eq!(word(&buf, p1 + 0x108), 42);
        let cas = AtomicOp::CmpSwap {
            compare: 42,
            swap: 7,
        };
        assert_eq!(mr.atomic_at(8, cas), Ok(42));
        assert_eq!(word(&buf, p1 + 0x108), 7);
        assert_eq!(mr.atomic_at(12, AtomicOp::Write(1)).err(), Some(EINVAL));
        let last = word(&buf, p0 + PAGE_SIZE - 8);
        assert_eq!(mr.atomic_at(len - 8, AtomicOp::Write(3)), Ok(last));
        assert_eq!(word(&buf, p0 + PAGE_SIZE - 8), 3);
        assert_eq!(mr.atomic_at(len, AtomicOp::Write(3)).err(), Some(EINVAL));

        // Invalidation needs the current key; then nothing is reachable.
        assert_eq!(mr.invalidate(key).err(), Some(EINVAL));
        assert_eq!(mr.invalidate(new_key), Ok(()));
        assert_eq!(table.lookup(new_key, 0, iova, 8, 0).err(), Some(EINVAL));
        assert_eq!(mr.write_at(0, &[1]).err(), Some(EINVAL));
        assert_eq!(mr.atomic_at(8, AtomicOp::FetchAdd(1)).err(), Some(EINVAL));
        assert_eq!(mr.offset_of(iova, 1).err(), Some(EINVAL));

        // Remapped with small pages: 512-byte pages 1 KiB apart.
        assert_eq!(mr.start_pages(512), Ok(()));
        assert_eq!(mr.add_page(addr(&buf, p0)), Ok(()));
        assert_eq!(mr.add_page(addr(&buf, p0 + 1024)), Ok(()));
        let key3 = Key::from_raw(new_key).next_variant().raw();
        assert_eq!(mr.fast_register(key3, ALL, 0x200, 1024), Ok(()));
        assert_eq!(mr.write_at(500, &[9; 24]), Ok(()));
        assert!(buf[p0 + 500..p0 + 512].iter().all(|&b| b == 9));
        assert!(buf[p0 + 1024..p0 + 1036].iter().all(|&b| b == 9));
        assert_eq!(buf[p0 + 512], 0);

        // Deregistration: out of the table, then retired, a registered
        // region included; a reference taken before reaches nothing, and
        // the region is never registered again.
        assert_eq!(mr.start_dereg(), Ok(()));
        table.remove(&mr);
        assert!(mr.retire());
        assert_eq!(mr.write_at(500, &[1]).err(), Some(EINVAL));
        assert_eq!(mr.read_at(0, &mut [0]).err(), Some(EINVAL));
        assert_eq!(mr.atomic_at(8, AtomicOp::FetchAdd(1)).err(), Some(EINVAL));
        let key4 = Key::from_raw(key3).next_variant().raw();
        assert_eq!(mr.fast_register(key4, ALL, 0x200, 1024).err(), Some(EINVAL));
        assert_eq!(buf[p0 + 500], 9);
        drop(mr);
        drop(buf);
    }
}
