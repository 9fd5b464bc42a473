// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers for the networking pieces rrxe needs: net devices and the
//! netdev notifier chain. Written to be independent of rrxe so that they
//! could move into `rust/kernel/net` unchanged.

mod netdev;
mod notifier;

pub(crate) use netdev::{NetDev, NetDevRef};
pub(crate) use notifier::{NetdevEvent, NetdevEvents, NetdevNotifier};
