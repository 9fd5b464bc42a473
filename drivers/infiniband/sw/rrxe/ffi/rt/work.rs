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
