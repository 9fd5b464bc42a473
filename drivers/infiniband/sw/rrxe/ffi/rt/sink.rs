// SPDX-License-Identifier: GPL-2.0

//! [`Sink`]: memory filled front to back, which need not be initialised
//! before: a packet's payload area, written once by a copy from a memory
//! region, needs no zeroing first (a pass over every byte sent, 3% of a
//! bandwidth run's CPU time).

use core::mem::MaybeUninit;
use kernel::prelude::*;

/// Bytes filled in order from the front. Only initialised bytes are ever
/// written through it, so it may hand out initialised memory as well as
/// uninitialised.
///
/// # Invariants
///
/// `filled <= buf.len()`, and `buf[..filled]` is initialised.
pub(crate) struct Sink<'a> {
    buf: &'a mut [MaybeUninit<u8>],
    filled: usize,
}

impl<'a> Sink<'a> {
    /// A sink over `buf`, of which nothing is filled yet.
    pub(crate) fn new(buf: &'a mut [MaybeUninit<u8>]) -> Self {
        // INVARIANT: nothing is filled.
        Self { buf, filled: 0 }
    }

    /// A sink over initialised bytes (which it overwrites).
    pub(crate) fn over(buf: &'a mut [u8]) -> Self {
        let len = buf.len();
        // SAFETY: `MaybeUninit<u8>` has the layout of `u8`; the sink only
        // writes initialised bytes, so `buf` stays initialised for its owner.
        let buf = unsafe { core::slice::from_raw_parts_mut(buf.as_mut_ptr().cast(), len) };
        Self::new(buf)
    }

    /// How many bytes are left to fill.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.filled
    }

    /// Fills the next `src.len()` bytes from `src`. `EINVAL` (and nothing
    /// filled) if fewer are left.
    pub(crate) fn put(&mut self, src: &[u8]) -> Result {
        // SAFETY: `src` is valid for reads of its length and, being a shared
        // borrow, does not overlap the sink's memory, which is borrowed
        // mutably.
        unsafe { self.put_raw(src.as_ptr(), src.len()) }
    }

    /// Fills the next `len` bytes from `src` (a mapped page's). `EINVAL`
    /// (and nothing filled) if fewer are left.
    ///
    /// # Safety
    ///
    /// `src` is valid for reads of `len` initialised bytes and does not
    /// overlap the sink's memory. The bytes may change meanwhile (memory another
    /// context writes): what is filled is then some mix of old and new.
    pub(in crate::ffi) unsafe fn put_raw(&mut self, src: *const u8, len: usize) -> Result {
        let dst = self
            .buf
            .get_mut(self.filled..)
            .and_then(|rest| rest.get_mut(..len))
            .ok_or(EINVAL)?;
        // SAFETY: `dst` is `len` bytes of the sink's memory, which the caller
        // guarantees `src` is readable for and does not overlap.
        unsafe { core::ptr::copy_nonoverlapping(src, dst.as_mut_ptr().cast::<u8>(), len) };
        // INVARIANT: the `len` bytes after `filled` were just initialised.
        self.filled += len;
        Ok(())
    }

    /// Fills whatever is left with zeroes.
    pub(crate) fn zero_rest(&mut self) {
        for b in self.buf.get_mut(self.filled..).unwrap_or_default() {
            b.write(0);
        }
        // INVARIANT: every byte is initialised now.
        self.filled = self.buf.len();
    }
}
