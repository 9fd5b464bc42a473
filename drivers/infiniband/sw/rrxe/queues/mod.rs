// SPDX-License-Identifier: GPL-2.0

//! Queues: rxe rings in mappable memory, completion queues, shared
//! receive queues, and kernel consumers' work requests written into rings.

pub(crate) mod cq;
pub(crate) mod post;
pub(crate) mod queue;
pub(crate) mod srq;
