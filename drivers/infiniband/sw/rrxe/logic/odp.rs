// SPDX-License-Identifier: GPL-2.0

//! On-demand paging: the arithmetic between a region's bytes and the pages
//! of the process that back it, and the rules of the page faults the data
//! path asks for.
//!
//! An ODP region pins nothing. The kernel's ODP machinery tells the driver
//! which pages of the process back it (when a fault maps them in) and when
//! they stop doing so (an MMU-notifier invalidation: `munmap`,
//! `madvise(MADV_DONTNEED)`, migration, copy-on-write after `fork`). The
//! driver mirrors the mapping in a table of pages, one entry per page from
//! the page holding the region's first byte to the page holding its last;
//! [`pages_of`] says which entries an access concerns (the mirror itself,
//! and which entries an invalidation clears, are `ffi::ib::odp`'s).
//!
//! The data path runs where it may not sleep, so it never faults: an
//! access that finds a page missing asks for a fault on its QP
//! ([`FaultSlot`]), which process context resolves, and waits for it (the
//! datagram is held, the requester paused). A fault that fails is
//! remembered until the access that asked for it comes back, which then
//! fails cleanly instead of asking again.

use core::ops::Range;

/// Bytes a fault maps at least, from the start of the access that asked
/// for it (within the region): a message's later packets then find their
/// pages, rather than one fault per packet. A fault of the read-ahead that
/// fails (it reaches an unmapped page the access does not) is retried on
/// the access alone.
pub(crate) const FAULT_AHEAD: u64 = 256 * 1024;

/// Whether a registration of `length` bytes at `start` asks for implicit
/// on-demand paging: the whole address space of the process (IBA's
/// "implicit ODP", registered with address 0 and length `u64::MAX`).
pub(crate) const fn is_implicit(start: u64, length: u64) -> bool {
    start == 0 && length == u64::MAX
}

/// The bits of an address below its child's range in an implicit region:
/// such a region maps the address space through children, each an ODP
/// umem of its own over one aligned 1 GiB (as mlx5's), created when an
/// access first reaches that range.
pub(crate) const CHILD_SHIFT: u32 = 30;

/// Bytes of the address space one child of an implicit region covers.
pub(crate) const CHILD_SIZE: u64 = 1 << CHILD_SHIFT;

/// The part of an access to an implicit region that lies in one child.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ChildPart {
    /// The child's index: its first address is `index << CHILD_SHIFT`.
    pub(crate) index: u64,
    /// Where the part starts in the child.
    pub(crate) offset: u64,
    /// The part's length (at least 1).
    pub(crate) len: u64,
    /// Where the part starts in the access: the bytes of the access before
    /// it.
    pub(crate) done: u64,
}

/// The parts of an access, child by child; see [`child_parts`].
#[derive(Clone, Debug)]
pub(crate) struct ChildParts {
    /// The address of the next byte.
    addr: u64,
    /// Bytes not yet handed out.
    left: u64,
    /// Bytes handed out.
    done: u64,
}

impl Iterator for ChildParts {
    type Item = ChildPart;

    fn next(&mut self) -> Option<ChildPart> {
        if self.left == 0 {
            return None;
        }
        let offset = self.addr & (CHILD_SIZE - 1);
        let len = self.left.min(CHILD_SIZE - offset);
        let part = ChildPart {
            index: self.addr >> CHILD_SHIFT,
            offset,
            len,
            done: self.done,
        };
        // Cannot wrap: [`child_parts`] checked that the access does not.
        self.addr = self.addr.checked_add(len)?;
        self.left -= len;
        self.done += len;
        Some(part)
    }
}

/// The parts of the access `[addr, addr + len)` of an implicit region in
/// each child it meets, in order: an access across a 1 GiB boundary is two
/// parts, each copied (or faulted in) under its own child's table. `None`
/// if the access wraps around the address space; no parts if `len == 0`.
pub(crate) fn child_parts(addr: u64, len: u64) -> Option<ChildParts> {
    addr.checked_add(len)?;
    Some(ChildParts {
        addr,
        left: len,
        done: 0,
    })
}

/// The first address of child `index` of an implicit region; `None` past
/// the address space.
pub(crate) fn child_start(index: u64) -> Option<u64> {
    index.checked_mul(CHILD_SIZE)
}

/// The entries of the page table of a region that hold the bytes
/// `[offset, offset + len)` of the region, its first byte lying
/// `first_offset` bytes into page 0 of the table, which has `pages`
/// entries of `1 << page_shift` bytes. `None` if the bytes are not all in
/// the table (or the arithmetic overflows); an empty range for `len == 0`.
pub(crate) fn pages_of(
    first_offset: u64,
    page_shift: u32,
    pages: usize,
    offset: u64,
    len: u64,
) -> Option<Range<usize>> {
    if page_shift >= 64 {
        return None;
    }
    let start = first_offset.checked_add(offset)?;
    let end = start.checked_add(len)?;
    let first = usize::try_from(start >> page_shift).ok()?;
    if len == 0 {
        return (first <= pages).then_some(first..first);
    }
    let size = 1u64 << page_shift;
    let last = usize::try_from(end.checked_add(size - 1)? >> page_shift).ok()?;
    (last <= pages).then_some(first..last)
}

