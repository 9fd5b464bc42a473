// SPDX-License-Identifier: GPL-2.0

//! A counter of the RDMA core (`struct rdma_counter`), which
//! `rdma statistic qp` binds QPs to ([`RdmaCounter`]).
//!
//! The core allocates and frees it (`drivers/infiniband/core/counters.c`);
//! the driver only numbers it, on its first bind, and keeps what it counts
//! under that number. The driver keeps nothing in the core's block: the
//! core frees a counter whose first bind failed without calling
//! `counter_dealloc`, so anything the driver had put there would leak.

use crate::ffi::sys;
use core::marker::PhantomData;
use kernel::types::Opaque;

use super::{IbDevice, Operations};

/// A core counter of a device whose operations are `T`.
///
/// # Invariants
///
/// Every `&RdmaCounter` handed out points to a `struct rdma_counter` the
/// core allocated for one of `T`'s devices, which it keeps alive, with its
/// device's data, for the reference's lifetime.
#[repr(transparent)]
pub(crate) struct RdmaCounter<T>(Opaque<sys::rdma_counter>, PhantomData<T>);

impl<T: Operations> RdmaCounter<T> {
    /// Borrows the core's counter.
    ///
    /// # Safety
    ///
    /// `ptr` is a counter of one of `T`'s devices that the core keeps alive,
    /// with the device's data, for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut sys::rdma_counter) -> &'a Self {
        // SAFETY: `repr(transparent)` over the C struct; the caller
        // guarantees liveness.
        unsafe { &*ptr.cast::<Self>() }
    }

    pub(super) fn as_raw(&self) -> *mut sys::rdma_counter {
        self.0.get()
    }

    /// Its number (what `rdma statistic` calls `cntn`): 0 until the
    /// driver's first `counter_bind_qp` gives it one.
    pub(crate) fn id(&self) -> u32 {
        // SAFETY: by the type invariant the counter is live; the core
        // writes `id` only through `counter_bind_qp`, under the counter's
        // lock, which every caller of an operation holds or no longer needs.
        unsafe { (*self.as_raw()).id }
    }

    /// The device it belongs to.
    pub(crate) fn device(&self) -> &IbDevice<T> {
        // SAFETY: by the type invariant the counter belongs to one of `T`'s
        // devices, whose data is alive while the counter is borrowed.
        unsafe { IbDevice::from_raw((*self.as_raw()).device) }
    }
}
