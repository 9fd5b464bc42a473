// SPDX-License-Identifier: GPL-2.0

//! UD (and GSI) datagrams: each one a SEND into a receive of its own.
//!
//! A datagram with the wrong Q_Key, or that finds no receive, is dropped.
//! The receive gets the 40 bytes of the GRH (built from the IP header)
//! before the payload, and both must fit it before a byte is placed.

use super::{
    meta::RxMeta,
    recv_wqe::{fail_recv, post_recv_completion, recv_completion, recv_scatter, take_recv},
};
use crate::{
    logic::{
        qp_state::QpType,
        resp::{on_length_error, ud_fits, LengthError},
        wc::{WcError, WcFlags, WcStatus},
        wqe,
    },
    mem::copy::MemError,
    proto::packet::Packet,
    queues::queue::SharedQueue,
    transport::qp::{Effects, Missing, QpCtx, QpState_, Side},
};

/// The 40 bytes that precede a UD receive's payload: the IPv6 header, or
/// the IPv4 header in the last 20 bytes.
fn grh_bytes(ip_header: &[u8]) -> [u8; 40] {
    let mut grh = [0u8; 40];
    if ip_header.len() == 40 {
        grh.copy_from_slice(ip_header);
    } else if let Some(v4) = ip_header.get(..20) {
        if let Some(dst) = grh.get_mut(20..) {
            dst.copy_from_slice(v4);
        }
    }
    grh
}

/// Handles a UD or GSI datagram.
pub(super) fn on_ud(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
    meta: &RxMeta<'_>,
) {
    let Some(deth) = pkt.headers.deth else { return };
    let qkey = if ctx.ty == QpType::Gsi {
        crate::proto::headers::GSI_QKEY
    } else {
        st.attr.get().qkey
    };
    if deth.qkey != qkey {
        return;
    }
    let mut rq = rq;
    // A datagram that waited for its pages finds the receive it took.
    if !st.resp.have_recv && !take_recv(ctx, st, fx, rq.as_deref_mut()) {
        return;
    }
    // The GRH and the payload must fit the receive before a byte is placed
    // (C9-92): a datagram that does not is dropped, and the QP goes on.
    // A receive whose WQE does not decode is placed as usual, and fails.
    let room = wqe::decode_recv(&st.resp.recv, ctx.recv_max_sge()).map(|w| w.length);
    if room.is_ok_and(|len| !ud_fits(pkt.payload.len(), len)) {
        match on_length_error(ctx.ty, st.resp.recv_from_srq) {
            LengthError::CompleteInError => {
                fail_recv(ctx, st, fx, rq, pkt.headers.bth.solicited);
            }
            // Left in the RQ for the next datagram.
            LengthError::Drop | LengthError::Fatal => st.resp.have_recv = false,
        }
        return;
    }
    let grh = grh_bytes(meta.ip_header);
    let placed = match recv_scatter(ctx, st, 0, &grh)
        .and_then(|()| recv_scatter(ctx, st, grh.len() as u32, pkt.payload))
    {
        // Held, the receive kept for when it comes back.
        Err(MemError::Missing(fault)) => match st.page_missing(fx, Side::Rx, fault) {
            Missing::Wait => return,
            Missing::Fail => Err(MemError::Protection),
        },
        placed => placed,
    };
    let status = WcStatus::from(placed.map_err(WcError::from));
    st.resp.recv_offset = (grh.len() + pkt.payload.len()) as u32;
    let mut c = recv_completion(ctx, st, status, st.resp.recv_offset, deth.src_qpn);
    if let Some(imm) = pkt.headers.immdt {
        c.ex = imm.stored();
        c.wc_flags |= WcFlags::WITH_IMM;
    }
    if status == WcStatus::Success {
        c.set_network_header(meta.src.is_v4());
    }
    post_recv_completion(ctx, st, fx, rq, &c, pkt.headers.bth.solicited);
}
