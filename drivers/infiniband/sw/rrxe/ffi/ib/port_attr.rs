// SPDX-License-Identifier: GPL-2.0

//! The typed values of a port's attributes: what `query_port` reports in a
//! [`PortAttr`]. As in [`device_attr`](super::device_attr), each C enum
//! or flag set is a Rust type whose numbers are the bindings'.

use super::PortAttr;
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

impl PortAttr {
    /// Sets the port's logical and physical state.
    pub(crate) fn set_states(&mut self, state: PortState, phys: PhysState) {
        self.state = state as u32;
        self.phys_state = phys as u8;
    }
}
