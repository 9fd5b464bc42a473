// SPDX-License-Identifier: GPL-2.0

//! Memory region and memory window keys.
//!
//! An rxe L_Key or R_Key is `index << 8 | variant`: the upper 24 bits are
//! the object's index in its pool, the low 8 bits a "key" byte that the
//! owner may change (fast registration, binding a type 2 window) and that
//! makes an old key stop matching when the index is reused. MRs and MWs
//! draw their indices from disjoint ranges, so the index alone tells which
//! pool an incoming R_Key refers to; these ranges are rxe's
//! (`rxe_param.h`), so keys mean the same to an rxe peer.
//!
//! C rxe picks a random variant byte for every new MR or MW
//! (`rxe_get_next_key(-1)`), so a reused index gets the old variant back
//! once in 256 times. Here the variant of a new object is random too, so
//! that keys cannot be predicted from their index or from the order of
//! allocations, but never the variant the index's previous key had
//! ([`fresh_variant`]): a peer that still holds the R_Key of the object
//! that last lived at an index never reaches the new one. The driver
//! remembers that last variant per index.

/// Number of low bits holding the variant.
pub(crate) const VARIANT_BITS: u32 = 8;
/// Mask of the variant bits of a key.
pub(crate) const VARIANT_MASK: u32 = 0xff;
/// Largest index a key can carry (24 bits).
pub(crate) const MAX_INDEX: u32 = 0x00ff_ffff;

/// `DEFAULT_MAX_VALUE` of `rxe_param.h`, the top of the MW range.
const RXE_DEFAULT_MAX_VALUE: u32 = 1 << 20;
/// `RXE_MIN_MR_INDEX`: index 0 is left out, as the DMA L_Key is 0.
pub(crate) const MIN_MR_INDEX: u32 = 1;
/// `RXE_MAX_MR_INDEX`.
pub(crate) const MAX_MR_INDEX: u32 = RXE_DEFAULT_MAX_VALUE >> 1;
/// `RXE_MIN_MW_INDEX`: right after the MR range.
pub(crate) const MIN_MW_INDEX: u32 = MAX_MR_INDEX + 1;
/// `RXE_MAX_MW_INDEX`.
pub(crate) const MAX_MW_INDEX: u32 = RXE_DEFAULT_MAX_VALUE;

/// A 32-bit L_Key or R_Key. Every `u32` is a well-formed key; whether it
/// names an object is up to the pool lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key(u32);

impl Key {
    /// The key for pool index `index` with variant byte `variant`, or
    /// `None` if `index` does not fit in 24 bits.
    pub(crate) const fn new(index: u32, variant: u8) -> Option<Key> {
        if index > MAX_INDEX {
            return None;
        }
        Some(Key((index << VARIANT_BITS) | variant as u32))
    }

    /// Takes a key as received (in a work request, a packet or from user
    /// space) without interpreting it.
    pub(crate) const fn from_raw(raw: u32) -> Key {
        Key(raw)
    }

    /// The key's 32 bits.
    pub(crate) const fn raw(self) -> u32 {
        self.0
    }

    /// The pool index (upper 24 bits), what lookups use.
    pub(crate) const fn index(self) -> u32 {
        self.0 >> VARIANT_BITS
    }

    /// The variant byte (low 8 bits).
    pub(crate) const fn variant(self) -> u8 {
        // Truncation keeps exactly the low byte.
        self.0 as u8
    }

    /// The same index with the variant incremented modulo 256: the kernel's
    /// `ib_inc_rkey`.
    pub(crate) const fn next_variant(self) -> Key {
        self.with_variant(self.variant().wrapping_add(1))
    }

    /// The same index with variant `variant` (the kernel's
    /// `ib_update_fast_reg_key`).
    pub(crate) const fn with_variant(self, variant: u8) -> Key {
        Key((self.0 & !VARIANT_MASK) | variant as u32)
    }

    /// True if `presented` is exactly this key, index and variant. A
    /// presented key with the right index but a stale variant does not
    /// match.
    pub(crate) const fn matches(self, presented: u32) -> bool {
        self.0 == presented
    }

    /// True if `other` names the same pool index, whatever its variant.
    pub(crate) const fn same_index(self, other: Key) -> bool {
        self.index() == other.index()
    }
}

