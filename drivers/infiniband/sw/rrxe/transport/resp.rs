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

use crate::{
    dev::counters::Counter,
    ffi::ib::consts::*,
    ffi::ib::AtomicOp,
    ffi::net::{IpAddr, NetDev},
    logic::{
        mr::{REMOTE_ATOMIC, REMOTE_READ, REMOTE_WRITE},
        qp_state::QpType,
        resp::{dma_len_ok, on_length_error, ud_fits, LengthError, ReadReq},
        segment::{packet_span, position, read_response_opcode},
        wc::{WcError, WcOpcode, WcStatus},
        wqe,
    },
    mem::copy::{self, MemError},
    mem::mw::resolve_rkey,
    proto::{
        headers::{Aeth, AtomicAckEth, Bth, NakCode, Syndrome},
        opcode::{ExtHeader, Opcode, OpcodeInfo},
        packet::{Headers, Packet},
        psn::Psn,
    },
    queues::cq::Completion,
    queues::queue::SharedQueue,
    transport::qp::{Notify, QpInner, QpState_},
    transport::xmit::{self, Outbox},
};
use kernel::prelude::*;

/// What the packet came with besides its IB part.
pub(crate) struct RxMeta<'a> {
    /// The sender's address.
    pub(crate) src: IpAddr,
    /// The address the packet was sent to.
    pub(crate) dst: IpAddr,
    /// The whole IP header (for the GRH of UD receives).
    pub(crate) ip_header: &'a [u8],
    /// The netdev answers leave through (the device's).
    pub(crate) ndev: &'a NetDev,
}

/// The message being received.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum InProgress {
    /// Between messages.
    #[default]
    None,
    /// A SEND into the receive WQE in `RespState::recv`.
    Send,
    /// An RDMA WRITE of `len` bytes (its RETH's), to go on at `va` under
    /// `rkey`, `resid` bytes to go.
    Write {
        rkey: u32,
        va: u64,
        resid: u32,
        len: u32,
    },
    /// UC: the rest of a message that was dropped.
    Drop,
}

/// A READ or atomic the responder executed, kept to answer duplicates.
#[derive(Clone, Copy, Default)]
pub(crate) enum Resource {
    #[default]
    Free,
    /// A READ: the responses of `cur` to send, the next being `next`
    /// (== `cur.npkts` when all were sent). `orig` is the request as it
    /// was executed: a duplicate can only ask again for a part of it.
    Read {
        cur: ReadReq,
        orig: ReadReq,
        next: u32,
    },
    /// An atomic and the value it found; `pending` while its ACK waits
    /// behind READ responses.
    Atomic { psn: Psn, orig: u64, pending: bool },
    /// A FLUSH or ATOMIC WRITE, answered by an empty READ response;
    /// `pending` while that waits behind READ responses.
    Done { psn: Psn, pending: bool },
}

/// The responder's state, under the QP's lock.
pub(crate) struct RespState {
    /// The next PSN expected.
    pub(crate) psn: Psn,
    /// Messages completed (the MSN in ACKs).
    pub(crate) msn: u32,
    /// A sequence NAK was sent for the current gap.
    pub(crate) nak_sent: bool,
    pub(crate) cur: InProgress,
    /// The receive WQE in use: a copy, and whether it came from the SRQ
    /// (else it is still the oldest element of the RQ).
    pub(crate) recv: KVec<u8>,
    pub(crate) have_recv: bool,
    pub(crate) recv_from_srq: bool,
    /// Bytes of the current SEND placed so far.
    pub(crate) recv_offset: u32,
    /// READ and atomic resources, a ring of `max_dest_rd_atomic`.
    pub(crate) res: KVec<Resource>,
    pub(crate) res_next: usize,
    /// An ACK or NAK held back until the READ responses and atomic ACKs
    /// before it are out: responses go to the requester in PSN order.
    pub(crate) deferred: Option<(Psn, Syndrome)>,
}

