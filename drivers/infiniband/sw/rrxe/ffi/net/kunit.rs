// SPDX-License-Identifier: GPL-2.0

//! In-kernel tests of the UDP data path: tunnel sockets in the initial
//! namespace, datagrams sent with `send_udp` to them over `lo`, and the
//! header bytes seen on both ends.

use kernel::prelude::*;

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kunit_tests(rrxe_net))]
#[cfg_attr(dropin, kunit_tests(rrxe_net_dropin))]
mod tests {
    use super::super::{send_udp, IpAddr, Net, RxDatagram, SkBuff, TunnelRecv, UdpTunnel, UdpTx};
    use kernel::{
        error::code::{EADDRINUSE, EINVAL},
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

    #[pin_data]
    struct Inbox {
        #[pin]
        got: SpinLockIrq<(usize, Seen)>,
    }

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
        send_udp(lo, skb, tx, |ip, udp, payload| {
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

    #[test]
    fn mixed_families_are_refused() {
        let lo = Net::init().loopback();
        let Ok(skb) = SkBuff::alloc_udp(lo, false, 8) else {
            panic!("no memory")
        };
        let mut lo6 = IpAddr::default();
        lo6.0[15] = 1;
        let tx = UdpTx {
            src: lo6,
            dst: IpAddr::from_v4([127, 0, 0, 1]),
            sport: 1,
            dport: PORT_V4,
            tos: 0,
            ttl: 64,
            flow_label: 0,
        };
        let mut sealed = false;
        assert_eq!(send_udp(lo, skb, &tx, |_, _, _| sealed = true), Err(EINVAL));
        assert!(!sealed);
    }
}
