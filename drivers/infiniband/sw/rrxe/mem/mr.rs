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
//! pinned pages or the page list, whatever the caller passes.

use crate::{
    dev::key_table::{KeyTable, Keyed},
    ffi::ib::{IbDevice, MrKeys, Umem},
    logic::{
        keys::{fast_reg_key, Key, KeyKind},
        mr::{
            check_reg_access, fast_reg_range, Chunk, MrError, MrRange, PageLayout, ATOMIC_SIZE,
            FLUSH_PERSISTENT,
        },
    },
};
use crate::{
    dev::params,
    ffi::ib::{consts::IB_MR_TYPE_MEM_REG, KernelMemory, Operations, PageRef},
};
use core::{
    ops::Range,
    sync::atomic::{AtomicU32, AtomicUsize, Ordering},
};
use kernel::{
    new_spinlock_irq,
    page::PAGE_SIZE,
    prelude::*,
    sync::{Arc, SpinLockIrq},
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
    /// A process's pages, pinned for the region's life; offset 0 is the
    /// byte at the registration's start address.
    User { umem: Umem, range: MrRange },
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
    /// What the last `ib_map_mr_sg` mapped: the range `REG_MR` registers.
    mapped_iova: u64,
    mapped_len: u64,
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
    fn read(&self, dst: &mut [u8]) -> Result {
        match self {
            Place::Page(page, offset) => page.read(*offset, dst),
            Place::Kernel(kmem, addr) => kmem.read(*addr, dst),
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
    /// addressed as `iova`: checks the access flags, then pins the pages.
    pub(crate) fn user<T: Operations>(
        dev: &IbDevice<T>,
        pd: usize,
        start: u64,
        length: u64,
        iova: u64,
        access: u32,
    ) -> Result<Self> {
        check_reg_access(access).map_err(reg_error)?;
        // As rxe on pages that are not persistent memory, which is all
        // rrxe ever registers: such a region cannot be flushed to
        // persistence.
        if access & FLUSH_PERSISTENT != 0 {
            return Err(EINVAL);
        }
        let umem = Umem::get(dev, start, length, access)?;
        Ok(Self {
            mem: SpecMemory::User {
                umem,
                range: MrRange {
                    iova,
                    length,
                    access,
                },
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
        mr_type: u32,
        max_num_sg: u32,
    ) -> Result<Self> {
        if mr_type != IB_MR_TYPE_MEM_REG {
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
            SpecMemory::User { umem, range } => Memory::User { umem, range },
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
                        mapped_iova: 0,
                        mapped_len: 0,
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

    /// Records the range the last `ib_map_mr_sg` mapped.
    pub(crate) fn set_mapping(&self, iova: u64, len: u64) {
        if let Ok(f) = self.fast() {
            let mut f = f.lock();
            f.mapped_iova = iova;
            f.mapped_len = len;
        }
    }

    /// `REG_MR`: registers the range the last `ib_map_mr_sg` mapped.
    pub(crate) fn register_mapped(&self, key: u32, access: u32) -> Result {
        let (iova, len) = {
            let f = self.fast()?.lock();
            (f.mapped_iova, f.mapped_len)
        };
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
            Memory::User { range, .. } | Memory::Kernel { range, .. } => Ok((self.key, *range)),
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
    /// also stops new binds), and then waits for an RCU grace period before
    /// it drops the region's own references: a window's reference is never
    /// the last one, so the pages are never released in atomic context.
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
    /// and the piece's range relative to `offset`.
    fn for_each_place(
        &self,
        offset: u64,
        len: usize,
        mut f: impl FnMut(Place<'_>, Range<usize>) -> Result,
    ) -> Result {
        let len64 = u64::try_from(len).map_err(|_| EINVAL)?;
        match &self.mem {
            Memory::User { umem, range } => {
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
    /// MR is not registered), `EFAULT` if memory behind it is missing,
    /// `EACCES` if the user pages were pinned read-only. A zero-length copy
    /// always succeeds.
    pub(crate) fn write_at(&self, offset: u64, src: &[u8]) -> Result {
        if src.is_empty() {
            return Ok(());
        }
        self.for_each_place(offset, src.len(), |place, span| {
            place.write(src.get(span).ok_or(EINVAL)?)
        })
    }

    /// Copies from the region at `offset` into `dst`. Errors as for
    /// [`MrInner::write_at`] (but read-only pages can be read).
    pub(crate) fn read_at(&self, offset: u64, dst: &mut [u8]) -> Result {
        if dst.is_empty() {
            return Ok(());
        }
        self.for_each_place(offset, dst.len(), |place, span| {
            place.read(dst.get_mut(span).ok_or(EINVAL)?)
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
            Memory::User { umem, range } => {
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
        if f.valid {
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