impl RespState {
    /// The state of a new QP whose receive WQEs are `recv_size` bytes.
    pub(crate) fn new(recv_size: usize) -> Result<Self> {
        Ok(Self {
            psn: Psn::ZERO,
            msn: 0,
            nak_sent: false,
            cur: InProgress::None,
            recv: KVec::from_elem(0u8, recv_size.max(8), GFP_KERNEL)?,
            have_recv: false,
            recv_from_srq: false,
            recv_offset: 0,
            res: KVec::from_elem(
                Resource::Free,
                crate::dev::params::MAX_RD_ATOMIC as usize,
                GFP_KERNEL,
            )?,
            res_next: 0,
            deferred: None,
        })
    }

    /// Back to the state of a fresh QP.
    pub(crate) fn reset(&mut self) {
        self.msn = 0;
        self.nak_sent = false;
        self.cur = InProgress::None;
        self.have_recv = false;
        self.recv_offset = 0;
        for r in self.res.iter_mut() {
            *r = Resource::Free;
        }
        self.res_next = 0;
        self.deferred = None;
    }

    fn add_resource(&mut self, r: Resource, depth: usize) {
        let depth = depth.min(self.res.len()).max(1);
        let i = if self.res_next >= depth {
            0
        } else {
            self.res_next
        };
        if let Some(slot) = self.res.get_mut(i) {
            *slot = r;
        }
        self.res_next = if i + 1 >= depth { 0 } else { i + 1 };
    }
}

/// How a request ends for the requester.
enum Answer {
    /// Nothing (UC, UD, or no ACK requested).
    None,
    Ack,
    Nak(NakCode),
    Rnr,
    AtomicAck(u64),
    /// An empty READ response (FLUSH, ATOMIC WRITE).
    EmptyRead,
}

/// Handles a request packet (the caller checked the QP type, state and
/// peer).
pub(crate) fn on_request(
    qp: &QpInner,
    st: &mut QpState_,
    rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
    meta: &RxMeta<'_>,
    out: &mut Outbox,
    notify: &mut Notify,
) {
    match qp.ty {
        QpType::Rc => on_rc(qp, st, rq, pkt, meta.ndev, out, notify),
        QpType::Uc => on_uc(qp, st, rq, pkt, notify),
        _ => on_ud(qp, st, rq, pkt, meta, notify),
    }
}

fn on_rc(
    qp: &QpInner,
    st: &mut QpState_,
    rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
    ndev: &NetDev,
    out: &mut Outbox,
    notify: &mut Notify,
) {
    let psn = pkt.headers.bth.psn;
    let expected = st.resp.psn;
    if psn.is_after(expected) {
        qp.dev.counters.add(Counter::OutOfSeqRequest, 1);
        if !st.resp.nak_sent {
            st.resp.nak_sent = true;
            send_ack(
                st,
                ndev,
                out,
                expected,
                Syndrome::Nak(NakCode::PsnSequenceError),
            );
        }
        return;
    }
    if psn.is_before(expected) {
        qp.dev.counters.add(Counter::DuplicateRequest, 1);
        duplicate(st, pkt, ndev, out);
        return;
    }
    let answer = execute(qp, st, rq, pkt, notify);
    match answer {
        Answer::None => {}
        Answer::Ack => send_ack(st, ndev, out, psn, Syndrome::ACK_UNLIMITED),
        Answer::Nak(code) => {
            send_ack(st, ndev, out, psn, Syndrome::Nak(code));
            // Class C/D errors: the responder's QP goes to the error state.
            if code != NakCode::PsnSequenceError {
                st.enter_error = true;
            }
        }
        Answer::Rnr => {
            qp.dev.counters.add(Counter::SendRnrErr, 1);
            let timer = st.attr.get().min_rnr_timer;
            send_ack(st, ndev, out, psn, Syndrome::RnrNak { timer });
        }
        Answer::AtomicAck(orig) => send_atomic_ack(st, ndev, out, psn, orig),
        Answer::EmptyRead => send_empty_read(st, ndev, out, psn),
    }
}

