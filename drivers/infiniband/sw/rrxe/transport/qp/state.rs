// SPDX-License-Identifier: GPL-2.0

//! A QP's mutable state, which its lock (`QpInner::state`) guards: the
//! control state that the verbs set, the requester's, completer's and
//! responder's state. Kept apart from the code that takes the lock so that
//! the roles in `transport` see one plain struct, handed to them as
//! `&mut`. What they read of the QP but never change is not kept here
//! either: it is in the QP itself, and they see it through a
//! [`QpCtx`](super::ctx::QpCtx). What the data path decides under the
//! lock but may only carry out after it is not kept here: it goes into an
//! [`Effects`](super::effects::Effects), which lives for one pass.

use super::faults::Faults;
use crate::{
    dev::{counters::CounterSet, path::Path},
    ffi::ib::StoredQpAttr,
    logic::qp_state::QpState,
    transport::{resp::state::RespState, send::state::SendState},
};
use kernel::sync::Arc;

/// The mutable part of a QP, under its lock: the control state and the
/// requester's, completer's and responder's state.
pub(crate) struct QpState_ {
    /// The IBA state, as `modify_qp` (or the data path, into ERR) left it.
    pub(crate) state: QpState,
    /// In SQD, requests are still in flight: SQD is not reached yet.
    pub(crate) sq_draining: bool,
    /// `destroy_qp` ran: nothing may be posted or completed any more.
    pub(in crate::transport) destroyed: bool,
    /// The attributes as last set (only the fields of masks applied so far
    /// are meaningful).
    pub(crate) attr: StoredQpAttr,
    /// Where a connected QP's packets go (set with the address vector).
    pub(crate) path: Option<Path>,
    /// The UDP source port of this QP's packets.
    pub(crate) sport: u16,
    /// The path MTU in bytes.
    pub(crate) mtu: u32,
    /// The retransmit timeout in nanoseconds (`None`: wait forever).
    pub(crate) timeout_ns: Option<u64>,
    /// The send state the requester and the completer share.
    pub(crate) send: SendState,
    /// The responder's state.
    pub(crate) resp: RespState,
    /// The retransmit timer is queued (so a pass that sends RC requests
    /// does not queue it again).
    pub(crate) timer_armed: bool,
    /// The set of the core's counter the QP is bound to (`rdma statistic
    /// qp`), if any: its events are counted there instead of in the port's
    /// counters. Here, under the lock the data path takes anyway, so a pass
    /// finds it at no extra cost and keeps a reference for its length
    /// (`counting`): bind and unbind swap it under the same lock.
    pub(in crate::transport) counter: Option<Arc<CounterSet>>,
    /// The page faults the data path asked for, one per side, and the
    /// failure of the last one until the access it was for comes back
    /// (regions paged on demand; see `faults.rs`).
    pub(in crate::transport) faults: Faults,
}

impl QpState_ {
    /// The set a pass counts the QP's events in (`None`: the port's), held
    /// until the pass has sent its packets, after the lock.
    pub(in crate::transport) fn counting(&self) -> Option<Arc<CounterSet>> {
        self.counter.clone()
    }

    /// Whether the requester may send: RTS, or SQD finishing what it began.
    pub(crate) fn can_send(&self) -> bool {
        matches!(self.state, QpState::Rts | QpState::Sqd) && !self.destroyed
    }

    /// Whether the QP is in SQD.
    pub(crate) fn sqd(&self) -> bool {
        self.state == QpState::Sqd
    }

    /// Whether the responder takes requests: RTR or later, not in error.
    pub(in crate::transport) fn can_receive(&self) -> bool {
        matches!(
            self.state,
            QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe
        ) && !self.destroyed
    }
}
