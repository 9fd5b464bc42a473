// SPDX-License-Identifier: GPL-2.0

//! Flushing and cancelling work items of `kernel::workqueue`, which only
//! knows how to queue them.
//!
//! All of these sleep: call them in process context, never from the work
//! item being waited for.

use crate::ffi::sys;
use kernel::{
    sync::Arc,
    workqueue::{HasDelayedWork, HasWork, Work, WorkItem},
};

/// The `work_struct` of the work item `ID` embedded in `obj`.
fn raw_work<T: HasWork<T, ID>, const ID: u64>(obj: &T) -> *mut sys::work_struct {
    let ptr = core::ptr::from_ref(obj).cast_mut();
    // SAFETY: `ptr` points to a valid `T`; `raw_get_work` only computes the
    // address of a field.
    let work = unsafe { T::raw_get_work(ptr) };
    // SAFETY: `work` points to the `Work` field of a valid `T`.
    let work = unsafe { Work::raw_get(work) };
    // CAST: the kernel crate's `work_struct` and ours are the same C struct.
    work.cast()
}

/// The `delayed_work` whose `work` is the work item `ID` embedded in `obj`.
fn raw_delayed_work<T: HasDelayedWork<T, ID>, const ID: u64>(obj: &T) -> *mut sys::delayed_work {
    let work = raw_work::<T, ID>(obj);
    // SAFETY: `HasDelayedWork` guarantees that this `work_struct` is the
    // `work` field of a `delayed_work`, inside the valid `T`.
    unsafe { kernel::container_of!(work, sys::delayed_work, work) }
}

/// Waits until the work item `ID` embedded in `obj` is neither queued nor
/// running (`flush_work`). Returns whether it had to wait.
#[cfg_attr(not(CONFIG_KUNIT), expect(dead_code))]
pub(crate) fn flush_work<T: HasWork<T, ID>, const ID: u64>(obj: &T) -> bool {
    // SAFETY: the `work_struct` is valid and initialised (a `Work` can only be
    // created initialised) for as long as `obj` is borrowed.
    unsafe { sys::flush_work(raw_work::<T, ID>(obj)) }
}

/// For a delayed work item: if its timer is pending, queues it at once; then
/// waits for it (`flush_delayed_work`). The pending run happens, so the
/// reference it owns is dropped by the run as usual. Returns whether it had
/// to wait.
#[cfg_attr(not(CONFIG_KUNIT), expect(dead_code))]
pub(crate) fn flush_delayed_work<T: HasDelayedWork<T, ID>, const ID: u64>(obj: &T) -> bool {
    // SAFETY: as in `flush_work`; the `delayed_work` around it is valid too.
    unsafe { sys::flush_delayed_work(raw_delayed_work::<T, ID>(obj)) }
}

/// Cancels the work item `ID` of `obj` if it is queued, and waits for a run
/// in progress to finish (`cancel_work_sync`). A cancelled item does not run,
/// so the `Arc` it was queued with is dropped here. Returns whether it was
/// queued.
pub(crate) fn cancel_work_sync<T, const ID: u64>(obj: &T) -> bool
where
    T: HasWork<T, ID> + WorkItem<ID, Pointer = Arc<T>>,
{
    // SAFETY: as in `flush_work`.
    let was_pending = unsafe { sys::cancel_work_sync(raw_work::<T, ID>(obj)) };
    if was_pending {
        // SAFETY: the item was queued, and only an `Arc<T>` can queue it
        // (`Pointer = Arc<T>`): it was given to the queue with
        // `Arc::into_raw` of this very `T`, and cancelling gave that reference
        // back to us. `obj` proves another reference exists, so this one is
        // not the last.
        drop(unsafe { Arc::from_raw(core::ptr::from_ref(obj)) });
    }
    was_pending
}

/// Cancels the delayed work item `ID` of `obj`, whether its timer is pending
/// or it is queued, and waits for a run in progress to finish
/// (`cancel_delayed_work_sync`). The `Arc` a cancelled item was queued with
/// is dropped here. Returns whether it was pending.
pub(crate) fn cancel_delayed_work_sync<T, const ID: u64>(obj: &T) -> bool
where
    T: HasDelayedWork<T, ID> + WorkItem<ID, Pointer = Arc<T>>,
{
    // SAFETY: as in `flush_delayed_work`.
    let was_pending = unsafe { sys::cancel_delayed_work_sync(raw_delayed_work::<T, ID>(obj)) };
    if was_pending {
        // SAFETY: as in `cancel_work_sync`.
        drop(unsafe { Arc::from_raw(core::ptr::from_ref(obj)) });
    }
    was_pending
}

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kernel::prelude::kunit_tests(rrxe_rt_work))]
#[cfg_attr(dropin, kernel::prelude::kunit_tests(rrxe_rt_work_dropin))]
mod tests {
    use super::super::time;
    use super::{cancel_delayed_work_sync, cancel_work_sync, flush_delayed_work, flush_work};
    use kernel::{
        impl_has_delayed_work, impl_has_work, new_delayed_work, new_work,
        prelude::*,
        sync::{
            atomic::{Atomic, Relaxed},
            Arc,
        },
        workqueue::{self, DelayedWork, Work, WorkItem},
    };

    /// A work item of each kind, counting its runs.
    #[pin_data]
    struct Job {
        /// Adds 1 to `runs` when it runs.
        #[pin]
        later: DelayedWork<Job>,
        /// Adds 100 to `runs` when it runs.
        #[pin]
        now: Work<Job, 1>,
        /// The sum of what the runs added.
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
    fn flush_delayed_work_runs_it_now() {
        let Ok(job) = job() else { panic!("no memory") };
        let queued = workqueue::system_unbound().enqueue_delayed(job.clone(), an_hour());
        assert!(queued.is_ok());
        // Whether it "waited" depends on how fast a worker picks the item up;
        // that it ran is what counts.
        flush_delayed_work(&*job);
        assert_eq!(job.runs.load(Relaxed), 1);
        // Nothing pending: returns at once.
        assert!(!flush_delayed_work(&*job));
        assert!(only_reference(job));
    }

    #[test]
    fn cancel_delayed_work_drops_the_queued_reference() {
        let Ok(job) = job() else { panic!("no memory") };
        let queued = workqueue::system_unbound().enqueue_delayed(job.clone(), an_hour());
        assert!(queued.is_ok());
        assert!(cancel_delayed_work_sync(&*job));
        assert!(!cancel_delayed_work_sync(&*job));
        assert_eq!(job.runs.load(Relaxed), 0);
        assert!(only_reference(job));
    }

    #[test]
    fn flush_and_cancel_work() {
        let Ok(job) = job() else { panic!("no memory") };
        let queued = workqueue::system_unbound().enqueue::<_, 1>(job.clone());
        assert!(queued.is_ok());
        flush_work::<_, 1>(&*job);
        assert_eq!(job.runs.load(Relaxed), 100);
        // Cancelling an idle item does nothing.
        assert!(!cancel_work_sync::<_, 1>(&*job));
        assert!(only_reference(job));
    }
}
