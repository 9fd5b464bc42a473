// SPDX-License-Identifier: GPL-2.0

//! The verbs: the ib_device operations ([`device`]: the device, its port
//! and the table of operations), and the verbs of each kind of object in a
//! room of its own: [`pd`] (protection domains, address handles),
//! [`queues`] (CQs, SRQs), [`qp`] and [`mem`] (MRs, MWs). Kernel consumers'
//! work requests are written into the rings by [`crate::queues::post`].

pub(crate) mod device;
mod mem;
pub(crate) mod pd;
mod qp;
mod queues;
