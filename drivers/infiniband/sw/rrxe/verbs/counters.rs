// SPDX-License-Identifier: GPL-2.0

//! The verbs of the core's counters (`rdma statistic qp`): numbering a
//! counter and keeping its [`CounterSet`] in the device, binding a QP to it
//! and unbinding it, reading it, and forgetting it.
//!
//! While a QP is bound, its data path counts into the counter's set instead
//! of the port's counters (`dev::counters`): the core reports a port's
//! totals as the port's counters plus every counter plus the counters gone,
//! so the QP's events are counted once.

use super::device::RrxeDevice;
use crate::{
    dev::counters::CounterSet,
    dev::params,
    ffi::ib::{Qp, RdmaCounter},
};
use kernel::{prelude::*, sync::Arc};

/// A device's counter.
type Counter = RdmaCounter<RrxeDevice>;

// The device's table of counter sets, which the first bind of a counter
// fills.
impl RrxeDevice {
    /// Numbers a new counter and enters an empty set for it.
    fn new_counter_set(&self) -> Result<(u32, Arc<CounterSet>)> {
        let _numbering = self.counter_create.lock();
        // A counter lives while a QP is bound to it: never more of them
        // than QPs. Numbers start at 1 (0 is "none yet" to the core).
        let (id, _) = self
            .next_counter
            .find(1, params::MAX_QP, |id| {
                !self.counter_sets.contains(id as usize)
            })
            .ok_or(ENOSPC)?;
        let set = CounterSet::new(self.shared.counters.clone())?;
        self.counter_sets.store(id as usize, set.clone())?;
        Ok((id, set))
    }
}

/// `counter_bind_qp`: the QP counts into the counter's set from its next
/// pass on. Returns the counter's number (a new one on its first bind).
pub(super) fn bind_qp(counter: &Counter, qp: &Qp<RrxeDevice>, port: u32) -> Result<u32> {
    RrxeDevice::check_port(port)?;
    let dev = counter.device();
    let (id, set) = match counter.id() {
        0 => dev.new_counter_set()?,
        id => (id, dev.counter_sets.get(id as usize).ok_or(EINVAL)?),
    };
    // A set the QP had (none: the core unbinds first) goes after the lock.
    drop(qp.inner.count_in(Some(set)));
    Ok(id)
}

/// `counter_unbind_qp`: the QP counts into the port's counters again. A
/// pass under way may still count into the counter's set (see
/// [`CounterSet`]).
pub(super) fn unbind_qp(qp: &Qp<RrxeDevice>, port: u32) -> Result {
    RrxeDevice::check_port(port)?;
    drop(qp.inner.count_in(None));
    Ok(())
}

/// `counter_update_stats`: the counter's values, which the core shows or,
/// before `counter_dealloc`, keeps as the port's history.
pub(super) fn update_stats(counter: &Counter, values: &mut [u64]) -> Result {
    let set = counter
        .device()
        .counter_sets
        .get(counter.id() as usize)
        .ok_or(EINVAL)?;
    set.report(values);
    Ok(())
}

/// `counter_dealloc`: the counter is gone; its set goes with the last
/// pass that still holds it.
pub(super) fn dealloc(counter: &Counter) -> Result {
    let dev = counter.device();
    drop(dev.counter_sets.remove(counter.id() as usize));
    Ok(())
}