/// Takes a request in order: checks it, executes it, advances the PSN.
fn execute(
    qp: &QpInner,
    st: &mut QpState_,
    rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
    notify: &mut Notify,
) -> Answer {
    let info = pkt.info();
    let psn = pkt.headers.bth.psn;
    if let Err(code) = check_sequence(st.resp.cur, info) {
        return Answer::Nak(code);
    }
    if let Err(code) = check_length(st.mtu, info, pkt.payload.len()) {
        return Answer::Nak(code);
    }
    // IBA C9-94, as rxe: a RETH names at most 2^31 bytes.
    if pkt.headers.reth.is_some_and(|r| !dma_len_ok(r.len)) {
        return Answer::Nak(NakCode::InvalidRequest);
    }
    // A READ or atomic needs a responder resource; with
    // `max_dest_rd_atomic` 0 there is none (rxe's
    // `RESPST_ERR_TOO_MANY_RDMA_ATM_REQ`, class C). ATOMIC WRITE is
    // checked in `flush::execute`.
    if (info.is_read() || info.is_atomic()) && st.attr.get().max_dest_rd_atomic == 0 {
        return Answer::Nak(NakCode::InvalidRequest);
    }
    let ack_req = pkt.headers.bth.ack_req;
    if info.is_read() {
        return match start_read(qp, st, pkt) {
            Ok(npkts) => {
                st.resp.psn = psn.add(npkts);
                st.resp.msn = st.resp.msn.wrapping_add(1);
                st.resp.nak_sent = false;
                st.reads_pending = true;
                Answer::None
            }
            Err(code) => Answer::Nak(code),
        };
    }
    if info.is_atomic() {
        return match atomic(qp, st, pkt) {
            Ok(orig) => {
                st.resp.psn = psn.next();
                st.resp.msn = st.resp.msn.wrapping_add(1);
                st.resp.nak_sent = false;
                Answer::AtomicAck(orig)
            }
            Err(code) => Answer::Nak(code),
        };
    }
    if info.is_flush() || info.is_atomic_write() {
        return match crate::transport::flush::execute(qp, st, pkt) {
            Ok(()) => {
                st.resp.psn = psn.next();
                st.resp.msn = st.resp.msn.wrapping_add(1);
                st.resp.nak_sent = false;
                let depth = usize::from(st.attr.get().max_dest_rd_atomic);
                let pending = st.reads_pending;
                st.resp.add_resource(Resource::Done { psn, pending }, depth);
                Answer::EmptyRead
            }
            Err(code) => Answer::Nak(code),
        };
    }
    if !info.is_send() && !info.is_write() {
        return Answer::Nak(NakCode::InvalidRequest);
    }
    match place(qp, st, rq, pkt, notify) {
        Ok(()) => {
            st.resp.psn = psn.next();
            st.resp.nak_sent = false;
            if ack_req {
                Answer::Ack
            } else {
                Answer::None
            }
        }
        Err(Placement::Rnr) => Answer::Rnr,
        Err(Placement::Nak(code)) => Answer::Nak(code),
        // Not for RC (`on_length_error`).
        Err(Placement::Dropped) => Answer::None,
    }
}

/// The opcode must continue the message in progress (or start one).
fn check_sequence(cur: InProgress, info: &OpcodeInfo) -> Result<(), NakCode> {
    let ok = match cur {
        InProgress::None | InProgress::Drop => {
            info.is_first() || !(info.is_send() || info.is_write())
        }
        InProgress::Send => info.is_send() && !info.is_first(),
        InProgress::Write { .. } => info.is_write() && !info.is_first(),
    };
    if ok {
        Ok(())
    } else {
        Err(NakCode::InvalidRequest)
    }
}

/// First and middle packets carry exactly one MTU; the rest at most one.
fn check_length(mtu: u32, info: &OpcodeInfo, len: usize) -> Result<(), NakCode> {
    let mtu = mtu as usize;
    let full = (info.is_first() && !info.is_last()) || (!info.is_first() && !info.is_last());
    let fits = if full && (info.is_send() || info.is_write()) {
        len == mtu
    } else {
        len <= mtu
    };
    if fits {
        Ok(())
    } else {
        Err(NakCode::InvalidRequest)
    }
}

/// Why a SEND or WRITE packet was not placed.
enum Placement {
    Rnr,
    Nak(NakCode),
    /// UC: the message does not fit its receive and is dropped; the QP
    /// goes on (its receive was dealt with).
    Dropped,
}

