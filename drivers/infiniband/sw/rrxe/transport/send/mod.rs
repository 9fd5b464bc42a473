// SPDX-License-Identifier: GPL-2.0

//! The send side of a QP: [`req`], the requester, turns send WQEs into
//! request packets; [`comp`], the completer, matches the answers to them,
//! completes the WQEs and decides on retransmission.

pub(crate) mod comp;
pub(crate) mod req;
