// SPDX-License-Identifier: GPL-2.0

//! What a QP reaches of its device ([`DevCtx`]): the port with its
//! netdev, the counters, and the tables the roles resolve keys and
//! address handles in (MRs, MWs, AHs).
//!
//! It names no QP, so a QP can hold it (by `Arc`, for its whole life)
//! without the QP and the device's state naming each other. The tables
//! that do hold QPs, the QP table and the multicast groups, are in
//! `Shared` (`shared.rs`), which holds this too and derefs to it: the
//! receive path, the verbs and netdev events reach both through one
//! `Arc<Shared>`. It lives in the transport, not in `dev/`, because it
//! holds the memory tables of `mem/`, which sits above `dev/`.

use crate::{
    dev::ah::{AhNumbers, AhTable},
    dev::counters::{Counter, PortStats},
    dev::params,
    ffi::ib::PortEvent,
    ffi::net::NetDevRef,
    mem::mr::MrTable,
    mem::mw::MwTable,
};
use kernel::{
    new_spinlock_irq,
    prelude::*,
    sync::{Arc, SpinLockIrq},
};

/// Port state shared by the device and the registry (which the netdev
/// notifier uses), so that events can reach a device that is still being
/// registered or already going away.
pub(crate) struct Port {
    /// The netdev, until it is unregistered.
    pub(crate) netdev: Option<NetDevRef>,
    /// The last state reported to the core, so each change is reported once.
    pub(crate) active: bool,
    /// `port_cap_flags`, changeable with `modify_port`.
    pub(crate) cap_flags: u32,
}

/// The part of a device its QPs keep: the port, the counters, and the
/// tables the roles look keys and address handles up in. Its own `Arc`,
/// held by the device's `Shared` and by each of its QPs: it goes with the
/// last of them.
#[pin_data]
pub(crate) struct DevCtx {
    /// Interrupts off: the data path reads the netdev in softirq context.
    #[pin]
    pub(crate) port: SpinLockIrq<Port>,
    /// The port's counters. Its own `Arc`: the sets of the core's
    /// counters give it back what they counted too late for the core.
    pub(crate) counters: Arc<PortStats>,
    /// Identity of the netdev the device was created on (packets are
    /// matched to devices by the netdev they arrive on).
    pub(crate) netdev_id: usize,
    /// Live MRs.
    #[pin]
    pub(crate) mrs: MrTable,
    /// Live MWs.
    #[pin]
    pub(crate) mws: MwTable,
    /// Live AHs.
    #[pin]
    pub(crate) ahs: AhTable,
}

impl DevCtx {
    /// Creates the QPs' part of a device attached to `netdev`.
    pub(crate) fn new(netdev: NetDevRef) -> Result<Arc<Self>> {
        let netdev_id = netdev.id();
        let ah_numbers = AhNumbers::new()?;
        let counters = Arc::new(PortStats::new(), GFP_KERNEL)?;
        Arc::pin_init(
            pin_init!(Self {
                port <- new_spinlock_irq!(Port {
                    netdev: Some(netdev),
                    active: false,
                    cap_flags: params::PORT_CAP_FLAGS,
                }),
                counters,
                netdev_id,
                mrs <- MrTable::new_mrs(),
                mws <- MwTable::new_mws(),
                ahs <- AhTable::new(ah_numbers),
            }),
            GFP_KERNEL,
        )
    }

    /// The netdev, with a reference the caller owns.
    pub(crate) fn netdev(&self) -> Option<NetDevRef> {
        self.port.lock().netdev.clone()
    }

    /// Drops the netdev reference (the netdev is being unregistered).
    pub(crate) fn detach(&self) -> Option<NetDevRef> {
        self.port.lock().netdev.take()
    }

    /// Records the port state of the netdev and returns the event to report,
    /// if it changed since the last report.
    pub(crate) fn update_state(&self) -> Option<PortEvent> {
        let mut port = self.port.lock();
        let active = port.netdev.as_ref().is_some_and(|n| n.is_active());
        if active == port.active {
            return None;
        }
        port.active = active;
        Some(if active {
            PortEvent::Active
        } else {
            // rxe counts every loss of the link.
            self.counters.add(Counter::LinkDowned, 1);
            PortEvent::Error
        })
    }
}
