// SPDX-License-Identifier: GPL-2.0

//! Tables of keyed objects (MRs, MWs): an index range of the key space
//! handed out round-robin, with a variant byte that changes each time an
//! index is reused, so a stale key never names a new object.

use crate::{
    irq_table::IrqTable,
    logic::keys::{Key, KeyKind},
    round_robin::RoundRobin,
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
    /// while the entry is made (which may sleep) and stored.
    #[pin]
    create: Mutex<()>,
    /// Where the search for a free index continues; its allocation count
    /// is also the source of key variants.
    next: RoundRobin,
    kind: KeyKind,
}

impl<E: Keyed> KeyTable<E> {
    /// An empty table over `kind`'s index range.
    pub(crate) fn new(kind: KeyKind) -> impl PinInit<Self> {
        pin_init!(Self {
            items <- IrqTable::new(AllocKind::Alloc),
            create <- new_mutex!(()),
            next: RoundRobin::new(),
            kind,
        })
    }

    /// Gives `make` a free index and key and enters what it makes.
    pub(crate) fn insert(&self, make: impl FnOnce(Key) -> Result<Arc<E>>) -> Result<Arc<E>> {
        let _creating = self.create.lock();
        let (min, max) = (self.kind.min_index(), self.kind.max_index());
        let span = max - min + 1;
        let (index, n) = self
            .next
            .find(min, span, |i| !self.items.contains(i as usize))
            .ok_or(ENOMEM)?;
        // Low byte of the allocation count: consecutive uses of one index
        // are `span` allocations apart, which is not a multiple of 256, so
        // their variants differ.
        let key = Key::new(index, n as u8).ok_or(ENOMEM)?;
        let item = make(key)?;
        self.items.store(key.index() as usize, item.clone())?;
        Ok(item)
    }

    /// Takes `item` out of the table.
    pub(crate) fn remove(&self, item: &E) {
        let removed = self.items.remove(item.key().index() as usize);
        // Dropped outside the lock: the last reference may free a lot.
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