/// Places a SEND or WRITE packet; completes the receive at the end of a
/// SEND or WRITE with immediate.
fn place(
    qp: &QpInner,
    st: &mut QpState_,
    mut rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
    notify: &mut Notify,
) -> Result<(), Placement> {
    let info = pkt.info();
    let needs_recv = info.is_send() || (info.is_last() && pkt.headers.immdt.is_some());
    if needs_recv && !st.resp.have_recv && !take_recv(qp, st, rq.as_deref_mut()) {
        return Err(Placement::Rnr);
    }
    if info.is_write() {
        write_payload(qp, st, pkt)?;
    } else {
        st.resp.cur = InProgress::Send;
        let offset = st.resp.recv_offset;
        recv_scatter(qp, st, offset, pkt.payload).map_err(|e| {
            if e == MemError::Length {
                let srq = st.resp.recv_from_srq;
                match on_length_error(qp.ty, srq) {
                    LengthError::Fatal => {}
                    LengthError::CompleteInError => {
                        // UC on an SRQ (class E): the receive it took
                        // completes in error, the QP goes on.
                        fail_recv(qp, st, rq.as_deref_mut(), pkt.headers.bth.solicited, notify);
                        return Placement::Dropped;
                    }
                    LengthError::Drop => {
                        // UC on an RQ (class D): the receive stays posted
                        // for the next message, from its start.
                        st.resp.have_recv = false;
                        st.resp.recv_offset = 0;
                        return Placement::Dropped;
                    }
                }
            }
            // The receive completes in error and the QP fails.
            let status = WcStatus::from(WcError::from(e));
            finish_recv(qp, st, rq.as_deref_mut(), pkt, status, notify);
            Placement::Nak(NakCode::InvalidRequest)
        })?;
        st.resp.recv_offset = offset.saturating_add(pkt.payload.len() as u32);
    }
    if info.is_last() {
        st.resp.msn = st.resp.msn.wrapping_add(1);
        if needs_recv {
            finish_recv(qp, st, rq, pkt, WcStatus::Success, notify);
        }
        st.resp.cur = InProgress::None;
    }
    Ok(())
}

/// The RDMA WRITE part of a packet: the RETH (first packet) is checked
/// against the MR table, every packet against what is left of it.
fn write_payload(qp: &QpInner, st: &mut QpState_, pkt: &Packet<'_>) -> Result<(), Placement> {
    let len = pkt.payload.len() as u32;
    let (rkey, va, resid, total) = match (st.resp.cur, pkt.headers.reth) {
        (
            InProgress::Write {
                rkey,
                va,
                resid,
                len: total,
            },
            _,
        ) => (rkey, va, resid, total),
        (_, Some(reth)) => {
            if st.attr.get().qp_access_flags as u32 & REMOTE_WRITE == 0 {
                return Err(Placement::Nak(NakCode::RemoteAccessError));
            }
            // The whole message must be allowed before its first byte is
            // placed (as rxe): a WRITE that runs past its region or window
            // places nothing.
            if reth.len > 0 {
                resolve_rkey(qp, reth.rkey, reth.va, u64::from(reth.len), REMOTE_WRITE)
                    .map_err(|_| Placement::Nak(NakCode::RemoteAccessError))?;
            }
            (reth.rkey, reth.va, reth.len, reth.len)
        }
        _ => return Err(Placement::Nak(NakCode::InvalidRequest)),
    };
    if len > resid || (pkt.info().is_last() && len != resid) {
        return Err(Placement::Nak(NakCode::InvalidRequest));
    }
    if len > 0 || resid > 0 {
        let (mr, at) = resolve_rkey(qp, rkey, va, u64::from(len), REMOTE_WRITE)
            .map_err(|_| Placement::Nak(NakCode::RemoteAccessError))?;
        mr.write_at(at, pkt.payload)
            .map_err(|_| Placement::Nak(NakCode::RemoteAccessError))?;
    }
    st.resp.cur = InProgress::Write {
        rkey,
        va: va.wrapping_add(u64::from(len)),
        resid: resid - len,
        len: total,
    };
    Ok(())
}

