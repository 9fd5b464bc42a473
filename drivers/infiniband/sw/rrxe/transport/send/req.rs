// SPDX-License-Identifier: GPL-2.0

//! The requester: turns send WQEs into request packets.
//!
//! Every WQE the requester starts becomes a [`Flight`], in SQ order (see
//! [`super::flights`]). The requester's cursor names the flight it is
//! sending and the packet within it; a retransmission moves the cursor
//! back, and since packet `i` of a message always carries the same bytes
//! (see [`logic::segment`]) resending is just sending again.

use super::flights::{Flight, FlightOp};
use crate::{
    dev::path::Path,
    logic::{
        qp_state::QpType,
        segment::{packet_count, packet_span, position, request_opcode, Position, ReqKind},
        wc::{WcError, WcOpcode, WcResult, WcStatus},
        wqe::{self, Payload, SendOp, SendWqe, SEND_FENCE, SEND_SIGNALED, SEND_SOLICITED},
    },
    mem::{
        copy::{self, MemError},
        odp::PageFault,
    },
    proto::{
        headers::{AtomicEth, Bth, Deth, Ieth, ImmDt, Reth},
        opcode::Transport,
        packet::Headers,
    },
    queues::queue::SharedQueue,
    transport::qp::{Effects, Missing, QpCtx, QpState_, Side},
    transport::xmit::{self, BuildError},
};

/// How a requester pass ended.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReqEnd {
    /// Nothing more to send now.
    Idle,
    /// The outbox is full, or every flight slot is taken and the oldest
    /// is done; more may be sent once it is retired.
    More,
}

/// The transport of a QP type.
fn transport(ty: QpType) -> Transport {
    match ty {
        QpType::Rc => Transport::Rc,
        QpType::Uc => Transport::Uc,
        _ => Transport::Ud,
    }
}

/// The completion opcode and flight kind of a WQE.
fn classify(op: &SendOp) -> (WcOpcode, FlightOp, Option<ReqKind>) {
    match *op {
        SendOp::Send { imm, inv_rkey } => (
            WcOpcode::Send,
            FlightOp::SendWrite,
            Some(ReqKind::Send {
                imm: imm.is_some(),
                inv: inv_rkey.is_some(),
            }),
        ),
        SendOp::Write { imm, .. } => (
            WcOpcode::RdmaWrite,
            FlightOp::SendWrite,
            Some(ReqKind::Write { imm: imm.is_some() }),
        ),
        SendOp::Read { .. } => (WcOpcode::RdmaRead, FlightOp::Read, Some(ReqKind::Read)),
        SendOp::CmpSwap { .. } => (WcOpcode::CompSwap, FlightOp::Atomic, Some(ReqKind::CmpSwap)),
        SendOp::FetchAdd { .. } => (
            WcOpcode::FetchAdd,
            FlightOp::Atomic,
            Some(ReqKind::FetchAdd),
        ),
        SendOp::LocalInv { .. } => (WcOpcode::LocalInv, FlightOp::Local, None),
        SendOp::RegMr { .. } => (WcOpcode::RegMr, FlightOp::Local, None),
        SendOp::BindMw { .. } => (WcOpcode::BindMw, FlightOp::Local, None),
        // Both complete when acknowledged, like a WRITE.
        SendOp::AtomicWrite { .. } => (
            WcOpcode::AtomicWrite,
            FlightOp::SendWrite,
            Some(ReqKind::AtomicWrite),
        ),
        SendOp::Flush { .. } => (WcOpcode::Flush, FlightOp::SendWrite, Some(ReqKind::Flush)),
    }
}

