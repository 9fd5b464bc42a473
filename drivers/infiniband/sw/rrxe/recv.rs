// SPDX-License-Identifier: GPL-2.0

//! The receive path: what arrives on UDP port 4791, checked before any QP
//! sees it (framing, ICRC, P_Key, destination QP, transport), then handed
//! to the QP's responder or completer. Runs in softirq context.

use crate::{
    device::Shared,
    logic::qp_state::QpType,
    net::RxDatagram,
    proto::{
        icrc::{self, IpHeader},
        opcode::Transport,
        packet::parse_packet,
    },
    resp::RxMeta,
};

/// The BTH destination QP of multicast packets (not supported).
const MULTICAST_QPN: u32 = 0x00ff_ffff;

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
    if icrc::verify(ip, dg.udp_header(), ib).is_err() {
        return;
    }
    let bth = &pkt.headers.bth;
    if !pkey_ok(bth.pkey) || bth.dest_qpn == MULTICAST_QPN {
        return;
    }
    let Some(qp) = dev.qps.get(bth.dest_qpn as usize) else {
        return;
    };
    if !transport_matches(pkt.info().transport(), qp.ty) {
        return;
    }
    let meta = RxMeta {
        src: dg.src(),
        ip_header: dg.ip_header(),
        ndev: dg.netdev(),
    };
    qp.receive(&pkt, &meta);
}
