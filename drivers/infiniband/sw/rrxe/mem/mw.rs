// SPDX-License-Identifier: GPL-2.0

//! Memory windows: type 1 (bound by the bind verb) and type 2B (bound by a
//! `BIND_MW` work request), allocated with an R_Key from the MW range of
//! the key space.
//!
//! A bound window holds a reference on its region and counts itself in
//! the region's window count, which keeps the region from being
//! deregistered or invalidated (IBA 10.6.7.2.6, as rxe). A type 2B window
//! also remembers the QP that bound it: only that QP's responder accepts
//! its R_Key. Every change of a binding happens under the window's lock,
//! with interrupts off; see [`MrInner::bind_window`] for why the region's
//! reference is never the last one there.
//!
//! The responder resolves every R_Key with [`resolve_rkey`]: MR keys go
//! to the MR table, MW keys through the window to the region under it,
//! checking the window's state, PD, QP, rights and bounds. Of the QP, these
//! operations see only a [`MemCtx`].

use crate::{
    dev::key_table::{KeyTable, Keyed},
    logic::{
        keys::{bind_mw_key, Key, KeyKind},
        mw::{check_bind, BindError, BindRegion, BindTarget, BindWr, MwType, Window},
        wc::{WcError, WcResult},
        wqe::SendOp,
    },
    mem::mr::{MrInner, MrTable},
};
use kernel::{
    new_spinlock_irq,
    prelude::*,
    sync::{Arc, SpinLockIrq},
};

pub(crate) use crate::logic::mw::MwState;

/// The identity of a QP, for type 2B windows: its number and its address.
/// Neither is reused before the other in practice (QP numbers go round
/// 2^24 values), and neither is ever dereferenced.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct QpId {
    qpn: u32,
    addr: usize,
}

impl QpId {
    /// The identity of the QP numbered `qpn` whose object is `qp` (only
    /// its address is kept).
    pub(crate) fn of<T>(qpn: u32, qp: &T) -> Self {
        Self {
            qpn,
            addr: core::ptr::from_ref(qp) as usize,
        }
    }
}

/// What a memory operation run for a QP reads of it: the device's key
/// tables, the QP's PD and the QP's identity. Plain, read-only and cheap
/// to copy; the transport builds it from the QP.
#[derive(Clone, Copy)]
pub(crate) struct MemCtx<'a> {
    /// The device's memory regions.
    pub(crate) mrs: &'a MrTable,
    /// The device's memory windows.
    pub(crate) mws: &'a MwTable,
    /// The QP's PD (its address: an identity compared with MRs' and MWs').
    pub(crate) pd: usize,
    /// The QP, as type 2B windows remember the one that bound them.
    pub(crate) qp: QpId,
}

/// What a window is bound to.
struct Binding {
    /// The current R_Key: a bind changes its variant byte.
    key: Key,
    state: MwState,
    window: Window,
    /// The region, counted in its window count.
    mr: Option<Arc<MrInner>>,
    /// Type 2B: the QP that bound it.
    qp: Option<QpId>,
}

impl Binding {
    /// Drops the region (and its count) and the QP: the window covers
    /// nothing.
    fn release(&mut self) {
        if let Some(mr) = self.mr.take() {
            mr.unbind_window();
        }
        self.qp = None;
        self.window = Window {
            addr: 0,
            length: 0,
            access: 0,
        };
    }
}

/// A window's state, shared with the device's MW table.
#[pin_data]
pub(crate) struct MwInner {
    /// The key it was allocated with (its index never changes).
    key: Key,
    ty: MwType,
    /// The PD it was allocated in (an identity, never dereferenced).
    pd: usize,
    #[pin]
    binding: SpinLockIrq<Binding>,
}

impl Keyed for MwInner {
    fn key(&self) -> Key {
        self.binding.lock().key
    }
}

/// A device's memory windows.
pub(crate) type MwTable = KeyTable<MwInner>;

/// The driver data of an MW.
pub(crate) struct RrxeMw {
    pub(crate) inner: Arc<MwInner>,
}

/// Why a window operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MwError {
    /// No window, or not this key.
    NoWindow,
    /// No region, or not this key.
    NoRegion,
    /// The bind rules refused it.
    Bind(BindError),
    /// Not a window that may be invalidated here.
    Invalidate,
}

impl MwTable {
    /// An empty table.
    pub(crate) fn new_mws() -> impl PinInit<Self> {
        KeyTable::new(KeyKind::Mw)
    }

