// SPDX-License-Identifier: GPL-2.0

//! Tables of keyed objects (MRs, MWs): an index range of the key space
//! handed out round-robin, each new key with a random variant byte that is
//! never the one the index's previous key had, so that keys cannot be
//! predicted and a stale key never names the next object at its index.

use crate::{
    dev::irq_table::IrqTable,
    dev::round_robin::RoundRobin,
    ffi::rt,
    logic::keys::{fresh_variant, Key, KeyKind},
};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
    xarray::AllocKind,
};

/// An object that lives under a key.
pub(crate) trait Keyed: Send + Sync + 'static {
    /// Its key.
    fn key(&self) -> Key;
}

/// A device's objects of one kind by key index.
#[pin_data]
pub(crate) struct KeyTable<E: Keyed> {
    #[pin]
    items: IrqTable<E>,
    /// Serialises index allocation, so that an index found free stays free
    /// while the entry is made (which may sleep) and stored, and guards the
    /// variant each index's last key had.
    #[pin]
    create: Mutex<History>,
    /// Where the search for a free index continues.
    next: RoundRobin,
    kind: KeyKind,
    /// How many indices from `kind`'s first are used: all of them, except
    /// in tests.
    span: u32,
}

impl<E: Keyed> KeyTable<E> {
    /// An empty table over `kind`'s index range.
    pub(crate) fn new(kind: KeyKind) -> impl PinInit<Self> {
        Self::init(kind, kind.max_index() - kind.min_index() + 1)
    }

    /// An empty table over the first `span` indices of `kind`'s range, so
    /// that a test sees indices reused sooner.
    #[cfg(CONFIG_KUNIT)]
    pub(crate) fn with_span(kind: KeyKind, span: u32) -> impl PinInit<Self> {
        Self::init(kind, span)
    }

    fn init(kind: KeyKind, span: u32) -> impl PinInit<Self> {
        pin_init!(Self {
            items <- IrqTable::new(AllocKind::Alloc),
            create <- new_mutex!(History::new()),
            next: RoundRobin::new(),
            kind,
            span: span.clamp(1, kind.max_index() - kind.min_index() + 1),
        })
    }

    /// Gives `make` a free index and key and enters what it makes.
    pub(crate) fn insert(&self, make: impl FnOnce(Key) -> Result<Arc<E>>) -> Result<Arc<E>> {
        let mut history = self.create.lock();
        let min = self.kind.min_index();
        let (index, _) = self
            .next
            .find(min, self.span, |i| !self.items.contains(i as usize))
            .ok_or(ENOMEM)?;
        // A random variant (the allocation count cannot serve: both spans
        // are multiples of 256, so an index would always come back with
        // the same key), never the one the index's last key had.
        let offset = (index - min) as usize;
        let variant = fresh_variant(history.last(offset), rt::random_u32());
        let key = Key::new(index, variant).ok_or(ENOMEM)?;
        history.reserve(offset)?;
        let item = make(key)?;
        self.items.store(key.index() as usize, item.clone())?;
        // Only now: an index that was not used keeps its last key's variant.
        history.update(offset, variant);
        Ok(item)
    }

    /// Takes `item` out of the table, remembering its last key (fast
    /// registration and binds change it) for the index's next object.
    /// Process context only.
    pub(crate) fn remove(&self, item: &E) {
        let key = item.key();
        let mut history = self.create.lock();
        let removed = self.items.remove(key.index() as usize);
        if removed.is_some() {
            let offset = key.index().wrapping_sub(self.kind.min_index()) as usize;
            history.update(offset, key.variant());
        }
        drop(history);
        // Dropped outside the locks: the last reference may free a lot.
        drop(removed);
    }

    /// The object at `key`'s index, whatever its variant byte (fast
    /// registration gives an MR a new key at that index).
    pub(crate) fn get_index(&self, key: u32) -> Option<Arc<E>> {
        self.items.get(Key::from_raw(key).index() as usize)
    }

    /// The object `key` names, if the key is current.
    pub(crate) fn get(&self, key: u32) -> Option<Arc<E>> {
        let index = Key::from_raw(key).index() as usize;
        let item = self.items.get(index)?;
        item.key().matches(key).then_some(item)
    }
}

/// Indices of one table per page of [`History`].
const HISTORY_PAGE: usize = 4096;

/// The variant byte each index's last key had, in pages allocated when
/// an index of theirs is first handed out (at most one byte per index of
/// the range, 512 KiB, once the round-robin search has gone all the way
/// round). An index never used counts as having had variant 0.
struct History {
    pages: KVec<KVec<u8>>,
}

impl History {
    const fn new() -> Self {
        Self { pages: KVec::new() }
    }

    /// The variant the last key at `offset` (from the range's start) had.
    fn last(&self, offset: usize) -> u8 {
        self.pages
            .get(offset / HISTORY_PAGE)
            .and_then(|page| page.get(offset % HISTORY_PAGE))
            .copied()
            .unwrap_or(0)
    }

    /// Makes sure the page holding `offset` exists.
    fn reserve(&mut self, offset: usize) -> Result {
        let n = offset / HISTORY_PAGE;
        while self.pages.len() <= n {
            self.pages.push(KVec::new(), GFP_KERNEL)?;
        }
        let page = self.pages.get_mut(n).ok_or(ENOMEM)?;
        if page.is_empty() {
            *page = KVec::from_elem(0, HISTORY_PAGE, GFP_KERNEL)?;
        }
        Ok(())
    }

    /// Records `variant` at `offset` if its page exists (it does for every
    /// index handed out: [`Self::reserve`]).
    fn update(&mut self, offset: usize, variant: u8) {
        if let Some(slot) = self
            .pages
            .get_mut(offset / HISTORY_PAGE)
            .and_then(|page| page.get_mut(offset % HISTORY_PAGE))
        {
            *slot = variant;
        }
    }
}
