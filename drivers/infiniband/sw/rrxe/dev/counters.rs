// SPDX-License-Identifier: GPL-2.0

//! The port's hardware counters, under rxe's names so that `rdma statistic`
//! and the sysfs `hw_counters/` files read the same on both drivers. The
//! data path counts into them; the port counts `link_downed`.
//!
//! `rdma statistic qp` binds QPs to counters of the RDMA core, and the
//! core reports a port's totals as what `get_hw_stats` says *plus* every
//! live counter *plus* the history of the counters gone
//! (`rdma_counter_get_hwstat_value`). So an event of a QP bound to a
//! counter is counted in that counter's [`CounterSet`] and not in the
//! port's own set ([`PortStats`]), or the totals would count it twice.
//! Events of no QP (a packet dropped before its QP is known, multicast
//! receives, `link_downed`) stay with the port. [`Tally`] is where one
//! QP's events go for one pass of the data path.

use crate::{ffi::ib::StatDesc, logic::mad::PortCounters};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::{prelude::*, sync::Arc};

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

/// A set of counters, in [`NAMES`] order: atomics, so that any context
/// counts into them without a lock.
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

    /// Overwrites the values with `values` (in [`NAMES`] order).
    fn store(&self, values: &[u64]) {
        for (c, v) in self.0.iter().zip(values) {
            c.store(*v, Ordering::Relaxed);
        }
    }

    /// Copies the values, in [`NAMES`] order, into `values`.
    pub(crate) fn read(&self, values: &mut [u64]) {
        for (v, c) in values.iter_mut().zip(&self.0) {
            *v = c.load(Ordering::Relaxed);
        }
    }
}

/// A port's counting: its own set, which `get_hw_stats` reports, and the
/// part of its totals that counter sets hold, for the PMA.
pub(crate) struct PortStats {
    /// Events of no QP, and of QPs bound to no counter.
    own: Counters,
    /// Everything counted in the port's [`CounterSet`]s, live or gone: the
    /// core adds those to the port's totals itself, but the PMA (and the
    /// port's sysfs `counters/`, which it feeds) reports the totals from
    /// the driver alone.
    in_sets: Counters,
}

impl PortStats {
    /// All zero.
    pub(crate) const fn new() -> Self {
        Self {
            own: Counters::new(),
            in_sets: Counters::new(),
        }
    }

    /// Adds `n` to the port's own `c` (an event of no QP).
    pub(crate) fn add(&self, c: Counter, n: u64) {
        self.own.add(c, n);
    }

    /// Counts a received packet that belongs to no one QP (multicast).
    pub(crate) fn received(&self, bytes: usize) {
        self.own.received(bytes);
    }

    /// What `get_hw_stats` reports: the port's own set, in [`NAMES`] order
    /// (the core adds the counters' values to it).
    pub(crate) fn read(&self, values: &mut [u64]) {
        self.own.read(values);
    }

    fn total(&self, c: Counter) -> u64 {
        self.own.get(c).wrapping_add(self.in_sets.get(c))
    }

    /// What the port's performance management agent reports: the port's
    /// totals, counter sets included.
    pub(crate) fn pma(&self) -> PortCounters {
        PortCounters {
            link_downed: self.total(Counter::LinkDowned),
            sent_bytes: self.total(Counter::SentBytes),
            rcvd_bytes: self.total(Counter::RcvdBytes),
            sent_pkts: self.total(Counter::SentPkts),
            rcvd_pkts: self.total(Counter::RcvdPkts),
        }
    }
}

/// The counts of one counter of the RDMA core (`rdma statistic qp`): the
/// events of the QPs bound to it, while they are bound. It outlives each
/// binding (a QP unbound leaves its events in it: the core reads them into
/// its history when the counter goes, `counter_release`).
///
/// A pass of the data path that began before an unbind may still count
/// into the set after the core has read it for the last time. Such late
/// events go back to the port's own set when the set is dropped, after
/// the last pass let go of it, so they are counted once all the same.
pub(crate) struct CounterSet {
    /// The events of the QPs bound to it.
    counts: Counters,
    /// The values the core last read ([`CounterSet::report`]).
    reported: Counters,
    /// The port it counts apart from.
    port: Arc<PortStats>,
}

impl CounterSet {
    /// An empty set of `port`'s.
    pub(crate) fn new(port: Arc<PortStats>) -> Result<Arc<Self>> {
        Arc::new(
            Self {
                counts: Counters::new(),
                reported: Counters::new(),
                port,
            },
            GFP_KERNEL,
        )
        .map_err(Into::into)
    }

    fn add(&self, c: Counter, n: u64) {
        self.counts.add(c, n);
        self.port.in_sets.add(c, n);
    }

    /// Copies the values into `values` for the core (in [`NAMES`] order)
    /// and remembers them as what it has seen.
    pub(crate) fn report(&self, values: &mut [u64]) {
        self.counts.read(values);
        self.reported.store(values);
    }
}

