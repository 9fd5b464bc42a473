// SPDX-License-Identifier: GPL-2.0

//! Control-path verbs logic, independent of the kernel.
//!
//! Like [`crate::proto`]'s wire code, everything here is pure computation
//! on plain values: no allocation, no `unsafe`, no kernel APIs and no
//! panics on any input, so the same source is compiled into the driver and,
//! unchanged, into the host test crate (`tools/proto-tests`). The driver
//! keeps the state (locks, atomics, shared memory) and asks these modules
//! what is allowed and where things are.
//!
//! - [`qp_state`]: QP states, types and attribute masks, and which
//!   `modify_qp` transitions the IB core allows.
//! - [`queue`]: index arithmetic for the rings shared with user space,
//!   safe against any index a user writes.
//! - [`ring`]: the fixed-capacity FIFO behind the driver's private rings
//!   (flights, a kernel CQ's completions, responder resources).
//! - [`keys`]: MR and MW L_Key/R_Key layout, ranges and reuse.
//! - [`mr`]: registration access flags, and the bounds and permission
//!   check every use of a memory region goes through.
//! - [`odp`]: on-demand paging: the pages an access or an invalidation
//!   concerns, and the page faults the data path asks for.
//! - [`wr`]: which work requests each QP type takes, and their checks.
//! - [`mad`]: the performance management queries a port answers.
//! - [`segment`]: how messages become packets (counts, spans, opcodes).
//! - [`flow`]: UDP source ports, the requester's PSN window, its
//!   retransmit back-off and retry budgets.
//! - [`wqe`]: decoding and checking the send and receive WQEs in a ring
//!   slot.
//! - [`mw`]: memory window binds and accesses through windows.
//! - [`flush`]: the responder's rules for FLUSH and ATOMIC WRITE.
//! - [`mcast`]: multicast groups: MGIDs, their Ethernet addresses, limits.
//! - [`resp`]: the responder's length rules, its error classes for length
//!   errors, and what a duplicate READ may replay.
//! - [`ids`]: the lowest free number of a dense range (AH numbers) in
//!   bounded time.
//! - [`wc`]: work completion statuses and opcodes, and the error type of
//!   a failed work request.

pub(crate) mod flow;
pub(crate) mod flush;
pub(crate) mod ids;
pub(crate) mod keys;
pub(crate) mod mad;
pub(crate) mod mcast;
pub(crate) mod mr;
pub(crate) mod mw;
pub(crate) mod odp;
pub(crate) mod qp_state;
pub(crate) mod queue;
pub(crate) mod ratelimit;
pub(crate) mod resp;
pub(crate) mod ring;
pub(crate) mod segment;
pub(crate) mod wc;
pub(crate) mod wqe;
pub(crate) mod wr;
