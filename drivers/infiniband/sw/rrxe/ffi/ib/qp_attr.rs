// SPDX-License-Identifier: GPL-2.0

//! QP and address attributes a driver keeps between calls.

use super::QpAttr;
use crate::ffi::sys;

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

/// The flags of an address vector (`enum ib_ah_flags`): its `ah_flags`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AhFlags(u32);

impl AhFlags {
    /// `IB_AH_GRH`: the address vector has a global route header.
    pub(crate) const GRH: Self = Self(sys::IB_AH_GRH);

    /// Whether every flag of `other` is set.
    pub(crate) const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// The type of a GID (`enum ib_gid_type`): which protocol its port entry
/// is for.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GidType(u32);

impl GidType {
    /// `IB_GID_TYPE_ROCE_UDP_ENCAP`: RoCEv2.
    pub(crate) const ROCE_UDP_ENCAP: Self = Self(sys::IB_GID_TYPE_ROCE_UDP_ENCAP);
}

/// The address vector of an address handle or a connected QP, as the core
/// passes it for the duration of one call.
#[repr(transparent)]
pub(crate) struct AhAttr(sys::rdma_ah_attr);

impl AhAttr {
    /// Borrows the core's attribute.
    ///
    /// # Safety
    ///
    /// `ptr` is valid for reads for `'a`, and its `sgid_attr` (if any) is
    /// referenced for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *const sys::rdma_ah_attr) -> &'a Self {
        // SAFETY: transparent wrapper; the caller guarantees validity.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The plain fields.
    pub(crate) fn get(&self) -> &sys::rdma_ah_attr {
        &self.0
    }

    /// The flags (`ah_flags`).
    pub(crate) fn flags(&self) -> AhFlags {
        AhFlags(u32::from(self.0.ah_flags))
    }

    /// The type of the source GID, if there is one.
    pub(crate) fn sgid_type(&self) -> Option<GidType> {
        let gid = self.0.grh.sgid_attr;
        // SAFETY: the core holds a reference on the GID attribute while it
        // hands us this struct (type invariant of the borrow).
        (!gid.is_null()).then(|| GidType(unsafe { (*gid).gid_type }))
    }

    /// The raw source GID of the path, if there is one.
    pub(crate) fn sgid(&self) -> Option<[u8; 16]> {
        let gid = self.0.grh.sgid_attr;
        // SAFETY: as in `sgid_type`; `raw` is plain bytes in every union member.
        (!gid.is_null()).then(|| unsafe { (*gid).gid.raw })
    }

    /// The raw destination GID.
    pub(crate) fn dgid(&self) -> [u8; 16] {
        // SAFETY: `raw` is plain bytes in every member of the union.
        unsafe { self.0.grh.dgid.raw }
    }

    /// The address vector of a QP's primary path, as `modify_qp` gets it.
    ///
    /// A `QpAttr` either comes from the core for the duration of one call
    /// (its GID attribute referenced for that call) or is a copy whose
    /// pointers were cleared ([`StoredQpAttr`]), so the borrow keeps the
    /// invariant of [`AhAttr::from_raw`].
    pub(crate) fn of_qp_attr(attr: &QpAttr) -> &AhAttr {
        // SAFETY: see above; `AhAttr` is a transparent wrapper.
        unsafe { Self::from_raw(&attr.ah_attr) }
    }

    /// A copy to keep: the GID reference is not ours past this call.
    pub(crate) fn to_stored(&self) -> StoredAhAttr {
        let mut a = self.0;
        a.grh.sgid_attr = core::ptr::null();
        // INVARIANT: pointer cleared.
        StoredAhAttr(a)
    }
}

/// A copy of `struct rdma_ah_attr` with its GID attribute pointer cleared,
/// which makes it plain data.
///
/// # Invariants
///
/// `0.grh.sgid_attr` is NULL.
#[derive(Clone, Copy)]
pub(crate) struct StoredAhAttr(sys::rdma_ah_attr);

// SAFETY: by the type invariant the struct holds only numbers.
unsafe impl Send for StoredAhAttr {}
// SAFETY: as above.
unsafe impl Sync for StoredAhAttr {}

impl StoredAhAttr {
    /// The plain fields.
    pub(crate) fn get(&self) -> &sys::rdma_ah_attr {
        &self.0
    }
}
