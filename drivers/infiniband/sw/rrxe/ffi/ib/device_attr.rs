// SPDX-License-Identifier: GPL-2.0

//! The typed values of a device's attributes: the capabilities
//! `query_device` reports in a [`DeviceAttr`], and what `modify_device`
//! may change.
//!
//! As the kernel's Rust guidelines ask, the C enums and flag sets become
//! Rust types here, with the C numbers taken from the bindings, so that a
//! driver never names the bindings: a Rust `enum` for a value the driver
//! chooses, a `#[repr(transparent)]` newtype for a set of flags (as in
//! drivers/gpu/nova-core) or for a value the core passes in, which may hold
//! any number.

use super::DeviceAttr;
use crate::ffi::sys;

/// The capabilities a device advertises (`enum ib_device_cap_flags`, an
/// `unsigned long`): the `device_cap_flags` of a [`DeviceAttr`].
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DeviceCapFlags(usize);

impl DeviceCapFlags {
    /// `IB_DEVICE_BAD_PKEY_CNTR`: counts P_Key violations.
    pub(crate) const BAD_PKEY_CNTR: Self = Self(sys::IB_DEVICE_BAD_PKEY_CNTR);
    /// `IB_DEVICE_BAD_QKEY_CNTR`: counts Q_Key violations.
    pub(crate) const BAD_QKEY_CNTR: Self = Self(sys::IB_DEVICE_BAD_QKEY_CNTR);
    /// `IB_DEVICE_AUTO_PATH_MIG`: automatic path migration.
    pub(crate) const AUTO_PATH_MIG: Self = Self(sys::IB_DEVICE_AUTO_PATH_MIG);
    /// `IB_DEVICE_CHANGE_PHY_PORT`: a QP's port may change.
    pub(crate) const CHANGE_PHY_PORT: Self = Self(sys::IB_DEVICE_CHANGE_PHY_PORT);
    /// `IB_DEVICE_UD_AV_PORT_ENFORCE`: a UD address vector's port is checked.
    pub(crate) const UD_AV_PORT_ENFORCE: Self = Self(sys::IB_DEVICE_UD_AV_PORT_ENFORCE);
    /// `IB_DEVICE_PORT_ACTIVE_EVENT`: reports `IB_EVENT_PORT_ACTIVE`.
    pub(crate) const PORT_ACTIVE_EVENT: Self = Self(sys::IB_DEVICE_PORT_ACTIVE_EVENT);
    /// `IB_DEVICE_SYS_IMAGE_GUID`: has a system image GUID.
    pub(crate) const SYS_IMAGE_GUID: Self = Self(sys::IB_DEVICE_SYS_IMAGE_GUID);
    /// `IB_DEVICE_RC_RNR_NAK_GEN`: an RC responder sends RNR NAKs.
    pub(crate) const RC_RNR_NAK_GEN: Self = Self(sys::IB_DEVICE_RC_RNR_NAK_GEN);
    /// `IB_DEVICE_SRQ_RESIZE`: an SRQ may be resized.
    pub(crate) const SRQ_RESIZE: Self = Self(sys::IB_DEVICE_SRQ_RESIZE);
    /// `IB_DEVICE_MEM_MGT_EXTENSIONS`: fast registration and local
    /// invalidation.
    pub(crate) const MEM_MGT_EXTENSIONS: Self = Self(sys::IB_DEVICE_MEM_MGT_EXTENSIONS);
    /// `IB_DEVICE_MEM_WINDOW`: memory windows.
    pub(crate) const MEM_WINDOW: Self = Self(sys::IB_DEVICE_MEM_WINDOW);
    /// `IB_DEVICE_FLUSH_GLOBAL`: FLUSH to global visibility.
    pub(crate) const FLUSH_GLOBAL: Self = Self(sys::IB_DEVICE_FLUSH_GLOBAL);
    /// `IB_DEVICE_FLUSH_PERSISTENT`: FLUSH to persistence.
    pub(crate) const FLUSH_PERSISTENT: Self = Self(sys::IB_DEVICE_FLUSH_PERSISTENT);
    /// `IB_DEVICE_MEM_WINDOW_TYPE_2B`: type 2B memory windows.
    pub(crate) const MEM_WINDOW_TYPE_2B: Self = Self(sys::IB_DEVICE_MEM_WINDOW_TYPE_2B);
    /// `IB_DEVICE_ATOMIC_WRITE`: ATOMIC WRITE.
    pub(crate) const ATOMIC_WRITE: Self = Self(sys::IB_DEVICE_ATOMIC_WRITE);
}

