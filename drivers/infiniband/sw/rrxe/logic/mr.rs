// SPDX-License-Identifier: GPL-2.0

//! Memory region access rules: which access flags a registration may ask
//! for, and the bounds and permission check every use of an MR goes
//! through (from a local SGE or from a remote request's R_Key, VA and
//! length), so the data path never touches memory outside a region or in a
//! way the region does not allow.
//!
//! Then where a region's bytes are: a region lies on a list of equal-sized
//! pages (the pinned pages of a user MR, the page list of a fast MR), and
//! [`PageLayout`] turns an offset in the region into a page of that list
//! and an offset in the page, checking every step against the list's end.

/// `IB_ACCESS_LOCAL_WRITE`.
pub(crate) const LOCAL_WRITE: u32 = 1 << 0;
/// `IB_ACCESS_REMOTE_WRITE`.
pub(crate) const REMOTE_WRITE: u32 = 1 << 1;
/// `IB_ACCESS_REMOTE_READ`.
pub(crate) const REMOTE_READ: u32 = 1 << 2;
/// `IB_ACCESS_REMOTE_ATOMIC`.
pub(crate) const REMOTE_ATOMIC: u32 = 1 << 3;
/// `IB_ACCESS_MW_BIND`.
pub(crate) const MW_BIND: u32 = 1 << 4;
/// `IB_ACCESS_ON_DEMAND`.
pub(crate) const ON_DEMAND: u32 = 1 << 6;
/// `IB_ACCESS_FLUSH_GLOBAL`.
pub(crate) const FLUSH_GLOBAL: u32 = 1 << 8;
/// `IB_ACCESS_FLUSH_PERSISTENT`.
pub(crate) const FLUSH_PERSISTENT: u32 = 1 << 9;
/// `IB_ACCESS_OPTIONAL`: hints a driver may ignore (bits 20..=29).
pub(crate) const OPTIONAL: u32 = ((1 << 30) - 1) & !((1 << 20) - 1);
/// Any remote access.
pub(crate) const REMOTE: u32 = REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;

/// The flags rxe accepts for a memory registration but on-demand paging,
/// which only a process's registration may ask for
/// ([`SUPPORTED_USER_MR`]): kernel memory (a DMA MR, a fast MR's page
/// list) is never paged out.
pub(crate) const SUPPORTED_MR: u32 =
    REMOTE | LOCAL_WRITE | MW_BIND | FLUSH_GLOBAL | FLUSH_PERSISTENT | OPTIONAL;

/// The flags rxe accepts for the registration of a process's memory: those
/// of [`SUPPORTED_MR`] and on-demand paging. (Not `IB_ACCESS_HUGETLB`, as
/// rxe: huge pages are mirrored page by page like any other.)
pub(crate) const SUPPORTED_USER_MR: u32 = SUPPORTED_MR | ON_DEMAND;

/// Why an MR cannot be registered or used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MrError {
    /// Access flags the driver does not implement (`EOPNOTSUPP`).
    Unsupported(u32),
    /// Remote write or atomic access without local write, which the IBA
    /// forbids (`EINVAL`).
    RemoteWriteWithoutLocalWrite,
    /// The range is outside the region (or wraps around).
    OutOfBounds,
    /// The region does not grant the access asked for.
    NotPermitted(u32),
    /// A page size that is not a power of two, or a first-page offset not
    /// inside the first page.
    BadPageSize,
    /// An 8-byte atomic target that is not naturally aligned.
    Misaligned,
}

/// Checks the access flags of a registration of kernel memory.
pub(crate) const fn check_reg_access(access: u32) -> Result<(), MrError> {
    check_access(access, SUPPORTED_MR)
}

/// Checks the access flags of a registration of a process's memory
/// (`reg_user_mr`), which may ask for on-demand paging.
pub(crate) const fn check_user_reg_access(access: u32) -> Result<(), MrError> {
    check_access(access, SUPPORTED_USER_MR)
}

