// SPDX-License-Identifier: GPL-2.0

//! RC requests with a PSN already taken, answered again.
//!
//! Nothing is executed twice: a READ is replayed from its responder
//! resource (only for a part of what it named), an atomic answered with
//! the value it found, a FLUSH or ATOMIC WRITE with its empty READ
//! response, a SEND or WRITE that asks for one with an ACK of the last
//! PSN taken.

use super::{
    ack::{send_ack, send_atomic_ack, send_empty_read},
    state::Resource,
};
use crate::{
    ffi::net::NetDev,
    logic::mr::REMOTE_READ,
    proto::{headers::Syndrome, packet::Packet},
    transport::qp::QpState_,
    transport::xmit::Outbox,
};

/// A request with a PSN already taken: answer it again.
pub(super) fn duplicate(st: &mut QpState_, pkt: &Packet<'_>, ndev: &NetDev, out: &mut Outbox) {
    let psn = pkt.headers.bth.psn;
    let info = pkt.info();
    if info.is_read() {
        // A requester asks again for a whole READ (same PSN) or, as C rxe
        // does, for the rest of it from its first missing response. It is
        // replayed from the resource the READ left, and only for a part of
        // what that READ named (`ReadReq::replay`); a duplicate that names
        // anything else, finds no resource, or comes when the QP no longer
        // allows remote reads, is dropped. Every response still goes
        // through the MR table.
        let Some(reth) = pkt.headers.reth else {
            return;
        };
        if st.attr.get().qp_access_flags as u32 & REMOTE_READ == 0 {
            return;
        }
        let mtu = st.mtu;
        for r in st.resp.res.iter_mut() {
            if let Resource::Read { orig, .. } = *r {
                if orig.holds(psn) {
                    if let Some(cur) = orig.replay(psn, reth, mtu) {
                        *r = Resource::Read { cur, orig, next: 0 };
                        st.resp.reads_pending = true;
                    }
                    break;
                }
            }
        }
        return;
    }
    if info.is_flush() || info.is_atomic_write() {
        // Done already: answered again (even when its resource was reused,
        // unlike rxe, which drops the duplicate then).
        send_empty_read(st, ndev, out, psn);
        return;
    }
    if info.is_atomic() {
        let found = st.resp.res.iter().find_map(|r| match *r {
            Resource::Atomic { psn: p, orig, .. } if p == psn => Some(orig),
            _ => None,
        });
        if let Some(orig) = found {
            send_atomic_ack(st, ndev, out, psn, orig);
        }
        return;
    }
    if pkt.headers.bth.ack_req {
        let last = st.resp.psn.prev();
        send_ack(st, ndev, out, last, Syndrome::ACK_UNLIMITED);
    }
}
