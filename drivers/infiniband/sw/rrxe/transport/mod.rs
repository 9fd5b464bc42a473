// SPDX-License-Identifier: GPL-2.0

//! The transport: a QP, its roles and the engine that runs them.
//!
//! Sending ([`send`]): [`send::req`] turns send WQEs into request
//! packets, [`xmit`] builds and sends them along the QP's
//! [`Path`](crate::dev::path::Path), [`send::comp`] matches the answers
//! and completes the WQEs; both work on one [`send::SendState`], which
//! alone changes the send state they share. Receiving: [`resp`] executes
//! requests against local memory and answers them. [`flush`] is FLUSH and
//! ATOMIC WRITE, both ways. [`qp`] holds the QP; [`engine`] runs the roles
//! on it, from packets and from its work items; [`control`] is the QP's
//! verbs.
//!
//! A role is a function of three things the engine hands it under the
//! QP's lock: the QP's narrow, read-only context ([`qp::QpCtx`]: what is
//! fixed at creation, and the tables, counters, CQs and SRQ it reaches),
//! the locked state ([`qp::QpState_`]) and an effects collector
//! ([`qp::Effects`]). It never sees the QP itself, so it can neither lock
//! it again nor queue its work; and it carries out nothing that must wait
//! for the lock to be dropped: it records it in the `Effects` (the
//! packets it built, the events and CQ handlers due, entering ERR, the
//! retransmit timer, an RNR wait, SQ drained), which the engine carries
//! out, in the fixed order `Effects` gives, once the lock is dropped.
//!
//! Imports point one way, bottom up:
//!
//! - [`xmit`] (packets, the outbox) and the roles' own state,
//!   [`send::state`] (with its flights) and [`resp::state`]: fields of the
//!   QP's locked state, naming nothing else of the transport;
//! - [`dev_ctx`]: what a QP reaches of its device ([`dev_ctx::DevCtx`]:
//!   the port and its netdev, the counters, the MR, MW and AH tables),
//!   naming nothing of the transport;
//! - [`qp`]: the QP's own rooms (the object [`qp::QpInner`], its locked
//!   state, context, effects collector, attributes, flush, run-once flag
//!   and the gate of its deferred work);
//! - the roles: [`send::req`], [`send::comp`], [`resp`]'s rules and
//!   [`flush`]; they name `qp`'s context, state and effects, never the
//!   engine or the verbs;
//! - [`engine`]: packet dispatch, the requester's run, the work items and
//!   timers, carrying out the effects; it alone names both the roles and
//!   the QP's locks;
//! - [`control`]: the QP's verbs, above the engine since `post_send` runs
//!   the requester;
//! - [`mcast`] (the multicast groups, lists of QPs) and [`shared`], the
//!   device state the receive path, the verbs and netdev events share:
//!   the QP table, the multicast table and the device's `DevCtx`, which
//!   [`shared::Shared`] derefs to. They hold QPs, so they sit above `qp`;
//!   a QP keeps only its `DevCtx`, never `Shared`, so nothing below names
//!   them.

pub(crate) mod control;
pub(crate) mod dev_ctx;
pub(crate) mod engine;
pub(crate) mod flush;
pub(crate) mod intake;
pub(crate) mod mcast;
pub(crate) mod qp;
pub(crate) mod resp;
pub(crate) mod send;
pub(crate) mod shared;
pub(crate) mod xmit;
