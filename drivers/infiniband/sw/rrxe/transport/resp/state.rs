// SPDX-License-Identifier: GPL-2.0

//! The responder's state ([`RespState`]): the message being received, the
//! receive WQE in use, the READ and atomic resources and the answers held
//! back behind READ responses.
//!
//! It is a field of the QP's locked state (`qp::QpState_`), so it sits
//! below the QP, as the send side's `SendState` does: it names nothing of
//! the transport, and the QP names only this file of the responder. Its
//! fields are the responder's alone (visible in `resp` only); the
//! responder's code, in the other files of `resp`, is a function of the
//! QP's context and state and sits above the QP.

use crate::ffi::ib::ResMsg;
use crate::{
    logic::{resp::ReadReq, ring::FixedRing},
    proto::{headers::Syndrome, psn::Psn},
};
use core::fmt;
use kernel::prelude::*;

/// The message being received.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum InProgress {
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
pub(super) enum Resource {
    /// Never used, or given up (its MR went away under a READ).
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

/// The one packet an atomic or a FLUSH/ATOMIC WRITE slot still owes once
/// the READ responses before it are out.
#[derive(Clone, Copy)]
pub(super) enum Owed {
    AtomicAck { psn: Psn, orig: u64 },
    EmptyRead { psn: Psn },
}

impl Resource {
    /// What the slot still owes besides READ responses, if anything.
    pub(super) fn owed(&self) -> Option<Owed> {
        match *self {
            Resource::Atomic {
                psn,
                orig,
                pending: true,
            } => Some(Owed::AtomicAck { psn, orig }),
            Resource::Done { psn, pending: true } => Some(Owed::EmptyRead { psn }),
            _ => None,
        }
    }

    /// Marks what [`Resource::owed`] said as sent.
    pub(super) fn settle(&mut self) {
        if let Resource::Atomic { pending, .. } | Resource::Done { pending, .. } = self {
            *pending = false;
        }
    }
}

/// A copy of a QP's responder state, for a report (debugfs): taken under
/// the QP's lock, printed after it.
#[derive(Clone, Copy)]
pub(crate) struct RespReport {
    psn: Psn,
    msn: u32,
    nak_sent: bool,
    cur: InProgress,
    have_recv: bool,
    recv_from_srq: bool,
    recv_offset: u32,
    resources: usize,
    deferred: Option<(Psn, Syndrome)>,
    reads_pending: bool,
}

impl RespReport {
    /// Adds the responder's fields to `msg` (`rdma res show qp -dd`).
    pub(crate) fn fill(&self, msg: &mut ResMsg<'_>) -> Result {
        msg.put_u32(c"resp_msn", self.msn & 0xff_ffff)?;
        msg.put_u32(c"resp_resources", self.resources as u32)?;
        msg.put_u32(c"resp_nak_sent", u32::from(self.nak_sent))?;
        msg.put_u32(c"resp_reads_pending", u32::from(self.reads_pending))
    }
}

impl fmt::Display for RespReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "resp: psn {:#08x} msn {} nak sent {} resources {} reads pending {}",
            self.psn.get(),
            self.msn & 0xff_ffff,
            self.nak_sent,
            self.resources,
            self.reads_pending
        )?;
        match self.cur {
            InProgress::None => write!(f, "resp: between messages")?,
            InProgress::Send => write!(f, "resp: in a SEND, {} bytes placed", self.recv_offset)?,
            InProgress::Write { len, resid, .. } => {
                write!(f, "resp: in an RDMA WRITE of {len} bytes, {resid} to go")?
            }
            InProgress::Drop => write!(f, "resp: dropping the rest of a UC message")?,
        }
        if self.have_recv {
            let from = if self.recv_from_srq { "SRQ" } else { "RQ" };
            write!(f, "; a receive WQE from the {from} in use")?;
        }
        if let Some((psn, syndrome)) = self.deferred {
            write!(f, "; held back: {syndrome:?} for psn {:#08x}", psn.get())?;
        }
        writeln!(f)
    }
}

/// The responder's state, under the QP's lock.
pub(crate) struct RespState {
    /// The next PSN expected.
    pub(crate) psn: Psn,
    /// Messages completed (the MSN in ACKs).
    pub(super) msn: u32,
    /// A sequence NAK was sent for the current gap.
    pub(super) nak_sent: bool,
    /// The message being received.
    pub(super) cur: InProgress,
    /// The receive WQE in use: a copy, and whether it came from the SRQ
    /// (else it is still the oldest element of the RQ).
    pub(super) recv: KVec<u8>,
    /// `recv` holds a receive WQE taken for the current message.
    pub(super) have_recv: bool,
    /// `recv` was popped from the SRQ (else it is the RQ's oldest).
    pub(super) recv_from_srq: bool,
    /// Bytes of the current SEND placed so far.
    pub(super) recv_offset: u32,
    /// READ and atomic resources, oldest first: the last
    /// `max_dest_rd_atomic` executed (room for the most a QP may have).
    pub(super) res: FixedRing<KVec<Resource>>,
    /// An ACK or NAK held back until the READ responses and atomic ACKs
    /// before it are out: responses go to the requester in PSN order.
    pub(super) deferred: Option<(Psn, Syndrome)>,
    /// READ responses (and the answers queued behind them) wait to be
    /// sent. State, not an effect: a pass sends only what its outbox has
    /// room for, so they may wait across many lock releases, for the
    /// requester's run to send the rest; and while they wait, the
    /// responder holds its other answers back behind them.
    pub(super) reads_pending: bool,
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
            res: FixedRing::new(KVec::from_elem(
                Resource::Free,
                crate::dev::params::MAX_RD_ATOMIC as usize,
                GFP_KERNEL,
            )?),
            deferred: None,
            reads_pending: false,
        })
    }

    /// A copy of the state for a report.
    pub(crate) fn report(&self) -> RespReport {
        RespReport {
            psn: self.psn,
            msn: self.msn,
            nak_sent: self.nak_sent,
            cur: self.cur,
            have_recv: self.have_recv,
            recv_from_srq: self.recv_from_srq,
            recv_offset: self.recv_offset,
            resources: self.res.len(),
            deferred: self.deferred,
            reads_pending: self.reads_pending,
        }
    }

    /// Whether READ responses (or answers behind them) still wait to be
    /// sent: the engine then has `send_read_responses` run again.
    pub(crate) fn reads_pending(&self) -> bool {
        self.reads_pending
    }

    /// Back to the state of a fresh QP: no message, resource or answer in
    /// progress. `psn` is set with the attributes; `reads_pending` is left
    /// for the next `send_read_responses` to clear, which finds nothing
    /// owed any more.
    pub(crate) fn reset(&mut self) {
        self.msn = 0;
        self.nak_sent = false;
        self.cur = InProgress::None;
        self.have_recv = false;
        self.recv_offset = 0;
        self.res.clear();
        self.deferred = None;
    }

    /// Records `r` as the newest resource, over the oldest once there
    /// are `depth` (`max_dest_rd_atomic`) of them.
    pub(super) fn add_resource(&mut self, r: Resource, depth: usize) {
        self.res.push_back_evicting(r, depth);
    }
}
