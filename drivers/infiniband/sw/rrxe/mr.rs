// SPDX-License-Identifier: GPL-2.0

//! Memory regions: registration (user pages pinned through the core's umem
//! machinery, or all of memory for kernel consumers), keys, and the table
//! the data path will resolve keys with.

use crate::{
    ib::{IbDevice, MrKeys, Operations, Umem},
    logic::{
        keys::{Key, KeyKind},
        mr::{check_reg_access, MrError, MrRange},
    },
    round_robin::RoundRobin,
};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
    xarray::{AllocKind, XArray},
};

/// A registered region, shared between its verbs object and the device's
/// MR table.
pub(crate) struct MrInner {
    key: Key,
    range: MrRange,
    /// The pinned pages of a user MR; `None` for the DMA MR.
    _umem: Option<Umem>,
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
    pub(crate) umem: Option<Umem>,
}

impl MrSpec {
    /// The region of a user registration of `[start, start + length)`,
    /// addressed as `iova`: checks the access flags, then pins the pages.
    pub(crate) fn user<T: Operations>(
        dev: &IbDevice<T>,
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
        })
    }

    /// The all-of-memory region of a kernel consumer.
    pub(crate) fn dma(access: u32) -> Result<Self> {
        check_reg_access(access).map_err(reg_error)?;
        Ok(Self {
            range: MrRange {
                iova: 0,
                length: u64::MAX,
                access,
            },
            umem: None,
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
        }
    }

    /// The region under `key`.
    pub(crate) fn finish(self, key: Key) -> Result<Arc<MrInner>> {
        Ok(Arc::new(
            MrInner {
                key,
                range: self.range,
                _umem: self.umem,
            },
            GFP_KERNEL,
        )?)
    }
}

impl MrInner {
    /// The table index.
    pub(crate) fn index(&self) -> u32 {
        self.key.index()
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

/// A device's memory regions by key index.
#[pin_data]
pub(crate) struct MrTable {
    #[pin]
    mrs: XArray<Arc<MrInner>>,
    /// Serialises index allocation, so that an index found free stays free
    /// while the entry is stored (which may sleep, dropping the array lock).
    #[pin]
    create: Mutex<()>,
    /// Where the search for a free index continues; its allocation count
    /// is also the source of key variants, so that an index handed out
    /// again gets a different key.
    next: RoundRobin,
}

impl MrTable {
    /// An empty table.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            mrs <- XArray::new(AllocKind::Alloc),
            create <- new_mutex!(()),
            next: RoundRobin::new(),
        })
    }

    /// Gives `spec` a free index and key and enters it.
    pub(crate) fn insert(&self, spec: MrSpec) -> Result<Arc<MrInner>> {
        let _creating = self.create.lock();
        let (min, max) = (KeyKind::Mr.min_index(), KeyKind::Mr.max_index());
        let span = max - min + 1;
        let key = {
            let mrs = self.mrs.lock();
            let (index, n) = self
                .next
                .find(min, span, |i| mrs.get(i as usize).is_none())
                .ok_or(ENOMEM)?;
            // Low byte of the allocation count: consecutive uses of one
            // index are `span` allocations apart, which is not a multiple of
            // 256, so their variants differ.
            Key::new(index, n as u8).ok_or(ENOMEM)?
        };
        let mr = spec.finish(key)?;
        self.mrs
            .lock()
            .store(mr.index() as usize, mr.clone(), GFP_KERNEL)
            .map_err(|_| ENOMEM)?;
        Ok(mr)
    }

    /// Takes `mr` out of the table.
    pub(crate) fn remove(&self, mr: &MrInner) {
        let removed = self.mrs.lock().remove(mr.index() as usize);
        // Dropped outside the lock: the last reference unpins the pages.
        drop(removed);
    }

    /// The region `key` names, with the offset of `[va, va + len)` in it, if
    /// the key is current and the access is inside and allowed.
    pub(crate) fn lookup(
        &self,
        key: u32,
        va: u64,
        len: u64,
        need: u32,
    ) -> Result<(Arc<MrInner>, u64)> {
        let index = Key::from_raw(key).index() as usize;
        let mr = self.mrs.lock().get(index).map(Arc::from).ok_or(EINVAL)?;
        let offset = mr.check(key, va, len, need)?;
        Ok((mr, offset))
    }
}
