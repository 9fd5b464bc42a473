// SPDX-License-Identifier: GPL-2.0

//! The port's hardware counters, under rxe's names so that `rdma statistic`
//! and the sysfs `hw_counters/` files read the same on both drivers. The
//! data path counts into them; the port counts `link_downed`.

use crate::{ffi::ib::StatDesc, logic::mad::PortCounters};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;

/// One counter (the order of [`NAMES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[expect(dead_code, reason = "most are counted by the data path")]
#[repr(usize)]
pub(crate) enum Counter {
    SentPkts,
    RcvdPkts,
    DuplicateRequest,
    OutOfSeqRequest,
    RcvdRnrErr,
    SendRnrErr,
    RcvdSeqErr,
    AckDeferred,
    RetryExceededErr,
    RetryRnrExceededErr,
    CompleterRetryErr,
    SendErr,
    LinkDowned,
    RdmaSends,
    RdmaRecvs,
    SentBytes,
    RcvdBytes,
}

const COUNT: usize = Counter::RcvdBytes as usize + 1;

/// The counters' names, as rxe reports them.
pub(crate) static NAMES: [StatDesc; COUNT] = [
    StatDesc::new(c"sent_pkts"),
    StatDesc::new(c"rcvd_pkts"),
    StatDesc::new(c"duplicate_request"),
    StatDesc::new(c"out_of_seq_request"),
    StatDesc::new(c"rcvd_rnr_err"),
    StatDesc::new(c"send_rnr_err"),
    StatDesc::new(c"rcvd_seq_err"),
    StatDesc::new(c"ack_deferred"),
    StatDesc::new(c"retry_exceeded_err"),
    StatDesc::new(c"retry_rnr_exceeded_err"),
    StatDesc::new(c"completer_retry_err"),
    StatDesc::new(c"send_err"),
    StatDesc::new(c"link_downed"),
    StatDesc::new(c"rdma_sends"),
    StatDesc::new(c"rdma_recvs"),
    StatDesc::new(c"sent_bytes"),
    StatDesc::new(c"rcvd_bytes"),
];

/// A port's counters.
pub(crate) struct Counters([AtomicU64; COUNT]);

impl Counters {
    /// All zero.
    pub(crate) const fn new() -> Self {
        Self([const { AtomicU64::new(0) }; COUNT])
    }

    /// Adds `n` to `c`.
    pub(crate) fn add(&self, c: Counter, n: u64) {
        self.0[c as usize].fetch_add(n, Ordering::Relaxed);
    }

    /// Counts a received packet of `bytes` bytes that passed every check
    /// (as rxe counts).
    pub(crate) fn received(&self, bytes: usize) {
        self.add(Counter::RcvdPkts, 1);
        self.add(Counter::RcvdBytes, bytes as u64);
    }

    fn get(&self, c: Counter) -> u64 {
        self.0[c as usize].load(Ordering::Relaxed)
    }

    /// Copies the values, in [`NAMES`] order, into `values`.
    pub(crate) fn read(&self, values: &mut [u64]) {
        for (v, c) in values.iter_mut().zip(&self.0) {
            *v = c.load(Ordering::Relaxed);
        }
    }

    /// What the port's performance management agent reports.
    pub(crate) fn pma(&self) -> PortCounters {
        PortCounters {
            link_downed: self.get(Counter::LinkDowned),
            sent_bytes: self.get(Counter::SentBytes),
            rcvd_bytes: self.get(Counter::RcvdBytes),
            sent_pkts: self.get(Counter::SentPkts),
            rcvd_pkts: self.get(Counter::RcvdPkts),
        }
    }
}

/// A count of objects bounded by a device limit.
pub(crate) struct ObjectCount(AtomicU32);

impl ObjectCount {
    /// None taken.
    pub(crate) const fn new() -> Self {
        Self(AtomicU32::new(0))
    }

    /// Takes one, or `ENOMEM` (what rxe's pools say) when `max` are taken.
    pub(crate) fn take(&self, max: u32) -> Result {
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < max).then_some(n + 1)
            })
            .map(|_| ())
            .map_err(|_| ENOMEM)
    }

    /// Gives one back.
    pub(crate) fn give(&self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
