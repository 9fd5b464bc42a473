// SPDX-License-Identifier: GPL-2.0

//! Memory window rules: whether a `BIND_MW` work request may bind a window
//! to a region, and where an access through a bound window lands in the
//! region.
//!
//! A window is type 1 (bound by the bind verb, which rdma-core's rxe
//! provider also posts as a `BIND_MW` work request) or type 2B (bound by a
//! `BIND_MW` work request, then usable only through the QP that bound it).
//! The checks are rxe's (`rxe_check_bind_mw`, from IBA C10-72 to C10-75,
//! o10-36.2.2, o10-37.2.30 and o10-37.2.40). Unlike rxe, an access through
//! a window is bounded by the window, not only by the region under it.

use super::mr::{MrError, LOCAL_WRITE, MW_BIND, ON_DEMAND, REMOTE_ATOMIC, REMOTE_WRITE};

/// `IB_ZERO_BASED`: the window's addresses are offsets from its start.
pub(crate) const ZERO_BASED: u32 = 1 << 5;

/// The access flags a bind may ask for (rxe's `RXE_ACCESS_SUPPORTED_MW`).
pub(crate) const SUPPORTED_MW: u32 = super::mr::SUPPORTED_MR | ON_DEMAND | ZERO_BASED;

/// A window's type (`enum ib_mw_type`). The numbers are the kernel's
/// (`IB_MW_TYPE_1`, `IB_MW_TYPE_2`, also the user ABI's), which the host
/// tests pin and `crate::ffi::rxe_abi` checks at build time against the
/// headers.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MwType {
    /// Type 1: bound by the bind verb, usable from any QP of its PD.
    One = 1,
    /// Type 2B: bound by a work request, usable only from the QP that
    /// bound it.
    Two = 2,
}

impl MwType {
    /// The type whose `enum ib_mw_type` number is `raw` (what `alloc_mw`
    /// is asked for), or `None` for a number that names no window type.
    pub(crate) const fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            1 => Some(Self::One),
            2 => Some(Self::Two),
            _ => None,
        }
    }

    /// The `enum ib_mw_type` number of the type.
    pub(crate) const fn raw(self) -> u32 {
        self as u32
    }
}

/// A window's binding state (rxe's `enum rxe_mw_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MwState {
    /// Type 2, not bound.
    Free,
    /// Bound (a type 1 window is valid from its allocation, bound to
    /// nothing until a bind gives it a length).
    Valid,
    /// Deallocated: nothing binds or uses it any more.
    Invalid,
}

/// The window a bind names, as far as the checks are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BindTarget {
    pub(crate) ty: MwType,
    pub(crate) state: MwState,
    /// Whether the window's PD is the binding QP's.
    pub(crate) same_pd: bool,
}

/// The region a bind names (when its length is not zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BindRegion {
    /// Whether the region's PD is the binding QP's.
    pub(crate) same_pd: bool,
    pub(crate) iova: u64,
    pub(crate) length: u64,
    pub(crate) access: u32,
}

/// A `BIND_MW` work request as posted (`wr.wr.mw` of a send WQE): bind
/// the window whose current R_Key is `mw_rkey` to `[addr, addr + length)`
/// of the region whose L_Key is `mr_lkey`, with `access`, under a key
/// whose variant byte is that of `rkey`. Every field comes from the ring
/// and is checked by whoever uses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BindWr {
    pub(crate) addr: u64,
    pub(crate) length: u64,
    pub(crate) mr_lkey: u32,
    pub(crate) mw_rkey: u32,
    pub(crate) rkey: u32,
    pub(crate) access: u32,
}

impl BindWr {
    /// What it asks of the window, for [`check_bind`].
    pub(crate) const fn request(&self) -> BindRequest {
        BindRequest {
            addr: self.addr,
            length: self.length,
            access: self.access,
        }
    }
}

/// What a `BIND_MW` work request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BindRequest {
    pub(crate) addr: u64,
    pub(crate) length: u64,
    pub(crate) access: u32,
}

impl BindRequest {
    /// The window a bind that passed [`check_bind`] makes.
    pub(crate) const fn window(&self) -> Window {
        Window {
            addr: self.addr,
            length: self.length,
            access: self.access,
        }
    }
}

