// SPDX-License-Identifier: GPL-2.0

//! Implicit on-demand paging: a region over the whole address space of the
//! process that registered it (address 0, length `u64::MAX`, with
//! `IB_ACCESS_ON_DEMAND`), an offset in it being an address of the
//! process.
//!
//! The core gives such a region a root umem with no range
//! ([`ImplicitRoot`]), from which the driver makes children, each an ODP
//! umem over one aligned 1 GiB of the address space
//! ([`CHILD_SIZE`](crate::logic::odp::CHILD_SIZE), as mlx5's) with its own
//! MMU interval notifier and its own mirror, exactly as an explicit ODP
//! region's (`ffi::ib::odp`): its invalidations, faults and release follow
//! the same rules. A child is made by the first fault that reaches its
//! range, in process context (the QP's fault work, or `advise_mr`), and
//! kept until `dereg_mr`.
//!
//! The data path finds a child's mirror in a table by index
//! ([`ImplicitOdp::mirror`], any context); a child not made yet is an
//! `EAGAIN`, as a page not mapped is, and its fault makes it. An access
//! across a 1 GiB boundary is done part by part, each under its own
//! child's lock ([`child_parts`]).

use crate::{
    dev::irq_table::IrqTable,
    ffi::ib::{ImplicitRoot, OdpFault, OdpMirror, UmemOdp},
    logic::odp::{child_parts, child_start, pages_of, CHILD_SIZE},
};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{
    new_mutex,
    page::{PAGE_SHIFT, PAGE_SIZE},
    prelude::*,
    rbtree::{RBTree, RBTreeNode},
    sync::{Arc, Mutex},
    xarray::AllocKind,
};

/// Pages of a child's table (entries of its mirror).
pub(crate) const CHILD_PAGES: usize = (CHILD_SIZE >> PAGE_SHIFT) as usize;

/// The umems of an implicit region: the root and the children made so far,
/// by index. Dropped (released) in process context, at `dereg_mr`.
struct Umems {
    /// The children. Declared before the root, and so dropped before it:
    /// each is released (its mirror cleared, its notifier removed) first.
    children: RBTree<u64, UmemOdp>,
    /// The root, which makes the children.
    root: ImplicitRoot,
}

/// The memory of an implicit ODP region.
pub(crate) struct ImplicitOdp {
    /// The children's mirrors by index, for the data path (any context).
    /// Every child made is entered here, under `umems`' mutex, right after
    /// it is made; `dereg_mr` takes them out.
    mirrors: Pin<KBox<IrqTable<OdpMirror>>>,
    /// The root and the children: faults hold the mutex throughout, one at
    /// a time per region (as an explicit region's), so that a child is
    /// made once, and `dereg_mr` waits for a fault in progress. `None`
    /// once deregistered.
    umems: Pin<KBox<Mutex<Option<Umems>>>>,
    /// `dereg_mr` has begun: every access fails with `EINVAL`, none asks
    /// for a fault. Set before the children are taken out and released.
    retired: AtomicBool,
    /// The registration may be written (faults for writing are refused
    /// otherwise).
    writable: bool,
}

impl ImplicitOdp {
    /// The memory of a region with root `root`, no child yet.
    pub(crate) fn new(root: ImplicitRoot) -> Result<Self> {
        let writable = root.writable();
        Ok(Self {
            mirrors: KBox::pin_init(IrqTable::new(AllocKind::Alloc), GFP_KERNEL)?,
            umems: KBox::pin_init(
                new_mutex!(Some(Umems {
                    children: RBTree::new(),
                    root,
                })),
                GFP_KERNEL,
            )?,
            retired: AtomicBool::new(false),
            writable,
        })
    }

    /// Whether the registration may be written.
    pub(crate) fn writable(&self) -> bool {
        self.writable
    }

    /// The mirror of child `index`, for an access (any context): `EAGAIN`
    /// if the child was not made yet (its fault makes it), `EINVAL` once
    /// the region is deregistered. A mirror found may have been released
    /// since (the caller checks under its lock, as for an explicit
    /// region's).
    pub(crate) fn mirror(&self, index: u64) -> Result<Arc<OdpMirror>> {
        if self.retired.load(Ordering::Acquire) {
            return Err(EINVAL);
        }
        let found = usize::try_from(index)
            .ok()
            .and_then(|i| self.mirrors.get(i));
        match found {
            Some(mirror) => Ok(mirror),
            // `dereg_mr` may have taken the mirror out since the check
            // above: it marks the region before, and the table's lock
            // orders the two.
            None if self.retired.load(Ordering::Acquire) => Err(EINVAL),
            None => Err(EAGAIN),
        }
    }

