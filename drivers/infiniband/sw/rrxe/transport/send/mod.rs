// SPDX-License-Identifier: GPL-2.0

//! The send side of a QP: [`req`], the requester, turns send WQEs into
//! request packets; [`comp`], the completer, matches the answers to them,
//! completes the WQEs and decides on retransmission.
//!
//! Both roles work on one [`SendState`], the QP's record of the WQEs
//! started and not yet completed (its flights, `flights.rs`) and of the
//! PSNs, window, cursor and retry budgets around them. `state.rs` is its
//! one owner: the roles read it through accessors and change it only
//! through methods named for the transport rule each carries (an ACK
//! moved forward, an RNR NAK, a retry, a timeout, a flight retired), so
//! that neither role writes the other's fields behind its back.

pub(crate) mod comp;
mod flights;
pub(crate) mod req;
pub(crate) mod state;

pub(crate) use self::state::SendState;
