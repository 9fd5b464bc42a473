// SPDX-License-Identifier: GPL-2.0

//! Netdev events: follow the link state and MTU, and go away with the netdev.

use crate::{
    dev::params,
    ffi::net::{NetDev, NetdevEvent, NetdevEvents},
    registry,
};
use kernel::prelude::*;

/// rrxe's netdev event handler.
pub(crate) struct RrxeEvents;

impl NetdevEvents for RrxeEvents {
    fn event(event: NetdevEvent, ndev: &NetDev) {
        match event {
            NetdevEvent::Up | NetdevEvent::Down | NetdevEvent::Change => port_changed(ndev),
            NetdevEvent::Unregister => unregistered(ndev),
            // The active MTU is derived from the netdev at every query_port.
            NetdevEvent::ChangeMtu | NetdevEvent::Other => {}
        }
    }
}

fn port_changed(ndev: &NetDev) {
    registry::with_netdev(ndev, |e| {
        let Some(ev) = e.shared.update_state() else {
            return;
        };
        if let Some(dev) = e.handle.try_get() {
            dev.port_event(params::PORT, ev);
            pr_info!("{}: port {:?} ({})\n", dev.name(), ev, ndev.name());
        }
    });
}

fn unregistered(ndev: &NetDev) {
    registry::with_netdev(ndev, |e| {
        e.forget_netdev();
        // Release the netdev now so its unregistration does not wait for ours.
        drop(e.shared.detach());
        match e.handle.try_get() {
            Some(dev) => {
                pr_info!("{}: {} is going away, removing\n", dev.name(), ndev.name());
                dev.unregister_queued();
            }
            // Not registered yet: newlink sees the detached netdev and backs out.
            // Or already unregistering: nothing to do.
            None => {}
        }
    });
}
