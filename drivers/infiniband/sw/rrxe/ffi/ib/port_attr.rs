// SPDX-License-Identifier: GPL-2.0

//! The typed values of a port's attributes: what `query_port` reports in a
//! [`PortAttr`] and `get_port_immutable` in a [`PortImmutable`], and what
//! `modify_port` may change. As in
//! [`device_attr`](super::device_attr), each C enum or flag set is a Rust
//! type whose numbers are the bindings'.

use super::{PortAttr, PortImmutable};
use crate::ffi::sys;

/// The logical state of a port (`enum ib_port_state`): the `state` of a
/// [`PortAttr`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PortState {
    /// `IB_PORT_DOWN`.
    Down = sys::IB_PORT_DOWN,
    /// `IB_PORT_ACTIVE`: the port carries traffic.
    Active = sys::IB_PORT_ACTIVE,
}

/// The physical state of a port (`enum ib_port_phys_state`, a `u8` in a
/// [`PortAttr`]).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PhysState {
    /// `IB_PORT_PHYS_STATE_POLLING`: looking for a link (the netdev is up
    /// without a carrier).
    Polling = sys::IB_PORT_PHYS_STATE_POLLING as u8,
    /// `IB_PORT_PHYS_STATE_DISABLED`: the netdev is down.
    Disabled = sys::IB_PORT_PHYS_STATE_DISABLED as u8,
    /// `IB_PORT_PHYS_STATE_LINK_UP`.
    LinkUp = sys::IB_PORT_PHYS_STATE_LINK_UP as u8,
}

/// The width of a port's link (`enum ib_port_width`, a `u8` in a
/// [`PortAttr`]). The core reports whatever the netdev's link has
/// ([`IbDevice::eth_speed`](super::IbDevice::eth_speed)), so any number is
/// representable.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PortWidth(u8);

impl PortWidth {
    /// `IB_WIDTH_1X`: one lane.
    pub(crate) const X1: Self = Self(sys::IB_WIDTH_1X as u8);

    /// The width the core gave as `raw`.
    pub(super) const fn from_raw(raw: u8) -> Self {
        Self(raw)
    }
}

/// The signalling rate of a port's lanes (`enum ib_port_speed`, the
/// `active_speed` of a [`PortAttr`]). As with [`PortWidth`], the core
/// reports what the netdev's link has, so any number is representable.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PortSpeed(u16);

impl PortSpeed {
    /// `IB_SPEED_SDR`: 2.5 Gb/s per lane, what a port reports when the
    /// netdev's speed is unknown.
    pub(crate) const SDR: Self = Self(sys::IB_SPEED_SDR as u16);

    /// The speed the core gave as `raw`.
    pub(super) const fn from_raw(raw: u16) -> Self {
        Self(raw)
    }
}

/// The link layer of a port (`enum rdma_link_layer`): what
/// [`Operations::link_layer`](super::Operations::link_layer) answers.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkLayer {
    /// `IB_LINK_LAYER_ETHERNET`.
    Ethernet = sys::IB_LINK_LAYER_ETHERNET,
}

/// A port's capabilities (`enum ib_port_capability_mask`): the
/// `port_cap_flags` of a [`PortAttr`]. `modify_port` may set or clear any
/// bit, so a driver keeps the mask as the number [`PortCapFlags::raw`]
/// gives.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PortCapFlags(u32);

impl PortCapFlags {
    /// `IB_PORT_CM_SUP`: connection management is supported.
    pub(crate) const CM_SUP: Self = Self(sys::IB_PORT_CM_SUP);

    /// The `port_cap_flags` bits.
    pub(crate) const fn raw(self) -> u32 {
        self.0
    }
}

/// What a `modify_port` call changes besides the capability bits it sets
/// and clears (`enum ib_port_modify_flags`). The mask comes from the core
/// as it was asked, so any bits are representable, and a driver refuses
/// those it does not support.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PortModifyMask(u32);

impl PortModifyMask {
    /// `IB_PORT_RESET_QKEY_CNTR`: reset the Q_Key violation counter.
    pub(crate) const RESET_QKEY_CNTR: Self = Self(sys::IB_PORT_RESET_QKEY_CNTR);
}

core_mask_ops!(PortModifyMask);

impl PortAttr {
    /// Sets the port's logical and physical state.
    pub(crate) fn set_states(&mut self, state: PortState, phys: PhysState) {
        self.state = state as u32;
        self.phys_state = phys as u8;
    }

    /// Sets the width of the port's link (`active_width`).
    pub(crate) fn set_active_width(&mut self, width: PortWidth) {
        self.active_width = width.0;
    }

    /// Sets the signalling rate of the port's lanes (`active_speed`).
    pub(crate) fn set_active_speed(&mut self, speed: PortSpeed) {
        self.active_speed = speed.0;
    }
}

/// What the RDMA core may do with a port (the `RDMA_CORE_CAP_*` and
/// `RDMA_CORE_PORT_*` masks): the `core_cap_flags` of a [`PortImmutable`].
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CoreCapFlags(u32);

impl CoreCapFlags {
    /// `RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP`: a RoCE port that also speaks
    /// RoCEv2 (IB MADs and CM, `AF_IB`, Ethernet address handles).
    pub(crate) const IBA_ROCE_UDP_ENCAP: Self = Self(sys::RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP);
}

impl PortImmutable {
    /// Sets what the core may do with the port (`core_cap_flags`).
    pub(crate) fn set_core_caps(&mut self, caps: CoreCapFlags) {
        self.core_cap_flags = caps.0;
    }
}
