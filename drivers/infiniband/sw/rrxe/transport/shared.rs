// SPDX-License-Identifier: GPL-2.0

//! The state a device shares with its QPs, the receive path and netdev
//! events ([`Shared`]): the port, the counters, and the tables objects are
//! looked up in (QPs, MRs, MWs, AHs, multicast groups).
//!
//! It lives in the transport, not in `dev/`, because it holds QPs: a QP
//! keeps its device's `Shared` to reach the counters and the memory tables,
//! and the receive path above finds QPs in it. Everything it is built from
//! (`dev/`, `mem/`, [`mcast`](super::mcast)) sits below or beside it.

use crate::{
    dev::ah::{AhNumbers, AhTable},
    dev::counters::{Counter, Counters},
    dev::irq_table::IrqTable,
    dev::params,
    ffi::ib::PortEvent,
    ffi::net::NetDevRef,
    mem::mr::MrTable,
    mem::mw::MwTable,
    transport::{mcast::McastTable, qp::QpInner},
};
use kernel::{
    new_spinlock_irq,
    prelude::*,
    sync::{Arc, SpinLockIrq},
    xarray::AllocKind,
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

/// The part of a device the registry and the data path share: the port,
/// the counters, and every table the receive path looks objects up in.
/// Its own `Arc`, so that the receive path (softirq) reaches it without
/// the device's registration.
#[pin_data]
pub(crate) struct Shared {
    /// Interrupts off: the data path reads the netdev in softirq context.
    #[pin]
    pub(crate) port: SpinLockIrq<Port>,
    /// The port's counters.
    pub(crate) counters: Counters,
    /// Identity of the netdev the device was created on (packets are
    /// matched to devices by the netdev they arrive on).
    pub(crate) netdev_id: usize,
    /// Live QPs by number (the GSI QP at 1).
    #[pin]
    pub(crate) qps: IrqTable<QpInner>,
    /// Live MRs.
    #[pin]
    pub(crate) mrs: MrTable,
    /// Live MWs.
    #[pin]
    pub(crate) mws: MwTable,
    /// Live AHs.
    #[pin]
    pub(crate) ahs: AhTable,
    /// Multicast groups and the QPs attached to them.
    #[pin]
    pub(crate) mcast: McastTable,
}

impl Shared {
    /// Creates the shared state of a device attached to `netdev`.
    pub(crate) fn new(netdev: NetDevRef) -> Result<Arc<Self>> {
        let netdev_id = netdev.id();
        let ah_numbers = AhNumbers::new()?;
        Arc::pin_init(
            pin_init!(Self {
                port <- new_spinlock_irq!(Port {
                    netdev: Some(netdev),
                    active: false,
                    cap_flags: params::PORT_CAP_FLAGS,
                }),
                counters: Counters::new(),
                netdev_id,
                qps <- IrqTable::new(AllocKind::Alloc),
                mrs <- MrTable::new_mrs(),
                mws <- MwTable::new_mws(),
                ahs <- AhTable::new(ah_numbers),
                mcast <- McastTable::new(),
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
