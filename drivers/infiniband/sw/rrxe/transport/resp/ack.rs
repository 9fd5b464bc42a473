// SPDX-License-Identifier: GPL-2.0

//! The responder's short answers: ACK and NAK, atomic ACK, empty READ
//! response.
//!
//! Answers reach the requester in PSN order. While READ responses are
//! pending, the `send_*` functions hold an answer back (an ACK or NAK in
//! `RespState::deferred`, the others in their resource) for
//! [`send_read_responses`](super::send_read_responses) to send in turn;
//! the `emit_*` functions build the packet into the outbox.

use crate::{
    ffi::net::NetDev,
    proto::{
        headers::{Aeth, AtomicAckEth, Bth, Syndrome},
        opcode::Opcode,
        packet::Headers,
        psn::Psn,
    },
    transport::qp::QpState_,
    transport::xmit::{self, Outbox},
};

/// The BTH of a response to the connected peer.
pub(super) fn response_bth(st: &QpState_, opcode: Opcode, psn: Psn) -> Bth {
    Bth::new(opcode, st.attr.get().dest_qp_num, psn)
}

/// Sends an ACK or NAK for `psn`, or defers it behind pending READ
/// responses.
pub(super) fn send_ack(
    st: &mut QpState_,
    ndev: &NetDev,
    out: &mut Outbox,
    psn: Psn,
    syndrome: Syndrome,
) {
    if st.resp.reads_pending {
        // A later answer acknowledges everything before it: keep the last.
        st.resp.deferred = Some((psn, syndrome));
        return;
    }
    emit_ack(st, ndev, out, psn, syndrome);
}

/// Builds an ACK or NAK (an AETH with the current MSN) into `out`.
pub(super) fn emit_ack(
    st: &QpState_,
    ndev: &NetDev,
    out: &mut Outbox,
    psn: Psn,
    syndrome: Syndrome,
) {
    let Some(path) = st.path else { return };
    let mut hdrs = Headers::new(response_bth(st, Opcode::RcAcknowledge, psn));
    hdrs.aeth = Some(Aeth {
        syndrome,
        msn: st.resp.msn,
    });
    if let Ok(p) = xmit::build::<()>(ndev, &path, st.sport, hdrs, 0, |_| Ok(())) {
        out.push(p);
    }
}

/// Sends the atomic ACK of `psn` unless READ responses are pending.
pub(super) fn send_atomic_ack(st: &QpState_, ndev: &NetDev, out: &mut Outbox, psn: Psn, orig: u64) {
    if st.resp.reads_pending {
        // Sent in order by `send_read_responses` (the resource is pending).
        return;
    }
    emit_atomic_ack(st, ndev, out, psn, orig);
}

/// Builds the atomic ACK of `psn`, carrying `orig`, into `out`.
pub(super) fn emit_atomic_ack(st: &QpState_, ndev: &NetDev, out: &mut Outbox, psn: Psn, orig: u64) {
    let Some(path) = st.path else { return };
    let mut hdrs = Headers::new(response_bth(st, Opcode::RcAtomicAcknowledge, psn));
    hdrs.aeth = Some(Aeth::ack(st.resp.msn));
    hdrs.atomic_ack_eth = Some(AtomicAckEth { orig });
    if let Ok(p) = xmit::build::<()>(ndev, &path, st.sport, hdrs, 0, |_| Ok(())) {
        out.push(p);
    }
}

/// Sends the empty READ response of `psn` unless READ responses are
/// pending.
pub(super) fn send_empty_read(st: &QpState_, ndev: &NetDev, out: &mut Outbox, psn: Psn) {
    if st.resp.reads_pending {
        // Sent in order by `send_read_responses` (the resource is pending).
        return;
    }
    emit_empty_read(st, ndev, out, psn);
}

/// The answer to a FLUSH or ATOMIC WRITE, as C rxe gives it: a READ
/// response (only) with an AETH and no payload.
pub(super) fn emit_empty_read(st: &QpState_, ndev: &NetDev, out: &mut Outbox, psn: Psn) {
    let Some(path) = st.path else { return };
    let mut hdrs = Headers::new(response_bth(st, Opcode::RcRdmaReadResponseOnly, psn));
    hdrs.aeth = Some(Aeth::ack(st.resp.msn));
    if let Ok(p) = xmit::build::<()>(ndev, &path, st.sport, hdrs, 0, |_| Ok(())) {
        out.push(p);
    }
}
