// SPDX-License-Identifier: GPL-2.0

//! Tables of shared objects by number (QPs, MRs, MWs, AHs) that the data
//! path reads in softirq context while verbs change them in process
//! context.
//!
//! The XArray's own lock is a plain spinlock: taken in process context with
//! interrupts on, a softirq on the same CPU that looks something up would
//! spin on it forever. So every access here first takes an
//! interrupt-disabling lock, and the XArray lock is only ever taken inside
//! it. Nothing sleeps with the locks held: stores allocate atomically.

use kernel::{
    new_spinlock_irq,
    prelude::*,
    sync::{Arc, SpinLockIrq},
    xarray::{AllocKind, XArray},
};

/// Objects of type `E` by number, usable from any context.
#[pin_data]
pub(crate) struct IrqTable<E: Send + Sync + 'static> {
    /// Held around every use of `xa`, with interrupts off.
    #[pin]
    irq: SpinLockIrq<()>,
    #[pin]
    xa: XArray<Arc<E>>,
}

impl<E: Send + Sync + 'static> IrqTable<E> {
    /// An empty table (`kind` as for [`XArray::new`]).
    pub(crate) fn new(kind: AllocKind) -> impl PinInit<Self> {
        pin_init!(Self {
            irq <- new_spinlock_irq!(()),
            xa <- XArray::new(kind),
        })
    }

    /// The object numbered `index`, with a reference the caller owns.
    pub(crate) fn get(&self, index: usize) -> Option<Arc<E>> {
        let irq = self.irq.lock();
        let xa = self.xa.lock();
        let item = xa.get(index).map(Arc::from);
        // The XArray lock must go before the interrupt-disabling one: a
        // guard left in the tail expression would outlive `irq`.
        drop(xa);
        drop(irq);
        item
    }

    /// Whether `index` is in use.
    pub(crate) fn contains(&self, index: usize) -> bool {
        let irq = self.irq.lock();
        let xa = self.xa.lock();
        let found = xa.get(index).is_some();
        drop(xa);
        drop(irq);
        found
    }

    /// Enters `item` as `index`. Callers make sure `index` is free (a
    /// mutex around choosing and storing).
    pub(crate) fn store(&self, index: usize, item: Arc<E>) -> Result {
        let irq = self.irq.lock();
        let mut xa = self.xa.lock();
        let stored = xa.store(index, item, GFP_ATOMIC).map(drop);
        drop(xa);
        drop(irq);
        stored.map_err(|_| ENOMEM)
    }

    /// Enters `item` as `index` unless an object is there already
    /// (`EEXIST`, the table keeping its own): insert-if-absent, checked and
    /// stored under one hold of the locks, so that two racing to enter an
    /// object under one index never both succeed.
    pub(crate) fn insert_new(&self, index: usize, item: Arc<E>) -> Result {
        let irq = self.irq.lock();
        let mut xa = self.xa.lock();
        let stored = if xa.get(index).is_some() {
            Err(EEXIST)
        } else {
            xa.store(index, item, GFP_ATOMIC)
                .map(drop)
                .map_err(|_| ENOMEM)
        };
        drop(xa);
        drop(irq);
        stored
    }

    /// Takes the object numbered `index` out. The caller drops it, outside
    /// the lock (the last reference may free a lot).
    pub(crate) fn remove(&self, index: usize) -> Option<Arc<E>> {
        let irq = self.irq.lock();
        let mut xa = self.xa.lock();
        let item = xa.remove(index);
        drop(xa);
        drop(irq);
        item
    }
}

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kernel::prelude::kunit_tests(rrxe_dev_irq_table))]
#[cfg_attr(dropin, kernel::prelude::kunit_tests(rrxe_dev_irq_table_dropin))]
mod tests {
    use super::IrqTable;
    use kernel::{error::code::EEXIST, prelude::*, sync::Arc, xarray::AllocKind};

    #[test]
    fn insert_new_keeps_the_first() {
        let Ok(table) = KBox::pin_init(IrqTable::<u32>::new(AllocKind::Alloc), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let (Ok(a), Ok(b)) = (Arc::new(1u32, GFP_KERNEL), Arc::new(2u32, GFP_KERNEL)) else {
            panic!("no memory for the items");
        };
        // A large index, as an implicit region's child of high memory.
        let at = 1 << 17;
        assert_eq!(table.insert_new(at, a.clone()), Ok(()));
        assert_eq!(table.insert_new(at, b.clone()), Err(EEXIST));
        assert_eq!(table.get(at).map(|x| *x), Some(1));
        // The table holds the first.
        assert!(table.remove(at).is_some_and(|x| Arc::ptr_eq(&x, &a)));
        assert!(!table.contains(at));
        assert_eq!(table.insert_new(at, b), Ok(()));
        assert_eq!(table.get(at).map(|x| *x), Some(2));
        drop(table.remove(at));
    }
}
