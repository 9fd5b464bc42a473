// SPDX-License-Identifier: GPL-2.0

//! The lowest free number of a dense range (AH numbers), found in a bounded
//! number of steps.
//!
//! A two-level bitmap over `count` numbers: bit `n` of the leaf words is
//! set while number `n` is taken, bit `w` of the summary words while leaf
//! word `w` is full. Finding the lowest free number reads the summary
//! words up to the first one with a clear bit, then one leaf word: for
//! rxe's 32,767 AH numbers at most 8 + 1 words, however many are taken.
//! Taking or freeing a number touches one leaf and one summary word.
//!
//! The words live wherever the caller keeps them (`&mut [u64]`, zeroed to
//! start with every number free); nothing here allocates or panics.

/// Bits per word.
pub(crate) const BITS: usize = 64;

/// Leaf words for `count` numbers.
pub(crate) const fn leaf_words(count: usize) -> usize {
    count.div_ceil(BITS)
}

/// Summary words for `count` numbers.
pub(crate) const fn summary_words(count: usize) -> usize {
    leaf_words(count).div_ceil(BITS)
}

/// The numbers `0..count` over caller-owned words: at least
/// [`summary_words`] and [`leaf_words`] of them (extra words are ignored).
pub(crate) struct Ids<'a> {
    summary: &'a mut [u64],
    leaves: &'a mut [u64],
    count: usize,
}

impl<'a> Ids<'a> {
    /// The set stored in `summary` and `leaves`, for numbers below
    /// `count`; shorter slices shrink the range to what they can hold.
    pub(crate) fn new(summary: &'a mut [u64], leaves: &'a mut [u64], count: usize) -> Self {
        let count = count
            .min(leaves.len().saturating_mul(BITS))
            .min(summary.len().saturating_mul(BITS * BITS));
        Self {
            summary,
            leaves,
            count,
        }
    }

    /// The lowest number not taken, if any.
    pub(crate) fn lowest_free(&self) -> Option<usize> {
        let words = leaf_words(self.count);
        let (si, s) = self
            .summary
            .iter()
            .enumerate()
            .take(summary_words(self.count))
            .find(|(_, s)| **s != u64::MAX)?;
        let w = si * BITS + (!*s).trailing_zeros() as usize;
        if w >= words {
            return None;
        }
        let leaf = *self.leaves.get(w)?;
        if leaf == u64::MAX {
            // Cannot happen while the summary is kept by take/free.
            return None;
        }
        let n = w * BITS + (!leaf).trailing_zeros() as usize;
        (n < self.count).then_some(n)
    }

    /// Marks `n` taken; `false` if it was already or is out of range.
    pub(crate) fn take(&mut self, n: usize) -> bool {
        if n >= self.count {
            return false;
        }
        let (w, bit) = (n / BITS, 1u64 << (n % BITS));
        let Some(leaf) = self.leaves.get_mut(w) else {
            return false;
        };
        if *leaf & bit != 0 {
            return false;
        }
        *leaf |= bit;
        if *leaf == u64::MAX {
            if let Some(s) = self.summary.get_mut(w / BITS) {
                *s |= 1u64 << (w % BITS);
            }
        }
        true
    }

    /// Marks `n` free again (nothing if it is out of range).
    pub(crate) fn free(&mut self, n: usize) {
        if n >= self.count {
            return;
        }
        let w = n / BITS;
        if let Some(leaf) = self.leaves.get_mut(w) {
            *leaf &= !(1u64 << (n % BITS));
        }
        if let Some(s) = self.summary.get_mut(w / BITS) {
            *s &= !(1u64 << (w % BITS));
        }
    }

    /// Takes the lowest free number and returns it.
    pub(crate) fn take_lowest(&mut self) -> Option<usize> {
        let n = self.lowest_free()?;
        self.take(n).then_some(n)
    }

    /// Whether `n` is taken.
    pub(crate) fn is_taken(&self, n: usize) -> bool {
        n < self.count
            && self
                .leaves
                .get(n / BITS)
                .is_some_and(|leaf| leaf & (1u64 << (n % BITS)) != 0)
    }
}
