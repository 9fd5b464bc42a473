// SPDX-License-Identifier: GPL-2.0

//! Routing and sending UDP datagrams built in an [`SkBuff`].
//!
//! The headers are those RoCEv2 peers (C rxe among them) expect, and an
//! invariant CRC over them is computed by the caller, so every field is set
//! here explicitly: IPv4 with DF set, the stack's ID selection and no options;
//! IPv6 without extension headers; UDP without a checksum (zero, which the
//! receiving tunnel sockets accept for IPv6 too).

use super::{
    dst::{Dst, RouteCache, UdpTx},
    skb::{IPV4_HLEN, IPV6_HLEN, UDP_HLEN},
    NetDev, SkBuff,
};
use kernel::{error::code::*, prelude::*};

/// IP protocol number of UDP.
const IPPROTO_UDP: u8 = 17;
/// IPv4 "don't fragment" flag, in the flags/fragment offset field.
const IPV4_DF: u16 = 0x4000;

/// The UDP header for `payload_len` bytes of payload, checksum zero.
fn udp_header(tx: &UdpTx, udp_len: u16) -> [u8; UDP_HLEN] {
    let [sp0, sp1] = tx.sport.to_be_bytes();
    let [dp0, dp1] = tx.dport.to_be_bytes();
    let [l0, l1] = udp_len.to_be_bytes();
    [sp0, sp1, dp0, dp1, l0, l1, 0, 0]
}

/// The IPv4 header: no options, DF, ID and checksum left zero (the stack
/// fills them in).
fn ipv4_header(tx: &UdpTx, src: [u8; 4], dst: [u8; 4], tot_len: u16) -> [u8; IPV4_HLEN] {
    let mut h = [0u8; IPV4_HLEN];
    let [t0, t1] = tot_len.to_be_bytes();
    let [f0, f1] = IPV4_DF.to_be_bytes();
    let fixed = [
        0x45,
        tx.tos,
        t0,
        t1,
        0,
        0,
        f0,
        f1,
        tx.ttl,
        IPPROTO_UDP,
        0,
        0,
    ];
    h[..12].copy_from_slice(&fixed);
    h[12..16].copy_from_slice(&src);
    h[16..20].copy_from_slice(&dst);
    h
}

/// The IPv6 header: version, traffic class, flow label, payload length, UDP
/// as next header, hop limit, addresses.
fn ipv6_header(tx: &UdpTx, payload_len: u16) -> [u8; IPV6_HLEN] {
    let mut h = [0u8; IPV6_HLEN];
    let word0 = (6u32 << 28) | (u32::from(tx.tos) << 20) | (tx.flow_label & 0xf_ffff);
    h[..4].copy_from_slice(&word0.to_be_bytes());
    h[4..6].copy_from_slice(&payload_len.to_be_bytes());
    h[6] = IPPROTO_UDP;
    h[7] = tx.ttl;
    h[8..24].copy_from_slice(&tx.src.0);
    h[24..40].copy_from_slice(&tx.dst.0);
    h
}

/// Routes `tx.dst` in `ndev`'s namespace (through `routes` if given: the
/// route of the sender's last packet, kept), pushes the UDP and IP headers onto
/// `skb` (from [`SkBuff::alloc_udp`], v4 or v6 per `tx.dst`), calls
/// `seal(ip_header, udp_header, udp_payload)` so the caller can write an
/// invariant CRC into the payload, then sends it (`ip_local_out` /
/// `ip6_local_out`, with no socket).
///
/// Errors: `EINVAL` if `tx.src` and `tx.dst` differ in family or the buffer
/// has too little headroom; `EMSGSIZE` if the IP datagram would be larger
/// than `ndev`'s MTU; the route lookup's error (`ENETUNREACH`,
/// `EHOSTUNREACH`, ...); `ENOBUFS` if the stack dropped the packet (the
/// stack's congestion notification counts as sent). On error before sending,
/// the buffer is freed. Callable from process and softirq context, not with
/// interrupts disabled (the device's transmit path must not be entered so).
pub(crate) fn send_udp(
    ndev: &NetDev,
    routes: Option<&mut RouteCache>,
    mut skb: SkBuff,
    tx: &UdpTx,
    seal: impl FnOnce(&[u8], &[u8; UDP_HLEN], &mut [u8]),
) -> Result {
    let v6 = !tx.dst.is_v4();
    let ip_len = if v6 { IPV6_HLEN } else { IPV4_HLEN };
    if skb.headroom() < ip_len + UDP_HLEN {
        return Err(EINVAL);
    }
    // `alloc_udp` bounds the payload so that these lengths fit 16 bits.
    let payload_len = skb.payload().len();
    let udp_len = u16::try_from(payload_len + UDP_HLEN).map_err(|_| EMSGSIZE)?;
    let ip_hdr = match (tx.src.v4(), tx.dst.v4()) {
        (Some(src), Some(dst)) => {
            let tot_len = u16::try_from(usize::from(udp_len) + IPV4_HLEN).map_err(|_| EMSGSIZE)?;
            IpHeader::V4(ipv4_header(tx, src, dst, tot_len))
        }
        (None, None) => IpHeader::V6(ipv6_header(tx, udp_len)),
        _ => return Err(EINVAL),
    };
    // Never more than the device sends: with DF set the IP stack would drop
    // the datagram anyway, after an ICMP "fragmentation needed" to ourselves.
    let mtu = usize::try_from(ndev.mtu()).unwrap_or(usize::MAX);
    if ip_len + usize::from(udp_len) > mtu {
        return Err(EMSGSIZE);
    }

    let dst = match routes {
        Some(routes) => routes.route(ndev, tx)?,
        None => Dst::lookup(ndev, tx)?,
    };
    skb.set_route(ndev, dst, v6);
    skb.push_header(&udp_header(tx, udp_len), false)?;
    skb.push_header(ip_hdr.bytes(), true)?;
    if !v6 {
        // SAFETY: the route is set and the IPv4 header pushed just above.
        unsafe { skb.ip_select_ident() };
    }

    let (ip, rest) = skb.data_mut().split_at_mut_checked(ip_len).ok_or(EINVAL)?;
    let (udp, payload) = rest.split_at_mut_checked(UDP_HLEN).ok_or(EINVAL)?;
    let udp: &[u8; UDP_HLEN] = (&*udp).try_into().map_err(|_| EINVAL)?;
    seal(ip, udp, payload);

    // SAFETY: the route is set for this family and both headers are pushed.
    unsafe { skb.local_out(v6) }
}

