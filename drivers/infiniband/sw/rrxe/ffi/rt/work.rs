// SPDX-License-Identifier: GPL-2.0

//! Flushing and cancelling work items of `kernel::workqueue`, which only
//! knows how to queue them.
//!
//! All of these sleep: call them in process context, never from the work
//! item being waited for.

use crate::ffi::sys;
use kernel::{
    sync::Arc,
    workqueue::{HasWork, RawWorkItem, Work, WorkItem},
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

/// Waits until the work item `ID` embedded in `obj` is neither queued nor
/// running (`flush_work`). Returns whether it had to wait.
#[cfg_attr(not(CONFIG_KUNIT), expect(dead_code))]
pub(crate) fn flush_work<T: HasWork<T, ID>, const ID: u64>(obj: &T) -> bool {
    // SAFETY: the `work_struct` is valid and initialised (a `Work` can only be
    // created initialised) for as long as `obj` is borrowed.
    unsafe { sys::flush_work(raw_work::<T, ID>(obj)) }
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

/// Queues the work item `ID` of `this` on CPU `cpu`'s bottom-half queue
/// (`system_bh_wq`; an IPI when `cpu` is another): it runs there in
/// softirq context. Returns `false` if it was queued already (the clone
/// given is then dropped). Any context; `cpu` must be online. Queued on
/// this CPU from process context, it runs when bottom halves come back on
/// if the caller holds a [`BhOff`] around the call (else at the next
/// interrupt, or in ksoftirqd).
pub(crate) fn enqueue_bh_on<T, const ID: u64>(cpu: u32, this: Arc<T>) -> bool
where
    T: HasWork<T, ID> + WorkItem<ID, Pointer = Arc<T>> + Send + Sync + 'static,
{
    enqueue_on(sys::rrxe_queue_work_bh_on, cpu, this)
}

/// Queues the work item `ID` of `this` with `queue` (one of the C helpers
/// that call `queue_work_on` for CPU `cpu`, returning `false` only when the
/// item is queued already).
fn enqueue_on<T, const ID: u64>(
    queue: unsafe extern "C" fn(u32, *mut sys::work_struct) -> bool,
    cpu: u32,
    this: Arc<T>,
) -> bool
where
    T: HasWork<T, ID> + WorkItem<ID, Pointer = Arc<T>> + Send + Sync + 'static,
{
    // SAFETY: the closure returns `false` only when the item is queued
    // already, as `__enqueue` requires; `queue_work_on` uses the pointer,
    // which `__enqueue` keeps valid until the item has run. `T` is `Send`
    // and `'static`, so it may run on another CPU at any later time.
    let r = unsafe {
        this.__enqueue(|work| {
            // CAST: the kernel crate's `work_struct` and ours are the same C
            // struct; `queue` is a C helper calling `queue_work_on` on it.
            queue(cpu, work.cast())
        })
    };
    r.is_ok()
}

/// Queues the work item `ID` of `this` on CPU `cpu`'s per-CPU kworker
/// (`system_percpu_wq`): it runs there in process context, where the
/// scheduler shares the CPU with tasks. For what a bottom-half run leaves
/// when it used its budget: softirq work that keeps coming back would
/// starve them. Returns `false` if it was queued already (the clone given
/// is then dropped). Any context; `cpu` must be online.
/// An item queued here must never be queued on a bottom-half queue: the
/// queue's lockdep map of the item would be taken in both contexts.
pub(crate) fn enqueue_task_on<T, const ID: u64>(cpu: u32, this: Arc<T>) -> bool
where
    T: HasWork<T, ID> + WorkItem<ID, Pointer = Arc<T>> + Send + Sync + 'static,
{
    enqueue_on(sys::rrxe_queue_work_task_on, cpu, this)
}

/// Bottom halves off on this CPU while it lives (`local_bh_disable`): code
/// written for softirq context may run in process context under it (no
/// preemption, no softirq of this CPU in between). Nests; any context but
/// hard interrupts.
pub(crate) struct BhOff(core::marker::PhantomData<*mut ()>);

impl BhOff {
    /// Turns bottom halves off until the guard is dropped, on this CPU
    /// (the guard is not `Send`).
    pub(crate) fn new() -> Self {
        // SAFETY: no precondition but not being in a hard interrupt, which
        // no caller of this module's work items is.
        unsafe { sys::rrxe_local_bh_disable() };
        Self(core::marker::PhantomData)
    }

    /// Turns bottom halves off as [`BhOff::new`] does where that may be
    /// done (not in a hard interrupt, interrupts on); `None` elsewhere.
    /// Softirqs raised meanwhile on this CPU run when the guard is dropped
    /// (unless in softirq already), not later in ksoftirqd.
    pub(crate) fn where_allowed() -> Option<Self> {
        // SAFETY: no precondition.
        let ok = unsafe { sys::rrxe_bh_may_disable() };
        ok.then(Self::new)
    }
}

impl Drop for BhOff {
    fn drop(&mut self) {
        // SAFETY: pairs with the `local_bh_disable` of `new`, on the same
        // CPU (the guard is not `Send`, and preemption is off meanwhile).
        unsafe { sys::rrxe_local_bh_enable() };
    }
}

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kernel::prelude::kunit_tests(rrxe_rt_work))]
#[cfg_attr(dropin, kernel::prelude::kunit_tests(rrxe_rt_work_dropin))]
mod tests {
    use super::{cancel_work_sync, flush_work};
    use kernel::{
        impl_has_work, new_work,
        prelude::*,
        sync::{
            atomic::{Atomic, Relaxed},
            Arc,
        },
        workqueue::{self, Work, WorkItem},
    };

    /// A work item counting its runs.
    #[pin_data]
    struct Job {
        /// Adds 100 to `runs` when it runs.
        #[pin]
        now: Work<Job, 1>,
        /// The sum of what the runs added.
        runs: Atomic<i32>,
    }

    impl_has_work! {
        impl HasWork<Self, 1> for Job { self.now }
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
                now <- new_work!("rrxe_rt::Job::now"),
                runs: Atomic::new(0),
            }),
            GFP_KERNEL,
        )
    }

    /// Whether `arc` is the only reference left (and drops it).
    fn only_reference(arc: Arc<Job>) -> bool {
        Arc::into_unique_or_drop(arc).is_some()
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
