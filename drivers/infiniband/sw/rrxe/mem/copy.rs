// SPDX-License-Identifier: GPL-2.0

//! Moving message bytes between packets and the local memory a work
//! request's SGEs name. Every SGE is resolved through the MR table (key,
//! PD, bounds and access), chunk by chunk, so nothing is touched outside a
//! region the QP's PD owns.

use crate::{
    ffi::rt::Sink,
    logic::{mr::LOCAL_WRITE, wc::WcError, wqe::SgeList},
    mem::{
        mr::{MrInner, MrTable},
        odp::PageFault,
    },
};
use kernel::{prelude::*, sync::Arc};

/// Why bytes could not be moved.
#[derive(Clone)]
pub(crate) enum MemError {
    /// The SGEs hold fewer bytes than the message needs.
    Length,
    /// An SGE names memory the QP may not use that way.
    Protection,
    /// Pages of an ODP region are not mapped now: the copy is to be tried
    /// again once the fault is resolved (part of it may have been done).
    Missing(PageFault),
}

/// The completion status of a work request whose bytes could not be moved
/// (a caller that cannot wait for a fault fails it as a protection error).
impl From<MemError> for WcError {
    fn from(e: MemError) -> Self {
        match e {
            MemError::Length => Self::LocLen,
            MemError::Protection | MemError::Missing(_) => Self::LocProt,
        }
    }
}

/// The error of a copy of `len` bytes at `at` of `mr` that failed with
/// `e`: missing pages, or a protection error.
fn refused(e: Error, mr: &Arc<MrInner>, at: u64, len: u64, write: bool) -> MemError {
    PageFault::of(e, mr, at, len, write).map_or(MemError::Protection, MemError::Missing)
}

/// Calls `f(lkey, va, range)` for each piece of the SGE list covering the
/// `len` bytes from byte `offset` of the list, `range` being the part of
/// the caller's buffer that piece corresponds to.
fn for_each_piece(
    sges: &SgeList<'_>,
    offset: u32,
    len: usize,
    mut f: impl FnMut(u32, u64, core::ops::Range<usize>) -> Result<(), MemError>,
) -> Result<(), MemError> {
    let mut skip = u64::from(offset);
    let mut done = 0usize;
    for sge in sges.iter() {
        if done == len {
            return Ok(());
        }
        let sge_len = u64::from(sge.length);
        if skip >= sge_len {
            skip -= sge_len;
            continue;
        }
        let avail = sge_len - skip;
        let n = avail.min((len - done) as u64) as usize;
        let va = sge.addr.checked_add(skip).ok_or(MemError::Protection)?;
        f(sge.lkey, va, done..done + n)?;
        done += n;
        skip = 0;
    }
    if done == len {
        Ok(())
    } else {
        Err(MemError::Length)
    }
}

/// Copies `dst.len()` bytes starting at byte `offset` of the memory `sges`
/// describe into what is left of `dst` (local reads need no access
/// right), in order.
pub(crate) fn gather(
    mrs: &MrTable,
    pd: usize,
    sges: &SgeList<'_>,
    offset: u32,
    dst: &mut Sink<'_>,
) -> Result<(), MemError> {
    let len = dst.remaining();
    for_each_piece(sges, offset, len, |lkey, va, range| {
        let n = range.len() as u64;
        let (mr, at) = mrs
            .lookup(lkey, pd, va, n, 0)
            .map_err(|_| MemError::Protection)?;
        mr.read_into(at, range.len(), dst)
            .map_err(|e| refused(e, &mr, at, n, false))
    })
}

/// Copies `src` to byte `offset` of the memory `sges` describe, which must
/// grant local write.
pub(crate) fn scatter(
    mrs: &MrTable,
    pd: usize,
    sges: &SgeList<'_>,
    offset: u32,
    src: &[u8],
) -> Result<(), MemError> {
    for_each_piece(sges, offset, src.len(), |lkey, va, range| {
        let n = range.len() as u64;
        let (mr, at) = mrs
            .lookup(lkey, pd, va, n, LOCAL_WRITE)
            .map_err(|_| MemError::Protection)?;
        let chunk = src.get(range).ok_or(MemError::Length)?;
        mr.write_at(at, chunk)
            .map_err(|e| refused(e, &mr, at, n, true))
    })
}
