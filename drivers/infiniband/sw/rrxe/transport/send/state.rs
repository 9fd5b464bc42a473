// SPDX-License-Identifier: GPL-2.0

//! The per-QP send state the requester and the completer share, and its
//! one owner: every change to it is a method here named for the transport
//! rule it carries, so that the two roles read it and ask for changes but
//! never write it themselves.
//!
//! It is a field of the QP's locked state (`qp::QpState_`), so it sits
//! below the QP, with the flights it holds (`flights.rs`): neither names
//! anything of the transport, and the QP names only this file of the send
//! side. The roles that use it (`req.rs`, `comp.rs`) sit above the QP.

use super::flights::{Flight, FlightOp, Flights};
use crate::ffi::ib::ResMsg;
use crate::{
    logic::{
        flow::{backed_off, RetryBudget, SendWindow, MAX_PKTS_PER_ACK},
        wc::{WcError, WcOpcode, WcStatus},
    },
    proto::psn::Psn,
};
use core::fmt;
use kernel::prelude::*;

/// The send state of a QP, which the requester and the completer share,
/// under the QP's lock.
pub(crate) struct SendState {
    /// The PSN of the next new request.
    psn: Psn,
    /// Every PSN before this one has been acknowledged (ACKs within a
    /// long message move it before the message completes).
    acked: Psn,
    /// The WQEs started and not yet completed.
    flights: Flights,
    /// The flight being sent (`flights.len()`: start the next WQE).
    cursor: usize,
    /// The next packet of that flight.
    pkt: u32,
    /// Packets sent since the last ACK request.
    noack: u32,
    /// Retries left after timeouts and sequence NAKs.
    retry_left: RetryBudget,
    /// Retries left after RNR NAKs.
    rnr_left: RetryBudget,
    /// Waiting for the RNR timer: send nothing.
    rnr_wait: bool,
    /// A retry (after a sequence NAK, a READ response gap or a timeout)
    /// was started and nothing has moved since: another NAK or gap waits
    /// for progress, so a duplicated NAK or a reordered burst does not
    /// send the whole window again (C rxe's `started_retry`).
    retry_started: bool,
    /// The monotonic clock (ns) at the last forward progress (ACK, or sending from idle).
    progress: u64,
    /// How many PSNs may be unacknowledged (smaller after a timeout).
    window: SendWindow,
    /// Retransmit timeouts in a row without progress (the timer backs off).
    timeouts: u8,
    /// READs and atomics in flight.
    rd_atomic: u32,
    /// One SQ element, copied out of the ring to be decoded: a scratch
    /// buffer of the requester and the completer, which no rule guards.
    pub(super) slot: KVec<u8>,
}

/// A copy of a QP's send state, for a report (debugfs): taken under the
/// QP's lock, printed after it.
#[derive(Clone, Copy)]
pub(crate) struct SendReport {
    psn: Psn,
    acked: Psn,
    flights: usize,
    cursor: usize,
    pkt: u32,
    noack: u32,
    retry_left: u8,
    rnr_left: u8,
    rnr_wait: bool,
    retry_started: bool,
    /// Nanoseconds since the last forward progress.
    idle_ns: u64,
    window: u32,
    timeouts: u8,
    rd_atomic: u32,
}

impl SendReport {
    /// Adds the requester's fields to `msg` (`rdma res show qp -dd`).
    pub(crate) fn fill(&self, msg: &mut ResMsg<'_>) -> Result {
        msg.put_u32_hex(c"sq_psn_acked", self.acked.get())?;
        msg.put_u32(c"sq_unacked", self.acked.distance(self.psn))?;
        msg.put_u32(c"sq_window", self.window)?;
        msg.put_u32(c"sq_flights", self.flights as u32)?;
        msg.put_u32(c"rd_atomic", self.rd_atomic)?;
        msg.put_u32(c"retry_left", u32::from(self.retry_left))?;
        msg.put_u32(c"rnr_retry_left", u32::from(self.rnr_left))?;
        msg.put_u32(c"rnr_wait", u32::from(self.rnr_wait))?;
        msg.put_u32(c"timeouts", u32::from(self.timeouts))?;
        msg.put_u64(c"idle_us", self.idle_ns / 1000)
    }
}

impl fmt::Display for SendReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "send: psn {:#08x} acked {:#08x} unacked {} window {}",
            self.psn.get(),
            self.acked.get(),
            self.acked.distance(self.psn),
            self.window
        )?;
        writeln!(
            f,
            "send: flights {} cursor {} packet {} since ack request {} rd_atomic {}",
            self.flights, self.cursor, self.pkt, self.noack, self.rd_atomic
        )?;
        writeln!(
            f,
            "send: retry left {} rnr left {} rnr wait {} retry started {} timeouts {} idle {} us",
            self.retry_left,
            self.rnr_left,
            self.rnr_wait,
            self.retry_started,
            self.timeouts,
            self.idle_ns / 1000
        )
    }
}

