// SPDX-License-Identifier: GPL-2.0

//! On-demand paging, the memory side: the page faults the data path asks
//! for ([`PageFault`]), and `ibv_advise_mr`'s prefetch ([`advise`]).
//!
//! The data path never faults: it runs in softirq context, or with bottom
//! halves off, and faulting a page in sleeps (`hmm_range_fault` takes the
//! process's `mmap_lock` and may allocate, read from swap, or wait for a
//! migration). An access to an ODP region that finds a page not mapped
//! fails with `EAGAIN`; the caller turns it into a [`PageFault`], which
//! its QP resolves in process context
//! ([`PageFault::resolve`]) before the access is tried again.

use crate::{
    ffi::ib::{AdviseMrFlags, KernelSge, MrAdvice, OdpFault},
    logic::odp::Covers,
    mem::mr::{MrInner, MrTable},
};
use kernel::{prelude::*, sync::Arc};

/// Pages of an ODP region that an access found not mapped (or not for
/// writing): what it needs faulted in before it can go on.
#[derive(Clone)]
pub(crate) struct PageFault {
    /// The region (a reference: it may be deregistered meanwhile, and the
    /// fault then fails).
    mr: Arc<MrInner>,
    /// The access's offset in the region.
    offset: u64,
    /// The access's length in bytes.
    len: u64,
    /// The access writes.
    write: bool,
}

impl PageFault {
    /// The fault `[offset, offset + len)` of `mr` needs.
    pub(crate) fn new(mr: &Arc<MrInner>, offset: u64, len: u64, write: bool) -> Self {
        Self {
            mr: mr.clone(),
            offset,
            len,
            write,
        }
    }

    /// `Some(fault)` if `e`, the error of an access to `[offset, offset +
    /// len)` of `mr`, says pages of an ODP region were missing.
    pub(crate) fn of(
        e: Error,
        mr: &Arc<MrInner>,
        offset: u64,
        len: u64,
        write: bool,
    ) -> Option<Self> {
        (e == EAGAIN).then(|| Self::new(mr, offset, len, write))
    }

    /// Faults the pages in (and some that follow): process context, sleeps.
    /// Returns whether they are mapped; `false` if the process has no
    /// memory there (or not writable, for a write), or the region was
    /// deregistered.
    pub(crate) fn resolve(&self) -> bool {
        self.mr
            .fault_ahead(self.offset, self.len, self.write)
            .is_ok()
    }
}

/// Why an access to a region did not happen.
pub(crate) enum Refusal<E> {
    /// Pages of a region paged on demand are not mapped: the access is to
    /// be tried again once this fault is resolved.
    Missing(PageFault),
    /// Refused, with `E`.
    Denied(E),
}

impl<E> Refusal<E> {
    /// The refusal of an access to `[offset, offset + len)` of `mr` that
    /// failed with `e`: missing pages, or `denied`.
    pub(crate) fn of(
        e: Error,
        mr: &Arc<MrInner>,
        offset: u64,
        len: u64,
        write: bool,
        denied: E,
    ) -> Self {
        PageFault::of(e, mr, offset, len, write).map_or(Self::Denied(denied), Self::Missing)
    }
}

impl Covers for PageFault {
    fn covers(&self, other: &Self) -> bool {
        let end = |f: &Self| f.offset.saturating_add(f.len);
        Arc::ptr_eq(&self.mr, &other.mr)
            && self.offset <= other.offset
            && end(other) <= end(self)
            && (self.write || !other.write)
    }
}

/// `ibv_advise_mr` on the regions of PD `pd` that `sges` name by L_Key,
/// address and length: prefetch (map the pages for reading, for writing,
/// or those present without faulting), as rxe. An SGE's address is in
/// the region's iova space, as in a work request (and as mlx5 reads it;
/// rxe reads it as the process's address, the same number unless the
/// region was registered at another iova: see design.rst). With
/// [`AdviseMrFlags::FLUSH`] every error is reported; without, the advice
/// is best effort: only the SGEs are checked (`EINVAL` for a key that
/// names no ODP region of the PD, `EFAULT` for a range outside the region,
/// as rxe and mlx5 answer), faults that fail are not reported. Process
/// context.
///
/// Both are done before returning. (rxe does the second in a work item;
/// here no work item can outlive the device or the module: nothing is left
/// to wait for at `dereg_mr` or unload, and a process that advises waits
/// for its own faults, which it asked for.)
pub(crate) fn advise(
    mrs: &MrTable,
    pd: usize,
    advice: MrAdvice,
    flags: AdviseMrFlags,
    sges: &[KernelSge],
) -> Result {
    let how = match advice {
        MrAdvice::PREFETCH => OdpFault::Read,
        MrAdvice::PREFETCH_WRITE => OdpFault::Write,
        MrAdvice::PREFETCH_NO_FAULT => OdpFault::Snapshot,
        _ => return Err(EOPNOTSUPP),
    };
    let report = flags.contains(AdviseMrFlags::FLUSH);
    let mut regions = KVec::with_capacity(sges.len(), GFP_KERNEL)?;
    for sge in sges {
        let len = u64::from(sge.length);
        let mr = mrs
            .get(sge.lkey)
            .filter(|mr| mr.in_pd(pd) && mr.is_odp())
            .ok_or(EINVAL)?;
        // A stale key (EINVAL) or a range outside the region (EFAULT),
        // in its iova space.
        let at =
            mr.check(sge.lkey, sge.addr, len, 0)
                .map_err(|e| if e == EACCES { EFAULT } else { e })?;
        // As rxe: a write prefetch of a region registered read-only.
        if how == OdpFault::Write && !mr.is_writable() {
            return Err(EPERM);
        }
        regions.push((mr, at, len), GFP_KERNEL)?;
    }
    for (mr, at, len) in &regions {
        match mr.fault_in(*at, *len, how) {
            Err(e) if report => return Err(e),
            _ => {}
        }
    }
    Ok(())
}