    /// Allocates a window of `mw_type` (the `enum ib_mw_type` number the
    /// core passes) in the PD `pd`.
    pub(crate) fn alloc(&self, pd: usize, mw_type: u32) -> Result<Arc<MwInner>> {
        let ty = MwType::from_raw(mw_type).ok_or(EINVAL)?;
        let state = match ty {
            MwType::One => MwState::Valid,
            MwType::Two => MwState::Free,
        };
        self.insert(|new_key| {
            Arc::pin_init(
                pin_init!(MwInner {
                    key: new_key,
                    ty,
                    pd,
                    binding <- new_spinlock_irq!(Binding {
                        key: new_key,
                        state,
                        window: Window {
                            addr: 0,
                            length: 0,
                            access: 0,
                        },
                        mr: None,
                        qp: None,
                    }),
                }),
                GFP_KERNEL,
            )
        })
    }

    /// `dealloc_mw`: takes `mw` out of the table and unbinds it for good.
    pub(crate) fn dealloc(&self, mw: &MwInner) {
        self.remove(mw);
        let mut b = mw.binding.lock();
        b.release();
        b.state = MwState::Invalid;
    }
}

impl MwInner {
    /// The R_Key.
    pub(crate) fn rkey(&self) -> u32 {
        self.binding.lock().key.raw()
    }

    /// Type, PD and state.
    pub(crate) fn describe(&self) -> (MwType, usize, MwState) {
        (self.ty, self.pd, self.binding.lock().state)
    }
}

/// Executes a `BIND_MW` work request of the QP `ctx` describes (rxe's
/// `rxe_bind_mw`). Every value comes from the WQE and is checked: the
/// window's key must be its current key, the region's its current L_Key,
/// and the bind must pass [`check_bind`].
fn bind(ctx: MemCtx<'_>, wr: &BindWr) -> Result<(), MwError> {
    if KeyKind::of_key(Key::from_raw(wr.mw_rkey)) != Some(KeyKind::Mw) {
        return Err(MwError::NoWindow);
    }
    let mw = ctx.mws.get(wr.mw_rkey).ok_or(MwError::NoWindow)?;
    let mr = if wr.length != 0 {
        if KeyKind::of_key(Key::from_raw(wr.mr_lkey)) != Some(KeyKind::Mr) {
            return Err(MwError::NoRegion);
        }
        Some(ctx.mrs.get(wr.mr_lkey).ok_or(MwError::NoRegion)?)
    } else {
        None
    };
    let region = match &mr {
        Some(mr) => {
            let range = mr.range().map_err(|_| MwError::NoRegion)?;
            Some(BindRegion {
                same_pd: mr.in_pd(ctx.pd),
                iova: range.iova,
                length: range.length,
                access: range.access,
            })
        }
        None => None,
    };
    let req = wr.request();
    let mut b = mw.binding.lock();
    // The key may have changed since the lookup.
    if !b.key.matches(wr.mw_rkey) {
        return Err(MwError::NoWindow);
    }
    let target = BindTarget {
        ty: mw.ty,
        state: b.state,
        same_pd: mw.pd == ctx.pd,
    };
    check_bind(target, region, req).map_err(MwError::Bind)?;
    // Count the window in its new region first: a region that is being
    // deregistered refuses (and the bind fails).
    if let Some(mr) = &mr {
        mr.bind_window().map_err(|_| MwError::NoRegion)?;
    }
    b.release();
    b.key = bind_mw_key(b.key, wr.rkey);
    b.state = MwState::Valid;
    b.window = req.window();
    b.mr = mr;
    if mw.ty == MwType::Two {
        b.qp = Some(ctx.qp);
    }
    Ok(())
}

/// Invalidates the type 2B window `rkey` names (rxe's
/// `rxe_invalidate_mw`), for `LOCAL_INV` (`remote` false) or a
/// `SEND_WITH_INV` received (`remote` true), by the QP `ctx` describes.
/// The window must be valid and in the QP's PD; a remote invalidation must
/// also come to the QP the window is bound to. Type 1 windows are not
/// invalidated this way (o10-37.2.26).
pub(crate) fn invalidate(ctx: MemCtx<'_>, rkey: u32, remote: bool) -> Result<(), MwError> {
    let mw = ctx.mws.get(rkey).ok_or(MwError::NoWindow)?;
    let mut b = mw.binding.lock();
    if !b.key.matches(rkey) {
        return Err(MwError::NoWindow);
    }
    if mw.ty != MwType::Two || b.state != MwState::Valid || mw.pd != ctx.pd {
        return Err(MwError::Invalidate);
    }
    if remote && b.qp != Some(ctx.qp) {
        return Err(MwError::Invalidate);
    }
    b.release();
    b.state = MwState::Free;
    Ok(())
}