/// Takes a receive WQE for the message starting now: the oldest of the
/// RQ (left there until the message completes) or one popped from the
/// SRQ. `false` if there is none.
fn take_recv(qp: &QpInner, st: &mut QpState_, rq: Option<&mut SharedQueue>) -> bool {
    st.resp.recv_offset = 0;
    if let Some(srq) = &qp.srq {
        let got = srq.take(&mut st.resp.recv);
        st.resp.have_recv = got;
        st.resp.recv_from_srq = true;
        return got;
    }
    let Some(rq) = rq else {
        return false;
    };
    let got = rq.peek(&mut st.resp.recv);
    st.resp.have_recv = got;
    st.resp.recv_from_srq = false;
    got
}

/// Copies `data` to byte `offset` of the receive WQE's buffers.
fn recv_scatter(qp: &QpInner, st: &QpState_, offset: u32, data: &[u8]) -> Result<(), MemError> {
    let max_sge = qp.recv_max_sge();
    let w = wqe::decode_recv(&st.resp.recv, max_sge).map_err(|_| MemError::Protection)?;
    copy::scatter(&qp.dev.mrs, qp.pd, &w.sges, offset, data)
}

/// Completes the receive WQE in use with `status` and releases it.
fn finish_recv(
    qp: &QpInner,
    st: &mut QpState_,
    rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
    status: WcStatus,
    notify: &mut Notify,
) {
    if !st.resp.have_recv {
        return;
    }
    // As rxe: a WRITE with immediate data reports the WRITE's length, a
    // SEND the bytes placed in the receive.
    let byte_len = match st.resp.cur {
        InProgress::Write { len, .. } => len,
        _ => st.resp.recv_offset,
    };
    let mut c = recv_completion(qp, st, status, byte_len, st.attr.get().dest_qp_num);
    if let Some(imm) = pkt.headers.immdt {
        c.ex = imm.stored();
        c.wc_flags |= IB_WC_WITH_IMM;
        if pkt.info().is_write() {
            c.opcode = WcOpcode::RecvRdmaWithImm;
        }
    } else if let Some(ieth) = pkt.headers.ieth {
        c.ex = ieth.rkey;
        c.wc_flags |= IB_WC_WITH_INVALIDATE;
        if crate::mem::mw::is_mw_key(ieth.rkey) {
            // As rxe, a window that cannot be invalidated fails the
            // receive (and the QP).
            if c.status == WcStatus::Success
                && crate::mem::mw::invalidate(qp, ieth.rkey, true).is_err()
            {
                c.status = WcStatus::RemInvReqErr;
            }
        } else if c.status == WcStatus::Success
            && qp
                .dev
                .mrs
                .get(ieth.rkey)
                .is_none_or(|mr| mr.invalidate_in_pd(qp.pd, ieth.rkey).is_err())
        {
            // An unknown key, a key that is not the MR's current one, an MR
            // of another PD, not fast-registered or with windows bound: as
            // rxe, the receive fails (Class J) and so does the QP.
            c.status = WcStatus::RemInvReqErr;
        }
    }
    if c.status == WcStatus::Success {
        // A connected QP only takes packets from its peer's address
        // (`QpInner::receive`): the path's family is the packet's.
        c.set_network_header(st.path.is_none_or(|p| p.dst.is_v4()));
    }
    post_recv_completion(qp, st, rq, &c, pkt.headers.bth.solicited, notify);
}

/// The completion of the receive WQE in use as every QP type fills it
/// (`wc_flags` and what goes with them aside).
fn recv_completion(
    qp: &QpInner,
    st: &QpState_,
    status: WcStatus,
    byte_len: u32,
    src_qp: u32,
) -> Completion {
    let wr_id = st
        .resp
        .recv
        .first_chunk::<8>()
        .map_or(0, |b| u64::from_ne_bytes(*b));
    Completion {
        wr_id,
        status,
        opcode: WcOpcode::Recv,
        byte_len,
        qp_num: qp.qpn,
        src_qp,
        port_num: crate::dev::params::PORT as u8,
        ..Default::default()
    }
}

/// Posts a receive completion and releases the receive WQE. A failed
/// receive takes the QP to the error state.
fn post_recv_completion(
    qp: &QpInner,
    st: &mut QpState_,
    rq: Option<&mut SharedQueue>,
    c: &Completion,
    solicited: bool,
    notify: &mut Notify,
) {
    if c.status != WcStatus::Success {
        st.enter_error = true;
    }
    release_recv(qp, st, rq, c, solicited, notify);
}