impl core::ops::BitOr for DeviceCapFlags {
    type Output = Self;

    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

/// What the device offers kernel consumers (`enum ib_kernel_cap_flags`):
/// the `kernel_cap_flags` of a [`DeviceAttr`].
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KernelCapFlags(u64);

impl core::ops::BitOr for KernelCapFlags {
    type Output = Self;

    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl KernelCapFlags {
    /// `IBK_ALLOW_USER_UNREG`: the driver supports `RDMA_NLDEV_CMD_DELLINK`
    /// (`rdma link delete`).
    pub(crate) const ALLOW_USER_UNREG: Self = Self(sys::IBK_ALLOW_USER_UNREG as u64);
    /// `IBK_ON_DEMAND_PAGING`: registrations may ask for on-demand paging
    /// (`IB_ACCESS_ON_DEMAND`; the core refuses them otherwise).
    pub(crate) const ON_DEMAND_PAGING: Self = Self(sys::IBK_ON_DEMAND_PAGING as u64);

    /// Whether every flag of `other` is set (for tests).
    #[cfg(CONFIG_KUNIT)]
    pub(crate) const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// What on-demand paging the device offers (`enum ib_odp_general_cap_bits`):
/// the `general_caps` of the [`DeviceAttr`]'s `odp_caps`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OdpCaps(u64);

impl core::ops::BitOr for OdpCaps {
    type Output = Self;

    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl OdpCaps {
    /// None.
    pub(crate) const NONE: Self = Self(0);
    /// `IB_ODP_SUPPORT`: explicit ODP, a registration of a range.
    pub(crate) const SUPPORT: Self = Self(sys::IB_ODP_SUPPORT as u64);
    /// `IB_ODP_SUPPORT_IMPLICIT`: implicit ODP, a registration of the whole
    /// address space (address 0, length `u64::MAX`).
    pub(crate) const IMPLICIT: Self = Self(sys::IB_ODP_SUPPORT_IMPLICIT as u64);

    /// Whether every flag of `other` is set (for tests).
    #[cfg(CONFIG_KUNIT)]
    pub(crate) const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// What a QP of one transport may do with ODP regions (`enum
/// ib_odp_transport_cap_bits`): one of the per-transport caps of the
/// [`DeviceAttr`]'s `odp_caps`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OdpTransportCaps(u32);

impl OdpTransportCaps {
    /// None.
    pub(crate) const NONE: Self = Self(0);
    /// `IB_ODP_SUPPORT_SEND`: SEND from an ODP region.
    pub(crate) const SEND: Self = Self(sys::IB_ODP_SUPPORT_SEND);
    /// `IB_ODP_SUPPORT_RECV`: receive into an ODP region.
    pub(crate) const RECV: Self = Self(sys::IB_ODP_SUPPORT_RECV);
    /// `IB_ODP_SUPPORT_WRITE`: RDMA WRITE to and from ODP regions.
    pub(crate) const WRITE: Self = Self(sys::IB_ODP_SUPPORT_WRITE);
    /// `IB_ODP_SUPPORT_READ`: RDMA READ to and from ODP regions.
    pub(crate) const READ: Self = Self(sys::IB_ODP_SUPPORT_READ);
    /// `IB_ODP_SUPPORT_ATOMIC`: atomics on ODP regions.
    pub(crate) const ATOMIC: Self = Self(sys::IB_ODP_SUPPORT_ATOMIC);
    /// `IB_ODP_SUPPORT_SRQ_RECV`: receive into an ODP region from an SRQ.
    pub(crate) const SRQ_RECV: Self = Self(sys::IB_ODP_SUPPORT_SRQ_RECV);
    /// `IB_ODP_SUPPORT_FLUSH`: FLUSH of an ODP region.
    pub(crate) const FLUSH: Self = Self(sys::IB_ODP_SUPPORT_FLUSH);
    /// `IB_ODP_SUPPORT_ATOMIC_WRITE`: ATOMIC WRITE to an ODP region.
    pub(crate) const ATOMIC_WRITE: Self = Self(sys::IB_ODP_SUPPORT_ATOMIC_WRITE);
}

impl OdpTransportCaps {
    /// The flags as a number (for tests).
    #[cfg(CONFIG_KUNIT)]
    pub(crate) const fn raw(self) -> u32 {
        self.0
    }
}

impl core::ops::BitOr for OdpTransportCaps {
    type Output = Self;

    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

/// How atomic operations are atomic (`enum ib_atomic_cap`): the
/// `atomic_cap` of a [`DeviceAttr`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AtomicCap {
    /// `IB_ATOMIC_HCA`: with respect to the other atomics of this device.
    Hca = sys::IB_ATOMIC_HCA,
}

/// What a `modify_device` call changes (`enum ib_device_modify_flags`).
/// The mask comes from the core as it was asked, so any bits are
/// representable, and a driver refuses those it does not support.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DeviceModifyMask(u32);

impl DeviceModifyMask {
    /// `IB_DEVICE_MODIFY_SYS_IMAGE_GUID`: the system image GUID.
    pub(crate) const SYS_IMAGE_GUID: Self = Self(sys::IB_DEVICE_MODIFY_SYS_IMAGE_GUID);
    /// `IB_DEVICE_MODIFY_NODE_DESC`: the node description.
    pub(crate) const NODE_DESC: Self = Self(sys::IB_DEVICE_MODIFY_NODE_DESC);
}

core_mask_ops!(DeviceModifyMask);

impl DeviceAttr {
    /// Sets the capabilities the device advertises (`device_cap_flags`, a
    /// `u64` holding the `unsigned long` flags).
    pub(crate) fn set_device_caps(&mut self, caps: DeviceCapFlags) {
        self.device_cap_flags = caps.0 as u64;
    }

    /// Sets what the device offers kernel consumers (`kernel_cap_flags`).
    pub(crate) fn set_kernel_caps(&mut self, caps: KernelCapFlags) {
        self.kernel_cap_flags = caps.0;
    }

    /// Sets the on-demand paging the device offers (`odp_caps`): in
    /// general, and per transport (RC, UC, UD; XRC has none).
    pub(crate) fn set_odp_caps(
        &mut self,
        general: OdpCaps,
        rc: OdpTransportCaps,
        uc: OdpTransportCaps,
        ud: OdpTransportCaps,
    ) {
        self.odp_caps.general_caps = general.0;
        self.odp_caps.per_transport_caps.rc_odp_caps = rc.0;
        self.odp_caps.per_transport_caps.uc_odp_caps = uc.0;
        self.odp_caps.per_transport_caps.ud_odp_caps = ud.0;
        self.odp_caps.per_transport_caps.xrc_odp_caps = 0;
    }

    /// Sets how atomic operations are atomic (`atomic_cap`).
    pub(crate) fn set_atomic_cap(&mut self, cap: AtomicCap) {
        self.atomic_cap = cap as u32;
    }

    /// What the device offers kernel consumers, as last set (for tests).
    #[cfg(CONFIG_KUNIT)]
    pub(crate) fn kernel_caps(&self) -> KernelCapFlags {
        KernelCapFlags(self.kernel_cap_flags)
    }

    /// The on-demand paging the device offers, as last set: in general,
    /// and for RC and UD (for tests).
    #[cfg(CONFIG_KUNIT)]
    pub(crate) fn odp_caps(&self) -> (OdpCaps, u32, u32) {
        let t = &self.odp_caps.per_transport_caps;
        (
            OdpCaps(self.odp_caps.general_caps),
            t.rc_odp_caps,
            t.ud_odp_caps,
        )
    }
}