/// Checks `access` against the flags a kind of registration `supported`.
const fn check_access(access: u32, supported: u32) -> Result<(), MrError> {
    let unsupported = access & !supported;
    if unsupported != 0 {
        return Err(MrError::Unsupported(unsupported));
    }
    if access & (REMOTE_WRITE | REMOTE_ATOMIC) != 0 && access & LOCAL_WRITE == 0 {
        return Err(MrError::RemoteWriteWithoutLocalWrite);
    }
    Ok(())
}

/// The address range and access rights of a registered region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MrRange {
    /// First I/O virtual address of the region.
    pub(crate) iova: u64,
    /// Length in bytes; `u64::MAX` with `iova` 0 covers all of memory (the
    /// DMA MR of kernel consumers).
    pub(crate) length: u64,
    /// `IB_ACCESS_*` flags granted.
    pub(crate) access: u32,
}

impl MrRange {
    /// The offset of `[va, va + len)` inside the region, if the region
    /// contains all of it and grants every flag in `need` (local read needs
    /// no flag). A zero-length access is allowed anywhere inside or at the
    /// end of the region.
    pub(crate) const fn check(&self, va: u64, len: u64, need: u32) -> Result<u64, MrError> {
        let missing = need & !self.access;
        if missing != 0 {
            return Err(MrError::NotPermitted(missing));
        }
        let Some(end) = va.checked_add(len) else {
            return Err(MrError::OutOfBounds);
        };
        let Some(mr_end) = self.iova.checked_add(self.length) else {
            // Only the whole-memory region may reach the top.
            if self.iova == 0 && self.length == u64::MAX {
                return Ok(va);
            }
            return Err(MrError::OutOfBounds);
        };
        if va < self.iova || end > mr_end {
            return Err(MrError::OutOfBounds);
        }
        Ok(va - self.iova)
    }
}

/// Size of the operand of an atomic operation.
pub(crate) const ATOMIC_SIZE: u64 = 8;

/// How a region's bytes lie on a list of `pages` pages of `1 << page_shift`
/// bytes: byte 0 of the region is `first_offset` bytes into page 0, and the
/// region goes on through the following pages of the list in order.
///
/// # Invariants
///
/// `page_shift < 64` and `first_offset < 1 << page_shift`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PageLayout {
    page_shift: u32,
    first_offset: u64,
    pages: usize,
}

/// A piece of an access that lies in one page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// Index of the page in the list.
    pub(crate) page: usize,
    /// Offset of the piece in that page.
    pub(crate) offset: usize,
    /// Length of the piece (at least 1).
    pub(crate) len: usize,
}

impl PageLayout {
    /// The layout of a list of `pages` pages of `page_size` bytes where the
    /// region starts `first_offset` bytes into the first page.
    pub(crate) const fn new(
        page_size: u64,
        first_offset: u64,
        pages: usize,
    ) -> Result<Self, MrError> {
        if !page_size.is_power_of_two() || first_offset >= page_size {
            return Err(MrError::BadPageSize);
        }
        // INVARIANT: a power of two below 2^64 has a shift below 64.
        Ok(Self {
            page_shift: page_size.trailing_zeros(),
            first_offset,
            pages,
        })
    }

    /// The layout of a fast-registration page list: the region starts at
    /// I/O virtual address `iova`, whose offset in its page is the offset in
    /// the first page of the list (as `ib_sg_to_pages` builds the list).
    pub(crate) const fn for_iova(page_size: u64, iova: u64, pages: usize) -> Result<Self, MrError> {
        if !page_size.is_power_of_two() {
            return Err(MrError::BadPageSize);
        }
        Self::new(page_size, iova & (page_size - 1), pages)
    }

    /// The page size.
    pub(crate) const fn page_size(&self) -> u64 {
        1 << self.page_shift
    }

    /// How many bytes of the region the list holds: from the region's start
    /// to the end of the last page (saturated at `u64::MAX`).
    pub(crate) const fn capacity(&self) -> u64 {
        let pages = self.pages as u64;
        let total = match pages.checked_mul(self.page_size()) {
            Some(t) => t,
            None => return u64::MAX,
        };
        // Zero pages hold nothing (and then the offset is irrelevant).
        total.saturating_sub(self.first_offset)
    }

