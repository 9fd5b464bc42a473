// SPDX-License-Identifier: GPL-2.0

//! The requester: turns send WQEs into request packets.
//!
//! Every WQE the requester starts becomes a [`Flight`], in SQ order: the
//! flights are exactly the oldest elements of the SQ, which the completer
//! pops as they complete. The requester's cursor names the flight it is
//! sending and the packet within it; a retransmission moves the cursor
//! back, and since packet `i` of a message always carries the same bytes
//! (see [`logic::segment`]) resending is just sending again.

use crate::{
    dev::path::Path,
    logic::{
        flow::{SendWindow, MAX_PKTS_PER_ACK},
        qp_state::QpType,
        segment::{packet_count, packet_span, position, request_opcode, Position, ReqKind},
        wc::{WcError, WcOpcode, WcResult, WcStatus},
        wqe::{self, Payload, SendOp, SendWqe, SEND_FENCE, SEND_SIGNALED, SEND_SOLICITED},
    },
    mem::copy::{self, MemError},
    proto::{
        headers::{AtomicEth, Bth, Deth, Ieth, ImmDt, Reth},
        opcode::Transport,
        packet::Headers,
        psn::Psn,
    },
    queues::queue::SharedQueue,
    transport::qp::{QpInner, QpState_},
    transport::xmit::{self, BuildError, Outbox},
};
use kernel::prelude::*;

/// What a flight is, for the completer.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) enum FlightOp {
    /// SEND or RDMA WRITE: done when acknowledged.
    #[default]
    SendWrite,
    /// RDMA READ: done when every response packet is in.
    Read,
    /// An atomic: done when its ACK brings the original value.
    Atomic,
    /// Done by the requester itself (local operations, failed WQEs).
    Local,
}

/// A started send WQE.
#[derive(Clone, Copy, Default)]
pub(crate) struct Flight {
    pub(crate) wr_id: u64,
    pub(crate) op: FlightOp,
    /// The opcode of its completion.
    pub(crate) wc_opcode: WcOpcode,
    pub(crate) signaled: bool,
    pub(crate) first_psn: Psn,
    /// PSNs it uses: its packets, or for a READ its response packets.
    pub(crate) npsn: u32,
    /// Packets the requester sends for it (1 for READ and atomics).
    pub(crate) npkts: u32,
    /// The message's length (of a READ, the bytes it reads), or the range
    /// a FLUSH names: its completion's `byte_len`.
    pub(crate) length: u32,
    /// How it ended, once it has: its completion's status. `None` while
    /// the requester or the completer still owes it something.
    pub(crate) outcome: Option<WcStatus>,
    /// READ: the next response packet expected.
    pub(crate) read_next: u32,
}

impl Flight {
    /// The last PSN it uses.
    pub(crate) fn last_psn(&self) -> Psn {
        self.first_psn.add(self.npsn.saturating_sub(1))
    }

    /// Whether `psn` is one of its PSNs.
    pub(crate) fn holds(&self, psn: Psn) -> bool {
        psn.in_window(self.first_psn, self.npsn)
    }

    /// Whether it has ended (its completion is due, in SQ order).
    pub(crate) fn is_done(&self) -> bool {
        self.outcome.is_some()
    }

    /// Ends it with `status`.
    pub(crate) fn finish(&mut self, status: WcStatus) {
        self.outcome = Some(status);
    }

    /// Whether it still waits for a response (READ or atomic).
    pub(crate) fn wants_response(&self) -> bool {
        !self.is_done() && matches!(self.op, FlightOp::Read | FlightOp::Atomic)
    }
}

/// The flights, oldest first, in a ring allocated with the QP (nothing
/// is allocated on the data path).
pub(crate) struct Flights {
    v: KVec<Flight>,
    head: usize,
    len: usize,
}

