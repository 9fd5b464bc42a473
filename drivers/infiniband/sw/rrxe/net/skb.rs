// SPDX-License-Identifier: GPL-2.0

//! `struct sk_buff`: an owned socket buffer being built for transmission.

use super::{route::Dst, NetDev};
use crate::sys;
use core::ptr::NonNull;
use kernel::{
    error::{code::*, to_result},
    prelude::*,
};

/// Length of a UDP header.
pub(crate) const UDP_HLEN: usize = 8;
/// Length of an IPv4 header without options (the only kind we send).
pub(crate) const IPV4_HLEN: usize = 20;
/// Length of the fixed IPv6 header (we send no extension headers).
pub(crate) const IPV6_HLEN: usize = 40;

/// The largest UDP payload whose IP and UDP length fields still fit 16 bits.
fn max_udp_payload(v6: bool) -> usize {
    let ip_len_counted = if v6 { 0 } else { IPV4_HLEN };
    usize::from(u16::MAX) - UDP_HLEN - ip_len_counted
}

/// An owned `struct sk_buff`, freed on drop (counted as a drop, not a
/// consumption: a buffer that is sent is given away, not dropped).
///
/// # Invariants
///
/// - `skb` is a valid `sk_buff` of which this object owns the only reference;
///   its data is linear and not shared with a clone, so the bytes from
///   `data` to `data + len` may be read and written through `&mut self`.
/// - Outside [`super::route`], those bytes are exactly the UDP payload the
///   buffer was allocated for: headers are only pushed by `send_udp`, which
///   consumes the buffer.
pub(crate) struct SkBuff {
    skb: NonNull<sys::sk_buff>,
}

// SAFETY: An `sk_buff` that nobody else references may be used and freed from
// any thread.
unsafe impl Send for SkBuff {}
// SAFETY: `&SkBuff` only allows reading the buffer's bytes.
unsafe impl Sync for SkBuff {}

impl SkBuff {
    /// A buffer to send `len` bytes of UDP payload from `ndev` (`GFP_ATOMIC`),
    /// with headroom for the link layer (`LL_RESERVED_SPACE` and an Ethernet
    /// header), an IPv4 or IPv6 header (`v6`) and a UDP header. The `len`
    /// payload bytes are put and zeroed.
    ///
    /// `EMSGSIZE` if `len` does not fit the IP and UDP length fields,
    /// `ENOMEM` if no memory is available.
    pub(crate) fn alloc_udp(ndev: &NetDev, v6: bool, len: usize) -> Result<SkBuff> {
        if len > max_udp_payload(v6) {
            return Err(EMSGSIZE);
        }
        let ip_len = if v6 { IPV6_HLEN } else { IPV4_HLEN };
        let hdr_len = sys::ETH_HLEN as usize + ip_len + UDP_HLEN;
        // Both fit: `len` is below 64 KiB and `hdr_len` is a few bytes.
        let (hdr_len, len) = (hdr_len as u32, len as u32);
        // SAFETY: `ndev` is a valid net device.
        let skb = unsafe { sys::rrxe_skb_alloc(ndev.as_raw(), hdr_len, len) };
        // INVARIANT: a fresh, linear buffer that only we reference, whose data
        // is the `len` payload bytes just put.
        NonNull::new(skb).map(|skb| Self { skb }).ok_or(ENOMEM)
    }

    /// The UDP payload of a buffer from [`SkBuff::alloc_udp`], before it is sent.
    pub(crate) fn payload_mut(&mut self) -> &mut [u8] {
        let (data, len) = self.data_raw();
        // SAFETY: by the type invariants the `len` bytes at `data` are the
        // linear, unshared data of the buffer that `&mut self` owns.
        unsafe { core::slice::from_raw_parts_mut(data, len) }
    }

    /// The UDP payload of a buffer from [`SkBuff::alloc_udp`], before it is sent.
    pub(crate) fn payload(&self) -> &[u8] {
        let (data, len) = self.data_raw();
        // SAFETY: as in `payload_mut`, and `&self` only reads.
        unsafe { core::slice::from_raw_parts(data, len) }
    }

