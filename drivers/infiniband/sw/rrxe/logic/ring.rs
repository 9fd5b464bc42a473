// SPDX-License-Identifier: GPL-2.0

//! A first-in first-out ring of fixed capacity, over storage the caller
//! allocates once.
//!
//! The driver keeps several private queues whose size is known when their
//! object is created and which the data path must never grow: the
//! requester's flights, a kernel CQ's completions, the responder's READ
//! and atomic resources. [`FixedRing`] is their one implementation: it
//! owns a slice (a `KVec` in the driver, a `Vec` on the host), pushes at
//! the back, pops at the front and reaches every element by its age (0:
//! the oldest), so that none of its users does index arithmetic of its
//! own. Nothing here allocates or panics: a push onto a full ring gives
//! the value back, an access past the end is `None`.
//!
//! Elements are `Copy`: a slot is simply overwritten when it is reused
//! and left as it is when its element leaves, so popping is one read and
//! [`FixedRing::clear`] is constant time, with nothing to drop.

use core::{iter::Chain, ops::DerefMut, slice};

/// A FIFO of at most `slots.len()` elements.
///
/// # Invariants
///
/// `len <= slots.len()`, and `head < slots.len()` unless `slots` is empty
/// (then `head == 0`). The elements are the `len` slots from `head` on,
/// wrapping round to slot 0, oldest first. This holds as long as the
/// storage keeps its length, which `Vec`, `KVec`, boxed and borrowed
/// slices do (a `DerefMut` to a slice cannot change its length); every
/// access still goes through `get`, so storage that broke it would only
/// make elements unreachable, never panic.
pub(crate) struct FixedRing<S> {
    /// The slots; their number is the capacity.
    slots: S,
    /// The slot of the oldest element.
    head: usize,
    /// How many elements there are.
    len: usize,
}

impl<T: Copy, S: DerefMut<Target = [T]>> FixedRing<S> {
    /// An empty ring with room for `slots.len()` elements. The slots'
    /// contents do not matter: they are overwritten before they are read.
    pub(crate) fn new(slots: S) -> Self {
        Self {
            slots,
            head: 0,
            len: 0,
        }
    }

    /// How many elements it can hold.
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// How many elements it holds.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds none.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether another push would fail.
    pub(crate) fn is_full(&self) -> bool {
        self.len >= self.capacity()
    }

    /// The slot `age` places after the oldest element's, wrapping round.
    /// `head + age` may not fit a `usize` for a huge capacity (of a
    /// zero-sized `T`), so this subtracts instead of adding and reducing:
    /// no division and no overflow.
    fn wrap(&self, age: usize) -> Option<usize> {
        let to_end = self.capacity().checked_sub(self.head)?;
        if age < to_end {
            Some(self.head + age)
        } else {
            age.checked_sub(to_end)
        }
    }

    /// The slot of the element of age `age` (0: the oldest), if there is
    /// one.
    fn slot(&self, age: usize) -> Option<usize> {
        if age >= self.len {
            return None;
        }
        self.wrap(age)
    }

    /// The element of age `age` (0: the oldest).
    pub(crate) fn get(&self, age: usize) -> Option<&T> {
        self.slots.get(self.slot(age)?)
    }

    /// The element of age `age`, to change in place.
    pub(crate) fn get_mut(&mut self, age: usize) -> Option<&mut T> {
        let s = self.slot(age)?;
        self.slots.get_mut(s)
    }

    /// The oldest element, the next [`FixedRing::pop_front`] returns.
    pub(crate) fn front(&self) -> Option<&T> {
        self.get(0)
    }

    /// Adds `v` as the newest element; gives it back if the ring is full.
    pub(crate) fn push_back(&mut self, v: T) -> Result<(), T> {
        if self.is_full() {
            return Err(v);
        }
        // There is a free slot, so the one after the newest element is.
        let Some(slot) = self.wrap(self.len).and_then(|s| self.slots.get_mut(s)) else {
            return Err(v);
        };
        *slot = v;
        self.len += 1;
        Ok(())
    }

    /// Adds `v` as the newest element of a ring used only up to `limit`
    /// elements (at least 1, at most the capacity), first dropping the
    /// oldest ones until there is room under that limit; returns how many
    /// were dropped. Like a window of the last `limit` elements, whose
    /// size may change from one push to the next.
    pub(crate) fn push_back_evicting(&mut self, v: T, limit: usize) -> usize {
        let limit = limit.clamp(1, self.capacity().max(1));
        let mut dropped = 0;
        while self.len >= limit {
            if self.pop_front().is_none() {
                break;
            }
            dropped += 1;
        }
        // Fails only for a ring of no capacity, where `v` has nowhere to go.
        let _ = self.push_back(v);
        dropped
    }

    /// Removes the oldest element and returns it.
    pub(crate) fn pop_front(&mut self) -> Option<T> {
        let v = *self.front()?;
        self.head = if self.head + 1 >= self.capacity() {
            0
        } else {
            self.head + 1
        };
        self.len -= 1;
        Some(v)
    }

    /// Removes every element.
    pub(crate) fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// The elements as two slices, oldest first: from the oldest to the
    /// end of the storage, then from its start on (empty unless the
    /// elements wrap round).
    pub(crate) fn as_slices(&self) -> (&[T], &[T]) {
        let to_end = self.capacity().saturating_sub(self.head);
        let first = self.len.min(to_end);
        let a = self.slots.get(self.head..self.head + first).unwrap_or(&[]);
        let b = self.slots.get(..self.len - first).unwrap_or(&[]);
        (a, b)
    }

    /// [`FixedRing::as_slices`], to change the elements in place.
    pub(crate) fn as_mut_slices(&mut self) -> (&mut [T], &mut [T]) {
        let to_end = self.capacity().saturating_sub(self.head);
        let first = self.len.min(to_end);
        let (head, len, cap) = (self.head, self.len, self.capacity());
        let (start, end) = self.slots.split_at_mut(head.min(cap));
        let a = end.get_mut(..first).unwrap_or(&mut []);
        let b = start.get_mut(..len - first).unwrap_or(&mut []);
        (a, b)
    }

    /// The elements, oldest first.
    pub(crate) fn iter(&self) -> Chain<slice::Iter<'_, T>, slice::Iter<'_, T>> {
        let (a, b) = self.as_slices();
        a.iter().chain(b.iter())
    }

    /// The elements, oldest first, to change in place.
    pub(crate) fn iter_mut(&mut self) -> Chain<slice::IterMut<'_, T>, slice::IterMut<'_, T>> {
        let (a, b) = self.as_mut_slices();
        a.iter_mut().chain(b.iter_mut())
    }
}
