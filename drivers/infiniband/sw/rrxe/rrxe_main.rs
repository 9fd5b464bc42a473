// SPDX-License-Identifier: GPL-2.0

//! rrxe: software RDMA over Converged Ethernet (RoCEv2), in Rust.
//!
//! `rdma link add NAME type rrxe netdev DEV` attaches an RDMA device to an
//! Ethernet netdev. The device is driven by rdma-core's unmodified rxe
//! provider: it reports the rxe driver id and implements the rxe user ABI.
//!
//! Layout, bottom up (Documentation/design.rst, "Layering"):
//!
//! - [`ffi`]: the only raw FFI (private bindings) and the safe abstractions
//!   over the RDMA core, net devices and the kernel runtime built on it;
//! - [`proto`] (wire format) and [`logic`] (verbs rules): pure code, also
//!   tested on the host;
//! - [`dev`]: device resources: limits, counters, object tables, keys, AHs;
//! - [`mem`]: memory regions and windows, and moving bytes to and from them;
//! - [`queues`]: rings, completion queues, shared receive queues;
//! - [`transport`]: the QP engine and its roles (requester, completer,
//!   responder) and transmit;
//! - [`rx`]: UDP port 4791 and the receive demultiplexer, multicast;
//! - [`verbs`]: the ib_device operations;
//! - lifecycle glue at the top: [`link`], [`registry`], [`events`] and this
//!   module.

// Above the FFI layer no code is `unsafe` but for the few items that say
// why with an `#[allow(unsafe_code)]` (a global lock's one-time
// initialisation, a socket's lifetime contract, a macro's expansion).
#![deny(unsafe_code)]

mod dev;
mod events;
mod ffi;
mod limit;
mod link;
// Pure verbs and transport rules; not every helper is used by the driver.
#[expect(dead_code)]
mod logic;
mod mem;
mod names;
// The whole wire format, including what the driver does not send yet.
#[expect(dead_code)]
mod proto;
mod queues;
mod registry;
mod rx;
mod transport;
mod verbs;

use ffi::{ib, net};
use kernel::{prelude::*, ModuleMetadata};
use rx::tunnel;

/// `module!` takes literals only: each build names its module, description
/// and link alias here ([`names`] has the rest of what differs).
macro_rules! rrxe_module {
    ($name:tt, $description:tt, $alias:tt) => {
        module! {
            type: RrxeModule,
            name: $name,
            authors: ["The rrxe developers"],
            description: $description,
            license: "GPL",
            alias: [$alias],
            params: {
                measure_limit: bool {
                    default: false,
                    description: "At load, measure and log memcpy's and CRC-32's speed (make bench's limit line)",
                },
            },
        }
    };
}

#[cfg(not(dropin))]
rrxe_module!(
    "rrxe",
    "Soft RoCE (RoCEv2) RDMA driver in Rust",
    "rdma-link-rrxe"
);

// modinfo's description is how one tells the installed drop-in from the C
// driver's file before loading it.
#[cfg(dropin)]
rrxe_module!(
    "rdma_rxe",
    "Soft RoCE (RoCEv2) RDMA driver in Rust (rrxe, drop-in for rdma_rxe)",
    "rdma-link-rxe"
);

// Messages name this module by `names::MODULE`: it must be the name
// `module!` got, which is KBUILD_MODNAME (the Kbuild file's `obj-m`).
// (Slices' `==` is not `const`.)
const _: () = {
    let given = <RrxeModule as ModuleMetadata>::NAME.to_bytes();
    let ours = names::MODULE.as_bytes();
    let mut same = given.len() == ours.len();
    let mut i = 0;
    while same && i < ours.len() {
        same = given[i] == ours[i];
        i += 1;
    }
    assert!(same, "names::MODULE is not the module's name");
};

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
        if module_parameters::measure_limit.value() {
            // Only a figure for `make bench`: a failure to measure is not
            // one to load.
            let _ = limit::measure();
        }
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
