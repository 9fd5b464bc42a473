// SPDX-License-Identifier: GPL-2.0

//! Completion queues: a ring of completions the process maps and polls, as
//! in the rxe ABI (each slot holds a `struct ib_uverbs_wc`).

use crate::{
    ib::{
        consts::*, CqInitAttr, CreateCqResp, ResizeCqResp, Udata, UserWorkCompletion,
        WorkCompletion,
    },
    params,
    queue::SharedQueue,
};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{new_spinlock, prelude::*, sync::SpinLock};

/// The size of one CQ slot: rxe's `struct rxe_cqe` is a union of the kernel
/// and the user work completion.
fn cqe_size() -> usize {
    size_of::<WorkCompletion>().max(size_of::<UserWorkCompletion>())
}

/// The driver data of a CQ.
pub(crate) struct RrxeCq {
    queue: Pin<KBox<SpinLock<SharedQueue>>>,
    /// The armed notification (`IB_CQ_SOLICITED` or `IB_CQ_NEXT_COMP`), 0
    /// when not armed.
    notify: AtomicU32,
    is_user: bool,
}

fn check_entries(entries: u32) -> Result {
    if entries == 0 || entries > params::MAX_CQE {
        return Err(EINVAL);
    }
    Ok(())
}

impl RrxeCq {
    /// Creates a CQ for `attr.cqe` completions; returns it and its capacity.
    pub(crate) fn new(attr: &CqInitAttr, udata: Option<&Udata>) -> Result<(Self, u32)> {
        if attr.flags != 0 {
            return Err(EOPNOTSUPP);
        }
        check_entries(attr.cqe)?;
        // The core checks comp_vector against num_comp_vectors.
        let queue = SharedQueue::new(attr.cqe, cqe_size(), udata)?;
        if let Some(udata) = udata {
            udata.respond(&CreateCqResp { mi: queue.mminfo() })?;
        }
        let cap = queue.capacity();
        let cq = Self {
            queue: KBox::pin_init(new_spinlock!(queue), GFP_KERNEL)?,
            notify: AtomicU32::new(0),
            is_user: udata.is_some(),
        };
        Ok((cq, cap))
    }

    /// Replaces the ring by one for `entries` completions, keeping the ones
    /// not yet polled; returns the new capacity.
    pub(crate) fn resize(&self, entries: u32, udata: Option<&Udata>) -> Result<u32> {
        check_entries(entries)?;
        let udata = udata.ok_or(EINVAL)?;
        if entries < self.queue.lock().count() {
            return Err(EINVAL);
        }
        let new = SharedQueue::new(entries, cqe_size(), Some(udata))?;
        udata.respond(&ResizeCqResp { mi: new.mminfo() })?;
        let cap = new.capacity();
        let mut scratch = new.scratch()?;
        let mut guard = self.queue.lock();
        new.copy_pending_from(&guard, &mut scratch)?;
        let old = core::mem::replace(&mut *guard, new);
        drop(guard);
        // Freed (or handed to its mmap entry) outside the lock.
        drop(old);
        Ok(cap)
    }

    /// Arms completion notification. Returns 1 if `REPORT_MISSED_EVENTS`
    /// was asked and completions are already waiting.
    pub(crate) fn req_notify(&self, flags: u32) -> Result<i32> {
        let want = flags & IB_CQ_SOLICITED_MASK;
        // NEXT_COMP wins over SOLICITED when both are asked over time.
        if self.notify.load(Ordering::Relaxed) != IB_CQ_NEXT_COMP {
            self.notify.store(want, Ordering::Release);
        }
        if flags & IB_CQ_REPORT_MISSED_EVENTS != 0 && self.queue.lock().count() != 0 {
            return Ok(1);
        }
        Ok(0)
    }

    /// Whether this is a user CQ.
    pub(crate) fn is_user(&self) -> bool {
        self.is_user
    }
}