/// An IP header of either family, built before it is pushed.
enum IpHeader {
    V4([u8; IPV4_HLEN]),
    V6([u8; IPV6_HLEN]),
}

impl IpHeader {
    fn bytes(&self) -> &[u8] {
        match self {
            IpHeader::V4(h) => h,
            IpHeader::V6(h) => h,
        }
    }
}

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kunit_tests(rrxe_net_route))]
#[cfg_attr(dropin, kunit_tests(rrxe_net_route_dropin))]
mod tests {
    use super::super::{send_udp, IpAddr, Net, RouteCache, RouteSlot, SkBuff, UdpTx};
    use kernel::{error::code::EINVAL, prelude::*};

    /// A port no one else uses in the test VM (nothing is sent to it).
    const PORT_V4: u16 = 47_912;

    /// A datagram from `src` to `dst`, to [`PORT_V4`].
    fn udp_tx(src: IpAddr, dst: IpAddr) -> UdpTx {
        UdpTx {
            src,
            dst,
            sport: 1,
            dport: PORT_V4,
            tos: 0,
            ttl: 64,
            flow_label: 0,
        }
    }

    #[test]
    fn mixed_families_are_refused() {
        let lo = Net::init().loopback();
        let Ok(skb) = SkBuff::alloc_udp(lo, false, 8) else {
            panic!("no memory")
        };
        let mut lo6 = IpAddr::default();
        lo6.0[15] = 1;
        let tx = udp_tx(lo6, IpAddr::from_v4([127, 0, 0, 1]));
        let mut sealed = false;
        assert_eq!(
            send_udp(lo, None, skb, &tx, |_, _, _| sealed = true),
            Err(EINVAL)
        );
        assert!(!sealed);
    }

    #[test]
    fn a_kept_route_serves_its_addressing_only() -> Result {
        let lo = Net::init().loopback();
        let mut routes = RouteCache::new();
        let lo4 = IpAddr::from_v4([127, 0, 0, 1]);
        let mut tx = udp_tx(lo4, lo4);
        let first = routes.route(lo, &tx)?;
        assert!(routes.keeps(lo, &tx));
        // The same addressing: the kept route itself.
        assert!(routes.route(lo, &tx)?.same_as(&first));
        // Other fields of the datagram do not change its route.
        tx.sport = 2;
        tx.tos = 4;
        assert!(routes.keeps(lo, &tx));
        assert!(routes.route(lo, &tx)?.same_as(&first));
        // Another destination is looked up, and then kept instead.
        let other = UdpTx {
            dst: IpAddr::from_v4([127, 0, 0, 2]),
            ..tx
        };
        let second = routes.route(lo, &other)?;
        assert!(routes.keeps(lo, &other) && !routes.keeps(lo, &tx));
        assert!(routes.route(lo, &other)?.same_as(&second));
        // A broadcast route is not kept (nor is a multicast one): whether
        // it loops back is decided at its lookup.
        let bcast = UdpTx {
            dst: IpAddr::from_v4([255, 255, 255, 255]),
            ..tx
        };
        routes.route(lo, &bcast)?;
        assert!(!routes.keeps(lo, &bcast) && routes.keeps(lo, &other));
        Ok(())
    }

    #[test]
    fn a_parked_route_waits_for_the_next_pass() -> Result {
        let lo = Net::init().loopback();
        let slot = KBox::pin_init(RouteSlot::new(), GFP_KERNEL)?;
        let lo4 = IpAddr::from_v4([127, 0, 0, 1]);
        let tx = udp_tx(lo4, lo4);
        let tx2 = udp_tx(lo4, IpAddr::from_v4([127, 0, 0, 2]));
        // A pass looks the route up and parks it.
        let mut pass = slot.take();
        pass.route(lo, &tx)?;
        slot.park(pass);
        // The next pass finds it; a pass at the same time finds none.
        let next = slot.take();
        assert!(next.keeps(lo, &tx));
        let mut other = slot.take();
        assert!(!other.keeps(lo, &tx));
        // Both park, the first one first: its route stays.
        other.route(lo, &tx2)?;
        slot.park(next);
        slot.park(other);
        let again = slot.take();
        assert!(again.keeps(lo, &tx) && !again.keeps(lo, &tx2));
        slot.park(again);
        // Cleared, the slot is empty.
        slot.clear();
        assert!(!slot.take().keeps(lo, &tx));
        Ok(())
    }
}