/// The bytes a fault for the access `[offset, offset + len)` of a region
/// of `length` bytes maps: the access and what follows it, up to
/// [`FAULT_AHEAD`] bytes from its start, never past the region's end. The
/// access itself is assumed to lie in the region (the data path checked it
/// before it found a page missing); the result is clamped to the region
/// all the same. Returns `(offset, len)`.
pub(crate) fn fault_span(length: u64, offset: u64, len: u64) -> (u64, u64) {
    let offset = offset.min(length);
    let want = len.max(FAULT_AHEAD);
    (offset, want.min(length - offset))
}

/// Whether one fault request answers for another: a fault that failed for
/// a request fails every access the request covers.
pub(crate) trait Covers {
    /// Whether `self` concerns the same region as `other` and every byte
    /// `other` needs, with at least its rights (write covers read).
    fn covers(&self, other: &Self) -> bool;
}

/// What an access that found pages missing does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Missed {
    /// Waits for a fault; `queue`: this access asked for it, and the fault
    /// work is to be queued (else one is asked for or running already, and
    /// its end lets the access try again).
    Wait {
        /// The fault work is to be queued.
        queue: bool,
    },
    /// A fault for these pages failed: the access fails (a remote access
    /// error, a local protection error), as an access to memory the
    /// process does not have.
    Failed,
}

/// One side of a QP's page faults (the receive side holds its datagram
/// while it waits, the send side its requester and READ responses): at
/// most one fault asked for or running at a time, and the failure of the
/// last one until the access it was for comes back.
///
/// A side only ever waits for one fault: the receive side holds every
/// later datagram behind the one waiting, and the send side, once it
/// runs again after the fault, asks for the next one it finds missing.
#[derive(Debug)]
pub(crate) struct FaultSlot<R> {
    /// The fault asked for, not taken by the fault work yet.
    wanted: Option<R>,
    /// The fault work took a request, in the slot's generation held here,
    /// and has not finished it.
    busy: Option<u32>,
    /// The last fault failed: the first access it covers fails.
    failed: Option<R>,
    /// Bumped by every [`FaultSlot::clear`]: a fault that finishes in
    /// another generation than the one it started in was asked for before
    /// the QP was reset or flushed, and its failure concerns no access of
    /// the QP now.
    generation: u32,
}

impl<R: Covers> FaultSlot<R> {
    /// No fault asked for, none failed.
    pub(crate) const fn new() -> Self {
        Self {
            wanted: None,
            busy: None,
            failed: None,
            generation: 0,
        }
    }

    /// An access found pages missing; `req` is the fault it needs.
    pub(crate) fn missed(&mut self, req: R) -> Missed {
        if self.failed.as_ref().is_some_and(|f| f.covers(&req)) {
            // Once: the next access asks again (the process may have
            // mapped the memory meanwhile).
            self.failed = None;
            return Missed::Failed;
        }
        if self.wanted.is_some() || self.busy.is_some() {
            return Missed::Wait { queue: false };
        }
        self.failed = None;
        self.wanted = Some(req);
        Missed::Wait { queue: true }
    }

    /// The fault work takes the fault asked for, if any.
    pub(crate) fn start(&mut self) -> Option<R> {
        let req = self.wanted.take()?;
        self.busy = Some(self.generation);
        Some(req)
    }

    /// The fault work finished `req`, the request it took last: `ok`, or
    /// failed (remembered for the access that asked, unless the slot was
    /// cleared since it was taken: the access went with the reset).
    /// Returns what it no longer keeps, for the caller to drop where it
    /// may (outside its locks).
    pub(crate) fn finish(&mut self, req: R, ok: bool) -> Option<R> {
        let current = self.busy.take() == Some(self.generation);
        if ok || !current {
            Some(req)
        } else {
            self.failed.replace(req)
        }
    }

    /// Whether no fault is asked for or running.
    pub(crate) fn is_idle(&self) -> bool {
        self.wanted.is_none() && self.busy.is_none()
    }

    /// Forgets what was asked and what failed (the QP was reset or
    /// flushed). A fault running keeps the slot busy until it finishes
    /// (the accesses of the QP's new life wait for it, then ask again),
    /// but its failure is not remembered.
    pub(crate) fn clear(&mut self) {
        self.wanted = None;
        self.failed = None;
        self.generation = self.generation.wrapping_add(1);
    }
}

impl<R: Covers> Default for FaultSlot<R> {
    fn default() -> Self {
        Self::new()
    }
}
