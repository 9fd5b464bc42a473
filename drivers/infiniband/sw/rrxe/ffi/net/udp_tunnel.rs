// SPDX-License-Identifier: GPL-2.0

//! Kernel UDP tunnel sockets (`include/net/udp_tunnel.h`): a socket bound to
//! a port whose datagrams are handed, one by one and in softirq context, to a
//! handler instead of being queued.

use super::{
    skb::{IPV4_HLEN, IPV6_HLEN, UDP_HLEN},
    IpAddr, Net, NetDev, NetDevRef,
};
use crate::ffi::sys;
use core::ptr::{null, null_mut, NonNull};
use kernel::{error::to_result, ffi::c_int, prelude::*, sync::rcu};

/// What a tunnel does with each datagram it receives.
pub(crate) trait TunnelRecv: Send + Sync + 'static {
    /// Called in softirq context for each datagram sent to the tunnel's port.
    fn recv(&self, pkt: RxDatagram);
}

/// A received datagram: linearized, with the IP header and the UDP length
/// checked against the buffer (malformed ones are dropped before
/// [`TunnelRecv::recv`]). It holds a reference on the device it arrived on,
/// so it should not be kept for long (the device cannot finish unregistering
/// while it exists). Freed (as consumed) on drop.
///
/// # Invariants
///
/// - `skb` is a valid `sk_buff` of which this object owns one reference; its
///   data is linear and only read while this object exists.
/// - In `d`, `ip` points to `ip_len` bytes, and `udp` to `UDP_HLEN + payload_len`
///   bytes, inside that data: a whole IPv4 header (`ip_len` >= 20) or the
///   fixed IPv6 header (`ip_len` == 40, `v6`), and the UDP header whose
///   length field is `UDP_HLEN + payload_len`, followed by its payload.
pub(crate) struct RxDatagram {
    skb: NonNull<sys::sk_buff>,
    d: Stash,
}

// SAFETY: the buffer is owned and only read, and a received `sk_buff` may be
// freed from any context; `NetDevRef` is `Send`.
unsafe impl Send for RxDatagram {}
// SAFETY: `&RxDatagram` only reads the buffer's bytes.
unsafe impl Sync for RxDatagram {}

impl RxDatagram {
    /// Takes over a datagram handed to an `encap_rcv` hook; `None` (and the
    /// buffer freed) if it is malformed or cannot be linearized.
    ///
    /// # Safety
    ///
    /// `skb` must be a valid received UDP datagram whose data starts at the
    /// UDP header, whose reference the caller gives away, and whose `dev` is
    /// valid for the duration of the call (as in the UDP receive path).
    unsafe fn from_raw(skb: *mut sys::sk_buff) -> Option<Self> {
        let mut view = sys::rrxe_skb_rx {
            net: null(),
            net_len: 0,
            data: null(),
            len: 0,
            dev: null_mut(),
        };
        // SAFETY: the caller gives us a valid skb; `view` is writable.
        let parsed = if unsafe { sys::rrxe_skb_rx_view(skb, &mut view) } == 0 {
            // SAFETY: `rrxe_skb_rx_view` succeeded, so `view` describes bytes
            // of the now linear buffer, which we own and nobody writes.
            unsafe { Self::parse(&view) }
        } else {
            None
        };
        let Some((ip_len, v6, payload_len)) = parsed else {
            // SAFETY: we own the buffer and drop it.
            unsafe { sys::rrxe_skb_free(skb) };
            return None;
        };
        // SAFETY: `view.dev` is the non-null `skb->dev`, valid during the call.
        let dev = NetDevRef::new(unsafe { NetDev::from_raw(view.dev) });
        // INVARIANT: `parse` checked the header bounds within the buffer.
        Some(Self {
            // SAFETY: `skb` is valid, hence not null.
            skb: unsafe { NonNull::new_unchecked(skb) },
            d: Stash {
                dev,
                ip: view.net,
                ip_len,
                udp: view.data,
                payload_len,
                v6,
            },
        })
    }