/// Completes the receive WQE in use with [`WcStatus::RemInvReqErr`] for a
/// message that did not fit it (UC or UD on an SRQ, class E): the QP
/// stays as it is, as in rxe.
fn fail_recv(
    qp: &QpInner,
    st: &mut QpState_,
    rq: Option<&mut SharedQueue>,
    solicited: bool,
    notify: &mut Notify,
) {
    if !st.resp.have_recv {
        return;
    }
    // As rxe, an error completion reports no length or source.
    let c = recv_completion(qp, st, WcStatus::RemInvReqErr, 0, 0);
    release_recv(qp, st, rq, &c, solicited, notify);
}

/// Posts a receive completion and releases the receive WQE.
fn release_recv(
    qp: &QpInner,
    st: &mut QpState_,
    rq: Option<&mut SharedQueue>,
    c: &Completion,
    solicited: bool,
    notify: &mut Notify,
) {
    if !st.resp.recv_from_srq {
        if let Some(rq) = rq {
            rq.pop();
        }
    }
    st.resp.have_recv = false;
    st.resp.recv_offset = 0;
    if c.status == WcStatus::Success {
        qp.dev.counters.add(Counter::RdmaRecvs, 1);
    }
    notify.recv |= qp
        .recv_cq
        .post_solicited_quiet(c, qp.handle, solicited)
        .unwrap_or(false);
}

/// Checks a READ request and records it; returns its response count.
fn start_read(qp: &QpInner, st: &mut QpState_, pkt: &Packet<'_>) -> Result<u32, NakCode> {
    let reth = pkt.headers.reth.ok_or(NakCode::InvalidRequest)?;
    if st.attr.get().qp_access_flags as u32 & REMOTE_READ == 0 {
        return Err(NakCode::RemoteAccessError);
    }
    if reth.len > 0 {
        resolve_rkey(qp, reth.rkey, reth.va, u64::from(reth.len), REMOTE_READ)
            .map_err(|_| NakCode::RemoteAccessError)?;
    }
    let req = ReadReq::new(reth, pkt.headers.bth.psn, st.mtu);
    let depth = usize::from(st.attr.get().max_dest_rd_atomic);
    st.resp.add_resource(
        Resource::Read {
            cur: req,
            orig: req,
            next: 0,
        },
        depth,
    );
    Ok(req.npkts)
}

/// Executes an atomic; returns the value found.
fn atomic(qp: &QpInner, st: &mut QpState_, pkt: &Packet<'_>) -> Result<u64, NakCode> {
    let a = pkt.headers.atomic_eth.ok_or(NakCode::InvalidRequest)?;
    if st.attr.get().qp_access_flags as u32 & REMOTE_ATOMIC == 0 {
        return Err(NakCode::RemoteAccessError);
    }
    if a.va % 8 != 0 {
        return Err(NakCode::InvalidRequest);
    }
    let (mr, at) =
        resolve_rkey(qp, a.rkey, a.va, 8, REMOTE_ATOMIC).map_err(|_| NakCode::RemoteAccessError)?;
    let op = if pkt.opcode() == Opcode::RcCompareSwap {
        AtomicOp::CmpSwap {
            compare: a.compare,
            swap: a.swap_add,
        }
    } else {
        AtomicOp::FetchAdd(a.swap_add)
    };
    let orig = mr
        .atomic_at(at, op)
        .map_err(|_| NakCode::RemoteOperationalError)?;
    let depth = usize::from(st.attr.get().max_dest_rd_atomic);
    st.resp.add_resource(
        Resource::Atomic {
            psn: pkt.headers.bth.psn,
            orig,
            pending: st.reads_pending,
        },
        depth,
    );
    Ok(orig)
}