/// Whether `rkey` names a memory window rather than a region.
pub(crate) fn is_mw_key(rkey: u32) -> bool {
    KeyKind::of_key(Key::from_raw(rkey)) == Some(KeyKind::Mw)
}

/// The region an R_Key presented to the responder of the QP `ctx`
/// describes names, with the offset in it of `[va, va + len)`, if every
/// check passes and the region grants `need`: the MR table's for an MR
/// key; for a window key, the window must be valid, in the QP's PD, bound
/// to this QP if type 2B, and grant `need` over the whole range, and the
/// range must lie in the region under it.
pub(crate) fn resolve_rkey(
    ctx: MemCtx<'_>,
    rkey: u32,
    va: u64,
    len: u64,
    need: u32,
) -> Result<(Arc<MrInner>, u64)> {
    if !is_mw_key(rkey) {
        return ctx.mrs.lookup(rkey, ctx.pd, va, len, need);
    }
    let mw = ctx.mws.get(rkey).ok_or(EINVAL)?;
    let (mr, mr_va) = {
        let b = mw.binding.lock();
        if !b.key.matches(rkey) || b.state != MwState::Valid || mw.pd != ctx.pd {
            return Err(EACCES);
        }
        if mw.ty == MwType::Two && b.qp != Some(ctx.qp) {
            return Err(EACCES);
        }
        let mr_va = b.window.translate(va, len, need).map_err(|_| EACCES)?;
        (b.mr.clone().ok_or(EACCES)?, mr_va)
    };
    let offset = mr.offset_of(mr_va, len)?;
    Ok((mr, offset))
}

/// What [`resolve_rkey`] checks, but for no particular range: the key,
/// PD, QP, state and rights (a FLUSH of a whole region).
pub(crate) fn check_rkey(ctx: MemCtx<'_>, rkey: u32, need: u32) -> Result {
    if !is_mw_key(rkey) {
        let mr = ctx.mrs.get(rkey).ok_or(EINVAL)?;
        if !mr.in_pd(ctx.pd) || need & !mr.range()?.access != 0 {
            return Err(EACCES);
        }
        return Ok(());
    }
    let mw = ctx.mws.get(rkey).ok_or(EINVAL)?;
    let b = mw.binding.lock();
    if !b.key.matches(rkey) || b.state != MwState::Valid || mw.pd != ctx.pd {
        return Err(EACCES);
    }
    if mw.ty == MwType::Two && b.qp != Some(ctx.qp) {
        return Err(EACCES);
    }
    if b.window.length == 0 || need & !b.window.access != 0 || b.mr.is_none() {
        return Err(EACCES);
    }
    Ok(())
}

/// Runs a local operation of the QP `ctx` describes that concerns memory
/// windows: `BIND_MW`, and `LOCAL_INV` of a window's R_Key. Returns its
/// outcome (rxe's statuses: [`WcError::MwBind`] for any refused bind,
/// [`WcError::LocQpOp`] for a refused invalidation), or `None` for other
/// operations.
pub(crate) fn local_op(ctx: MemCtx<'_>, op: &SendOp) -> Option<WcResult> {
    match *op {
        SendOp::BindMw(wr) => Some(bind(ctx, &wr).map_err(|_| WcError::MwBind)),
        SendOp::LocalInv { rkey } if is_mw_key(rkey) => {
            Some(invalidate(ctx, rkey, false).map_err(|_| WcError::LocQpOp))
        }
        _ => None,
    }
}

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kunit_tests(rrxe_mem_mw))]
#[cfg_attr(dropin, kunit_tests(rrxe_mem_mw_dropin))]
mod tests {
    use super::{MwState, MwTable, MwType};
    use crate::logic::keys::KeyKind;
    use kernel::prelude::*;

    #[test]
    fn mw_alloc_gives_fresh_rkeys_in_the_mw_range() {
        let Ok(table) = KBox::pin_init(MwTable::new_mws(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let (Ok(one), Ok(two)) = (
            table.alloc(7, MwType::One.raw()),
            table.alloc(7, MwType::Two.raw()),
        ) else {
            panic!("alloc failed");
        };
        assert_eq!(one.describe(), (MwType::One, 7, MwState::Valid));
        assert_eq!(two.describe(), (MwType::Two, 7, MwState::Free));
        for mw in [&one, &two] {
            assert!(KeyKind::Mw.contains_index(mw.rkey() >> 8));
        }
        assert_ne!(one.rkey(), two.rkey());
        assert!(table.alloc(7, 3).is_err());
        let stale = one.rkey();
        table.remove(&one);
        assert!(table.get(stale).is_none());
        assert!(table.get(two.rkey()).is_some());
        table.remove(&two);
    }
}
