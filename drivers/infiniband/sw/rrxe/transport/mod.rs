// SPDX-License-Identifier: GPL-2.0

//! The transport: a QP's engine and its roles.
//!
//! Sending ([`send`]): [`send::req`] turns send WQEs into request
//! packets, [`xmit`] builds and sends them along the QP's
//! [`Path`](crate::dev::path::Path), [`send::comp`] matches the answers
//! and completes the WQEs; both work on one [`send::SendState`], which
//! alone changes the send state they share. Receiving: [`resp`] executes
//! requests against local memory and answers them. [`qp`] holds the QP's
//! state; [`engine`] runs these roles on it, from packets and from its
//! work items; [`flush`] is FLUSH and ATOMIC WRITE, both ways.
//!
//! A role is a function of three things the engine hands it under the
//! QP's lock: the QP's narrow, read-only context ([`qp::QpCtx`]: what is
//! fixed at creation, and the tables, counters, CQs and SRQ it reaches),
//! the locked state ([`qp::QpState_`]) and an effects collector
//! ([`qp::Effects`]). It never sees the QP itself, so it can neither lock
//! it again nor queue its work; and it carries out nothing that must wait
//! for the lock to be dropped: it records it in the `Effects` (the
//! packets it built, the CQ handlers to call, entering ERR, the
//! retransmit timer, an RNR wait, SQ drained), which the engine carries
//! out, in a fixed order, once the lock is dropped.
//!
//! The device state the QPs share is [`shared`] (with the QP and multicast
//! tables the receive path above looks up, [`mcast`]).

pub(crate) mod control;
pub(crate) mod engine;
pub(crate) mod flush;
pub(crate) mod mcast;
pub(crate) mod qp;
pub(crate) mod resp;
pub(crate) mod send;
pub(crate) mod shared;
pub(crate) mod xmit;
