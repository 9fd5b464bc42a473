// SPDX-License-Identifier: GPL-2.0

//! A QP's page faults: what its data path waits for when an access to a
//! region paged on demand finds pages not mapped ([`Faults`], in the
//! locked state), and how a role asks for one
//! ([`QpState_::page_missing`]).
//!
//! The data path runs in softirq context, or in process context with
//! bottom halves off, and may not sleep; faulting pages in does. So a
//! role that finds pages missing asks for the fault and stops where it
//! can take up again, with nothing changed: the receive side (responder
//! and completer) has its datagram held at the head of the QP's queue,
//! the send side (requester and READ responses) stops sending. The QP's
//! fault work (process context, bottom halves on) resolves the fault and
//! lets the side go on: the datagram is taken again, the requester runs.
//! See design.rst, "On-demand paging".

use super::{effects::Effects, state::QpState_};
use crate::{
    logic::odp::{FaultSlot, Missed},
    mem::odp::PageFault,
};

/// Which side of a QP waits for a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// The responder or the completer, on a received datagram: the
    /// datagram is held, and every later one waits behind it.
    Rx,
    /// The requester or the READ responses: nothing more is sent until
    /// the fault is resolved.
    Tx,
}

/// What a role does about an access that found pages missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Missing {
    /// It stops, with nothing changed, and is run again once the fault is
    /// resolved.
    Wait,
    /// A fault for these pages failed: the access fails as one to memory
    /// the process does not have.
    Fail,
}

/// The page faults of a QP, one side each.
pub(crate) struct Faults {
    /// The responder's and completer's: what the held datagram waits for.
    rx: FaultSlot<PageFault>,
    /// The requester's and READ responses': what sending waits for.
    tx: FaultSlot<PageFault>,
    /// Bumped whenever the faults are forgotten ([`Faults::clear`]): a
    /// datagram found waiting for a fault before (its [`Held`]) belongs
    /// to what the QP was then, and is not held any more.
    epoch: u32,
}

/// A datagram waits for a page fault of the receive side, asked for in
/// the QP's fault epoch held here (see [`Faults::is_current`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Held(u32);

impl Faults {
    /// None asked for.
    pub(crate) const fn new() -> Self {
        Self {
            rx: FaultSlot::new(),
            tx: FaultSlot::new(),
            epoch: 0,
        }
    }

    /// What a datagram that waits for the receive side's fault carries
    /// until it is held.
    pub(in crate::transport) fn held(&self) -> Held {
        Held(self.epoch)
    }

    /// Whether the faults were not forgotten since `held` was made: the
    /// datagram is still the QP's to hold.
    pub(in crate::transport) fn is_current(&self, held: Held) -> bool {
        held.0 == self.epoch
    }

    fn slot(&mut self, side: Side) -> &mut FaultSlot<PageFault> {
        match side {
            Side::Rx => &mut self.rx,
            Side::Tx => &mut self.tx,
        }
    }

    /// The next fault to resolve (the receive side's first: it holds up
    /// every datagram), taken by the fault work.
    pub(in crate::transport) fn take(&mut self) -> Option<(Side, PageFault)> {
        if let Some(f) = self.rx.start() {
            return Some((Side::Rx, f));
        }
        self.tx.start().map(|f| (Side::Tx, f))
    }

    /// The fault work is done with `fault` of `side`: mapped (`ok`), or
    /// failed. Returns the fault the side no longer keeps, to be dropped
    /// once the QP's lock is: its region's last reference frees memory.
    pub(in crate::transport) fn done(
        &mut self,
        side: Side,
        fault: PageFault,
        ok: bool,
    ) -> Option<PageFault> {
        self.slot(side).finish(fault, ok)
    }

    /// Whether the receive side has no fault asked for or running.
    pub(in crate::transport) fn rx_idle(&self) -> bool {
        self.rx.is_idle()
    }

    /// The QP was reset or flushed: what was asked or failed no longer
    /// concerns it, nor does a datagram found waiting for it.
    pub(in crate::transport) fn clear(&mut self) {
        self.rx.clear();
        self.tx.clear();
        self.epoch = self.epoch.wrapping_add(1);
    }
}

impl QpState_ {
    /// An access of the role on `side` found pages missing (`fault`): it
    /// waits for the fault, which is asked for in `fx` (the datagram held,
    /// or the fault work queued), or fails if a fault for these pages
    /// failed already.
    pub(crate) fn page_missing(
        &mut self,
        fx: &mut Effects,
        side: Side,
        fault: PageFault,
    ) -> Missing {
        match self.faults.slot(side).missed(fault) {
            Missed::Failed => Missing::Fail,
            Missed::Wait { queue } => {
                match side {
                    // Held whether or not this access asked: the fault
                    // work lets the datagram go once the side is idle.
                    Side::Rx => fx.hold_packet(),
                    Side::Tx if queue => fx.queue_fault(),
                    Side::Tx => {}
                }
                Missing::Wait
            }
        }
    }
}
