// SPDX-License-Identifier: GPL-2.0

//! Memory region access rules: which access flags a registration may ask
//! for, and the bounds and permission check every use of an MR goes
//! through (from a local SGE or from a remote request's R_Key, VA and
//! length), so the data path never touches memory outside a region or in a
//! way the region does not allow.

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

/// The flags rxe accepts for a memory registration, minus on-demand paging,
/// which rrxe does not implement (and does not advertise).
pub(crate) const SUPPORTED_MR: u32 =
    REMOTE | LOCAL_WRITE | MW_BIND | FLUSH_GLOBAL | FLUSH_PERSISTENT | OPTIONAL;

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
}

/// Checks the access flags of a registration.
pub(crate) const fn check_reg_access(access: u32) -> Result<(), MrError> {
    let unsupported = access & !SUPPORTED_MR;
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