/// Which pool a key's index belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyKind {
    /// A memory region (L_Key and R_Key).
    Mr,
    /// A memory window (R_Key only).
    Mw,
}

/// Why a key is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyError {
    /// The index is outside the range of the kind of object expected.
    WrongRange {
        /// The kind expected.
        kind: KeyKind,
        /// The index found.
        index: u32,
    },
    /// The new key changes index bits; only the variant may change.
    IndexChanged {
        /// The object's current key.
        current: Key,
        /// The key requested.
        requested: Key,
    },
}

impl KeyKind {
    /// Smallest index of this kind.
    pub(crate) const fn min_index(self) -> u32 {
        match self {
            KeyKind::Mr => MIN_MR_INDEX,
            KeyKind::Mw => MIN_MW_INDEX,
        }
    }

    /// Largest index of this kind.
    pub(crate) const fn max_index(self) -> u32 {
        match self {
            KeyKind::Mr => MAX_MR_INDEX,
            KeyKind::Mw => MAX_MW_INDEX,
        }
    }

    /// True if `index` lies in this kind's range.
    pub(crate) const fn contains_index(self, index: u32) -> bool {
        self.min_index() <= index && index <= self.max_index()
    }

    /// The kind whose range holds `index`, if any (0 and indices above
    /// [`MAX_MW_INDEX`] belong to neither).
    pub(crate) const fn of_index(index: u32) -> Option<KeyKind> {
        if KeyKind::Mr.contains_index(index) {
            Some(KeyKind::Mr)
        } else if KeyKind::Mw.contains_index(index) {
            Some(KeyKind::Mw)
        } else {
            None
        }
    }

    /// The kind an incoming R_Key refers to (rxe's `rkey_is_mw` decides
    /// between the two pools this way).
    pub(crate) const fn of_key(key: Key) -> Option<KeyKind> {
        KeyKind::of_index(key.index())
    }

    /// Checks that `raw`, a key supplied by a user or peer, names an index
    /// of this kind, so the lookup goes to the right pool.
    pub(crate) const fn parse(self, raw: u32) -> Result<Key, KeyError> {
        let key = Key::from_raw(raw);
        if self.contains_index(key.index()) {
            Ok(key)
        } else {
            Err(KeyError::WrongRange {
                kind: self,
                index: key.index(),
            })
        }
    }

    /// The key of a newly allocated object of this kind at `index`.
    ///
    /// `variant` should be [`fresh_variant`] of the variant the index's
    /// previous key had.
    pub(crate) const fn new_key(self, index: u32, variant: u8) -> Result<Key, KeyError> {
        if !self.contains_index(index) {
            return Err(KeyError::WrongRange { kind: self, index });
        }
        match Key::new(index, variant) {
            Some(key) => Ok(key),
            // Unreachable: both ranges are within 24 bits.
            None => Err(KeyError::WrongRange { kind: self, index }),
        }
    }
}

/// The variant byte for a new object at an index whose previous key had
/// variant `previous`, from `random`, a uniformly random `u32`: uniformly
/// distributed over the 255 other values (up to a bias of 2^-32), never
/// `previous`. An index never used before is given its stored initial
/// value as `previous`.
pub(crate) const fn fresh_variant(previous: u8, random: u32) -> u8 {
    // 0..=254, then skip `previous`: a bijection onto the other 255 bytes.
    let r = (random % 255) as u8;
    if r >= previous {
        r + 1
    } else {
        r
    }
}

/// Validates the key of a fast-registration (`IB_WR_REG_MR`) work request
/// against the MR's current key: only the variant may change (C rxe's
/// `rxe_reg_fast_mr`). Returns the key the MR takes as both L_Key and
/// R_Key.
pub(crate) const fn fast_reg_key(current: Key, requested: u32) -> Result<Key, KeyError> {
    let requested = Key::from_raw(requested);
    if current.same_index(requested) {
        Ok(requested)
    } else {
        Err(KeyError::IndexChanged { current, requested })
    }
}

/// The R_Key a memory window takes when bound: its own index with the
/// variant byte of the work request's `rkey` (C rxe's `rxe_do_bind_mw`
/// ignores the other bits, as IBA lets the consumer choose only the key
/// byte).
pub(crate) const fn bind_mw_key(current: Key, wr_rkey: u32) -> Key {
    current.with_variant(Key::from_raw(wr_rkey).variant())
}