    /// Checks the IP and UDP headers described by `view`; returns the IP
    /// header's length, whether it is IPv6, and the UDP payload's length.
    ///
    /// # Safety
    ///
    /// `view` must describe readable bytes: `net_len` at `net`, `len` at `data`.
    unsafe fn parse(view: &sys::rrxe_skb_rx) -> Option<(usize, bool, usize)> {
        // SAFETY: guaranteed by the caller.
        let net = unsafe { core::slice::from_raw_parts(view.net, view.net_len as usize) };
        // SAFETY: guaranteed by the caller.
        let data = unsafe { core::slice::from_raw_parts(view.data, view.len as usize) };

        let first = *net.first()?;
        let (ip_len, v6) = match first >> 4 {
            4 => (usize::from(first & 0xf) * 4, false),
            6 => (IPV6_HLEN, true),
            _ => return None,
        };
        if ip_len < IPV4_HLEN || ip_len > net.len() {
            return None;
        }
        let ulen: [u8; 2] = data.get(4..6)?.try_into().ok()?;
        let ulen = usize::from(u16::from_be_bytes(ulen));
        if ulen < UDP_HLEN || ulen > data.len() {
            return None;
        }
        Some((ip_len, v6, ulen - UDP_HLEN))
    }

    /// The device the datagram arrived on (`skb->dev`).
    pub(crate) fn netdev(&self) -> &NetDev {
        &self.d.dev
    }

    /// The whole IPv4 header (options included) or the fixed 40-byte IPv6
    /// header.
    pub(crate) fn ip_header(&self) -> &[u8] {
        // SAFETY: by the type invariants `ip_len` bytes at `ip` are readable
        // while `self` lives.
        unsafe { core::slice::from_raw_parts(self.d.ip, self.d.ip_len) }
    }

    /// The UDP header.
    pub(crate) fn udp_header(&self) -> &[u8; UDP_HLEN] {
        // SAFETY: by the type invariants the UDP header's bytes are readable
        // while `self` lives; `[u8; N]` has alignment 1.
        unsafe { &*self.d.udp.cast::<[u8; UDP_HLEN]>() }
    }

    /// The UDP payload: exactly the UDP length minus the header.
    pub(crate) fn payload(&self) -> &[u8] {
        // SAFETY: by the type invariants `payload_len` bytes follow the UDP
        // header and are readable while `self` lives.
        unsafe { core::slice::from_raw_parts(self.d.udp.add(UDP_HLEN), self.d.payload_len) }
    }

    /// Whether the datagram came over IPv6.
    pub(crate) fn is_v6(&self) -> bool {
        self.d.v6
    }

    /// An address of the IP header, at `v4_at` (IPv4) or `v6_at` (IPv6).
    fn addr(&self, v4_at: usize, v6_at: usize) -> IpAddr {
        let ip = self.ip_header();
        if self.d.v6 {
            let mut a = IpAddr::default();
            if let Some(bytes) = ip.get(v6_at..v6_at + 16) {
                a.0.copy_from_slice(bytes);
            }
            a
        } else {
            let mut a = [0u8; 4];
            if let Some(bytes) = ip.get(v4_at..v4_at + 4) {
                a.copy_from_slice(bytes);
            }
            IpAddr::from_v4(a)
        }
    }

    /// The source address (IPv4-mapped for IPv4).
    pub(crate) fn src(&self) -> IpAddr {
        self.addr(12, 8)
    }

    /// The destination address (IPv4-mapped for IPv4).
    pub(crate) fn dst(&self) -> IpAddr {
        self.addr(16, 24)
    }

    /// The UDP source port.
    pub(crate) fn src_port(&self) -> u16 {
        let h = self.udp_header();
        u16::from_be_bytes([h[0], h[1]])
    }

    /// The UDP destination port.
    pub(crate) fn dst_port(&self) -> u16 {
        let h = self.udp_header();
        u16::from_be_bytes([h[2], h[3]])
    }
}

