// SPDX-License-Identifier: GPL-2.0

//! Handles on core objects that a driver keeps to report to their
//! consumers: completion notifications and asynchronous events.
//!
//! A handle is a pointer to the core's struct. The core frees that struct
//! right after the driver's destroy operation returns, so a driver must not
//! report through a handle after destroying the object. The RDMA core makes
//! this easy to respect: a CQ cannot be destroyed while a QP uses it (its
//! `usecnt`), so a QP may report on its CQs until its own destroy returns.

use crate::ffi::sys;
use core::ptr::NonNull;

/// Asynchronous events drivers report on objects.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Event {
    /// A completion could not be queued: the CQ overflowed.
    CqError,
    /// A QP in SQD has no more outstanding send requests.
    SqDrained,
    /// A QP in error attached to an SRQ will take no more receives.
    LastWqeReached,
    /// An SRQ fell below its limit.
    SrqLimitReached,
}

impl Event {
    fn raw(self) -> u32 {
        match self {
            Event::CqError => sys::IB_EVENT_CQ_ERR,
            Event::SqDrained => sys::IB_EVENT_SQ_DRAINED,
            Event::LastWqeReached => sys::IB_EVENT_QP_LAST_WQE_REACHED,
            Event::SrqLimitReached => sys::IB_EVENT_SRQ_LIMIT_REACHED,
        }
    }
}

/// Core structs that carry an event handler and its context.
pub(crate) trait EventSource {
    /// Calls the handler of `this`, if any, with `event`.
    ///
    /// # Safety
    ///
    /// `this` is a valid, live object.
    unsafe fn dispatch(this: *mut Self, event: u32);
}

macro_rules! event_source {
    ($($t:ident: $field:ident, $ctx:ident;)*) => {$(
        impl EventSource for sys::$t {
            unsafe fn dispatch(this: *mut Self, event: u32) {
                // SAFETY: guaranteed by the caller.
                unsafe {
                    if let Some(handler) = (*this).event_handler {
                        let mut ev = sys::ib_event {
                            device: (*this).device,
                            element: sys::ib_event__bindgen_ty_1 { $field: this },
                            event,
                        };
                        handler(&mut ev, (*this).$ctx);
                    }
                }
            }
        }
    )*};
}
event_source! {
    ib_cq: cq, cq_context;
    ib_qp: qp, qp_context;
    ib_srq: srq, srq_context;
}

/// A handle on a CQ or QP.
///
/// # Invariants
///
/// `obj` is an object the core created on a device of this driver; it is
/// valid until the driver's destroy operation for it returns (see the
/// module docs).
pub(crate) struct Handle<C> {
    obj: NonNull<C>,
}

impl<C> Clone for Handle<C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<C> Copy for Handle<C> {}

// SAFETY: the handlers may be called from any context the driver completes
// in, as the core documents; the handle itself is immutable.
unsafe impl<C> Send for Handle<C> {}
// SAFETY: as above.
unsafe impl<C> Sync for Handle<C> {}

/// A handle on a CQ.
pub(crate) type CqHandle = Handle<sys::ib_cq>;
/// A handle on a QP; also identifies it in a kernel consumer's work
/// completions.
pub(crate) type QpHandle = Handle<sys::ib_qp>;
/// A handle on an SRQ.
pub(crate) type SrqHandle = Handle<sys::ib_srq>;

impl<C: EventSource> Handle<C> {
    /// # Safety
    ///
    /// `obj` is an object being created on one of the driver's devices.
    pub(super) unsafe fn new(obj: *mut C) -> Option<Self> {
        // INVARIANT: guaranteed by the caller.
        NonNull::new(obj).map(|obj| Self { obj })
    }

    /// Reports `event` on the object to its consumer.
    pub(crate) fn event(&self, event: Event) {
        // SAFETY: the object is valid by the type invariant.
        unsafe { C::dispatch(self.obj.as_ptr(), event.raw()) };
    }

    /// The core's struct (what a kernel work completion carries in `qp`).
    pub(crate) fn as_raw(&self) -> *mut C {
        self.obj.as_ptr()
    }
}

impl CqHandle {
    /// Calls the consumer's completion handler (the CQ was armed).
    pub(crate) fn completion(&self) {
        let cq = self.obj.as_ptr();
        // SAFETY: the CQ is valid by the type invariant; the core set the
        // handler and context when it created the CQ.
        unsafe {
            if let Some(handler) = (*cq).comp_handler {
                handler(cq, (*cq).cq_context);
            }
        }
    }
}
