// SPDX-License-Identifier: GPL-2.0

//! The per-QP send state the requester and the completer share.

use super::flights::{FlightOp, Flights};
use crate::{
    logic::{flow::SendWindow, wc::WcOpcode},
    proto::psn::Psn,
};
use kernel::prelude::*;

/// The send state of a QP, which the requester and the completer share,
/// under the QP's lock.
pub(crate) struct SendState {
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
    pub(super) fn skip_acked(&mut self) {
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
    pub(super) fn initiator_depth(&self) -> u32 {
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
