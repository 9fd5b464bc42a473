// SPDX-License-Identifier: GPL-2.0

//! The flights: the send WQEs the requester has started, oldest first.
//!
//! Every WQE the requester starts becomes a [`Flight`], in SQ order: the
//! flights are exactly the oldest elements of the SQ, which the completer
//! pops as they complete.

use crate::{
    logic::{
        ring::FixedRing,
        wc::{WcOpcode, WcStatus},
    },
    proto::psn::Psn,
};
use kernel::prelude::*;

/// What a flight is, for the completer.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(super) enum FlightOp {
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
pub(super) struct Flight {
    /// The WQE's `wr_id`, for its completion.
    pub(super) wr_id: u64,
    /// What ends it.
    pub(super) op: FlightOp,
    /// The opcode of its completion.
    pub(super) wc_opcode: WcOpcode,
    /// Whether a success is reported (an error always is).
    pub(super) signaled: bool,
    /// The PSN of its first packet.
    pub(super) first_psn: Psn,
    /// PSNs it uses: its packets, or for a READ its response packets.
    pub(super) npsn: u32,
    /// Packets the requester sends for it (1 for READ and atomics).
    pub(super) npkts: u32,
    /// The message's length (of a READ, the bytes it reads), or the range
    /// a FLUSH names: its completion's `byte_len`.
    pub(super) length: u32,
    /// How it ended, once it has: its completion's status. `None` while
    /// the requester or the completer still owes it something.
    pub(super) outcome: Option<WcStatus>,
    /// READ: the next response packet expected.
    pub(super) read_next: u32,
}

impl Flight {
    /// The last PSN it uses.
    pub(super) fn last_psn(&self) -> Psn {
        self.first_psn.add(self.npsn.saturating_sub(1))
    }

    /// Whether `psn` is one of its PSNs.
    pub(super) fn holds(&self, psn: Psn) -> bool {
        psn.in_window(self.first_psn, self.npsn)
    }

    /// Whether it has ended (its completion is due, in SQ order).
    pub(super) fn is_done(&self) -> bool {
        self.outcome.is_some()
    }

    /// Ends it with `status`.
    pub(super) fn finish(&mut self, status: WcStatus) {
        self.outcome = Some(status);
    }

    /// Whether it still waits for a response (READ or atomic).
    pub(super) fn wants_response(&self) -> bool {
        !self.is_done() && matches!(self.op, FlightOp::Read | FlightOp::Atomic)
    }
}

/// The flights, oldest first, in a ring allocated with the QP (nothing
/// is allocated on the data path). Flight `i` is the `i`-th oldest: its
/// position in the SQ from the oldest WQE not completed yet.
pub(super) struct Flights {
    /// The flights; the ring's capacity is the SQ's.
    ring: FixedRing<KVec<Flight>>,
}

impl Flights {
    /// Room for `cap` flights (at least one).
    pub(super) fn new(cap: usize) -> Result<Self> {
        Ok(Self {
            ring: FixedRing::new(KVec::from_elem(Flight::default(), cap.max(1), GFP_KERNEL)?),
        })
    }

    /// How many flights there are.
    pub(super) fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether there is none.
    pub(super) fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// Whether no other can be started.
    pub(super) fn is_full(&self) -> bool {
        self.ring.is_full()
    }

    /// Flight `i` (0: the oldest).
    pub(super) fn get(&self, i: usize) -> Option<&Flight> {
        self.ring.get(i)
    }

    /// Flight `i`, to change (only [`SendState`](super::SendState) can).
    pub(super) fn get_mut(&mut self, i: usize) -> Option<&mut Flight> {
        self.ring.get_mut(i)
    }

    /// The flights, oldest first.
    pub(super) fn iter(&self) -> impl Iterator<Item = &Flight> {
        self.ring.iter()
    }

    /// Adds `f` as the newest flight; `false` if there is no room.
    pub(super) fn push(&mut self, f: Flight) -> bool {
        self.ring.push_back(f).is_ok()
    }

    /// Drops the oldest flight.
    pub(super) fn pop(&mut self) -> Option<Flight> {
        self.ring.pop_front()
    }

    /// Drops every flight.
    pub(super) fn clear(&mut self) {
        self.ring.clear();
    }

    /// The index of the flight holding `psn`.
    pub(super) fn find(&self, psn: Psn) -> Option<usize> {
        self.ring.iter().position(|f| f.holds(psn))
    }
}