    /// Checks that `[offset, offset + len)` lies within the list.
    pub(crate) const fn check(&self, offset: u64, len: u64) -> Result<(), MrError> {
        match offset.checked_add(len) {
            Some(end) if end <= self.capacity() => Ok(()),
            _ => Err(MrError::OutOfBounds),
        }
    }

    /// The pieces of `[offset, offset + len)`, page by page, if it lies
    /// within the list. A zero-length access has no pieces.
    pub(crate) fn chunks(&self, offset: u64, len: usize) -> Result<Chunks, MrError> {
        let Ok(len64) = u64::try_from(len) else {
            return Err(MrError::OutOfBounds);
        };
        self.check(offset, len64)?;
        // Cannot overflow: `offset < capacity <= pages * size - first_offset`.
        let Some(pos) = offset.checked_add(self.first_offset) else {
            return Err(MrError::OutOfBounds);
        };
        Ok(Chunks {
            page_shift: self.page_shift,
            pos,
            remaining: len,
        })
    }

    /// Where the 8-byte atomic operand at `offset` lies: it must be inside
    /// the list, in one page, at an offset in that page that is a multiple
    /// of 8 (so naturally aligned when the page is).
    pub(crate) fn atomic_word(&self, offset: u64) -> Result<Chunk, MrError> {
        self.check(offset, ATOMIC_SIZE)?;
        let pos = offset
            .checked_add(self.first_offset)
            .ok_or(MrError::OutOfBounds)?;
        let in_page = pos & (self.page_size() - 1);
        if in_page % ATOMIC_SIZE != 0 || in_page + ATOMIC_SIZE > self.page_size() {
            return Err(MrError::Misaligned);
        }
        Ok(Chunk {
            page: usize::try_from(pos >> self.page_shift).map_err(|_| MrError::OutOfBounds)?,
            offset: usize::try_from(in_page).map_err(|_| MrError::OutOfBounds)?,
            len: ATOMIC_SIZE as usize,
        })
    }
}

/// The pieces of an access, in order, each within one page; see
/// [`PageLayout::chunks`]. Their lengths add up to the access length.
#[derive(Clone, Debug)]
pub(crate) struct Chunks {
    page_shift: u32,
    /// Position of the next byte from the start of page 0.
    pos: u64,
    remaining: usize,
}

impl Iterator for Chunks {
    type Item = Chunk;

    fn next(&mut self) -> Option<Chunk> {
        if self.remaining == 0 {
            return None;
        }
        let size = 1u64 << self.page_shift;
        let in_page = self.pos & (size - 1);
        let room = size - in_page;
        let len = match usize::try_from(room) {
            Ok(room) => room.min(self.remaining),
            Err(_) => self.remaining,
        };
        let chunk = Chunk {
            page: usize::try_from(self.pos >> self.page_shift).ok()?,
            offset: usize::try_from(in_page).ok()?,
            len,
        };
        self.pos = self.pos.checked_add(len as u64)?;
        self.remaining -= len;
        Some(chunk)
    }
}

/// Checks a fast registration (`IB_WR_REG_MR`) of `[iova, iova + length)`
/// with `access` over a page list of `pages` pages of `page_size` bytes:
/// the flags must be valid for a registration and the list must hold the
/// whole range. Returns the region's new range.
pub(crate) const fn fast_reg_range(
    page_size: u64,
    pages: usize,
    iova: u64,
    length: u64,
    access: u32,
) -> Result<MrRange, MrError> {
    if let Err(e) = check_reg_access(access) {
        return Err(e);
    }
    // A region that wraps around could never be used.
    if iova.checked_add(length).is_none() {
        return Err(MrError::OutOfBounds);
    }
    let layout = match PageLayout::for_iova(page_size, iova, pages) {
        Ok(l) => l,
        Err(e) => return Err(e),
    };
    if let Err(e) = layout.check(0, length) {
        return Err(e);
    }
    Ok(MrRange {
        iova,
        length,
        access,
    })
}
