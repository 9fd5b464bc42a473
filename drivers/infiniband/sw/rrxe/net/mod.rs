// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers for the networking pieces rrxe needs: net devices, network
//! namespaces, the netdev notifier chain and per-netns hooks. Written to be
//! independent of rrxe so that they could move into `rust/kernel/net`
//! unchanged.

mod netdev;
mod netns;
mod notifier;
mod pernet;

pub(crate) use netdev::{NetDev, NetDevRef};
pub(crate) use netns::Net;
pub(crate) use notifier::{NetdevEvent, NetdevEvents, NetdevNotifier};
pub(crate) use pernet::{Pernet, PernetEvents};
