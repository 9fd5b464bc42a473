// SPDX-License-Identifier: GPL-2.0

//! QP attributes a driver keeps between `modify_qp` calls, and the byte
//! layout guarantees of the rxe ABI's response structs.

use super::QpAttr;
use crate::sys;
use kernel::transmute::AsBytes;

/// A copy of `struct ib_qp_attr` with every pointer in it cleared, which
/// makes it plain data a driver may keep and share.
///
/// The core's pointers in the attributes (the GID attributes of the primary
/// and alternate paths, the LAG transmit netdev) are only referenced for the
/// duration of one `modify_qp`, so a driver must not keep them anyway.
///
/// # Invariants
///
/// `0.ah_attr.grh.sgid_attr`, `0.alt_ah_attr.grh.sgid_attr` and
/// `0.xmit_slave` are NULL.
#[derive(Clone, Copy, Default)]
pub(crate) struct StoredQpAttr(QpAttr);

// SAFETY: by the type invariant the struct holds no pointers, only numbers.
unsafe impl Send for StoredQpAttr {}
// SAFETY: as above.
unsafe impl Sync for StoredQpAttr {}

impl StoredQpAttr {
    /// Read access to the fields.
    pub(crate) fn get(&self) -> &QpAttr {
        &self.0
    }

    /// Changes fields through `f`, then clears the pointers again.
    pub(crate) fn update(&mut self, f: impl FnOnce(&mut QpAttr)) {
        f(&mut self.0);
        self.0.ah_attr.grh.sgid_attr = core::ptr::null();
        self.0.alt_ah_attr.grh.sgid_attr = core::ptr::null();
        self.0.xmit_slave = core::ptr::null_mut();
        // INVARIANT: pointers cleared above.
    }
}

// SAFETY: `struct mminfo`-based responses are `u64`/`u32` fields laid out
// without padding (checked below), so every byte is initialised.
unsafe impl AsBytes for sys::rxe_create_cq_resp {}
// SAFETY: as above.
unsafe impl AsBytes for sys::rxe_resize_cq_resp {}
// SAFETY: as above.
unsafe impl AsBytes for sys::rxe_create_qp_resp {}

const _: () = {
    assert!(size_of::<sys::mminfo>() == 16);
    assert!(size_of::<sys::rxe_create_cq_resp>() == 16);
    assert!(size_of::<sys::rxe_resize_cq_resp>() == 16);
    assert!(size_of::<sys::rxe_create_qp_resp>() == 32);
};
