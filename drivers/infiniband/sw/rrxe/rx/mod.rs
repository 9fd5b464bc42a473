// SPDX-License-Identifier: GPL-2.0

//! Receiving: UDP port 4791 per network namespace ([`tunnel`]), and the
//! demultiplexer ([`demux`]): the checks every packet passes before a QP
//! sees it, and the hand-off to the QP, or to a multicast group's QPs.

pub(crate) mod demux;
pub(crate) mod tunnel;
