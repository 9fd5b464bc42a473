// SPDX-License-Identifier: GPL-2.0

//! Queues: rxe rings in mappable memory, completion queues and shared
//! receive queues.

pub(crate) mod cq;
pub(crate) mod queue;
pub(crate) mod srq;