impl Drop for CounterSet {
    fn drop(&mut self) {
        // What was counted after the core's last read: the port's again
        // (moved, so that the PMA's totals do not change).
        let port = &self.port;
        let sets = self.counts.0.iter().zip(&self.reported.0);
        let ports = port.own.0.iter().zip(&port.in_sets.0);
        for ((n, seen), (own, in_sets)) in sets.zip(ports) {
            let late = n
                .load(Ordering::Relaxed)
                .saturating_sub(seen.load(Ordering::Relaxed));
            if late != 0 {
                own.fetch_add(late, Ordering::Relaxed);
                in_sets.fetch_sub(late, Ordering::Relaxed);
            }
        }
    }
}

/// Where one QP's events are counted, for one pass of the data path: the
/// port's own set, or the set of the counter the QP is bound to.
#[derive(Clone, Copy)]
pub(crate) enum Tally<'a> {
    /// The QP is bound to no counter.
    Port(&'a PortStats),
    /// The QP is bound to a counter.
    Set(&'a CounterSet),
}

impl<'a> Tally<'a> {
    /// `port`'s own set, or `set` if there is one.
    pub(crate) fn new(port: &'a PortStats, set: Option<&'a CounterSet>) -> Self {
        match set {
            Some(s) => Self::Set(s),
            None => Self::Port(port),
        }
    }

    /// Adds `n` to `c`.
    pub(crate) fn add(self, c: Counter, n: u64) {
        match self {
            Self::Port(p) => p.own.add(c, n),
            Self::Set(s) => s.add(c, n),
        }
    }

    /// Counts a received packet of `bytes` bytes that passed every check
    /// (as rxe counts).
    pub(crate) fn received(self, bytes: usize) {
        self.add(Counter::RcvdPkts, 1);
        self.add(Counter::RcvdBytes, bytes as u64);
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

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kernel::prelude::kunit_tests(rrxe_dev_counters))]
#[cfg_attr(dropin, kernel::prelude::kunit_tests(rrxe_dev_counters_dropin))]
mod tests {
    use super::{Counter, CounterSet, PortStats, Tally, COUNT};
    use kernel::{prelude::*, sync::Arc};

    fn own(port: &PortStats, c: Counter) -> u64 {
        let mut v = [0u64; COUNT];
        port.read(&mut v);
        v[c as usize]
    }

    #[test]
    fn bound_events_leave_the_port_alone() -> Result {
        let port = Arc::new(PortStats::new(), GFP_KERNEL)?;
        let set = CounterSet::new(port.clone())?;
        Tally::new(&port, None).received(100);
        Tally::new(&port, Some(&set)).received(60);
        Tally::new(&port, Some(&set)).add(Counter::SentPkts, 2);
        // `get_hw_stats` sees the port's own events only: the core adds
        // the counter's, so each is counted once in `rdma statistic`.
        assert_eq!(own(&port, Counter::RcvdPkts), 1);
        assert_eq!(own(&port, Counter::RcvdBytes), 100);
        assert_eq!(own(&port, Counter::SentPkts), 0);
        let mut v = [0u64; COUNT];
        set.report(&mut v);
        assert_eq!(v[Counter::RcvdPkts as usize], 1);
        assert_eq!(v[Counter::RcvdBytes as usize], 60);
        assert_eq!(v[Counter::SentPkts as usize], 2);
        // The PMA reports the port's totals.
        let pma = port.pma();
        assert_eq!(pma.rcvd_pkts, 2);
        assert_eq!(pma.rcvd_bytes, 160);
        assert_eq!(pma.sent_pkts, 2);
        Ok(())
    }

    #[test]
    fn late_events_go_back_to_the_port() -> Result {
        let port = Arc::new(PortStats::new(), GFP_KERNEL)?;
        let set = CounterSet::new(port.clone())?;
        Tally::new(&port, Some(&set)).add(Counter::SentPkts, 3);
        // The core's last read, into its history.
        let mut v = [0u64; COUNT];
        set.report(&mut v);
        assert_eq!(v[Counter::SentPkts as usize], 3);
        // A pass that began before the unbind sends two more.
        Tally::new(&port, Some(&set)).add(Counter::SentPkts, 2);
        drop(set);
        // Those two, which the core never saw, are the port's now; the
        // three it read are not counted again.
        assert_eq!(own(&port, Counter::SentPkts), 2);
        assert_eq!(port.pma().sent_pkts, 5);
        Ok(())
    }

    #[test]
    fn a_set_never_read_gives_everything_back() -> Result {
        let port = Arc::new(PortStats::new(), GFP_KERNEL)?;
        let set = CounterSet::new(port.clone())?;
        Tally::new(&port, Some(&set)).received(40);
        drop(set);
        assert_eq!(own(&port, Counter::RcvdPkts), 1);
        assert_eq!(own(&port, Counter::RcvdBytes), 40);
        assert_eq!(port.pma().rcvd_pkts, 1);
        Ok(())
    }
}
