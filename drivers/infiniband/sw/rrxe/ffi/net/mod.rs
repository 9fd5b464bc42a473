// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers for the networking pieces rrxe needs: net devices, network
//! namespaces, the netdev notifier chain and per-netns hooks, and the UDP
//! data path (socket buffers, tunnel sockets, routed sending). Written to be
//! independent of rrxe so that they could move into `rust/kernel/net`
//! unchanged.

mod addr;
mod dst;
mod netdev;
mod netns;
mod notifier;
mod pernet;
mod route;
mod rx_queue;
mod skb;
// The abstraction is complete; rrxe does not use every part of it.
#[expect(dead_code)]
mod udp_tunnel;

pub(crate) use addr::IpAddr;
pub(crate) use dst::{RouteCache, RouteSlot, UdpTx};
pub(crate) use netdev::{NetDev, NetDevRef};
pub(crate) use netns::Net;
pub(crate) use notifier::{NetdevEvent, NetdevEvents, NetdevNotifier};
pub(crate) use pernet::{Pernet, PernetEvents};
pub(crate) use route::send_udp;
pub(crate) use rx_queue::RxQueue;
pub(crate) use skb::{SkBuff, SkbAccount, SkbOwner};
pub(crate) use udp_tunnel::{RxDatagram, TunnelRecv, UdpTunnel};
