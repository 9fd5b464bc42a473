// SPDX-License-Identifier: GPL-2.0

//! Device resources: the advertised limits, the port counters, the tables
//! that number QPs, MRs, MWs and AHs (read by the data path in softirq
//! context), keys, the objects that are only entries of those tables
//! (address handles) and the [`path`] packets take to a peer. Nothing here names a QP, an MR or the device: the state that holds
//! them all is [`crate::transport::shared`], above the memory layer.

pub(crate) mod ah;
pub(crate) mod counters;
pub(crate) mod irq_table;
pub(crate) mod key_table;
pub(crate) mod params;
pub(crate) mod path;
pub(crate) mod round_robin;
