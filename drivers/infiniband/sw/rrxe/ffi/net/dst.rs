// SPDX-License-Identifier: GPL-2.0

//! An output route (`struct dst_entry`), and the addressing of one UDP
//! datagram ([`UdpTx`]) that it is looked up for. Both the sender in
//! [`super::route`] and the [`super::SkBuff`] the route is handed to name
//! [`Dst`], so it lives apart from either.

use super::{IpAddr, NetDev};
use crate::ffi::rt::{new_spinlock_bh, SpinLockBh, TakenIn};
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

/// An owned reference on a route (`struct dst_entry`), released on drop
/// (any context).
///
/// # Invariants
///
/// `dst` is a valid route on which this object owns one reference.
pub(super) struct Dst {
    dst: NonNull<sys::dst_entry>,
}

// SAFETY: a reference on a route may be used and released from any thread
// and context (routes are freed after an RCU grace period). An IPv6
// route's operations live in its namespace (an IPv4 xfrm bundle's too), so
// it must be released before the namespace exits: rrxe's references are
// the skbs' (freed before the device can go), a pass's `RouteCache` and a
// QP's `RouteSlot`, which `destroy_qp` empties; every device of a
// namespace is unregistered, its QPs destroyed, in the namespace's
// `pre_exit` (`registry.rs`).
unsafe impl Send for Dst {}

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

/// What a route was looked up for: the namespace, the output device and
/// the two addresses (nothing else of a datagram changes the lookup).
#[derive(Clone, Copy, PartialEq, Eq)]
struct RouteKey {
    net: usize,
    oif: i32,
    src: IpAddr,
    dst: IpAddr,
}

impl RouteKey {
    fn of(ndev: &NetDev, tx: &UdpTx) -> Self {
        Self {
            net: ndev.net().as_raw() as usize,
            oif: ndev.ifindex(),
            src: tx.src,
            dst: tx.dst,
        }
    }
}

/// A route kept with what it was looked up for, and the cookie its
/// validity is checked against.
struct Kept {
    key: RouteKey,
    dst: Dst,
    cookie: u32,
}

/// The route of the last packet a sender sent: the next one with the same
/// addressing reuses it unless it went stale meanwhile (the route's own
/// check, as the kernel's `dst_cache` makes). Lives on the sender's stack
/// for one pass (a QP's outbox, up to 16 packets) and is parked in the
/// sender's [`RouteSlot`] between passes.
pub(crate) struct RouteCache {
    kept: Option<Kept>,
}

/// Where a sender's [`RouteCache`] waits between passes, so that a
/// connected QP looks its path up once, not once per pass (an ACK is a
/// pass of its own), as C rxe keeps one route in its QP's socket. A pass
/// takes the route out and parks it back at its end: the lock is held for
/// a move, not for the sends, and two passes at once (the requester on one
/// CPU, an ACK on another) each use their own. A kept route does not hold
/// its device back when it goes away: the stack moves its routes to the
/// blackhole device and marks them dead, so that the route's check fails.
#[pin_data]
pub(crate) struct RouteSlot {
    /// Taken in softirqs and process context, never with interrupts off
    /// (sending must not be entered so: [`super::send_udp`]).
    #[pin]
    parked: SpinLockBh<Option<Kept>>,
}

impl RouteSlot {
    /// An empty slot.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            parked <- new_spinlock_bh!(None, TakenIn::Softirq),
        })
    }

    /// The parked route, as a cache for one pass; the slot is left empty.
    pub(crate) fn take(&self) -> RouteCache {
        RouteCache {
            kept: self.parked.lock().take(),
        }
    }

    /// Parks a pass's route, unless another pass parked one meanwhile:
    /// the first parked stays, the other is released (after the lock).
    pub(crate) fn park(&self, cache: RouteCache) {
        let mut left = cache.kept;
        if left.is_none() {
            return;
        }
        {
            let mut parked = self.parked.lock();
            if parked.is_none() {
                *parked = left.take();
            }
        }
        drop(left);
    }

    /// Releases the parked route (the sender is going away: an IPv6
    /// route must not outlive its namespace).
    pub(crate) fn clear(&self) {
        let gone = self.parked.lock().take();
        drop(gone);
    }
}

impl RouteCache {
    /// An empty cache.
    pub(crate) const fn new() -> Self {
        Self { kept: None }
    }

    /// Whether the cache keeps a route for `tx` from `ndev`.
    #[cfg(CONFIG_KUNIT)]
    pub(super) fn keeps(&self, ndev: &NetDev, tx: &UdpTx) -> bool {
        let key = RouteKey::of(ndev, tx);
        self.kept.as_ref().is_some_and(|k| k.key == key)
    }

    /// The route for `tx` from `ndev`: the kept one if it is for the same
    /// addressing and still valid, else a new lookup, which is kept
    /// (unless it is of a kind never kept: [`Dst::keepable`]; a valid
    /// route kept before then stays, a stale one goes).
    pub(super) fn route(&mut self, ndev: &NetDev, tx: &UdpTx) -> Result<Dst> {
        let key = RouteKey::of(ndev, tx);
        if let Some(k) = &self.kept {
            if !k.dst.is_valid(k.cookie) {
                self.kept = None;
            } else if k.key == key {
                return Ok(k.dst.clone());
            }
        }
        let dst = Dst::lookup(ndev, tx)?;
        let v6 = !tx.dst.is_v4();
        if dst.keepable(v6) {
            self.kept = Some(Kept {
                key,
                dst: dst.clone(),
                cookie: dst.cookie(v6),
            });
        }
        Ok(dst)
    }
}

impl Dst {
    /// Whether the route is still valid, checked against `cookie` (from
    /// [`Dst::cookie`] when it was looked up).
    fn is_valid(&self, cookie: u32) -> bool {
        // SAFETY: `dst` is a valid route (type invariant).
        unsafe { sys::rrxe_dst_valid(self.dst.as_ptr(), cookie) }
    }

    /// Whether the route may be kept for later packets (not an IPv4
    /// multicast or broadcast route: whether such a route loops a copy
    /// back to this host is decided at its lookup, from the groups the
    /// device has joined, which may change without making it stale).
    fn keepable(&self, v6: bool) -> bool {
        // SAFETY: `dst` is a valid route (type invariant), an IPv6 one if
        // `v6`, else an IPv4 one (`lookup` looked it up for that family).
        unsafe { sys::rrxe_dst_keepable(self.dst.as_ptr(), v6) }
    }

    /// Whether `other` is a reference on the same route.
    #[cfg(CONFIG_KUNIT)]
    pub(super) fn same_as(&self, other: &Dst) -> bool {
        self.dst == other.dst
    }

    /// What the route's validity is checked against (an IPv6 route's
    /// cookie; 0 for IPv4).
    fn cookie(&self, v6: bool) -> u32 {
        // SAFETY: `dst` is a valid route (type invariant).
        unsafe { sys::rrxe_dst_cookie(self.dst.as_ptr(), v6) }
    }
}

impl Clone for Dst {
    fn clone(&self) -> Self {
        // SAFETY: `dst` is a valid route (type invariant), on which this
        // takes another reference.
        unsafe { sys::rrxe_dst_hold(self.dst.as_ptr()) };
        // INVARIANT: the reference just taken is the clone's.
        Self { dst: self.dst }
    }
}