/// What an answer acknowledged ([`SendState::acknowledge`]).
pub(super) struct Acked {
    /// Something moved: a flight completed or the acknowledged PSN went
    /// forward.
    pub(super) progress: bool,
    /// A READ or atomic before the answer lost (part of) its response:
    /// the first PSN it has no answer for, to ask again from.
    pub(super) gap: Option<Psn>,
}

impl SendState {
    /// The state of a new QP whose SQ holds `elem_size`-byte elements.
    pub(crate) fn new(elem_size: usize, max_flights: usize) -> Result<Self> {
        Ok(Self {
            psn: Psn::ZERO,
            acked: Psn::ZERO,
            flights: Flights::new(max_flights)?,
            cursor: 0,
            pkt: 0,
            noack: 0,
            retry_left: RetryBudget::new(0),
            rnr_left: RetryBudget::new(0),
            rnr_wait: false,
            retry_started: false,
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
        // A retry cut short by the reset is over: the first sequence NAK
        // or READ gap after reconnecting must start one.
        self.retry_started = false;
        self.rd_atomic = 0;
        self.window = SendWindow::new();
        self.timeouts = 0;
    }

    /// `modify_qp` set `retry_cnt`: the retries a timeout or a sequence
    /// NAK may spend until something moves.
    pub(crate) fn set_retry_cnt(&mut self, count: u8) {
        self.retry_left = RetryBudget::new(count);
    }

    /// `modify_qp` set `rnr_retry`: the RNR NAKs in a row the requester
    /// waits out before it gives up.
    pub(crate) fn set_rnr_retry(&mut self, count: u8) {
        self.rnr_left = RetryBudget::new(count);
    }

    /// `modify_qp` set `sq_psn`: the next request carries `psn`, and
    /// nothing before it is owed an answer.
    pub(crate) fn set_sq_psn(&mut self, psn: Psn) {
        self.psn = psn;
        self.acked = self.psn;
    }

    /// A copy of the state for a report, `now` being the QP clock.
    pub(crate) fn report(&self, now: u64) -> SendReport {
        SendReport {
            psn: self.psn,
            acked: self.acked,
            flights: self.flights.len(),
            cursor: self.cursor,
            pkt: self.pkt,
            noack: self.noack,
            retry_left: self.retry_left.left(),
            rnr_left: self.rnr_left.left(),
            rnr_wait: self.rnr_wait,
            retry_started: self.retry_started,
            // A QP that never sent has no progress to count from.
            idle_ns: if self.progress == 0 {
                0
            } else {
                now.saturating_sub(self.progress)
            },
            window: self.window.limit(),
            timeouts: self.timeouts,
            rd_atomic: self.rd_atomic,
        }
    }

    /// The PSN of the next new request (what `query_qp` reports as
    /// `sq_psn`).
    pub(crate) fn psn(&self) -> Psn {
        self.psn
    }

    /// Whether every WQE started has completed: what SQD waits for.
    pub(crate) fn is_drained(&self) -> bool {
        self.flights.is_empty()
    }

    /// The RNR timer fired: the requester may send again.
    pub(crate) fn rnr_wait_over(&mut self) {
        self.rnr_wait = false;
    }

    /// The flights, to read.
    pub(super) fn flights(&self) -> &Flights {
        &self.flights
    }

    /// The flight the requester sends next.
    pub(super) fn cursor(&self) -> usize {
        self.cursor
    }

    /// The packet of that flight the requester sends next.
    pub(super) fn pkt(&self) -> u32 {
        self.pkt
    }

    /// How many PSNs may be unacknowledged now.
    pub(super) fn window(&self) -> SendWindow {
        self.window
    }

    /// Whether an RNR NAK said to wait: nothing is sent until the timer.
    pub(super) fn rnr_waiting(&self) -> bool {
        self.rnr_wait
    }

    /// Whether a retry runs that nothing has moved since (see the field).
    pub(super) fn retry_started(&self) -> bool {
        self.retry_started
    }

    /// The monotonic clock (ns) at the last forward progress, which the retransmit timer
    /// counts from.
    pub(super) fn last_progress(&self) -> u64 {
        self.progress
    }

    /// Whether the cursor is past the last flight: every WQE started has
    /// been sent, and the requester may start the next one.
    pub(super) fn caught_up(&self) -> bool {
        self.cursor >= self.flights.len()
    }

    /// The oldest PSN not yet acknowledged (the next new one when none):
    /// in the oldest flight still waiting, the first PSN it has no answer
    /// for.
    pub(super) fn oldest_unacked(&self) -> Psn {
        let Some(f) = self
            .flights
            .iter()
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

    /// Whether `psn` is that of a response received already of the oldest
    /// flight still waiting, a READ: where a responder that fails the READ
    /// after some of its responses puts its NAK (the PSN of the READ
    /// request it answers, which a retry of the rest moves up to its first
    /// missing response), behind [`Self::oldest_unacked`].
    pub(super) fn in_answered_read(&self, psn: Psn) -> bool {
        self.flights
            .iter()
            .find(|f| !f.is_done() && f.op != FlightOp::Local)
            .is_some_and(|f| f.op == FlightOp::Read && psn.in_window(f.first_psn, f.read_next))
    }

    /// READs, atomics and ATOMIC WRITEs started and not complete: the
    /// places of the initiator depth in use
    /// ([`SendOp::uses_initiator_depth`](crate::logic::wqe::SendOp::uses_initiator_depth)).
    /// `rd_atomic` counts READs and atomics, which the completer releases
    /// with their responses; an ATOMIC WRITE completes as a WRITE does,
    /// when acknowledged, so it is counted from its flight.
    pub(super) fn initiator_depth(&self) -> u32 {
        let atomic_writes = self
            .flights
            .iter()
            .filter(|f| !f.is_done() && f.wc_opcode == WcOpcode::AtomicWrite)
            .count();
        self.rd_atomic
            .saturating_add(u32::try_from(atomic_writes).unwrap_or(u32::MAX))
    }

    /// Whether any flight waits for the peer.
    pub(super) fn awaiting_peer(&self) -> bool {
        self.flights
            .iter()
            .any(|f| !f.is_done() && f.op != FlightOp::Local)
    }

    /// A WQE is started as flight `f`, which takes the next `f.npsn`
    /// PSNs; a READ or atomic takes one place of the initiator depth
    /// until its answer. Sending from idle counts as progress, so that
    /// the retransmit timer runs from now. `false` if there is no room
    /// for it.
    pub(super) fn start(&mut self, f: Flight, now: u64) -> bool {
        if f.wants_response() {
            self.rd_atomic += 1;
        }
        if !self.awaiting_peer() {
            self.progress = now;
        }
        self.psn = self.psn.add(f.npsn);
        self.pkt = 0;
        self.flights.push(f)
    }

    /// Moves the cursor past packets the responder has acknowledged: an
    /// ACK that overtakes a retransmission (reordering, a delayed ACK)
    /// makes resending them pointless, and the window counts from
    /// `acked`, so a cursor left behind it could never send again.
    pub(super) fn skip_acked(&mut self) {
        let Some(f) = self.flights.get(self.cursor) else {
            return;
        };
        if f.op == FlightOp::SendWrite && f.first_psn.add(self.pkt).is_before(self.acked) {
            self.pkt = f.first_psn.distance(self.acked).min(f.npkts);
        }
    }

    /// The cursor's flight has nothing (more) to send: move to the next.
    pub(super) fn next_flight(&mut self) {
        self.cursor += 1;
        self.pkt = 0;
    }

    /// A packet of the cursor's flight, which has `npkts`, was sent: the
    /// cursor moves to its next packet, or past it after its last.
    /// Returns whether that was the last.
    pub(super) fn packet_sent(&mut self, npkts: u32) -> bool {
        self.pkt += 1;
        if self.pkt >= npkts {
            self.next_flight();
            return true;
        }
        false
    }

    /// A request packet is built: whether it asks for an ACK. It does if
    /// `must` (the last packet of a message, or the last the window lets
    /// out), and otherwise every `MAX_PKTS_PER_ACK` packets, so that a
    /// long message is acknowledged before it ends.
    pub(super) fn ack_due(&mut self, must: bool) -> bool {
        self.noack += 1;
        if must || self.noack >= MAX_PKTS_PER_ACK {
            self.noack = 0;
            return true;
        }
        false
    }

    /// Flight `i` of a UC or UD QP has sent its last packet: it is done,
    /// as no answer comes on an unreliable service.
    pub(super) fn sent_unreliable(&mut self, i: usize) {
        if let Some(f) = self.flights.get_mut(i) {
            f.finish(WcStatus::Success);
        }
    }

    /// Flight `i` failed with `e`: it ends in error (the completer reports
    /// it and takes the QP to the error state), gives back its place of
    /// the initiator depth if it waited for an answer, and is sent no
    /// further.
    pub(super) fn fail_flight(&mut self, i: usize, e: WcError) {
        if let Some(f) = self.flights.get_mut(i) {
            if f.wants_response() {
                self.rd_atomic = self.rd_atomic.saturating_sub(1);
            }
            f.finish(e.into());
        }
        self.cursor = self.cursor.max(i + 1);
        self.pkt = 0;
    }

    /// An answer for `psn` says the responder received every PSN before
    /// it: the SENDs and WRITEs there are done, and the acknowledged PSN
    /// moves up to `psn`, or to the first missing answer of a READ or
    /// atomic there, which is then reported as a gap. The caller checked
    /// `psn` is no later than the next PSN to send.
    pub(super) fn acknowledge(&mut self, psn: Psn) -> Acked {
        let mut progress = false;
        let mut upto = psn;
        let mut gap = None;
        for i in 0..self.flights.len() {
            let Some(f) = self.flights.get_mut(i) else {
                break;
            };
            if f.is_done() || f.op == FlightOp::Local {
                continue;
            }
            if !f.last_psn().is_before(psn) {
                break;
            }
            if f.op == FlightOp::SendWrite {
                f.finish(WcStatus::Success);
                progress = true;
            } else {
                upto = f.first_psn.add(f.read_next);
                gap = Some(upto);
                break;
            }
        }
        if self.acked.is_before(upto) {
            self.acked = upto;
            progress = true;
        }
        Acked { progress, gap }
    }

    /// Something moved forward at `now` (an ACK advanced the acknowledged
    /// PSN, or an answer was placed): the retry budgets start again from
    /// `retry_cnt` and `rnr_retry` (the RNR one too, as rxe does:
    /// `rnr_retry` bounds the RNR NAKs in a row, not in the QP's life),
    /// the window grows, the timer stops backing off and counts from now.
    pub(super) fn progressed(&mut self, retry_cnt: u8, rnr_retry: u8, now: u64) {
        self.window.acked();
        self.timeouts = 0;
        self.retry_started = false;
        self.retry_left = RetryBudget::new(retry_cnt);
        self.rnr_left = RetryBudget::new(rnr_retry);
        self.progress = now;
    }

    /// An RNR NAK for `psn`: spend one RNR retry (7: forever), resend from
    /// `psn`, and send nothing until the RNR timer fires. `false`, and
    /// nothing changed, when no RNR retry is left: the flight is to fail.
    pub(super) fn rnr_nak(&mut self, psn: Psn) -> bool {
        if !self.rnr_left.spend() {
            return false;
        }
        self.rewind(psn);
        self.rnr_wait = true;
        true
    }

    /// A sequence NAK, a READ response gap or a timeout asks to resend
    /// from `psn` at `now`: spend one retry (7: forever), note that a
    /// retry runs, restart the timer's clock and rewind. `false`, and
    /// nothing changed, when no retry is left: the flight is to fail.
    pub(super) fn retry(&mut self, psn: Psn, now: u64) -> bool {
        if !self.retry_left.spend() {
            return false;
        }
        self.progress = now;
        self.retry_started = true;
        self.rewind(psn);
        true
    }

    /// The retransmit timer fired with nothing moved for a whole timeout:
    /// the responder may be swamped rather than the packets lost, so the
    /// window starts again small (see [`SendWindow`]) and the next
    /// timeout waits longer.
    pub(super) fn timed_out(&mut self) {
        self.window.timed_out();
        self.timeouts = self.timeouts.saturating_add(1);
    }

    /// The retransmit timeout now: the QP's `base`, doubled for each
    /// timeout in a row without progress, up to a bound ([`backed_off`]).
    pub(super) fn timer_period(&self, base: u64) -> u64 {
        backed_off(base, self.timeouts)
    }

    /// Flight `i`, a READ or an atomic, got its whole answer: it
    /// succeeded, and its place of the initiator depth is free.
    pub(super) fn answered(&mut self, i: usize) {
        if let Some(f) = self.flights.get_mut(i) {
            f.finish(WcStatus::Success);
            self.rd_atomic = self.rd_atomic.saturating_sub(1);
        }
    }

    /// The next response packet of flight `i`, a READ of `count`
    /// response packets, was placed: the next one is expected, and after
    /// the last the READ is [`answered`](Self::answered).
    pub(super) fn read_placed(&mut self, i: usize, count: u32) {
        let Some(f) = self.flights.get_mut(i) else {
            return;
        };
        f.read_next += 1;
        if f.read_next >= count {
            self.answered(i);
        }
    }

    /// Retires the oldest flight if it has ended, in SQ order: returns it
    /// with its completion's status, the cursor following it down.
    pub(super) fn retire_done(&mut self) -> Option<(Flight, WcStatus)> {
        let f = *self.flights.get(0)?;
        let status = f.outcome?;
        self.flights.pop();
        self.cursor = self.cursor.saturating_sub(1);
        Some((f, status))
    }

    /// Moves the cursor back so that sending resumes at `psn`. SENDs and
    /// WRITEs resume at the packet holding `psn`; a READ is asked again
    /// for what has not arrived yet (from its first missing response, as
    /// C rxe does); an atomic is sent again (the responder replays it).
    fn rewind(&mut self, psn: Psn) {
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