impl Flights {
    /// Room for `cap` flights.
    pub(crate) fn new(cap: usize) -> Result<Self> {
        Ok(Self {
            v: KVec::from_elem(Flight::default(), cap.max(1), GFP_KERNEL)?,
            head: 0,
            len: 0,
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn is_full(&self) -> bool {
        self.len == self.v.len()
    }

    /// The ring slot of position `i` (no division: `head + i` is below
    /// twice the capacity).
    fn wrap(&self, pos: usize) -> usize {
        let cap = self.v.len();
        if pos >= cap {
            pos - cap
        } else {
            pos
        }
    }

    fn slot(&self, i: usize) -> Option<usize> {
        (i < self.len).then(|| self.wrap(self.head + i))
    }

    pub(crate) fn get(&self, i: usize) -> Option<&Flight> {
        self.v.get(self.slot(i)?)
    }

    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut Flight> {
        let s = self.slot(i)?;
        self.v.get_mut(s)
    }

    fn push(&mut self, f: Flight) -> bool {
        if self.is_full() {
            return false;
        }
        let s = self.wrap(self.head + self.len);
        match self.v.get_mut(s) {
            Some(slot) => {
                *slot = f;
                self.len += 1;
                true
            }
            None => false,
        }
    }

    /// Drops the oldest flight.
    pub(crate) fn pop(&mut self) -> Option<Flight> {
        let f = *self.get(0)?;
        self.head = self.wrap(self.head + 1);
        self.len -= 1;
        Some(f)
    }

    pub(crate) fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// The index of the flight holding `psn`.
    pub(crate) fn find(&self, psn: Psn) -> Option<usize> {
        (0..self.len).find(|&i| self.get(i).is_some_and(|f| f.holds(psn)))
    }
}

/// The requester's state, under the QP's lock.
pub(crate) struct ReqState {
    /// The PSN of the next new request.
    pub(crate) psn: Psn,
    /// Every PSN before this one has been acknowledged (ACKs within a
    /// long message move it before the message completes).
    pub(crate) acked: Psn,
    pub(crate) flights: Flights,
    /// The flight being sent (`flights.len()`: start the next WQE).
    pub(crate) cursor: usize,
    /// The next packet of that flight.
    pub(crate) pkt: u32,
    /// Packets sent since the last ACK request.
    pub(crate) noack: u32,
    /// Retries left after timeouts and sequence NAKs (7: unlimited).
    pub(crate) retry_left: u8,
    /// Retries left after RNR NAKs (7: unlimited).
    pub(crate) rnr_left: u8,
    /// Waiting for the RNR timer: send nothing.
    pub(crate) rnr_wait: bool,
    /// A retry (after a sequence NAK, a READ response gap or a timeout)
    /// was started and nothing has moved since: another NAK or gap waits
    /// for progress, so a duplicated NAK or a reordered burst does not
    /// send the whole window again (C rxe's `started_retry`).
    pub(crate) retry_started: bool,
    /// The retransmit timer is queued.
    pub(crate) timer_armed: bool,
    /// Jiffies of the last forward progress (ACK, or sending from idle).
    pub(crate) progress: u64,
    /// How many PSNs may be unacknowledged (smaller after a timeout).
    pub(crate) window: SendWindow,
    /// Retransmit timeouts in a row without progress (the timer backs off).
    pub(crate) timeouts: u8,
    /// READs and atomics in flight.
    pub(crate) rd_atomic: u32,
    /// One SQ element, copied out of the ring to be decoded.
    pub(crate) slot: KVec<u8>,
}

impl ReqState {
    /// The state of a new QP whose SQ holds `elem_size`-byte elements.
    pub(crate) fn new(elem_size: usize, max_flights: usize) -> Result<Self> {
        Ok(Self {
            psn: Psn::ZERO,
            acked: Psn::ZERO,
            flights: Flights::new(max_flights)?,
            cursor: 0,
            pkt: 0,
            noack: 0,
            retry_left: 0,
            rnr_left: 0,
            rnr_wait: false,
            retry_started: false,
            timer_armed: false,
            progress: 0,
            window: SendWindow::new(),
            timeouts: 0,
            rd_atomic: 0,
            slot: KVec::from_elem(0u8, elem_size, GFP_KERNEL)?,
        })
    }

    /// Back to the state of a QP that sent nothing (RESET, ERR).
    pub(crate) fn reset(&mut self) {
        self.flights.clear();
        self.cursor = 0;
        self.pkt = 0;
        self.noack = 0;
        self.rnr_wait = false;
        self.rd_atomic = 0;
        self.window = SendWindow::new();
        self.timeouts = 0;
    }

    /// The oldest PSN not yet acknowledged (the next new one when none):
    /// in the oldest flight still waiting, the first PSN it has no answer
    /// for.
    pub(crate) fn oldest_unacked(&self) -> Psn {
        let Some(f) = (0..self.flights.len())
            .filter_map(|i| self.flights.get(i))
            .find(|f| !f.is_done() && f.op != FlightOp::Local)
        else {
            return self.psn;
        };
        let base = f.first_psn.add(f.read_next);
        let left = f.npsn.saturating_sub(f.read_next);
        if self.acked.in_window(base, left) {
            self.acked
        } else {
            base
        }
    }

    /// Moves the cursor past packets the responder has acknowledged: an
    /// ACK that overtakes a retransmission (reordering, a delayed ACK)
    /// makes resending them pointless, and the window counts from
    /// `acked`, so a cursor left behind it could never send again.
    fn skip_acked(&mut self) {
        let Some(f) = self.flights.get(self.cursor) else {
            return;
        };
        if f.op == FlightOp::SendWrite && f.first_psn.add(self.pkt).is_before(self.acked) {
            self.pkt = f.first_psn.distance(self.acked).min(f.npkts);
        }
    }

    /// READs, atomics and ATOMIC WRITEs started and not complete: the
    /// places of the initiator depth in use
    /// ([`SendOp::uses_initiator_depth`]). `rd_atomic` counts READs and
    /// atomics, which the completer releases with their responses; an
    /// ATOMIC WRITE completes as a WRITE does, when acknowledged, so it is
    /// counted from its flight.
    fn initiator_depth(&self) -> u32 {
        let atomic_writes = (0..self.flights.len())
            .filter_map(|i| self.flights.get(i))
            .filter(|f| !f.is_done() && f.wc_opcode == WcOpcode::AtomicWrite)
            .count();
        self.rd_atomic
            .saturating_add(u32::try_from(atomic_writes).unwrap_or(u32::MAX))
    }

    /// Whether any flight waits for the peer.
    pub(crate) fn awaiting_peer(&self) -> bool {
        (0..self.flights.len())
            .filter_map(|i| self.flights.get(i))
            .any(|f| !f.is_done() && f.op != FlightOp::Local)
    }

    /// Moves the cursor back so that sending resumes at `psn`. SENDs and
    /// WRITEs resume at the packet holding `psn`; a READ is asked again
    /// for what has not arrived yet (from its first missing response, as
    /// C rxe does); an atomic is sent again (the responder replays it).
    pub(crate) fn rewind(&mut self, psn: Psn) {
        let Some(i) = self.flights.find(psn) else {
            return;
        };
        let pkt = match self.flights.get(i) {
            Some(f) if f.op == FlightOp::SendWrite => f.first_psn.distance(psn),
            Some(_) => 0,
            None => return,
        };
        if i < self.cursor || (i == self.cursor && pkt < self.pkt) {
            self.cursor = i;
            self.pkt = pkt;
        }
    }
}

/// How a requester pass ended.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReqEnd {
    /// Nothing more to send now.
    Idle,
    /// The outbox is full; more may be sent.
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
fn local_op(qp: &QpInner, op: &SendOp) -> WcResult {
    // BIND_MW, and LOCAL_INV of a window.
    if let Some(done) = crate::mem::mw::local_op(qp.mem(), op) {
        return done;
    }
    let mrs = &qp.dev.mrs;
    let ok = match *op {
        // Only a region of the QP's PD: a process must not invalidate a
        // kernel consumer's registration. (C rxe's `rxe_invalidate_mr`
        // does not check the PD.)
        SendOp::LocalInv { rkey } => mrs
            .get(rkey)
            .is_some_and(|mr| mr.in_pd(qp.pd) && mr.invalidate(rkey).is_ok()),
        // Only kernel consumers may register (a process could write this
        // opcode into its own ring). The MR is the one at the key's index.
        SendOp::RegMr { key, access } => {
            !qp.is_user()
                && mrs
                    .get_index(key)
                    .is_some_and(|mr| mr.in_pd(qp.pd) && mr.register_mapped(key, access).is_ok())
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
/// outbox allow. Called with the QP's lock (`st`) and SQ lock held.
pub(crate) fn step(
    qp: &QpInner,
    st: &mut QpState_,
    sq: &SharedQueue,
    ndev: &crate::ffi::net::NetDev,
    out: &mut Outbox,
) -> ReqEnd {
    loop {
        if !out.has_room() {
            return ReqEnd::More;
        }
        if st.req.rnr_wait || !st.can_send() {
            return ReqEnd::Idle;
        }
        // Too many of this QP's packets in the IP stack: their destructor
        // reschedules the QP.
        if qp.tx_paused() {
            return ReqEnd::Idle;
        }
        if st.req.cursor >= st.req.flights.len() && !start_next(qp, st, sq) {
            return ReqEnd::Idle;
        }
        if !send_one(qp, st, sq, ndev, out) {
            return ReqEnd::Idle;
        }
    }
}

/// Starts the next WQE of the SQ as a new flight; `false` when there is
/// none or it must wait (window, fence, READ/atomic depth).
fn start_next(qp: &QpInner, st: &mut QpState_, sq: &SharedQueue) -> bool {
    if st.sqd() {
        // SQD: finish what was started, start nothing new.
        return false;
    }
    let n = st.req.flights.len();
    if st.req.flights.is_full() || !sq.peek_nth(n as u32, &mut st.req.slot) {
        return false;
    }
    let max_rd = u32::from(st.attr.get().max_rd_atomic).max(1);
    let mtu = st.mtu;
    let ud = matches!(qp.ty, QpType::Ud | QpType::Gsi);
    let decoded = wqe::decode_send(
        &st.req.slot,
        qp.ty,
        qp.cap.max_send_sge,
        qp.cap.max_inline_data,
    );
    let mut f = Flight {
        signaled: qp.sq_sig_all,
        first_psn: st.req.psn,
        ..Default::default()
    };
    match decoded {
        Err(_) => {
            f.wr_id = wqe_wr_id(&st.req.slot);
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
            let wants_rd = matches!(op, FlightOp::Read | FlightOp::Atomic);
            let fence = w.flags & SEND_FENCE != 0;
            let counted = w.op.uses_initiator_depth();
            if fence || counted {
                // A fence waits for every counted operation, as rxe's.
                let depth = st.req.initiator_depth();
                if (fence && depth > 0) || (counted && depth >= max_rd) {
                    return false;
                }
            }
            match op {
                FlightOp::Local => {
                    f.finish(local_op(qp, &w.op).into());
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
            if qp.ty == QpType::Rc
                && f.npsn > 0
                && !st
                    .req
                    .window
                    .open(st.req.oldest_unacked(), st.req.psn, f.npsn.min(16))
            {
                return false;
            }
            if wants_rd {
                st.req.rd_atomic += 1;
            }
        }
    }
    if !st.req.awaiting_peer() {
        st.req.progress = crate::ffi::rt::jiffies();
    }
    st.req.psn = st.req.psn.add(f.npsn);
    st.req.pkt = 0;
    if !st.req.flights.push(f) {
        return false;
    }
    true
}

/// The `wr_id` at the start of any send WQE.
fn wqe_wr_id(slot: &[u8]) -> u64 {
    slot.first_chunk::<8>()
        .map_or(0, |b| u64::from_ne_bytes(*b))
}

/// Builds the next packet of the cursor's flight; `false` if nothing was
/// sent (flight finished without packets, or must wait).
fn send_one(
    qp: &QpInner,
    st: &mut QpState_,
    sq: &SharedQueue,
    ndev: &crate::ffi::net::NetDev,
    out: &mut Outbox,
) -> bool {
    st.req.skip_acked();
    let i = st.req.cursor;
    let Some(f) = st.req.flights.get(i).copied() else {
        return false;
    };
    if f.op == FlightOp::Local || st.req.pkt >= f.npkts {
        st.req.cursor += 1;
        st.req.pkt = 0;
        return true;
    }
    // A READ asked again starts at its first missing response.
    let psn = f.first_psn.add(st.req.pkt + f.read_next);
    let rc = qp.ty == QpType::Rc;
    let oldest = st.req.oldest_unacked();
    let window = st.req.window;
    if rc && !window.open(oldest, psn, 1) {
        return false;
    }
    // The last packet the window lets out asks for an ACK: nothing else
    // may follow to make the responder answer (a retransmitted run
    // often ends there, mid-message).
    let window_edge = rc && !window.open(oldest, psn.next(), 1);
    if !sq.peek_nth(i as u32, &mut st.req.slot) {
        return false;
    }
    // The slot copy is lent out while the WQE it holds is in use.
    let slot = core::mem::take(&mut st.req.slot);
    let built = match wqe::decode_send(&slot, qp.ty, qp.cap.max_send_sge, qp.cap.max_inline_data) {
        Ok(w) => build_request(qp, st, &w, &f, ndev, window_edge),
        Err(_) => Err(WcError::LocQpOp),
    };
    st.req.slot = slot;
    match built {
        Ok(Some(pkt)) => out.push(pkt),
        // No path or no AH (UD): nothing to send now; retried later.
        Ok(None) => return false,
        Err(e) => {
            fail_flight(st, i, e);
            return true;
        }
    }
    st.req.pkt += 1;
    if st.req.pkt >= f.npkts {
        st.req.cursor += 1;
        st.req.pkt = 0;
        if qp.ty != QpType::Rc {
            // Unreliable: complete once sent.
            if let Some(f) = st.req.flights.get_mut(i) {
                f.finish(WcStatus::Success);
            }
        }
    }
    if qp.ty == QpType::Rc {
        st.arm_retransmit = true;
    }
    true
}

/// Marks flight `i` failed with `e`; the completer reports it and takes
/// the QP to the error state.
pub(crate) fn fail_flight(st: &mut QpState_, i: usize, e: WcError) {
    if let Some(f) = st.req.flights.get_mut(i) {
        if f.wants_response() {
            st.req.rd_atomic = st.req.rd_atomic.saturating_sub(1);
        }
        f.finish(e.into());
    }
    st.req.cursor = st.req.cursor.max(i + 1);
    st.req.pkt = 0;
}

/// The path and source port a packet of this QP takes to `wqe`'s peer.
fn route(qp: &QpInner, st: &QpState_, w: &SendWqe<'_>) -> Option<(Path, u16, u32, u32)> {
    match (qp.ty, w.ud.as_ref()) {
        (QpType::Ud | QpType::Gsi, Some(ud)) => {
            // Only a handle of the QP's own PD (rxe's `rxe_get_av`): the
            // number in the WQE may be any handle of the device, another
            // process's included.
            let ah = qp.dev.ahs.get(ud.ah_num).filter(|ah| ah.in_pd(qp.pd))?;
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

/// Builds packet `st.req.pkt` of flight `f` from its WQE `w`. `Ok(None)`
/// when it cannot be sent yet; an error fails the WQE.
fn build_request(
    qp: &QpInner,
    st: &mut QpState_,
    w: &SendWqe<'_>,
    f: &Flight,
    ndev: &crate::ffi::net::NetDev,
    window_edge: bool,
) -> WcResult<Option<xmit::TxPacket>> {
    let (_, _, kind) = classify(&w.op);
    let kind = kind.ok_or(WcError::LocQpOp)?;
    let Some((path, sport, dest_qpn, qkey)) = route(qp, st, w) else {
        return if matches!(qp.ty, QpType::Ud | QpType::Gsi) {
            // No such AH, one of another PD, or no path: the WQE cannot be
            // sent; it fails and the QP goes to ERR, as in rxe.
            Err(WcError::LocQpOp)
        } else {
            Ok(None)
        };
    };
    let idx = st.req.pkt;
    let pos = position(idx, f.npkts);
    let opcode = request_opcode(transport(qp.ty), kind, pos).ok_or(WcError::LocQpOp)?;
    // A READ asked again starts at its first missing response.
    let psn = f.first_psn.add(idx + f.read_next);
    let mut bth = Bth::new(opcode, dest_qpn, psn);
    let last = matches!(pos, Position::Last | Position::Only);
    bth.solicited = last && w.flags & SEND_SOLICITED != 0;
    st.req.noack += 1;
    if last || window_edge || st.req.noack >= MAX_PKTS_PER_ACK {
        bth.ack_req = qp.ty == QpType::Rc;
        st.req.noack = 0;
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
    if matches!(qp.ty, QpType::Ud | QpType::Gsi) {
        let src_qpn = if qp.ty == QpType::Gsi { 1 } else { qp.qpn };
        hdrs.deth = Some(Deth { qkey, src_qpn });
    }
    let mrs = &qp.dev.mrs;
    let pd = qp.pd;
    let pkt = xmit::build(ndev, &path, sport, hdrs, len as usize, |dst| {
        match &w.payload {
            Payload::Inline(data) => {
                let data = data
                    .get(offset as usize..offset as usize + dst.len())
                    .ok_or(MemError::Length)?;
                dst.copy_from_slice(data);
                Ok(())
            }
            Payload::Sges(sges) => copy::gather(mrs, pd, sges, offset, dst),
        }
    });
    match pkt {
        Ok(p) => Ok(Some(p)),
        Err(BuildError::Payload(e)) => Err(e.into()),
        // No memory: try again later.
        Err(BuildError::NoBuffer) => Ok(None),
    }
}
