// SPDX-License-Identifier: GPL-2.0

//! The receive demultiplexer: what arrives on UDP port 4791, checked before
//! any QP sees it (framing, ICRC, P_Key, destination QP, transport), then
//! handed to the QP's responder or completer, or, for a multicast group, to
//! the responder of every QP attached to it. Runs in softirq context.

use crate::{
    ffi::{net::RxDatagram, rxe_abi::KernelCrc32},
    logic::{mcast::MULTICAST_QPN, qp_state::QpType},
    proto::{
        icrc::{self, IpHeader},
        opcode::Transport,
        packet::{parse_packet, Packet},
    },
    transport::resp::RxMeta,
    transport::shared::Shared,
};

/// Whether a P_Key is the default partition's (full or limited member),
/// the only one in rrxe's P_Key table.
fn pkey_ok(pkey: u16) -> bool {
    pkey & 0x7fff == 0x7fff
}

/// Whether packets of `transport` are for a QP of type `ty`.
fn transport_matches(transport: Transport, ty: QpType) -> bool {
    matches!(
        (transport, ty),
        (Transport::Rc, QpType::Rc)
            | (Transport::Uc, QpType::Uc)
            | (Transport::Ud, QpType::Ud | QpType::Gsi)
    )
}

/// Handles one datagram that arrived for device `dev`. Anything that
/// fails a check is dropped (and counted where rxe counts it).
pub(crate) fn receive(dev: &Shared, dg: &RxDatagram) {
    let ib = dg.payload();
    let Ok(pkt) = parse_packet(ib) else {
        return;
    };
    let Ok(ip) = IpHeader::from_slice(dg.ip_header()) else {
        return;
    };
    if icrc::verify::<KernelCrc32>(ip, dg.udp_header(), ib).is_err() {
        return;
    }
    let bth = &pkt.headers.bth;
    if !pkey_ok(bth.pkey) {
        return;
    }
    let meta = RxMeta {
        src: dg.src(),
        dst: dg.dst(),
        ip_header: dg.ip_header(),
        ndev: dg.netdev(),
    };
    if bth.dest_qpn == MULTICAST_QPN {
        receive_multicast(dev, dg, &pkt, &meta);
        return;
    }
    let Some(qp) = dev.qps.get(bth.dest_qpn as usize) else {
        return;
    };
    if !transport_matches(pkt.info().transport(), qp.ty) {
        return;
    }
    qp.receive(&pkt, &meta);
}

/// A packet to the multicast QPN goes to every QP attached to the group
/// its destination address names (rxe's `rxe_rcv_mcast_pkt`). As rxe, it
/// counts as received once it passed the header checks, whether a group
/// takes it or not; a packet for no group (or to a unicast address) is
/// dropped. Only UD QPs can be attached, so only UD packets are delivered;
/// each QP checks its state and Q_Key as for any UD packet.
fn receive_multicast(dev: &Shared, dg: &RxDatagram, pkt: &Packet<'_>, meta: &RxMeta<'_>) {
    dev.counters.received(pkt.layout.total_len);
    if pkt.info().transport() != Transport::Ud {
        return;
    }
    let Some(members) = dev.mcast.members(&dg.dst().0) else {
        return;
    };
    for qp in members.iter() {
        qp.receive_multicast(pkt, meta);
    }
}