/// What describes a datagram besides its buffer (the fields of the type
/// invariants of [`RxDatagram`]): what a datagram waiting in an
/// [`RxQueue`](super::RxQueue) keeps in its buffer's control block
/// (`skb->cb`, 48 bytes, 8-aligned).
#[repr(C)]
pub(super) struct Stash {
    dev: NetDevRef,
    ip: *const u8,
    ip_len: usize,
    udp: *const u8,
    payload_len: usize,
    v6: bool,
}

const _: () = assert!(core::mem::size_of::<Stash>() <= 48 && core::mem::align_of::<Stash>() <= 8);

impl RxDatagram {
    /// Takes the datagram apart: its buffer (whose reference the caller
    /// now owns) and the rest.
    pub(super) fn into_parts(self) -> (NonNull<sys::sk_buff>, Stash) {
        let me = core::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never used or dropped again, so its description
        // (and the device reference in it) moves out exactly once.
        (me.skb, unsafe { core::ptr::read(&me.d) })
    }

    /// Puts a datagram together again.
    ///
    /// # Safety
    ///
    /// `skb` and `stash` come from one [`Self::into_parts`], and the
    /// buffer's data was not changed since.
    pub(super) unsafe fn from_parts(skb: NonNull<sys::sk_buff>, stash: Stash) -> Self {
        // INVARIANT: as when the datagram was made, by the caller's promise.
        Self { skb, d: stash }
    }
}

impl Drop for RxDatagram {
    fn drop(&mut self) {
        // SAFETY: by the type invariants we own a reference on the buffer.
        unsafe { sys::rrxe_skb_consume(self.skb.as_ptr()) };
    }
}

/// The handler as stored in `sk_user_data`, whose three low bits are flags:
/// the alignment keeps them clear.
#[repr(align(8))]
struct Slot<T>(T);

/// A kernel UDP tunnel socket bound to a port in a network namespace.
///
/// # Invariants
///
/// - `sk` is an open tunnel socket that this object releases on drop; its
///   `sk_user_data` is `slot` until then.
/// - `slot` comes from `KBox::into_raw` and is freed on drop, after the
///   socket is released and an RCU grace period has passed.
pub(crate) struct UdpTunnel<T: TunnelRecv> {
    sk: NonNull<sys::sock>,
    slot: NonNull<Slot<T>>,
}

// SAFETY: the socket may be released from any thread, and `T: Send + Sync`.
unsafe impl<T: TunnelRecv> Send for UdpTunnel<T> {}
// SAFETY: `&UdpTunnel` only gives `&T`, and `T: Sync`.
unsafe impl<T: TunnelRecv> Sync for UdpTunnel<T> {}

impl<T: TunnelRecv> UdpTunnel<T> {
    /// Opens the socket in `net` (IPv4 `INADDR_ANY`, or IPv6 `in6addr_any`
    /// with v6only) on `port`; its datagrams go to `handler.recv`. IPv6
    /// datagrams with a zero UDP checksum are accepted (RoCEv2 sends none).
    /// `EADDRINUSE` when the port is taken in that namespace. Sleeps.
    ///
    /// # Safety
    ///
    /// Kernel sockets hold no reference on their namespace: the tunnel must
    /// be dropped before `net` is dismantled, at the latest from a pernet
    /// `pre_exit` or `exit` hook for `net`.
    pub(crate) unsafe fn open(net: &Net, v6: bool, port: u16, handler: T) -> Result<Self> {
        let slot = KBox::into_raw(KBox::new(Slot(handler), GFP_KERNEL)?);
        let mut sk = null_mut();
        // SAFETY: `net` is valid; `encap_recv::<T>` may be the hook of a
        // socket whose user data is a `Slot<T>`, which `slot` is, and stays
        // until `drop` (the caller keeps `net` alive that long).
        let ret = unsafe {
            sys::rrxe_udp_tunnel_open(
                net.as_raw(),
                v6,
                port,
                Some(encap_recv::<T>),
                slot.cast(),
                &mut sk,
            )
        };
        let opened = to_result(ret).and_then(|()| NonNull::new(sk).ok_or(EINVAL));
        match opened {
            // INVARIANT: the socket is open with `slot` as its user data.
            Ok(sk) => Ok(Self {
                sk,
                // SAFETY: `KBox::into_raw` never returns null.
                slot: unsafe { NonNull::new_unchecked(slot) },
            }),
            Err(e) => {
                // SAFETY: no socket was set up, so nothing else refers to `slot`.
                drop(unsafe { KBox::from_raw(slot) });
                Err(e)
            }
        }
    }

