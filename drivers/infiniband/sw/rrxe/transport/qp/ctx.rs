// SPDX-License-Identifier: GPL-2.0

//! What a role may read of its QP besides the locked state: [`QpCtx`].
//!
//! The requester, completer and responder are functions of this context,
//! the QP's locked state ([`QpState_`](super::state::QpState_)) and an
//! [`Effects`](super::effects::Effects). The context is built by the engine
//! from the QP ([`QpInner::ctx`]) where it takes the lock, and holds only
//! what the roles read: plain values fixed at creation, and shared
//! references to the few objects they must reach (the device's counters and
//! tables, the CQs, the SRQ). It holds neither the QP's locks nor its work
//! items and timers, so a role can neither lock the QP again, nor queue
//! work, nor reach the verbs' side of the QP: what it does is what it is
//! handed and what it records in the `Effects`.
//!
//! The objects behind the references have locks or atomics of their own.
//! Each field says why touching it under the QP's lock is safe: every lock
//! it takes nests inside the QP's (and the SQ's or RQ's), and none of them
//! is ever held while the QP's lock is taken.

use super::inner::QpInner;
use crate::{
    dev::{
        ah::AhTable,
        counters::{CounterSet, Tally},
    },
    ffi::ib::{QpCap, QpHandle},
    ffi::net::SkbAccount,
    logic::qp_state::QpType,
    mem::{mw::QpId, MemCtx},
    queues::{cq::CqInner, srq::SrqInner},
};

/// A QP as its roles see it: read-only, borrowed from the QP for one pass
/// under its lock. A few words on the engine's stack; the roles take it by
/// reference.
pub(crate) struct QpCtx<'a> {
    /// The QP number (completions, a UD packet's source QPN).
    pub(crate) qpn: u32,
    /// The transport service: which opcodes the requester builds, which
    /// rules the responder applies.
    pub(crate) ty: QpType,
    /// Capabilities as created: the SGE and inline limits WQEs are
    /// decoded with.
    pub(crate) cap: &'a QpCap,
    /// Every send WQE completes, signaled or not (`IB_SIGNAL_ALL_WR`).
    pub(crate) sq_sig_all: bool,
    /// A process owns the QP: its rings are hostile memory, and it may not
    /// fast-register (`REG_MR`).
    pub(crate) is_user: bool,
    /// The device's MR and MW tables, the QP's PD and its identity, for
    /// every key the roles resolve. The tables' lookups take their own
    /// interrupt-disabling lock (`IrqTable`) for a moment and nothing
    /// inside it, and are never held while a QP's lock is taken.
    pub(crate) mem: MemCtx<'a>,
    /// The device's AH table (UD sends name an AH by number). Looked up as
    /// the MR table is, under a lock of its own that nests inside the QP's.
    pub(crate) ahs: &'a AhTable,
    /// Where the QP's events are counted: the port's counters, or those
    /// of the counter the QP is bound to (`rdma statistic qp`). Atomics, no
    /// lock.
    pub(crate) counters: Tally<'a>,
    /// Where send WQEs complete. Posting takes the CQ's lock, which nests
    /// inside the QP's and the SQ's; the completion handler, and the error
    /// event of a full CQ, are called only after the QP's lock (through the
    /// `Effects`).
    pub(crate) send_cq: &'a CqInner,
    /// Where receive WQEs complete; as `send_cq`, inside the RQ's lock.
    pub(crate) recv_cq: &'a CqInner,
    /// The SRQ receives come from, if any. Taking a receive takes the
    /// SRQ's lock, inside the QP's and the RQ's (the SRQ never takes a
    /// QP's lock); the limit event it may make due is reported only after
    /// the QP's lock (through the `Effects`).
    pub(crate) srq: Option<&'a SrqInner>,
    /// The core's QP, named in kernel completions.
    pub(crate) handle: QpHandle,
    /// The socket buffers the QP has in the IP stack (atomics, no lock):
    /// the requester pauses above their high mark.
    tx: &'a SkbAccount<QpInner>,
}

impl QpCtx<'_> {
    /// The most SGEs a receive WQE of this QP may have (the SRQ's, if the
    /// QP has one).
    pub(crate) fn recv_max_sge(&self) -> u32 {
        match self.srq {
            Some(srq) => srq.max_sge(),
            None => self.cap.max_recv_sge,
        }
    }

    /// Whether the requester must wait for this QP's packets in the IP
    /// stack to drain before building more (their destructor then
    /// reschedules the QP).
    pub(crate) fn tx_paused(&self) -> bool {
        self.tx.must_pause()
    }
}

impl QpInner {
    /// The context the roles run with, borrowed from the QP. Built by the
    /// engine where it takes the QP's lock; `bound`: the set of the counter
    /// the QP is bound to, as the locked state holds it
    /// ([`QpState_::counter`](super::state::QpState_::counter)), which the
    /// engine keeps for the pass.
    pub(in crate::transport) fn ctx<'a>(&'a self, bound: Option<&'a CounterSet>) -> QpCtx<'a> {
        QpCtx {
            qpn: self.qpn,
            ty: self.ty,
            cap: &self.cap,
            sq_sig_all: self.sq_sig_all,
            is_user: self.is_user,
            mem: MemCtx {
                mrs: &self.dev.mrs,
                mws: &self.dev.mws,
                pd: self.pd,
                qp: QpId::of(self.qpn, self),
            },
            ahs: &self.dev.ahs,
            counters: Tally::new(&self.dev.counters, bound),
            send_cq: &self.send_cq,
            recv_cq: &self.recv_cq,
            srq: self.srq.as_deref(),
            handle: self.handle,
            tx: &self.tx,
        }
    }
}