/// A request with a PSN already taken: answer it again.
fn duplicate(st: &mut QpState_, pkt: &Packet<'_>, ndev: &NetDev, out: &mut Outbox) {
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
                        st.reads_pending = true;
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

/// The BTH of a response to the connected peer.
fn response_bth(st: &QpState_, opcode: Opcode, psn: Psn) -> Bth {
    Bth::new(opcode, st.attr.get().dest_qp_num, psn)
}

fn send_ack(st: &mut QpState_, ndev: &NetDev, out: &mut Outbox, psn: Psn, syndrome: Syndrome) {
    if st.reads_pending {
        // A later answer acknowledges everything before it: keep the last.
        st.resp.deferred = Some((psn, syndrome));
        return;
    }
    emit_ack(st, ndev, out, psn, syndrome);
}

fn emit_ack(st: &QpState_, ndev: &NetDev, out: &mut Outbox, psn: Psn, syndrome: Syndrome) {
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

fn send_atomic_ack(st: &QpState_, ndev: &NetDev, out: &mut Outbox, psn: Psn, orig: u64) {
    if st.reads_pending {
        // Sent in order by `send_read_responses` (the resource is pending).
        return;
    }
    emit_atomic_ack(st, ndev, out, psn, orig);
}

fn emit_atomic_ack(st: &QpState_, ndev: &NetDev, out: &mut Outbox, psn: Psn, orig: u64) {
    let Some(path) = st.path else { return };
    let mut hdrs = Headers::new(response_bth(st, Opcode::RcAtomicAcknowledge, psn));
    hdrs.aeth = Some(Aeth::ack(st.resp.msn));
    hdrs.atomic_ack_eth = Some(AtomicAckEth { orig });
    if let Ok(p) = xmit::build::<()>(ndev, &path, st.sport, hdrs, 0, |_| Ok(())) {
        out.push(p);
    }
}

fn send_empty_read(st: &QpState_, ndev: &NetDev, out: &mut Outbox, psn: Psn) {
    if st.reads_pending {
        // Sent in order by `send_read_responses` (the resource is pending).
        return;
    }
    emit_empty_read(st, ndev, out, psn);
}

/// The answer to a FLUSH or ATOMIC WRITE, as C rxe gives it: a READ
/// response (only) with an AETH and no payload.
fn emit_empty_read(st: &QpState_, ndev: &NetDev, out: &mut Outbox, psn: Psn) {
    let Some(path) = st.path else { return };
    let mut hdrs = Headers::new(response_bth(st, Opcode::RcRdmaReadResponseOnly, psn));
    hdrs.aeth = Some(Aeth::ack(st.resp.msn));
    if let Ok(p) = xmit::build::<()>(ndev, &path, st.sport, hdrs, 0, |_| Ok(())) {
        out.push(p);
    }
}

/// Sends pending READ responses, oldest resource first, while the outbox
/// has room. Returns whether some are still pending.
pub(crate) fn send_read_responses(
    qp: &QpInner,
    st: &mut QpState_,
    ndev: &NetDev,
    out: &mut Outbox,
) -> bool {
    if !st.reads_pending {
        return false;
    }
    let Some(path) = st.path else {
        return false;
    };
    let n = st.resp.res.len();
    let start = st.resp.res_next.min(n);
    // Oldest first: from the next slot to fill round to the last filled.
    for i in Iterator::chain(start..n, 0..start) {
        if let Some(Resource::Atomic { psn, orig, pending }) = st.resp.res.get_mut(i) {
            if *pending {
                if !out.has_room() {
                    return true;
                }
                *pending = false;
                let (psn, orig) = (*psn, *orig);
                emit_atomic_ack(st, ndev, out, psn, orig);
            }
            continue;
        }
        if let Some(Resource::Done { psn, pending }) = st.resp.res.get_mut(i) {
            if *pending {
                if !out.has_room() {
                    return true;
                }
                *pending = false;
                let psn = *psn;
                emit_empty_read(st, ndev, out, psn);
            }
            continue;
        }
        loop {
            let Some(Resource::Read { cur, next, .. }) = st.resp.res.get(i).copied() else {
                break;
            };
            let ReadReq {
                rkey,
                va,
                len,
                first_psn,
                npkts,
            } = cur;
            if next >= npkts {
                break;
            }
            if !out.has_room() {
                return true;
            }
            let Some((offset, plen)) = packet_span(len, st.mtu, next) else {
                break;
            };
            let pos = position(next, npkts);
            let psn = first_psn.add(next);
            let opcode = read_response_opcode(pos);
            let mut hdrs = Headers::new(response_bth(st, opcode, psn));
            // First, last and only responses carry an AETH, middle ones not.
            if opcode.info().has(ExtHeader::Aeth) {
                hdrs.aeth = Some(Aeth::ack(st.resp.msn));
            }
            let built = xmit::build(ndev, &path, st.sport, hdrs, plen as usize, |dst| {
                if dst.is_empty() {
                    return Ok(());
                }
                let at_va = va.wrapping_add(u64::from(offset));
                let (mr, at) =
                    resolve_rkey(qp, rkey, at_va, dst.len() as u64, REMOTE_READ).map_err(|_| ())?;
                mr.read_at(at, dst).map_err(|_| ())
            });
            match built {
                Ok(p) => out.push(p),
                // The MR went away under the READ: nothing more to send.
                Err(xmit::BuildError::Payload(())) => {
                    if let Some(r) = st.resp.res.get_mut(i) {
                        *r = Resource::Free;
                    }
                    break;
                }
                Err(xmit::BuildError::NoBuffer) => return true,
            }
            if let Some(Resource::Read { next, .. }) = st.resp.res.get_mut(i) {
                *next += 1;
            }
        }
    }
    if let Some((psn, syndrome)) = st.resp.deferred {
        if !out.has_room() {
            return true;
        }
        st.resp.deferred = None;
        emit_ack(st, ndev, out, psn, syndrome);
    }
    st.reads_pending = false;
    false
}

fn on_uc(
    qp: &QpInner,
    st: &mut QpState_,
    rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
    notify: &mut Notify,
) {
    let psn = pkt.headers.bth.psn;
    let info = pkt.info();
    if psn != st.resp.psn {
        // A lost packet: drop the rest of this message; resynchronise on
        // the next first packet.
        if !info.is_first() {
            st.resp.psn = psn.next();
            st.resp.cur = InProgress::Drop;
            return;
        }
        st.resp.cur = InProgress::None;
        st.resp.recv_offset = 0;
    }
    st.resp.psn = psn.next();
    if st.resp.cur == InProgress::Drop && !info.is_first() {
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
    if place(qp, st, rq, pkt, notify).is_err() {
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

fn on_ud(
    qp: &QpInner,
    st: &mut QpState_,
    rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
    meta: &RxMeta<'_>,
    notify: &mut Notify,
) {
    let Some(deth) = pkt.headers.deth else { return };
    let qkey = if qp.ty == QpType::Gsi {
        crate::proto::headers::GSI_QKEY
    } else {
        st.attr.get().qkey
    };
    if deth.qkey != qkey {
        return;
    }
    let mut rq = rq;
    if !take_recv(qp, st, rq.as_deref_mut()) {
        return;
    }
    // The GRH and the payload must fit the receive before a byte is placed
    // (C9-92): a datagram that does not is dropped, and the QP goes on.
    // A receive whose WQE does not decode is placed as usual, and fails.
    let room = wqe::decode_recv(&st.resp.recv, qp.recv_max_sge()).map(|w| w.length);
    if room.is_ok_and(|len| !ud_fits(pkt.payload.len(), len)) {
        match on_length_error(qp.ty, st.resp.recv_from_srq) {
            LengthError::CompleteInError => {
                fail_recv(qp, st, rq, pkt.headers.bth.solicited, notify);
            }
            // Left in the RQ for the next datagram.
            LengthError::Drop | LengthError::Fatal => st.resp.have_recv = false,
        }
        return;
    }
    let grh = grh_bytes(meta.ip_header);
    let placed = recv_scatter(qp, st, 0, &grh)
        .and_then(|()| recv_scatter(qp, st, grh.len() as u32, pkt.payload));
    let status = WcStatus::from(placed.map_err(WcError::from));
    st.resp.recv_offset = (grh.len() + pkt.payload.len()) as u32;
    let mut c = recv_completion(qp, st, status, st.resp.recv_offset, deth.src_qpn);
    if let Some(imm) = pkt.headers.immdt {
        c.ex = imm.stored();
        c.wc_flags |= IB_WC_WITH_IMM;
    }
    if status == WcStatus::Success {
        c.set_network_header(meta.src.is_v4());
    }
    post_recv_completion(qp, st, rq, &c, pkt.headers.bth.solicited, notify);
}
