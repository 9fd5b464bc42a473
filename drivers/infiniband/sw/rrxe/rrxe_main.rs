// SPDX-License-Identifier: GPL-2.0

//! rrxe: software RDMA over Converged Ethernet (RoCEv2), in Rust.
//!
//! `rdma link add NAME type rrxe netdev DEV` attaches an RDMA device to an
//! Ethernet netdev. The device is driven by rdma-core's unmodified rxe
//! provider: it reports the rxe driver id and implements the rxe user ABI.
//!
//! Layout: [`sys`] is the only raw FFI; [`ib`] and [`net`] are safe
//! abstractions over the RDMA core and netdevs; the rest is driver logic in
//! safe Rust; [`proto`] (wire format) and [`logic`] (verbs rules) are pure
//! code, also tested on the host.

mod ah;
mod comp;
mod counters;
mod cq;
mod device;
mod events;
mod flush;
mod ib;
mod irq_table;
mod key_table;
mod link;
// Pure verbs and transport rules; not every helper is used by the driver.
#[allow(dead_code)]
mod logic;
mod mcast;
mod mem;
mod mr;
mod mw;
mod net;
mod params;
mod path;
mod pd;
mod post;
// The whole wire format, including what the driver does not send yet.
#[allow(dead_code)]
mod proto;
mod qp;
mod queue;
mod recv;
mod registry;
mod req;
mod resp;
mod round_robin;
mod rt;
mod srq;
mod sys;
mod tunnel;
mod xmit;

#[cfg(CONFIG_KUNIT)]
mod kunit;

use kernel::{prelude::*, ModuleMetadata};

module! {
    type: RrxeModule,
    name: "rrxe",
    authors: ["The rrxe developers"],
    description: "Soft RoCE (RoCEv2) RDMA driver in Rust",
    license: "GPL",
    alias: ["rdma-link-rrxe"],
}

/// This module, for the `owner` of the objects it hands to the kernel.
fn this_module() -> &'static ThisModule {
    &<RrxeModule as ModuleMetadata>::THIS_MODULE
}

/// The module: its fields are torn down in declaration order on unload —
/// first no new links, then no netdev events, then every device removed, and
/// last the netns hook (with no device left, it has nothing to do).
#[pin_data]
struct RrxeModule {
    #[pin]
    link: ib::LinkRegistration<link::RrxeLink>,
    #[pin]
    notifier: net::NetdevNotifier<events::RrxeEvents>,
    sweeper: registry::Sweeper,
    #[pin]
    netns: net::Pernet<registry::NetnsTeardown>,
}

impl kernel::InPlaceModule for RrxeModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        registry::init();
        tunnel::init();
        // The notifier is registered before the link type, so every device
        // ever created sees its netdev's events.
        try_pin_init!(Self {
            netns <- net::Pernet::new(),
            sweeper: registry::Sweeper,
            notifier <- net::NetdevNotifier::new(),
            link <- ib::LinkRegistration::new(),
        })
    }
}
