// SPDX-License-Identifier: GPL-2.0

//! The receive demultiplexer: what arrives on UDP port 4791, its framing,
//! destination QP and transport checked, then handed to the QP, which
//! checks the rest (ICRC, P_Key) on its home CPU
//! ([`intake`](crate::transport::intake)) before its responder or
//! completer sees it; or, for a multicast group, checked here and given to
//! the responder of every QP attached to it. Runs in softirq context.

use crate::{
    ffi::{
        net::RxDatagram,
        rt::{trace::DropReason, RxReading},
    },
    logic::{mcast::MULTICAST_QPN, qp_state::QpType},
    proto::{opcode::Transport, packet::parse_packet},
    transport::intake,
    transport::shared::Shared,
};

/// Whether packets of `transport` are for a QP of type `ty`.
fn transport_matches(transport: Transport, ty: QpType) -> bool {
    matches!(
        (transport, ty),
        (Transport::Rc, QpType::Rc)
            | (Transport::Uc, QpType::Uc)
            | (Transport::Ud, QpType::Ud | QpType::Gsi)
    )
}

/// Handles one datagram that arrived for device `dev`: finds its QP and
/// hands it over ([`QpInner::arrive`](crate::transport::qp::QpInner::arrive)),
/// which checks the rest (ICRC, P_Key) on the QP's home CPU. Anything that
/// fails a check is dropped (and counted where rxe counts it).
pub(crate) fn receive(dev: &Shared, dg: RxDatagram) {
    // From the QP's lookup to the end of what is done with it:
    // `destroy_qp` waits for this section.
    let _reading = RxReading::begin();
    let Ok(pkt) = parse_packet(dg.payload()) else {
        intake::trace_drop(&dg, DropReason::Malformed);
        return;
    };
    let (qpn, transport) = (pkt.headers.bth.dest_qpn, pkt.info().transport());
    let bulk = intake::is_bulk(&dg, &pkt);
    if qpn == MULTICAST_QPN {
        receive_multicast(dev, &dg);
        return;
    }
    let Some(qp) = dev.qps.get(qpn as usize) else {
        intake::trace_drop(&dg, DropReason::NoQp);
        return;
    };
    if !transport_matches(transport, qp.ty) {
        intake::trace_drop(&dg, DropReason::WrongTransport);
        return;
    }
    qp.arrive(dg, bulk);
}

/// A packet to the multicast QPN goes to every QP attached to the group
/// its destination address names (rxe's `rxe_rcv_mcast_pkt`). As rxe, it
/// counts as received once it passed the header checks, whether a group
/// takes it or not; a packet for no group (or to a unicast address) is
/// dropped. Only UD QPs can be attached, so only UD packets are delivered;
/// each QP checks its state and Q_Key as for any UD packet.
fn receive_multicast(dev: &Shared, dg: &RxDatagram) {
    let Some(pkt) = intake::checked(dg) else {
        return;
    };
    let meta = intake::meta(dg);
    dev.counters.received(pkt.layout.total_len);
    if pkt.info().transport() != Transport::Ud {
        return;
    }
    let Some(members) = dev.mcast.members(&dg.dst().0) else {
        return;
    };
    for qp in members.iter() {
        qp.receive_multicast(&pkt, &meta);
    }
}
