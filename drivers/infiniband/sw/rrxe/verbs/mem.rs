// SPDX-License-Identifier: GPL-2.0

//! The verbs of memory regions and memory windows: each enters or leaves
//! the device's MR or MW table here; keys, access and the pages are in
//! [`crate::mem`].

use super::device::RrxeDevice;
use crate::{
    ffi::ib::{self, KernelMemory, Mr, MrKeys, Mw, Pd, Udata},
    ffi::rt,
    mem::mr::{MrSpec, RrxeMr},
    mem::mw::RrxeMw,
    mem::odp,
};
use kernel::prelude::*;

// The verbs of MRs and MWs, which `RrxeDevice`'s `Operations` calls.
/// `Operations::get_dma_mr`: an MR over all of kernel memory.
pub(super) fn get_dma_mr(pd: &Pd<RrxeDevice>, access: u32) -> Result<(RrxeMr, MrKeys)> {
    let kmem = KernelMemory::for_pd::<RrxeDevice>(pd)?;
    let spec = MrSpec::dma(pd.as_raw() as usize, kmem, access)?;
    let inner = pd.device::<RrxeDevice>().shared.mrs.insert_spec(spec)?;
    let keys = inner.keys();
    Ok((RrxeMr { inner }, keys))
}

/// `Operations::reg_user_mr`: an MR over a process's pages, pinned, or paged
/// on demand (`IB_ACCESS_ON_DEMAND`).
pub(super) fn reg_user_mr(
    pd: &Pd<RrxeDevice>,
    start: u64,
    length: u64,
    iova: u64,
    access: u32,
    _udata: Option<&Udata>,
) -> Result<(RrxeMr, MrKeys)> {
    let dev = pd.device::<RrxeDevice>();
    let spec = MrSpec::user(dev, pd.as_raw() as usize, start, length, iova, access)?;
    let inner = dev.shared.mrs.insert_spec(spec)?;
    let keys = inner.keys();
    Ok((RrxeMr { inner }, keys))
}

/// `Operations::advise_mr`: prefetch of ranges of ODP regions of the PD.
/// `EOPNOTSUPP` without `CONFIG_INFINIBAND_ON_DEMAND_PAGING`, as rxe and
/// as the core answers for a device without the operation: no region can
/// be paged on demand then, and rdma-core's tests skip on that errno.
pub(super) fn advise_mr(
    pd: &Pd<RrxeDevice>,
    advice: ib::MrAdvice,
    flags: ib::AdviseMrFlags,
    sges: &[ib::KernelSge],
) -> Result {
    if !ib::odp_enabled() {
        return Err(EOPNOTSUPP);
    }
    let mrs = &pd.device::<RrxeDevice>().shared.mrs;
    odp::advise(mrs, pd.as_raw() as usize, advice, flags, sges)
}

/// `Operations::dereg_mr`: the MR out of the table; once no access to its
/// memory is in progress, its pages are released (unpinned, for a
/// process's MR; the notifier removed, for an ODP one) with the caller's
/// reference.
pub(super) fn dereg_mr(mr: &Mr<RrxeDevice>) -> Result {
    // Refused while memory windows are bound (as rxe); afterwards no
    // window can bind to it.
    mr.inner.start_dereg()?;
    mr.device::<RrxeDevice>().shared.mrs.remove(&mr.inner);
    // A fast MR and a process's MR are fenced by their lock (a process's
    // pages are unpinned there). The data path reaches memory through a
    // DMA MR without one, but only under RCU (see destroy_qp): after a
    // grace period no access is in progress.
    if !mr.inner.retire() {
        rt::synchronize_rcu();
    }
    Ok(())
}

/// `Operations::alloc_mr`: a fast-registration MR, mapped by a later
/// REG_MR.
pub(super) fn alloc_mr(
    pd: &Pd<RrxeDevice>,
    mr_type: ib::MrType,
    max_num_sg: u32,
) -> Result<(RrxeMr, MrKeys)> {
    let kmem = KernelMemory::for_pd::<RrxeDevice>(pd)?;
    let spec = MrSpec::fast(pd.as_raw() as usize, kmem, mr_type, max_num_sg)?;
    let inner = pd.device::<RrxeDevice>().shared.mrs.insert_spec(spec)?;
    let keys = inner.keys();
    Ok((RrxeMr { inner }, keys))
}

/// `Operations::map_mr_sg_start`: starts the page list of a
/// fast-registration MR.
pub(super) fn map_mr_sg_start(mr: &Mr<RrxeDevice>, page_size: u32) -> Result {
    mr.inner.start_pages(page_size)
}

/// `Operations::mr_set_page`: adds a page to the list.
pub(super) fn mr_set_page(mr: &Mr<RrxeDevice>, addr: u64) -> Result {
    mr.inner.add_page(addr)
}

/// `Operations::mr_mapped`: the list is complete: the MR's length. Its
/// address is taken when a `REG_MR` is posted (`RegWr::iova`): consumers
/// may change it in between.
pub(super) fn mr_mapped(mr: &Mr<RrxeDevice>, _iova: u64, length: u64) {
    mr.inner.set_mapping(length);
}

/// `Operations::rereg_user_mr`: the MR moved to another PD.
pub(super) fn rereg_user_mr(
    mr: &Mr<RrxeDevice>,
    flags: ib::MrReregFlags,
    _access: u32,
    new_pd: Option<&Pd<RrxeDevice>>,
) -> Result {
    // As rxe: only moving to another PD (new access rights or pages
    // would race with the data path's use of the region).
    if !flags.without(ib::MrReregFlags::PD).is_empty() {
        return Err(EOPNOTSUPP);
    }
    if let Some(pd) = new_pd {
        mr.inner.set_pd(pd.as_raw() as usize);
    }
    Ok(())
}

/// `Operations::alloc_mw`: an MW in the device's MW table.
pub(super) fn alloc_mw(pd: &Pd<RrxeDevice>, mw_type: u32) -> Result<(RrxeMw, u32)> {
    let inner = pd
        .device::<RrxeDevice>()
        .shared
        .mws
        .alloc(pd.as_raw() as usize, mw_type)?;
    let rkey = inner.rkey();
    Ok((RrxeMw { inner }, rkey))
}

/// `Operations::dealloc_mw`: the MW out of the table.
pub(super) fn dealloc_mw(mw: &Mw<RrxeDevice>) -> Result {
    mw.device::<RrxeDevice>().shared.mws.dealloc(&mw.inner);
    Ok(())
}
