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
//!
//! This module holds the responder's state and hands each request to its
//! QP type's rules: [`rc`] (in order, ACKed), [`uc`] (in order, lost
//! messages dropped) and [`ud`] (datagrams). What they share has a file
//! each: [`place`] puts SEND and WRITE packets into memory, [`recv_wqe`]
//! takes and completes receive WQEs, [`read`] and [`atomic`] execute READs
//! and atomics into the responder resources, [`read`] also sending the
//! READ responses and whatever waits behind them, [`duplicate`] answers
//! requests again, [`ack`] builds the ACKs and the other short answers.

mod ack;
mod atomic;
mod duplicate;
mod place;
mod rc;
mod read;
mod recv_wqe;
mod uc;
mod ud;

pub(crate) use read::send_read_responses;

use crate::{
    dev::path::Path,
    ffi::net::{IpAddr, NetDev},
    logic::{qp_state::QpType, resp::ReadReq, ring::FixedRing},
    proto::{headers::Syndrome, packet::Packet, psn::Psn},
    queues::queue::SharedQueue,
    transport::qp::{Effects, QpCtx, QpState_},
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

impl RxMeta<'_> {
    /// Whether the packet belongs to a connection on `path`: it came from
    /// the peer's address to ours (rxe's `check_addr` compares both).
    pub(crate) fn follows(&self, path: &Path) -> bool {
        self.src == path.dst && self.dst == path.src
    }
}

/// The message being received.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum InProgress {
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
enum Resource {
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
enum Owed {
    AtomicAck { psn: Psn, orig: u64 },
    EmptyRead { psn: Psn },
}

impl Resource {
    /// What the slot still owes besides READ responses, if anything.
    fn owed(&self) -> Option<Owed> {
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
    fn settle(&mut self) {
        if let Resource::Atomic { pending, .. } | Resource::Done { pending, .. } = self {
            *pending = false;
        }
    }
}

/// The responder's state, under the QP's lock.
pub(crate) struct RespState {
    /// The next PSN expected.
    pub(crate) psn: Psn,
    /// Messages completed (the MSN in ACKs).
    msn: u32,
    /// A sequence NAK was sent for the current gap.
    nak_sent: bool,
    /// The message being received.
    cur: InProgress,
    /// The receive WQE in use: a copy, and whether it came from the SRQ
    /// (else it is still the oldest element of the RQ).
    recv: KVec<u8>,
    /// `recv` holds a receive WQE taken for the current message.
    have_recv: bool,
    /// `recv` was popped from the SRQ (else it is the RQ's oldest).
    recv_from_srq: bool,
    /// Bytes of the current SEND placed so far.
    recv_offset: u32,
    /// READ and atomic resources, oldest first: the last
    /// `max_dest_rd_atomic` executed (room for the most a QP may have).
    res: FixedRing<KVec<Resource>>,
    /// An ACK or NAK held back until the READ responses and atomic ACKs
    /// before it are out: responses go to the requester in PSN order.
    deferred: Option<(Psn, Syndrome)>,
    /// READ responses (and the answers queued behind them) wait to be
    /// sent. State, not an effect: a pass sends only what its outbox has
    /// room for, so they may wait across many lock releases, for the
    /// requester's run to send the rest; and while they wait, the
    /// responder holds its other answers back behind them.
    reads_pending: bool,
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

    /// Whether READ responses (or answers behind them) still wait to be
    /// sent: the engine then has [`send_read_responses`] run again.
    pub(crate) fn reads_pending(&self) -> bool {
        self.reads_pending
    }

    /// Back to the state of a fresh QP: no message, resource or answer in
    /// progress. `psn` is set with the attributes; `reads_pending` is left
    /// for the next [`send_read_responses`] to clear, which finds nothing
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
    fn add_resource(&mut self, r: Resource, depth: usize) {
        self.res.push_back_evicting(r, depth);
    }
}

/// Handles a request packet (the caller checked the QP type, state and
/// peer). The answers, the receive CQ's handler and a fatal error are
/// left in `fx`, for after the lock.
pub(crate) fn on_request(
    ctx: &QpCtx<'_>,
    st: &mut QpState_,
    fx: &mut Effects,
    rq: Option<&mut SharedQueue>,
    pkt: &Packet<'_>,
    meta: &RxMeta<'_>,
) {
    match ctx.ty {
        QpType::Rc => rc::on_rc(ctx, st, fx, rq, pkt, meta.ndev),
        QpType::Uc => uc::on_uc(ctx, st, fx, rq, pkt),
        _ => ud::on_ud(ctx, st, fx, rq, pkt, meta),
    }
}
