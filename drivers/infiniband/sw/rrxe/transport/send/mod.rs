// SPDX-License-Identifier: GPL-2.0

//! The send side of a QP: [`req`], the requester, turns send WQEs into
//! request packets; [`comp`], the completer, matches the answers to them,
//! completes the WQEs and decides on retransmission. Both work on one
//! [`SendState`] ([`state`]), the record of the [`Flight`]s started and
//! not yet completed ([`flights`]).

pub(crate) mod comp;
mod flights;
pub(crate) mod req;
mod state;

pub(crate) use self::{
    flights::{Flight, FlightOp},
    state::SendState,
};