    /// Maps the pages of the addresses `[addr, addr + len)` as `how` asks,
    /// making the children they lie in where there are none yet: child by
    /// child, in order, stopping at the first that fails. Process context:
    /// sleeps. `EINVAL` once deregistered (or for an access that wraps),
    /// `EACCES` for a write fault of a region registered without write
    /// access, `EFAULT` where the process has no memory (no child is made for a
    /// range without any), `ENOMEM` where a child's tables cannot be had,
    /// otherwise as [`UmemOdp::map`].
    pub(crate) fn fault_in(&self, addr: u64, len: u64, how: OdpFault) -> Result {
        let parts = child_parts(addr, len).ok_or(EINVAL)?;
        // As `UmemOdp::map` would answer, before a child is made for it.
        if how == OdpFault::Write && !self.writable {
            return Err(EACCES);
        }
        let mut held = self.umems.lock();
        let umems = Option::as_mut(&mut *held).ok_or(EINVAL)?;
        for part in parts {
            let child = self.child(umems, part.index, part.offset, part.len)?;
            let pages = pages_of(
                child.first_offset() as u64,
                PAGE_SHIFT as u32,
                child.page_count(),
                part.offset,
                part.len,
            )
            .ok_or(EINVAL)?;
            child.map(pages, how)?;
        }
        Ok(())
    }

    /// Child `index`, made if there is none yet and the process has memory
    /// at `[offset, offset + len)` of it (else `EFAULT`). Under the mutex
    /// of `umems`.
    fn child<'a>(
        &self,
        umems: &'a mut Umems,
        index: u64,
        offset: u64,
        len: u64,
    ) -> Result<&'a mut UmemOdp> {
        if umems.children.get(&index).is_none() {
            let node = self.make_child(&umems.root, index, offset, len)?;
            // Never replaces a child: there was none (above).
            drop(umems.children.insert(node));
        }
        umems.children.get_mut(&index).ok_or(EINVAL)
    }

    /// A new child `index`, entered in the mirrors' table, in a tree node
    /// for the caller to insert (under the mutex of `umems`, which the
    /// caller holds: nothing can enter another child `index` meanwhile).
    fn make_child(
        &self,
        root: &ImplicitRoot,
        index: u64,
        offset: u64,
        len: u64,
    ) -> Result<RBTreeNode<u64, UmemOdp>> {
        let start = child_start(index).ok_or(EFAULT)?;
        let at = start.checked_add(offset).ok_or(EFAULT)?;
        let end = at.checked_add(len).ok_or(EFAULT)?;
        // No child (2 MiB of tables, the core's and the mirror) for a
        // range where the process has nothing: a peer may name any address.
        if !root.has_memory(at, end) {
            return Err(EFAULT);
        }
        let umem = root.child(start, CHILD_SIZE)?;
        // The data path lays every child out alike (`CHILD_PAGES` pages
        // from the child's first address).
        if umem.first_offset() != 0
            || umem.page_count() != CHILD_PAGES
            || u64::try_from(umem.len()) != Ok(CHILD_SIZE)
        {
            return Err(EINVAL);
        }
        let mirror = umem.mirror().clone();
        let node = RBTreeNode::new(index, umem, GFP_KERNEL)?;
        let slot = usize::try_from(index).map_err(|_| EFAULT)?;
        // One child per index: the mutex makes it so; the table checks it
        // again. On failure the new child is released with the node.
        self.mirrors.insert_new(slot, mirror)?;
        Ok(node)
    }

    /// `dereg_mr`: waits for a fault in progress, marks the region (every
    /// access fails from then on, none asks for a fault), takes the
    /// children's mirrors out of the table and releases the children (each
    /// clearing its mirror under its lock, which waits for an access in
    /// progress, and removing its notifier), then the root. Process
    /// context.
    pub(crate) fn retire(&self) {
        let mut held = self.umems.lock();
        self.retired.store(true, Ordering::Release);
        let umems = held.take();
        drop(held);
        let Some(umems) = umems else {
            return;
        };
        for &index in umems.children.keys() {
            if let Ok(slot) = usize::try_from(index) {
                drop(self.mirrors.remove(slot));
            }
        }
        drop(umems);
    }
}

/// A child's pages are kernel pages: the data path maps them with
/// `PAGE_SIZE` pieces.
const _: () = assert!(CHILD_SIZE % PAGE_SIZE as u64 == 0);
