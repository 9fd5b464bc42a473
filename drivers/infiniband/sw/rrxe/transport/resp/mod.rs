// SPDX-License-Identifier: GPL-2.0

//! The responder: executes request packets against local memory and
//! answers them.
//!
//! RC requests are taken strictly in PSN order. A later PSN gets one
//! sequence NAK per gap; an earlier one is a duplicate, answered again from
//! what was already done (an ACK, or a READ/atomic replayed from the
//! responder resources). Every remote address is resolved through the MR
//! table (R_Key, PD, bounds, access) before a byte moves; a refusal is a
//! NAK, never a copy.
//!
//! The responder's state is [`state`] (a field of the QP's locked state,
//! below the QP); this file hands each request to its QP type's rules:
//! [`rc`] (in order, ACKed), [`uc`] (in order, lost messages dropped) and
//! [`ud`] (datagrams). What they share has a file each: [`place`] puts
//! SEND and WRITE packets into memory, [`recv_wqe`] takes and completes
//! receive WQEs, [`read`] and [`atomic`] execute READs and atomics into the
//! responder resources, [`read`] also sending the READ responses and
//! whatever waits behind them, [`duplicate`] answers requests again,
//! [`ack`] builds the ACKs and the other short answers. [`meta`] is what a
//! packet comes with besides its IB part ([`RxMeta`]: addresses, IP
//! header, netdev), which the receive path hands in.

mod ack;
mod atomic;
mod duplicate;
mod meta;
mod place;
mod rc;
mod read;
mod recv_wqe;
pub(crate) mod state;
mod uc;
mod ud;

pub(crate) use meta::RxMeta;
pub(crate) use read::send_read_responses;
pub(crate) use state::RespState;

use crate::{
    logic::qp_state::QpType,
    mem::odp::Refusal,
    proto::{headers::NakCode, packet::Packet},
    queues::queue::SharedQueue,
    transport::qp::{Effects, Missing, QpCtx, QpState_, Side},
};

/// Handles a request packet (the caller checked the QP type, state and
/// peer). The answers, the receive CQ's handler and a fatal error are
/// left in `fx`, for after the lock.
pub(crate) fn on_request(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
    meta: &RxMeta<'_>,
) {
    match ctx.ty {
        QpType::Rc => rc::on_rc(ctx, st, fx, rq, pkt, meta.ndev),
        QpType::Uc => uc::on_uc(ctx, st, fx, rq, pkt),
        _ => ud::on_ud(ctx, st, fx, rq, pkt, meta),
    }
}

/// What the responder does about an access to local memory that did not
/// happen: `None` if it waits for pages to be faulted in (the datagram is
/// held, nothing of it done), else the NAK to answer. A fault that failed
/// is memory the process does not have: a remote access error, as rxe's
/// R_Key violation.
fn refused(st: &mut QpState_, fx: &mut Effects, r: Refusal<NakCode>) -> Option<NakCode> {
    match r {
        Refusal::Denied(code) => Some(code),
        Refusal::Missing(fault) => match st.page_missing(fx, Side::Rx, fault) {
            Missing::Wait => None,
            Missing::Fail => Some(NakCode::RemoteAccessError),
        },
    }
}
