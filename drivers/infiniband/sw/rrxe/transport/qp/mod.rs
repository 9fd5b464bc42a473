// SPDX-License-Identifier: GPL-2.0

//! Queue pairs. A QP is one object, [`QpInner`], shared by the device's QP
//! table, the verbs and the data path; its code is split by job:
//!
//! - [`state`]: the mutable state under the QP's lock;
//! - [`ctx`]: the narrow, read-only view of the QP the roles get
//!   ([`QpCtx`]);
//! - [`effects`]: what the roles decide under the lock, carried out after
//!   it;
//! - [`run_once`]: one CPU at a time runs a QP's work, others ask it to go
//!   round again;
//! - [`deferred`]: the gate every queueing of the QP's work items and
//!   timers goes through, which `destroy_qp` closes;
//! - [`drain`]: emptying the queues on RESET and in ERR;
//! - [`faults`]: the page faults the data path waits for (regions paged
//!   on demand);
//! - [`attr`]: checking and copying the attributes `modify_qp` sets.
//!
//! These are the QP's own rooms, below the roles: the roles name its
//! context, state and effects collector, and nothing here names a role's
//! code (only the roles' state types, in `send/state.rs` and
//! `resp/state.rs`, which the locked state holds), the engine that runs
//! them (`transport/engine.rs`: packets in, the requester's run, the work
//! items and timers, the effects carried out) or the verbs. The QP's verbs
//! (create, modify, query, post, destroy) are not here: `post_send` runs
//! the requester, so they sit above the engine, in `transport/control.rs`.
//!
//! [`inner`] holds the object itself, [`QpInner`], and the core's driver
//! data that holds it, [`RrxeQp`]. This file only declares the files and
//! re-exports what the rest of the transport names; none of them imports
//! it, each names its siblings.

mod attr;
mod ctx;
mod deferred;
mod drain;
mod effects;
mod faults;
mod inner;
mod report;
mod run_once;
mod state;

pub(in crate::transport) use self::{
    attr::{apply, check_attrs, initial_attr, MTU_RANGE},
    deferred::{next_home, Deferred},
    run_once::RunOnce,
};
pub(crate) use self::{
    ctx::QpCtx,
    effects::{Effects, ErrCause},
    faults::{Faults, Held, Missing, Side},
    inner::{QpInner, RrxeQp},
    report::QpFile,
    state::QpState_,
};