/// Why a bind is refused; every one completes the request with
/// [`WcStatus::MwBindErr`](super::wc::WcStatus::MwBindErr).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BindError {
    /// Access flags a window cannot have.
    Unsupported(u32),
    /// A type 1 window not valid, or a type 2 window not free.
    WrongState,
    /// A zero-based type 1 window (o10-36.2.2).
    ZeroBasedType1,
    /// A type 2 window bound to nothing (o10-37.2.40: that is not how a
    /// type 2 window is invalidated).
    NoRegion,
    /// The window's PD is not the QP's (C10-72).
    WindowPd,
    /// The region's PD is not the QP's.
    RegionPd,
    /// The region was not registered with `IB_ACCESS_MW_BIND` (C10-73).
    NoBindAccess,
    /// Remote write or atomic rights over a region without local write
    /// (C10-74).
    WritableWithoutLocalWrite,
    /// The window does not lie inside the region (C10-75).
    OutOfRange,
}

/// Checks a bind of `mw` to `mr` (`None` when the request's length is
/// zero, which unbinds a type 1 window).
pub(crate) const fn check_bind(
    mw: BindTarget,
    mr: Option<BindRegion>,
    req: BindRequest,
) -> Result<(), BindError> {
    let unsupported = req.access & !SUPPORTED_MW;
    if unsupported != 0 {
        return Err(BindError::Unsupported(unsupported));
    }
    match mw.ty {
        MwType::One => {
            if !matches!(mw.state, MwState::Valid) {
                return Err(BindError::WrongState);
            }
            if req.access & ZERO_BASED != 0 {
                return Err(BindError::ZeroBasedType1);
            }
        }
        MwType::Two => {
            if !matches!(mw.state, MwState::Free) {
                return Err(BindError::WrongState);
            }
            if mr.is_none() || req.length == 0 {
                return Err(BindError::NoRegion);
            }
        }
    }
    if !mw.same_pd {
        return Err(BindError::WindowPd);
    }
    let Some(mr) = mr else {
        return Ok(());
    };
    if !mr.same_pd {
        return Err(BindError::RegionPd);
    }
    if mr.access & MW_BIND == 0 {
        return Err(BindError::NoBindAccess);
    }
    if req.access & (REMOTE_WRITE | REMOTE_ATOMIC) != 0 && mr.access & LOCAL_WRITE == 0 {
        return Err(BindError::WritableWithoutLocalWrite);
    }
    let inside = if req.access & ZERO_BASED != 0 {
        req.length <= mr.length
    } else {
        match (
            req.addr.checked_add(req.length),
            mr.iova.checked_add(mr.length),
        ) {
            (Some(end), Some(mr_end)) => req.addr >= mr.iova && end <= mr_end,
            _ => false,
        }
    };
    if inside {
        Ok(())
    } else {
        Err(BindError::OutOfRange)
    }
}

/// A bound window: where it lies in its region and what it grants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    /// Region address of the window's first byte.
    pub(crate) addr: u64,
    pub(crate) length: u64,
    /// `IB_ACCESS_*` flags granted, and `ZERO_BASED`.
    pub(crate) access: u32,
}

impl Window {
    /// The region address of `[va, va + len)` presented with the window's
    /// R_Key, if the window grants every flag in `need` and contains all of
    /// it. A zero-based window takes offsets from its start; otherwise `va`
    /// is a region address. A window of length zero grants nothing.
    pub(crate) const fn translate(&self, va: u64, len: u64, need: u32) -> Result<u64, MrError> {
        let missing = need & !self.access;
        if missing != 0 {
            return Err(MrError::NotPermitted(missing));
        }
        if self.length == 0 {
            return Err(MrError::OutOfBounds);
        }
        let Some(end) = va.checked_add(len) else {
            return Err(MrError::OutOfBounds);
        };
        if self.access & ZERO_BASED != 0 {
            if end > self.length {
                return Err(MrError::OutOfBounds);
            }
            // The region address of the last byte must exist too.
            match self.addr.checked_add(end) {
                Some(_) => Ok(self.addr.wrapping_add(va)),
                None => Err(MrError::OutOfBounds),
            }
        } else {
            let Some(w_end) = self.addr.checked_add(self.length) else {
                return Err(MrError::OutOfBounds);
            };
            if va < self.addr || end > w_end {
                return Err(MrError::OutOfBounds);
            }
            Ok(va)
        }
    }
}
