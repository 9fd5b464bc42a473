// SPDX-License-Identifier: GPL-2.0

//! Memory regions: registration (user pages pinned through the core's umem
//! machinery, or all of memory for kernel consumers), keys, and the table
//! the data path will resolve keys with.

use crate::{ib::consts::IB_MR_TYPE_MEM_REG, params};
use crate::{
    ib::{IbDevice, MrKeys, Operations, Umem},
    key_table::{KeyTable, Keyed},
    logic::{
        keys::{Key, KeyKind},
        mr::{check_reg_access, MrError, MrRange},
    },
};
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::{
    new_spinlock_irq,
    page::PAGE_SIZE,
    prelude::*,
    sync::{Arc, SpinLockIrq},
};

/// A registered region, shared between its verbs object and the device's
/// MR table.
pub(crate) struct MrInner {
    key: Key,
    range: MrRange,
    /// The PD it belongs to (its address: an identity, never dereferenced);
    /// `rereg_mr` may move it.
    pd: AtomicUsize,
    /// The pinned pages of a user MR; `None` for the DMA MR.
    _umem: Option<Umem>,
    /// The page list of a fast-registration MR.
    fast: Option<Pin<KBox<SpinLockIrq<FastPages>>>>,
}

/// The pages `ib_map_mr_sg` gave a fast-registration MR, which a `REG_MR`
/// work request makes the region's memory.
struct FastPages {
    /// DMA (kernel virtual) addresses of `page_size`-byte pages.
    pages: KVec<u64>,
    /// Room allocated at creation (`max_num_sg`): the list never grows in
    /// `mr_set_page`, which may run in atomic context.
    max: usize,
    page_size: u32,
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
    pub(crate) range: MrRange,
    /// Page list room of a fast-registration MR.
    pub(crate) fast_pages: Option<u32>,
    pub(crate) umem: Option<Umem>,
    pub(crate) pd: usize,
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
        let umem = Umem::get(dev, start, length, access)?;
        Ok(Self {
            range: MrRange {
                iova,
                length,
                access,
            },
            umem: Some(umem),
            pd,
            fast_pages: None,
        })
    }

    /// The all-of-memory region of a kernel consumer.
    pub(crate) fn dma(pd: usize, access: u32) -> Result<Self> {
        check_reg_access(access).map_err(reg_error)?;
        Ok(Self {
            range: MrRange {
                iova: 0,
                length: u64::MAX,
                access,
            },
            umem: None,
            pd,
            fast_pages: None,
        })
    }

    /// A fast-registration MR for up to `max_num_sg` pages. Until a
    /// `REG_MR` work request registers it, it covers no memory.
    pub(crate) fn fast(pd: usize, mr_type: u32, max_num_sg: u32) -> Result<Self> {
        if mr_type != IB_MR_TYPE_MEM_REG {
            return Err(EINVAL);
        }
        if max_num_sg == 0 || max_num_sg > params::MAX_FAST_REG_ALLOC {
            return Err(EINVAL);
        }
        Ok(Self {
            range: MrRange {
                iova: 0,
                length: 0,
                access: 0,
            },
            umem: None,
            pd,
            fast_pages: Some(max_num_sg),
        })
    }

    /// A region without pages, for tests of the key and range checks.
    #[cfg(CONFIG_KUNIT)]
    pub(crate) fn test_region(iova: u64, length: u64, access: u32) -> Self {
        Self {
            range: MrRange {
                iova,
                length,
                access,
            },
            umem: None,
            pd: 0,
            fast_pages: None,
        }
    }

    /// The region under `key`.
    pub(crate) fn finish(self, key: Key) -> Result<Arc<MrInner>> {
        let fast = match self.fast_pages {
            Some(max) => {
                let max = max as usize;
                let pages = KVec::with_capacity(max, GFP_KERNEL)?;
                Some(KBox::pin_init(
                    new_spinlock_irq!(FastPages {
                        pages,
                        max,
                        page_size: 0,
                    }),
                    GFP_KERNEL,
                )?)
            }
            None => None,
        };
        Ok(Arc::new(
            MrInner {
                key,
                range: self.range,
                pd: AtomicUsize::new(self.pd),
                _umem: self.umem,
                fast,
            },
            GFP_KERNEL,
        )?)
    }
}

impl MrInner {
    /// `ib_map_mr_sg` starts a new page list of `page_size`-byte pages. As
    /// in rxe, the MR page size must be a multiple or a divisor of the
    /// system page size.
    pub(crate) fn start_pages(&self, page_size: u32) -> Result {
        let fast = self.fast.as_ref().ok_or(EINVAL)?;
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
        let fast = self.fast.as_ref().ok_or(EINVAL)?;
        let mut f = fast.lock();
        if f.pages.len() >= f.max {
            return Err(ENOMEM);
        }
        // Cannot allocate: the room was reserved at creation.
        f.pages.push(addr, GFP_ATOMIC).map_err(|_| ENOMEM)
    }

    /// The number of pages mapped and their size.
    pub(crate) fn fast_pages(&self) -> Option<(usize, u32)> {
        let f = self.fast.as_ref()?.lock();
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

    /// The keys to report. As in rxe, the R_Key equals the L_Key even
    /// without remote access: permissions are checked when a request uses
    /// the key, not by hiding it.
    pub(crate) fn keys(&self) -> MrKeys {
        MrKeys {
            lkey: self.key.raw(),
            rkey: self.key.raw(),
        }
    }
}

impl MrInner {
    /// Where `[va, va + len)` lies in the region, if `key` is this region's
    /// exact key (a stale variant does not match) and the region grants
    /// `need`. What the data path asks before touching memory.
    pub(crate) fn check(&self, key: u32, va: u64, len: u64, need: u32) -> Result<u64> {
        if !self.key.matches(key) {
            return Err(EINVAL);
        }
        self.range.check(va, len, need).map_err(|_| EACCES)
    }
}

/// A device's memory regions.
pub(crate) type MrTable = KeyTable<MrInner>;

impl Keyed for MrInner {
    fn key(&self) -> Key {
        self.key
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
    /// the key is current, the region is in the PD `pd` and the access is
    /// inside and allowed.
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