    fn data_raw(&self) -> (*mut u8, usize) {
        let skb = self.skb.as_ptr();
        // SAFETY: `skb` is valid by the type invariants.
        let (data, len) = unsafe { (sys::rrxe_skb_data(skb), sys::rrxe_skb_len(skb)) };
        (data, len as usize)
    }

    /// Bytes of headroom before the data.
    pub(super) fn headroom(&self) -> usize {
        // SAFETY: `skb` is valid by the type invariants.
        unsafe { sys::rrxe_skb_headroom(self.skb.as_ptr()) as usize }
    }

    /// Prepends `hdr` to the data and marks its start as the transport header
    /// (or, with `network`, the network header).
    ///
    /// `EINVAL` if the headroom is too small (never the case for a buffer
    /// from `alloc_udp` with the headers it was sized for).
    pub(super) fn push_header(&mut self, hdr: &[u8], network: bool) -> Result {
        if hdr.len() > self.headroom() {
            return Err(EINVAL);
        }
        let skb = self.skb.as_ptr();
        // Fits: below the headroom, which is below 64 KiB.
        let len = hdr.len() as u32;
        // SAFETY: `skb` is valid and unshared by the type invariants, and has
        // at least `len` bytes of headroom, so the push cannot underflow.
        let start = unsafe {
            if network {
                sys::rrxe_skb_push_network(skb, len)
            } else {
                sys::rrxe_skb_push_transport(skb, len)
            }
        };
        // SAFETY: `start` points to the `len` bytes just pushed, inside the
        // buffer we own, which cannot overlap `hdr` (a borrowed Rust slice).
        unsafe { core::ptr::copy_nonoverlapping(hdr.as_ptr(), start, hdr.len()) };
        Ok(())
    }

    /// The whole data of the buffer, headers pushed so far included.
    pub(super) fn data_mut(&mut self) -> &mut [u8] {
        self.payload_mut()
    }

    /// Hands the buffer to IP output through `dst` from `ndev`: sets the
    /// route and the protocol, clears state that must not leak into a new
    /// packet.
    pub(super) fn set_route(&mut self, ndev: &NetDev, dst: Dst, v6: bool) {
        // SAFETY: `skb` is valid by the type invariants, `ndev` is a valid
        // device (the skb keeps no reference on it: nothing reads `skb->dev`
        // before output sets it from the route), and `dst`'s reference is
        // handed to the skb.
        unsafe { sys::rrxe_skb_set_route(self.skb.as_ptr(), ndev.as_raw(), dst.into_raw(), v6) };
    }

    /// Picks the IPv4 identification of the packet, as the IP stack does.
    ///
    /// # Safety
    ///
    /// A route must have been set with [`SkBuff::set_route`], and a complete
    /// IPv4 header pushed as the network header.
    pub(super) unsafe fn ip_select_ident(&mut self) {
        // SAFETY: `skb` is valid; the caller guarantees the route and the
        // header `__ip_select_ident` reads and writes.
        unsafe { sys::rrxe_ip_select_ident(self.skb.as_ptr()) };
    }

    /// Sends the packet with `ip_local_out` or `ip6_local_out` (`v6`).
    ///
    /// # Safety
    ///
    /// A route must have been set with [`SkBuff::set_route`] for the same
    /// family, and complete IP and UDP headers pushed.
    pub(super) unsafe fn local_out(self, v6: bool) -> Result {
        let skb = self.skb.as_ptr();
        core::mem::forget(self);
        // SAFETY: we own `skb`, which the call consumes; the caller
        // guarantees its route and headers.
        to_result(unsafe { sys::rrxe_ip_local_out(skb, v6) })
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: by the type invariants we own the only reference.
        unsafe { sys::rrxe_skb_free(self.skb.as_ptr()) };
    }
}
