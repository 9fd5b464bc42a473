// SPDX-License-Identifier: GPL-2.0

//! An output route (`struct dst_entry`), and the addressing of one UDP
//! datagram ([`UdpTx`]) that it is looked up for. Both the sender in
//! [`super::route`] and the [`super::SkBuff`] the route is handed to name
//! [`Dst`], so it lives apart from either.

use super::{IpAddr, NetDev};
use crate::ffi::sys;
use core::ptr::NonNull;
use kernel::{
    error::{code::*, from_err_ptr},
    prelude::*,
};

/// Addressing of one datagram.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UdpTx {
    /// Source address; must be of the same family as `dst`.
    pub(crate) src: IpAddr,
    /// Destination: IPv4-mapped sends IPv4, anything else IPv6.
    pub(crate) dst: IpAddr,
    /// UDP source port.
    pub(crate) sport: u16,
    /// UDP destination port.
    pub(crate) dport: u16,
    /// IPv4 TOS / IPv6 traffic class.
    pub(crate) tos: u8,
    /// IPv4 TTL / IPv6 hop limit.
    pub(crate) ttl: u8,
    /// IPv6 flow label (low 20 bits; ignored for IPv4). C rxe sends 0.
    pub(crate) flow_label: u32,
}

/// An owned reference on a route (`struct dst_entry`).
///
/// # Invariants
///
/// `dst` is a valid route on which this object owns one reference.
pub(super) struct Dst {
    dst: NonNull<sys::dst_entry>,
}

impl Dst {
    /// Looks up the output route for UDP from `tx.src` to `tx.dst` through
    /// `ndev`, in `ndev`'s namespace.
    pub(super) fn lookup(ndev: &NetDev, tx: &UdpTx) -> Result<Self> {
        let net = ndev.net().as_raw();
        let oif = ndev.ifindex();
        let dst = match (tx.src.v4(), tx.dst.v4()) {
            // SAFETY: `net` is `ndev`'s namespace, alive while `ndev` is;
            // the addresses are 4-byte arrays that outlive the call.
            (Some(s), Some(d)) => unsafe { sys::rrxe_route4(net, oif, s.as_ptr(), d.as_ptr()) },
            // SAFETY: as above, with 16-byte arrays.
            (None, None) => unsafe {
                sys::rrxe_route6(net, oif, tx.src.0.as_ptr(), tx.dst.0.as_ptr())
            },
            _ => return Err(EINVAL),
        };
        let dst = from_err_ptr(dst)?;
        // INVARIANT: a successful lookup returns a route with a reference
        // that is now ours.
        NonNull::new(dst)
            .map(|dst| Self { dst })
            .ok_or(EHOSTUNREACH)
    }

    /// Gives the reference away (to an skb).
    pub(super) fn into_raw(self) -> *mut sys::dst_entry {
        let dst = self.dst.as_ptr();
        core::mem::forget(self);
        dst
    }
}

impl Drop for Dst {
    fn drop(&mut self) {
        // SAFETY: by the type invariant we own one reference.
        unsafe { sys::rrxe_dst_release(self.dst.as_ptr()) };
    }
}