    /// The handler datagrams go to.
    pub(crate) fn handler(&self) -> &T {
        // SAFETY: by the type invariants `slot` is alive until drop.
        unsafe { &self.slot.as_ref().0 }
    }
}

impl<T: TunnelRecv> Drop for UdpTunnel<T> {
    /// Releases the socket, waits for receivers that may still see the
    /// handler (they run under RCU), then drops it. Sleeps.
    fn drop(&mut self) {
        // SAFETY: by the type invariants the socket is open and ours; this
        // clears its user data and closes it.
        unsafe { sys::udp_tunnel_sock_release(self.sk.as_ptr()) };
        rcu::synchronize_rcu();
        // SAFETY: no receiver can reach `slot` any more: the socket's user
        // data was cleared and every RCU reader that could have read it is
        // done. It came from `KBox::into_raw`.
        drop(unsafe { KBox::from_raw(self.slot.as_ptr()) });
    }
}

/// The socket's `encap_rcv` hook: takes every datagram sent to the port.
/// Always returns 0 (consumed).
///
/// # Safety
///
/// Called by the UDP stack, in an RCU read-side section, with a tunnel socket
/// whose user data is a `Slot<T>` or null, and a datagram it hands over.
unsafe extern "C" fn encap_recv<T: TunnelRecv>(
    sk: *mut sys::sock,
    skb: *mut sys::sk_buff,
) -> c_int {
    // SAFETY: `sk` is valid and we are under RCU.
    let slot = unsafe { sys::rrxe_sk_user_data(sk) }.cast::<Slot<T>>();
    if slot.is_null() {
        // The tunnel is closing.
        // SAFETY: the datagram is ours.
        unsafe { sys::rrxe_skb_free(skb) };
        return 0;
    }
    // SAFETY: the UDP stack hands over a valid datagram with a valid device.
    if let Some(pkt) = unsafe { RxDatagram::from_raw(skb) } {
        // SAFETY: a non-null user data is the live `Slot<T>` of an open
        // tunnel, which is not freed before the RCU section we are in ends.
        unsafe { &(*slot).0 }.recv(pkt);
    }
    0
}

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kunit_tests(rrxe_net_udp_tunnel))]
#[cfg_attr(dropin, kunit_tests(rrxe_net_udp_tunnel_dropin))]
mod tests {
    use super::super::{send_udp, IpAddr, Net, RxDatagram, SkBuff, TunnelRecv, UdpTunnel, UdpTx};
    use kernel::{
        error::code::EADDRINUSE,
        new_spinlock_irq,
        prelude::*,
        sync::{Arc, SpinLockIrq},
        time::{delay::fsleep, Delta},
    };

    /// Ports no one else uses in the test VM (not 4791: rdma_rxe may hold it).
    const PORT_BUSY: u16 = 47_911;

    const PORT_V4: u16 = 47_912;

    const PORT_V6: u16 = 47_913;

    const PAYLOAD: usize = 36;

