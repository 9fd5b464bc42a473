// SPDX-License-Identifier: GPL-2.0

//! UC requests: in order or not at all.
//!
//! UC has no ACKs and no retries. A packet lost before a message's end
//! drops the rest of that message; the responder resynchronises on the
//! next first packet, which also ends a message still in progress (the
//! sender gave up on it). A packet that breaks the rules, or that cannot
//! be placed, drops the rest of its message too; nothing is answered.

use super::{
    place::{check_length, check_sequence, place, Placement},
    state::InProgress,
};
use crate::{
    logic::resp::dma_len_ok,
    proto::packet::Packet,
    queues::queue::SharedQueue,
    transport::qp::{Effects, QpCtx, QpState_},
};

/// Handles a UC request packet.
pub(super) fn on_uc(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
) {
    let psn = pkt.headers.bth.psn;
    let info = pkt.info();
    // What a packet that waits for its pages puts back, to come back as
    // if it had not been seen.
    let before = (st.resp.psn, st.resp.cur, st.resp.recv_offset);
    if psn != st.resp.psn && !info.is_first() {
        // A lost packet: drop the rest of this message; resynchronise on
        // the next first packet.
        st.resp.psn = psn.next();
        st.resp.cur = InProgress::Drop;
        return;
    }
    st.resp.psn = psn.next();
    if info.is_first() {
        // A first (or only) packet starts a message whatever came before:
        // after a gap, or while a message is still in progress (IBA class
        // D1: the message in progress is dropped, this one may be valid).
        // The receive the dropped message used is kept for this one.
        st.resp.cur = InProgress::None;
        st.resp.recv_offset = 0;
    } else if st.resp.cur == InProgress::Drop {
        return;
    }
    if check_sequence(st.resp.cur, info).is_err()
        || check_length(st.mtu, info, pkt.payload.len()).is_err()
        || pkt.headers.reth.is_some_and(|r| !dma_len_ok(r.len))
    {
        st.resp.cur = if info.is_last() {
            InProgress::None
        } else {
            InProgress::Drop
        };
        return;
    }
    match place(ctx, st, fx, rq, pkt) {
        Ok(()) => {}
        Err(Placement::Wait) => (st.resp.psn, st.resp.cur, st.resp.recv_offset) = before,
        Err(_) => {
            st.resp.cur = if info.is_last() {
                InProgress::None
            } else {
                InProgress::Drop
            };
            if !st.resp.recv_from_srq {
                st.resp.have_recv = false;
            }
        }
    }
}
