// SPDX-License-Identifier: GPL-2.0

//! Packet sequence numbers.
//!
//! A PSN is a 24-bit counter carried in the BTH. It wraps from `0xff_ffff`
//! to `0`, so PSNs have no total order: "before" and "after" are only
//! meaningful for PSNs less than half the space (2^23) apart. This module
//! keeps the 24-bit invariant in the [`Psn`] type and implements the
//! comparison rule that IBA and the C rxe driver use.

use core::cmp::Ordering;

/// Mask of the 24 significant bits of a PSN.
pub(crate) const PSN_MASK: u32 = 0x00ff_ffff;

/// Compares two raw PSNs the way IBA and the C rxe driver do.
///
/// The 24-bit difference `a - b` is shifted into the top of an `i32`, so the
/// sign of the result tells the order: negative if `a` is before `b`, zero if
/// they are equal, positive if `a` is after `b`. Bits above the 24th of
/// either input are ignored (they fall off the top of the shift).
pub(crate) const fn psn_compare(a: u32, b: u32) -> i32 {
    // Reinterpreting the shifted difference as signed is the whole point:
    // the 24-bit sign bit becomes the i32 sign bit.
    (a.wrapping_sub(b) << 8) as i32
}

/// A 24-bit packet sequence number. The value is always below 2^24.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Psn(u32);

impl Psn {
    /// The PSN zero.
    pub(crate) const ZERO: Psn = Psn(0);
    /// The largest PSN, `0xff_ffff`; its successor is [`Psn::ZERO`].
    pub(crate) const MAX: Psn = Psn(PSN_MASK);
    /// Number of distinct PSNs (2^24).
    pub(crate) const MODULUS: u32 = PSN_MASK + 1;
    /// Half the PSN space: the largest distance at which "before" and
    /// "after" are still well defined.
    pub(crate) const HALF: u32 = Self::MODULUS / 2;

    /// Makes a PSN from the low 24 bits of `raw`; higher bits are dropped,
    /// as they are when the value is written into a BTH.
    pub(crate) const fn new(raw: u32) -> Psn {
        Psn(raw & PSN_MASK)
    }

    /// Makes a PSN from `raw` only if it fits in 24 bits.
    pub(crate) const fn try_new(raw: u32) -> Option<Psn> {
        if raw <= PSN_MASK {
            Some(Psn(raw))
        } else {
            None
        }
    }

    /// Returns the PSN as a `u32` below 2^24.
    pub(crate) const fn get(self) -> u32 {
        self.0
    }

    /// Returns the PSN `n` steps after this one, modulo 2^24.
    pub(crate) const fn add(self, n: u32) -> Psn {
        Psn::new(self.0.wrapping_add(n))
    }

    /// Returns the PSN `n` steps before this one, modulo 2^24.
    pub(crate) const fn sub(self, n: u32) -> Psn {
        Psn::new(self.0.wrapping_sub(n))
    }

    /// Returns the following PSN (wrapping `0xff_ffff` to `0`).
    pub(crate) const fn next(self) -> Psn {
        self.add(1)
    }

    /// Returns the preceding PSN (wrapping `0` to `0xff_ffff`).
    pub(crate) const fn prev(self) -> Psn {
        self.sub(1)
    }

    /// Number of steps forward from `self` to `to`, in `0..2^24`.
    ///
    /// This is the unsigned modular distance: it is always defined, even
    /// when `to` is "before" `self`, in which case it is large.
    pub(crate) const fn distance(self, to: Psn) -> u32 {
        to.0.wrapping_sub(self.0) & PSN_MASK
    }

    /// Signed difference `self - other` in `-2^23..2^23`, i.e. the shortest
    /// way around the circle from `other` to `self`.
    pub(crate) const fn signed_diff(self, other: Psn) -> i32 {
        // Arithmetic shift back down restores the 24-bit magnitude with the
        // sign extended.
        psn_compare(self.0, other.0) >> 8
    }

    /// Same as [`psn_compare`]: negative, zero or positive as `self` is
    /// before, equal to or after `other`.
    pub(crate) const fn compare(self, other: Psn) -> i32 {
        psn_compare(self.0, other.0)
    }

    /// [`Psn::compare`] as an [`Ordering`]. This is deliberately not an
    /// `Ord` impl: the relation is not transitive across the whole space.
    pub(crate) const fn wrapping_cmp(self, other: Psn) -> Ordering {
        let c = self.compare(other);
        if c < 0 {
            Ordering::Less
        } else if c > 0 {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }

    /// True if `self` comes strictly before `other`.
    pub(crate) const fn is_before(self, other: Psn) -> bool {
        self.compare(other) < 0
    }

    /// True if `self` comes strictly after `other`.
    pub(crate) const fn is_after(self, other: Psn) -> bool {
        self.compare(other) > 0
    }

    /// True if `self` lies in the window of `len` PSNs starting at `start`,
    /// i.e. in `start, start + 1, ..., start + len - 1` modulo 2^24.
    ///
    /// An empty window (`len == 0`) contains nothing; a window of 2^24 or
    /// more contains every PSN.
    pub(crate) const fn in_window(self, start: Psn, len: u32) -> bool {
        start.distance(self) < len
    }
}

impl From<Psn> for u32 {
    fn from(psn: Psn) -> u32 {
        psn.get()
    }
}
