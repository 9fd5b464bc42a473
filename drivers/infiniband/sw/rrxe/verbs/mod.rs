// SPDX-License-Identifier: GPL-2.0

//! The verbs: the device ([`device`]), the table of its ib_device
//! operations ([`ops`]: the device's and the port's verbs), and the verbs of
//! each kind of object in a room of its own: [`pd`] (protection domains, address handles),
//! [`queues`] (CQs, SRQs), [`qp`] and [`mem`] (MRs, MWs), and
//! [`counters`] (the core's counters, `rdma statistic qp`). Kernel consumers'
//! work requests are written into the rings by [`crate::queues::post`].

mod counters;
pub(crate) mod debugfs;
pub(crate) mod device;
mod mem;
mod ops;
pub(crate) mod pd;
mod qp;
mod queues;
