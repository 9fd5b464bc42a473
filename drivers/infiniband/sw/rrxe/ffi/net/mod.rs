// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers for the networking pieces rrxe needs: net devices, network
//! namespaces, the netdev notifier chain and per-netns hooks, and the UDP
//! data path (socket buffers, tunnel sockets, routed sending). Written to be
//! independent of rrxe so that they could move into `rust/kernel/net`
//! unchanged.

// The UDP data path (addr, route, skb, udp_tunnel): the transport is being
// built on it, so parts are not used yet.
#[allow(dead_code)]
mod addr;
mod netdev;
mod netns;
mod notifier;
mod pernet;
#[allow(dead_code)]
mod route;
#[allow(dead_code)]
mod skb;
#[allow(dead_code)]
mod udp_tunnel;

#[cfg(CONFIG_KUNIT)]
mod kunit;

#[allow(unused_imports)]
pub(crate) use addr::IpAddr;
pub(crate) use netdev::{NetDev, NetDevRef};
pub(crate) use netns::Net;
pub(crate) use notifier::{NetdevEvent, NetdevEvents, NetdevNotifier};
pub(crate) use pernet::{Pernet, PernetEvents};
#[allow(unused_imports)]
pub(crate) use route::{send_udp, UdpTx};
#[allow(unused_imports)]
pub(crate) use skb::{SkBuff, SkbAccount, SkbOwner};
#[allow(unused_imports)]
pub(crate) use udp_tunnel::{RxDatagram, TunnelRecv, UdpTunnel};