/// Runs a local operation; its outcome is its completion's status.
fn local_op(ctx: &QpCtx<'_>, op: &SendOp) -> WcResult {
    // BIND_MW, and LOCAL_INV of a window.
    if let Some(done) = crate::mem::mw::local_op(ctx.mem, op) {
        return done;
    }
    let mrs = ctx.mem.mrs;
    let ok = match *op {
        // Only a region of the QP's PD: a process must not invalidate a
        // kernel consumer's registration. (C rxe's `rxe_invalidate_mr`
        // does not check the PD.)
        SendOp::LocalInv { rkey } => mrs
            .get(rkey)
            .is_some_and(|mr| mr.in_pd(ctx.mem.pd) && mr.invalidate(rkey).is_ok()),
        // Only kernel consumers may register (a process could write this
        // opcode into its own ring). The MR is the one at the key's index.
        SendOp::RegMr { key, access, iova } => {
            !ctx.is_user
                && mrs.get_index(key).is_some_and(|mr| {
                    mr.in_pd(ctx.mem.pd) && mr.register_mapped(key, access, iova).is_ok()
                })
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(WcError::LocQpOp)
    }
}

/// Sends what the SQ holds, as far as the window, the fences and the
/// outbox (`fx.out`) allow. Called with the QP's lock (`st`) and SQ lock
/// held.
pub(crate) fn step(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    sq: &SharedQueue,
    ndev: &crate::ffi::net::NetDev,
) -> ReqEnd {
    loop {
        if !fx.out.has_room() {
            return ReqEnd::More;
        }
        if st.send.rnr_waiting() || !st.can_send() {
            return ReqEnd::Idle;
        }
        // Too many of this QP's packets in the IP stack: their destructor
        // reschedules the QP.
        if ctx.tx_paused() {
            return ReqEnd::Idle;
        }
        if st.send.caught_up() && !start_next(ctx, st, sq) {
            // Every flight slot taken, the oldest flight done (local
            // operations end as they start): the completer retires it
            // after this step, and then the requester must go on. Nothing
            // else would start the WQEs left: no answer is due for a
            // local operation (rtrs posts 512 REG_MRs and a SEND at once).
            let flights = st.send.flights();
            if flights.is_full() && flights.get(0).is_some_and(|f| f.is_done()) {
                return ReqEnd::More;
            }
            return ReqEnd::Idle;
        }
        if !send_one(ctx, st, fx, sq, ndev) {
            return ReqEnd::Idle;
        }
    }
}

/// Starts the next WQE of the SQ as a new flight; `false` when there is
/// none or it must wait (window, fence, READ/atomic depth).
fn start_next(ctx: &QpCtx<'_>, st: &mut QpState_, sq: &SharedQueue) -> bool {
    if st.sqd() {
        // SQD: finish what was started, start nothing new.
        return false;
    }
    let n = st.send.flights().len();
    if st.send.flights().is_full() || !sq.peek_nth(n as u32, &mut st.send.slot) {
        return false;
    }
    let max_rd = u32::from(st.attr.get().max_rd_atomic).max(1);
    let mtu = st.mtu;
    let ud = matches!(ctx.ty, QpType::Ud | QpType::Gsi);
    let decoded = wqe::decode_send(
        &st.send.slot,
        ctx.ty,
        ctx.cap.max_send_sge,
        ctx.cap.max_inline_data,
    );
    let mut f = Flight {
        signaled: ctx.sq_sig_all,
        first_psn: st.send.psn(),
        ..Default::default()
    };
    match decoded {
        Err(_) => {
            f.wr_id = wqe_wr_id(&st.send.slot);
            f.op = FlightOp::Local;
            f.finish(WcStatus::LocQpOpErr);
            f.wc_opcode = WcOpcode::Send;
        }
        Ok(w) => {
            let (wc_opcode, op, _) = classify(&w.op);
            f.wr_id = w.wr_id;
            f.op = op;
            f.wc_opcode = wc_opcode;
            f.length = w.completion_length();
            f.signaled |= w.flags & SEND_SIGNALED != 0;
            let fence = w.flags & SEND_FENCE != 0;
            let counted = w.op.uses_initiator_depth();
            if fence || counted {
                // A fence waits for every counted operation, as rxe's.
                let depth = st.send.initiator_depth();
                if (fence && depth > 0) || (counted && depth >= max_rd) {
                    return false;
                }
            }
            match op {
                FlightOp::Local => {
                    f.finish(local_op(ctx, &w.op).into());
                }
                FlightOp::Read => {
                    f.npkts = 1;
                    f.npsn = packet_count(w.length, mtu);
                }
                FlightOp::Atomic => {
                    f.npkts = 1;
                    f.npsn = 1;
                }
                // A datagram is one packet. One longer than the MTU is not
                // sent, and not an error either (IBA C10-93.1.1): it
                // completes successfully, as in rxe.
                FlightOp::SendWrite if ud && w.length > mtu => {
                    f.finish(WcStatus::Success);
                    f.op = FlightOp::Local;
                }
                FlightOp::SendWrite => {
                    f.npkts = packet_count(w.length, mtu);
                    f.npsn = f.npkts;
                }
            }
            // A READ is one request packet: it starts while its first PSN
            // is inside the window, as C rxe's, however many responses it
            // asks for (they slide the window as they come). Counting them
            // all kept a third READ of 64 KiB from reaching the responder
            // before it had sent the first two, which then idled between
            // READs (rrxe's `ib_read_bw` at 0.6 of C rxe's).
            let count = match f.op {
                FlightOp::Read => 1,
                _ => f.npsn.min(16),
            };
            if ctx.ty == QpType::Rc
                && f.npsn > 0
                && !st
                    .send
                    .window()
                    .open(st.send.oldest_unacked(), st.send.psn(), count)
            {
                return false;
            }
        }
    }
    st.send.start(f, crate::ffi::rt::now_ns())
}

/// The `wr_id` at the start of any send WQE.
fn wqe_wr_id(slot: &[u8]) -> u64 {
    slot.first_chunk::<8>()
        .map_or(0, |b| u64::from_ne_bytes(*b))
}

/// Builds the next packet of the cursor's flight into `fx.out` (an RC one
/// asks for the retransmit timer); `false` if nothing was sent (flight
/// finished without packets, or must wait).
fn send_one(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    sq: &SharedQueue,
    ndev: &crate::ffi::net::NetDev,
) -> bool {
    st.send.skip_acked();
    let i = st.send.cursor();
    let Some(f) = st.send.flights().get(i).copied() else {
        return false;
    };
    if f.op == FlightOp::Local || st.send.pkt() >= f.npkts {
        st.send.next_flight();
        return true;
    }
    // A READ asked again starts at its first missing response.
    let psn = f.first_psn.add(st.send.pkt() + f.read_next);
    let rc = ctx.ty == QpType::Rc;
    let oldest = st.send.oldest_unacked();
    let window = st.send.window();
    if rc && !window.open(oldest, psn, 1) {
        return false;
    }
    // The last packet the window lets out asks for an ACK: nothing else
    // may follow to make the responder answer (a retransmitted run
    // often ends there, mid-message).
    let window_edge = rc && !window.open(oldest, psn.next(), 1);
    if !sq.peek_nth(i as u32, &mut st.send.slot) {
        return false;
    }
    // The slot copy is lent out while the WQE it holds is in use.
    let slot = core::mem::take(&mut st.send.slot);
    let built = match wqe::decode_send(&slot, ctx.ty, ctx.cap.max_send_sge, ctx.cap.max_inline_data)
    {
        Ok(w) => build_request(ctx, st, &w, &f, ndev, window_edge),
        Err(_) => Err(WcError::LocQpOp),
    };
    st.send.slot = slot;
    match built {
        Ok(Built::Packet(pkt)) => fx.out.push(pkt),
        // No path or no AH (UD): nothing to send now; retried later.
        Ok(Built::Later) => return false,
        // Its payload's pages are not mapped: sent once they are.
        Ok(Built::Missing(fault)) => match st.page_missing(fx, Side::Tx, fault) {
            Missing::Wait => return false,
            Missing::Fail => {
                st.send.fail_flight(i, WcError::LocProt);
                return true;
            }
        },
        Err(e) => {
            st.send.fail_flight(i, e);
            return true;
        }
    }
    if st.send.packet_sent(f.npkts) && ctx.ty != QpType::Rc {
        st.send.sent_unreliable(i);
    }
    if ctx.ty == QpType::Rc {
        fx.arm_retransmit();
    }
    true
}

/// The path and source port a packet of this QP takes to `wqe`'s peer.
fn route(ctx: &QpCtx<'_>, st: &QpState_, w: &SendWqe<'_>) -> Option<(Path, u16, u32, u32)> {
    match (ctx.ty, w.ud.as_ref()) {
        (QpType::Ud | QpType::Gsi, Some(ud)) => {
            // Only a handle of the QP's own PD (rxe's `rxe_get_av`): the
            // number in the WQE may be any handle of the device, another
            // process's included.
            let ah = ctx.ahs.get(ud.ah_num).filter(|ah| ah.in_pd(ctx.mem.pd))?;
            // A Q_Key with the high bit set means "use the QP's own".
            let qkey = if ud.remote_qkey & 0x8000_0000 != 0 {
                st.attr.get().qkey
            } else {
                ud.remote_qkey
            };
            Some((ah.path()?, st.sport, ud.remote_qpn, qkey))
        }
        (QpType::Rc | QpType::Uc, _) => Some((st.path?, st.sport, st.attr.get().dest_qp_num, 0)),
        _ => None,
    }
}

/// A request packet, or why there is none now.
enum Built {
    /// Built.
    Packet(xmit::TxPacket),
    /// It cannot be sent yet (no path, no buffer); tried again later.
    Later,
    /// Pages of its payload, in a region paged on demand, are not mapped.
    Missing(PageFault),
}

/// Builds packet `st.send.pkt()` of flight `f` from its WQE `w`. An error
/// fails the WQE.
fn build_request(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    w: &SendWqe<'_>,
    f: &Flight,
    ndev: &crate::ffi::net::NetDev,
    window_edge: bool,
) -> WcResult<Built> {
    let (_, _, kind) = classify(&w.op);
    let kind = kind.ok_or(WcError::LocQpOp)?;
    let Some((path, sport, dest_qpn, qkey)) = route(ctx, st, w) else {
        return if matches!(ctx.ty, QpType::Ud | QpType::Gsi) {
            // No such AH, one of another PD, or no path: the WQE cannot be
            // sent; it fails and the QP goes to ERR, as in rxe.
            Err(WcError::LocQpOp)
        } else {
            Ok(Built::Later)
        };
    };
    let idx = st.send.pkt();
    let pos = position(idx, f.npkts);
    let opcode = request_opcode(transport(ctx.ty), kind, pos).ok_or(WcError::LocQpOp)?;
    // A READ asked again starts at its first missing response.
    let psn = f.first_psn.add(idx + f.read_next);
    let mut bth = Bth::new(opcode, dest_qpn, psn);
    let last = matches!(pos, Position::Last | Position::Only);
    bth.solicited = last && w.flags & SEND_SOLICITED != 0;
    if st.send.ack_due(last || window_edge) {
        bth.ack_req = ctx.ty == QpType::Rc;
    }
    let mut hdrs = Headers::new(bth);
    let (offset, len) = match w.op {
        SendOp::Read { remote_addr, rkey } => {
            let done = f.read_next.saturating_mul(st.mtu).min(w.length);
            hdrs.reth = Some(Reth {
                va: remote_addr.wrapping_add(u64::from(done)),
                rkey,
                len: w.length - done,
            });
            (0, 0)
        }
        SendOp::CmpSwap {
            remote_addr,
            rkey,
            compare,
            swap,
        } => {
            hdrs.atomic_eth = Some(AtomicEth {
                va: remote_addr,
                rkey,
                swap_add: swap,
                compare,
            });
            (0, 0)
        }
        SendOp::FetchAdd {
            remote_addr,
            rkey,
            add,
        } => {
            hdrs.atomic_eth = Some(AtomicEth {
                va: remote_addr,
                rkey,
                swap_add: add,
                compare: 0,
            });
            (0, 0)
        }
        SendOp::Write {
            remote_addr,
            rkey,
            imm,
        } => {
            if matches!(pos, Position::First | Position::Only) {
                hdrs.reth = Some(Reth {
                    va: remote_addr,
                    rkey,
                    len: w.length,
                });
            }
            if last {
                hdrs.immdt = imm.map(ImmDt::from_stored);
            }
            packet_span(w.length, st.mtu, idx).ok_or(WcError::LocLen)?
        }
        SendOp::Send { imm, inv_rkey } => {
            if last {
                hdrs.immdt = imm.map(ImmDt::from_stored);
                hdrs.ieth = inv_rkey.map(|rkey| Ieth { rkey });
            }
            packet_span(w.length, st.mtu, idx).ok_or(WcError::LocLen)?
        }
        SendOp::AtomicWrite { .. } | SendOp::Flush { .. } => {
            crate::transport::flush::request_headers(&w.op, &mut hdrs).ok_or(WcError::LocQpOp)?
        }
        _ => return Err(WcError::LocQpOp),
    };
    if matches!(ctx.ty, QpType::Ud | QpType::Gsi) {
        let src_qpn = if ctx.ty == QpType::Gsi { 1 } else { ctx.qpn };
        hdrs.deth = Some(Deth { qkey, src_qpn });
    }
    let mrs = ctx.mem.mrs;
    let pd = ctx.mem.pd;
    let pkt = xmit::build(ndev, &path, sport, hdrs, len as usize, |dst| {
        match &w.payload {
            Payload::Inline(data) => {
                let data = data
                    .get(offset as usize..offset as usize + dst.remaining())
                    .ok_or(MemError::Length)?;
                dst.put(data).map_err(|_| MemError::Length)
            }
            Payload::Sges(sges) => copy::gather(mrs, pd, sges, offset, dst),
        }
    });
    match pkt {
        Ok(p) => Ok(Built::Packet(p)),
        Err(BuildError::Payload(MemError::Missing(fault))) => Ok(Built::Missing(fault)),
        Err(BuildError::Payload(e)) => Err(e.into()),
        // No memory: try again later.
        Err(BuildError::NoBuffer) => Ok(Built::Later),
    }
}
