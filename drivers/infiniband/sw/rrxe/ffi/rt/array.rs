// SPDX-License-Identifier: GPL-2.0

//! A vector of fixed capacity kept inline (on the stack), whose unused
//! slots are never written.
//!
//! An array of `Option<T>` costs a store into every slot when it is made:
//! for a QP's outbox of sixteen packets (about 1 KiB) the compiler emits a
//! 1 KiB `memset` at the start of every pass of the data path and every
//! received packet, which showed as 3-6% of a bench guest's CPU time.

use core::mem::MaybeUninit;

/// Up to `N` values of `T`, in the order they were pushed.
///
/// # Invariants
///
/// `len <= N`, and `slots[..len]` are initialised and owned by the array;
/// `slots[len..]` are not owned by it (never read or dropped through it),
/// whatever bytes a value moved out of them left.
pub(crate) struct ArrayBuf<T, const N: usize> {
    slots: [MaybeUninit<T>; N],
    len: usize,
}

impl<T, const N: usize> ArrayBuf<T, N> {
    /// An empty array; nothing is written into its slots.
    pub(crate) const fn new() -> Self {
        // INVARIANT: no slot is initialised, and `len` is 0.
        Self {
            slots: [const { MaybeUninit::uninit() }; N],
            len: 0,
        }
    }

    /// How many values it holds.
    #[cfg_attr(not(CONFIG_KUNIT), expect(dead_code))]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds nothing.
    #[cfg_attr(not(CONFIG_KUNIT), expect(dead_code))]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether another value fits.
    pub(crate) fn has_room(&self) -> bool {
        self.len < N
    }

    /// Appends `value`, or gives it back if the array is full.
    pub(crate) fn push(&mut self, value: T) -> Result<(), T> {
        let Some(slot) = self.slots.get_mut(self.len) else {
            return Err(value);
        };
        slot.write(value);
        // INVARIANT: the slot at the old `len` was just initialised, and
        // `len < N` before (`get_mut` found the slot).
        self.len += 1;
        Ok(())
    }

    /// Takes every value out, in order, leaving the array empty. Values
    /// the iterator is dropped before yielding are dropped with it; if it
    /// is leaked (`mem::forget`), so are they, never dropped twice.
    pub(crate) fn drain(&mut self) -> Drain<'_, T, N> {
        let len = self.len;
        // INVARIANT: the array no longer owns its values: `Drain` does, and
        // yields or drops each of `slots[..len]` exactly once.
        self.len = 0;
        Drain {
            buf: self,
            next: 0,
            len,
        }
    }
}

impl<T, const N: usize> Drop for ArrayBuf<T, N> {
    fn drop(&mut self) {
        drop(self.drain());
    }
}

/// The values of an [`ArrayBuf`], taken out in order.
///
/// # Invariants
///
/// `next <= len <= N`; `buf.slots[next..len]` are initialised and owned by
/// this iterator (the array's `len` is 0 meanwhile).
pub(crate) struct Drain<'a, T, const N: usize> {
    buf: &'a mut ArrayBuf<T, N>,
    next: usize,
    len: usize,
}

impl<T, const N: usize> Iterator for Drain<'_, T, N> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        if self.next >= self.len {
            return None;
        }
        let slot = self.buf.slots.get(self.next)?;
        // SAFETY: `next < len`, so by the type invariants the slot is
        // initialised and owned by this iterator; `next` moves past it
        // below, so it is read (moved out) only once.
        let value = unsafe { slot.assume_init_read() };
        // INVARIANT: the slot just read is no longer owned.
        self.next += 1;
        Some(value)
    }
}

impl<T, const N: usize> Drop for Drain<'_, T, N> {
    fn drop(&mut self) {
        for value in self.by_ref() {
            drop(value);
        }
    }
}

#[cfg_attr(not(dropin), kernel::prelude::kunit_tests(rrxe_rt_array))]
#[cfg_attr(dropin, kernel::prelude::kunit_tests(rrxe_rt_array_dropin))]
mod tests {
    use super::ArrayBuf;
    use core::sync::atomic::{AtomicUsize, Ordering};
    use kernel::{prelude::*, sync::Arc};

    #[test]
    fn values_come_out_in_order_and_a_full_array_refuses() {
        let mut a = ArrayBuf::<u32, 3>::new();
        assert!(a.is_empty());
        for v in 1..=3 {
            assert!(a.push(v).is_ok());
        }
        assert!(!a.has_room());
        assert_eq!(a.push(4), Err(4));
        let mut out = [0u32; 3];
        for (o, v) in out.iter_mut().zip(a.drain()) {
            *o = v;
        }
        assert_eq!(out, [1, 2, 3]);
        assert_eq!(a.len(), 0);
        assert!(a.push(5).is_ok());
        assert_eq!(a.len(), 1);
    }

    #[test]
    fn every_value_is_dropped_once() -> Result {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        struct Counted;
        impl Drop for Counted {
            fn drop(&mut self) {
                DROPS.fetch_add(1, Ordering::Relaxed);
            }
        }
        // The suite may run again (the module loaded again).
        DROPS.store(0, Ordering::Relaxed);
        let held = Arc::new(0u8, GFP_KERNEL)?;
        {
            let mut a = ArrayBuf::<(Counted, Arc<u8>), 4>::new();
            for _ in 0..4 {
                assert!(a.push((Counted, held.clone())).is_ok());
            }
            // One taken, the rest dropped with the iterator.
            let first = a.drain().next();
            assert!(first.is_some());
            drop(first);
            assert_eq!(DROPS.load(Ordering::Relaxed), 4);
            for _ in 0..2 {
                assert!(a.push((Counted, held.clone())).is_ok());
            }
            // Dropped with the array.
        }
        assert_eq!(DROPS.load(Ordering::Relaxed), 6);
        // Only `held` is left: every clone was dropped.
        assert!(Arc::into_unique_or_drop(held).is_some());
        Ok(())
    }
}
