// SPDX-License-Identifier: GPL-2.0

//! In-kernel tests of the runtime helpers: jiffies conversions, and that
//! flushing and cancelling `Arc` work items neither loses a run nor leaks the
//! reference the queue held.

use kernel::prelude::*;

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kunit_tests(rrxe_rt))]
#[cfg_attr(dropin, kunit_tests(rrxe_rt_dropin))]
mod tests {
    use super::super::{time, work};
    use kernel::{
        impl_has_delayed_work, impl_has_work, new_delayed_work, new_work,
        prelude::*,
        sync::{
            atomic::{Atomic, Relaxed},
            Arc,
        },
        workqueue::{self, DelayedWork, Work, WorkItem},
    };

    #[pin_data]
    struct Job {
        #[pin]
        later: DelayedWork<Job>,
        #[pin]
        now: Work<Job, 1>,
        runs: Atomic<i32>,
    }

    impl_has_delayed_work! {
        impl HasDelayedWork<Self> for Job { self.later }
    }

    impl_has_work! {
        impl HasWork<Self, 1> for Job { self.now }
    }

    impl WorkItem for Job {
        type Pointer = Arc<Job>;

        fn run(this: Arc<Job>) {
            this.runs.add(1, Relaxed);
        }
    }

    impl WorkItem<1> for Job {
        type Pointer = Arc<Job>;

        fn run(this: Arc<Job>) {
            this.runs.add(100, Relaxed);
        }
    }

    fn job() -> Result<Arc<Job>> {
        Arc::pin_init(
            pin_init!(Job {
                later <- new_delayed_work!("rrxe_rt::Job::later"),
                now <- new_work!("rrxe_rt::Job::now"),
                runs: Atomic::new(0),
            }),
            GFP_KERNEL,
        )
    }

    /// An hour: the timer never fires during the test.
    fn an_hour() -> usize {
        time::msecs_to_jiffies(3_600_000) as usize
    }

    /// Whether `arc` is the only reference left (and drops it).
    fn only_reference(arc: Arc<Job>) -> bool {
        Arc::into_unique_or_drop(arc).is_some()
    }

    #[test]
    fn usecs_round_up_to_jiffies() {
        let hz = time::hz();
        assert_eq!(time::usecs_to_jiffies(0), 0);
        assert_eq!(time::usecs_to_jiffies(1), 1);
        assert_eq!(time::usecs_to_jiffies(1_000_000), hz);
        assert_eq!(time::usecs_to_jiffies(1_000_001), hz + 1);
        assert_eq!(time::usecs_to_jiffies(u64::MAX), u64::MAX / 1_000_000 + 1);
        assert_eq!(time::msecs_to_jiffies(1000), hz);
        assert!(time::time_after(5, u64::MAX - 5));
        assert!(!time::time_after(u64::MAX - 5, 5));
    }

    #[test]
    fn jiffies_advance() {
        let before = time::jiffies();
        kernel::time::delay::fsleep(kernel::time::Delta::from_millis(20));
        assert!(time::time_after(time::jiffies(), before));
    }

    #[test]
    fn flush_delayed_work_runs_it_now() {
        let Ok(job) = job() else { panic!("no memory") };
        let queued = workqueue::system_unbound().enqueue_delayed(job.clone(), an_hour());
        assert!(queued.is_ok());
        // Whether it "waited" depends on how fast a worker picks the item up;
        // that it ran is what counts.
        work::flush_delayed_work(&*job);
        assert_eq!(job.runs.load(Relaxed), 1);
        // Nothing pending: returns at once.
        assert!(!work::flush_delayed_work(&*job));
        assert!(only_reference(job));
    }

    #[test]
    fn cancel_delayed_work_drops_the_queued_reference() {
        let Ok(job) = job() else { panic!("no memory") };
        let queued = workqueue::system_unbound().enqueue_delayed(job.clone(), an_hour());
        assert!(queued.is_ok());
        assert!(work::cancel_delayed_work_sync(&*job));
        assert!(!work::cancel_delayed_work_sync(&*job));
        assert_eq!(job.runs.load(Relaxed), 0);
        assert!(only_reference(job));
    }

    #[test]
    fn flush_and_cancel_work() {
        let Ok(job) = job() else { panic!("no memory") };
        let queued = workqueue::system_unbound().enqueue::<_, 1>(job.clone());
        assert!(queued.is_ok());
        work::flush_work::<_, 1>(&*job);
        assert_eq!(job.runs.load(Relaxed), 100);
        // Cancelling an idle item does nothing.
        assert!(!work::cancel_work_sync::<_, 1>(&*job));
        assert!(only_reference(job));
    }
}
