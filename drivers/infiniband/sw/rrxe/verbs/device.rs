// SPDX-License-Identifier: GPL-2.0

//! An rrxe device: one RoCEv2 port on top of one Ethernet netdev. Here is
//! the driver data of its `ib_device`, what each room of the verbs counts
//! or numbers in it, and what its going undoes. Its `Operations` are in
//! [`super::ops`]. The state the data path and netdev events share with it
//! is [`Shared`], in [`crate::transport::shared`].

use crate::{
    dev::counters::{CounterSet, ObjectCount},
    dev::irq_table::IrqTable,
    dev::params,
    dev::round_robin::RoundRobin,
    queues::srq::SrqNumbers,
    registry,
    rx::tunnel,
    transport::shared::Shared,
};
use kernel::{
    debugfs::Dir,
    new_mutex, new_spinlock,
    prelude::*,
    sync::{Arc, Mutex, SpinLock},
    xarray::AllocKind,
};

/// The driver data of an rrxe `ib_device`.
#[pin_data(PinnedDrop)]
pub(crate) struct RrxeDevice {
    /// Registry key; the registry entry is removed when the device goes.
    pub(crate) id: u64,
    /// State shared with the registry.
    pub(crate) shared: Arc<Shared>,
    /// `sys_image_guid`, wire byte order.
    #[pin]
    pub(super) sys_image_guid: SpinLock<u64>,
    /// Serialises QP creation, so that a number found free stays free while
    /// the QP is built (which sleeps, so it cannot happen under `qps`' lock).
    #[pin]
    pub(super) qp_create: Mutex<()>,
    /// Where the search for a free QP number continues.
    pub(super) next_qpn: RoundRobin,
    /// The SRQs, counted against `MAX_SRQ`.
    pub(super) srqs: ObjectCount,
    /// The SRQs' numbers.
    pub(super) srq_numbers: SrqNumbers,
    /// The PDs, counted against `MAX_PD`.
    pub(super) pds: ObjectCount,
    /// The CQs, counted against `MAX_CQ`.
    pub(super) cqs: ObjectCount,
    /// The sets of the core's counters (`rdma statistic qp`), by number;
    /// the QPs bound to a counter hold its set too.
    #[pin]
    pub(super) counter_sets: IrqTable<CounterSet>,
    /// Serialises numbering a counter with entering its set, as
    /// `qp_create` does for QPs.
    #[pin]
    pub(super) counter_create: Mutex<()>,
    /// Where the search for a free counter number continues.
    pub(super) next_counter: RoundRobin,
    /// The device's debugfs directory, where its QPs' files go (none if it
    /// could not be made).
    pub(super) debugfs: Option<Dir>,
}

impl RrxeDevice {
    /// The initialiser for the data of a new device.
    pub(crate) fn new(
        id: u64,
        shared: Arc<Shared>,
        guid: u64,
        debugfs: Option<Dir>,
    ) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            id,
            shared,
            sys_image_guid <- new_spinlock!(guid),
            qp_create <- new_mutex!(()),
            srqs: ObjectCount::new(),
            srq_numbers: SrqNumbers::new(),
            next_qpn: RoundRobin::new(),
            pds: ObjectCount::new(),
            cqs: ObjectCount::new(),
            counter_sets <- IrqTable::new(AllocKind::Alloc),
            counter_create <- new_mutex!(()),
            next_counter: RoundRobin::new(),
            debugfs,
        })
    }

    /// `Ok` for the device's one port, `EINVAL` for any other number.
    pub(super) fn check_port(port: u32) -> Result {
        if port == params::PORT {
            Ok(())
        } else {
            Err(EINVAL)
        }
    }
}

#[pinned_drop]
// The macro writes the `unsafe impl` that `PinnedDrop` requires.
#[allow(unsafe_code)]
impl PinnedDrop for RrxeDevice {
    fn drop(self: Pin<&mut Self>) {
        // Every QP is gone, so every group is empty by now; leave nothing
        // joined on the netdev in any case (and drop the QP references).
        self.shared.mcast.clear(self.shared.netdev().as_deref());
        tunnel::detach(&self.shared);
        registry::remove(self.id);
    }
}