    /// What a datagram looked like, on either end.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    struct Seen {
        ip: [u8; 40],
        ip_len: usize,
        udp: [u8; 8],
        payload: [u8; PAYLOAD],
        payload_len: usize,
        src: IpAddr,
        dst: IpAddr,
        sport: u16,
        on_loopback: bool,
    }

    impl Default for Seen {
        fn default() -> Self {
            Self {
                ip: [0; 40],
                ip_len: 0,
                udp: [0; 8],
                payload: [0; PAYLOAD],
                payload_len: 0,
                src: IpAddr::default(),
                dst: IpAddr::default(),
                sport: 0,
                on_loopback: false,
            }
        }
    }

    /// What a tunnel received.
    #[pin_data]
    struct Inbox {
        /// How many datagrams, and the last one.
        #[pin]
        got: SpinLockIrq<(usize, Seen)>,
    }

    /// A tunnel's receive handler that records into its inbox.
    struct Catcher(Arc<Inbox>);

    impl TunnelRecv for Catcher {
        fn recv(&self, pkt: RxDatagram) {
            let mut seen = Seen::default();
            let ip = pkt.ip_header();
            seen.ip_len = ip.len();
            if let Some(dst) = seen.ip.get_mut(..ip.len()) {
                dst.copy_from_slice(ip);
            }
            seen.udp = *pkt.udp_header();
            let p = pkt.payload();
            seen.payload_len = p.len();
            if let Some(dst) = seen.payload.get_mut(..p.len()) {
                dst.copy_from_slice(p);
            }
            seen.src = pkt.src();
            seen.dst = pkt.dst();
            seen.sport = pkt.src_port();
            seen.on_loopback = pkt.netdev().is_loopback();
            let mut got = self.0.got.lock();
            got.0 += 1;
            got.1 = seen;
        }
    }

    fn inbox() -> Result<Arc<Inbox>> {
        Arc::pin_init(
            pin_init!(Inbox { got <- new_spinlock_irq!((0, Seen::default())) }),
            GFP_KERNEL,
        )
    }

    /// Waits up to two seconds for `n` datagrams.
    fn wait_for(inbox: &Inbox, n: usize) -> (usize, Seen) {
        for _ in 0..200 {
            let got = *inbox.got.lock();
            if got.0 >= n {
                return got;
            }
            fsleep(Delta::from_millis(10));
        }
        *inbox.got.lock()
    }

    /// One's complement sum of 16-bit words, folded: 0xffff over a correct
    /// IPv4 header.
    fn csum_ok(hdr: &[u8]) -> bool {
        let mut sum: u32 = hdr
            .chunks(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)])))
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum == 0xffff
    }

    /// Sends one datagram over `lo`, sealing it with a marker in its last four
    /// bytes; returns what the seal saw.
    fn send_one(tx: &UdpTx) -> Result<Seen> {
        let lo = Net::init().loopback();
        let mut skb = SkBuff::alloc_udp(lo, !tx.dst.is_v4(), PAYLOAD)?;
        for (i, b) in skb.payload_mut().iter_mut().enumerate() {
            *b = i as u8;
        }
        let mut sealed = Seen::default();
        send_udp(lo, None, skb, tx, |ip, udp, payload| {
            sealed.ip_len = ip.len();
            sealed.ip[..ip.len()].copy_from_slice(ip);
            sealed.udp = *udp;
            let n = payload.len();
            payload[n - 4..].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
            sealed.payload_len = n;
            sealed.payload[..n].copy_from_slice(payload);
        })?;
        Ok(sealed)
    }

    #[test]
    fn tunnel_port_is_exclusive_per_family() {
        let net = Net::init();
        let Ok(inbox) = inbox() else {
            panic!("no memory")
        };
        // SAFETY: the initial namespace is never dismantled.
        let first = unsafe { UdpTunnel::open(net, false, PORT_BUSY, Catcher(inbox.clone())) };
        assert!(first.is_ok());
        // SAFETY: as above.
        let again = unsafe { UdpTunnel::open(net, false, PORT_BUSY, Catcher(inbox.clone())) };
        assert_eq!(again.err(), Some(EADDRINUSE));
        // An IPv6 v6only socket does not collide with the IPv4 one.
        // SAFETY: as above.
        let v6 = unsafe { UdpTunnel::open(net, true, PORT_BUSY, Catcher(inbox.clone())) };
        assert!(v6.is_ok());
        drop(first);
        // Closed, the port is free again.
        // SAFETY: as above.
        let reopened = unsafe { UdpTunnel::open(net, false, PORT_BUSY, Catcher(inbox)) };
        assert!(reopened.is_ok());
    }

    #[test]
    fn ipv4_datagram_round_trip_over_lo() {
        let Ok(inbox) = inbox() else {
            panic!("no memory")
        };
        // SAFETY: the initial namespace is never dismantled.
        let tunnel =
            unsafe { UdpTunnel::open(Net::init(), false, PORT_V4, Catcher(inbox.clone())) };
        assert!(tunnel.is_ok());
        let lo4 = IpAddr::from_v4([127, 0, 0, 1]);
        let tx = UdpTx {
            src: lo4,
            dst: lo4,
            sport: 0xc123,
            dport: PORT_V4,
            tos: 0x28,
            ttl: 0x3f,
            flow_label: 0x12345,
        };
        let sealed = send_one(&tx);
        assert!(sealed.is_ok());
        let Ok(sealed) = sealed else { return };
        let (count, got) = wait_for(&inbox, 1);
        assert_eq!(count, 1);

        // What the seal saw: the header as sent, checksum still zero.
        let ip = &sealed.ip[..20];
        assert_eq!(sealed.ip_len, 20);
        assert_eq!(&ip[..4], &[0x45, 0x28, 0, 20 + 8 + PAYLOAD as u8]);
        assert_eq!(&ip[6..12], &[0x40, 0, 0x3f, 17, 0, 0]);
        assert_eq!(&ip[12..20], &[127, 0, 0, 1, 127, 0, 0, 1]);
        let [p0, p1] = PORT_V4.to_be_bytes();
        assert_eq!(sealed.udp, [0xc1, 0x23, p0, p1, 0, 8 + PAYLOAD as u8, 0, 0]);

        // What arrived: the same bytes, with only the checksum filled in.
        assert_eq!(got.ip_len, 20);
        assert_eq!(&got.ip[..10], &ip[..10]);
        assert_eq!(&got.ip[12..20], &ip[12..20]);
        assert!(csum_ok(&got.ip[..20]));
        assert_eq!(got.udp, sealed.udp);
        assert_eq!(got.payload_len, PAYLOAD);
        assert_eq!(got.payload, sealed.payload);
        assert_eq!(&got.payload[PAYLOAD - 4..], &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(got.payload[5], 5);
        assert_eq!((got.src, got.dst, got.sport), (lo4, lo4, 0xc123));
        assert!(got.on_loopback);
        drop(tunnel);
    }

    #[test]
    fn ipv6_datagram_round_trip_over_lo() {
        let Ok(inbox) = inbox() else {
            panic!("no memory")
        };
        // SAFETY: the initial namespace is never dismantled.
        let tunnel = unsafe { UdpTunnel::open(Net::init(), true, PORT_V6, Catcher(inbox.clone())) };
        assert!(tunnel.is_ok());
        let mut lo6 = IpAddr::default();
        lo6.0[15] = 1;
        let tx = UdpTx {
            src: lo6,
            dst: lo6,
            sport: 0xc124,
            dport: PORT_V6,
            tos: 0x28,
            ttl: 0x3f,
            flow_label: 0x12345,
        };
        let sealed = send_one(&tx);
        assert!(sealed.is_ok());
        let Ok(sealed) = sealed else { return };
        let (count, got) = wait_for(&inbox, 1);
        assert_eq!(count, 1);

        // Version 6, traffic class 0x28, flow label 0x12345, length, UDP, hops.
        assert_eq!(sealed.ip_len, 40);
        assert_eq!(
            &sealed.ip[..8],
            &[0x62, 0x81, 0x23, 0x45, 0, 8 + PAYLOAD as u8, 17, 0x3f]
        );
        assert_eq!(&sealed.ip[8..24], &lo6.0);
        assert_eq!(&sealed.ip[24..40], &lo6.0);
        // No UDP checksum, and the receiving tunnel accepts that.
        let [p0, p1] = PORT_V6.to_be_bytes();
        assert_eq!(sealed.udp, [0xc1, 0x24, p0, p1, 0, 8 + PAYLOAD as u8, 0, 0]);

        assert_eq!(got.ip_len, 40);
        assert_eq!(got.ip, sealed.ip);
        assert_eq!(got.udp, sealed.udp);
        assert_eq!(got.payload, sealed.payload);
        assert_eq!((got.src, got.dst, got.sport), (lo6, lo6, 0xc124));
        assert!(got.on_loopback);
        drop(tunnel);
    }
}
