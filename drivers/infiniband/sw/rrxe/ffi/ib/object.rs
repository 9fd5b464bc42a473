// SPDX-License-Identifier: GPL-2.0

//! Verbs objects the core allocates for the driver (PD, CQ, QP, ...).
//!
//! The core allocates each object as one block of `size_ib_<obj>` bytes
//! that starts with the C struct (`struct ib_pd`, ...); [`Object<C, T>`] is
//! that block, with the driver's data `T` right after the C struct. The
//! data is written by the create trampoline and dropped by the destroy one;
//! the core calls operations on an object only in between.

use crate::ffi::sys;
use core::ops::Deref;
use kernel::types::Opaque;

use super::{IbDevice, Operations};

/// A core-allocated verbs object: the C struct `C`, then the driver's `T`.
///
/// # Invariants
///
/// Every `&Object` handed out points into a block the core allocated for
/// this object type with at least `size_of::<Self>()` bytes, and `data` is
/// initialised from the end of its create operation to the start of its
/// destroy operation.
#[repr(C)]
pub(crate) struct Object<C, T> {
    raw: Opaque<C>,
    data: T,
}

impl<C, T> Object<C, T> {
    /// The C struct.
    pub(crate) fn as_raw(&self) -> *mut C {
        self.raw.get()
    }

    /// Borrows an object whose data is initialised.
    ///
    /// # Safety
    ///
    /// `ptr` is the C struct of an `Object<C, T>` whose data is initialised
    /// and stays so for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut C) -> &'a Self {
        // SAFETY: `raw` is the first field of a `repr(C)` struct, so the
        // pointers coincide; the caller guarantees liveness.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// An object for the driver to allocate itself (MRs): a zeroed C struct,
    /// which the core fills in once the driver returns it.
    pub(crate) fn new_unset(data: T) -> Self {
        Self {
            raw: Opaque::zeroed(),
            data,
        }
    }

    /// Initialises the data of a freshly allocated object.
    ///
    /// # Safety
    ///
    /// `ptr` is the C struct of a block allocated for `Object<C, T>` whose
    /// data is not initialised.
    pub(crate) unsafe fn init(ptr: *mut C, data: T) {
        // SAFETY: the caller guarantees the block is large enough and the
        // data slot uninitialised.
        unsafe { (&raw mut (*ptr.cast::<Self>()).data).write(data) };
    }

    /// Drops the data before the core frees the block.
    ///
    /// # Safety
    ///
    /// `ptr` is the C struct of an `Object<C, T>` with initialised data that
    /// nothing uses any more.
    pub(crate) unsafe fn drop_data(ptr: *mut C) {
        // SAFETY: guaranteed by the caller.
        unsafe { core::ptr::drop_in_place(&raw mut (*ptr.cast::<Self>()).data) };
    }
}

impl<C, T> Deref for Object<C, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.data
    }
}

/// A protection domain with the driver's data.
pub(crate) type Pd<T> = Object<sys::ib_pd, <T as Operations>::Pd>;
/// A completion queue with the driver's data.
pub(crate) type Cq<T> = Object<sys::ib_cq, <T as Operations>::Cq>;
/// A queue pair with the driver's data.
pub(crate) type Qp<T> = Object<sys::ib_qp, <T as Operations>::Qp>;
/// A shared receive queue with the driver's data.
pub(crate) type Srq<T> = Object<sys::ib_srq, <T as Operations>::Srq>;
/// An address handle with the driver's data.
pub(crate) type Ah<T> = Object<sys::ib_ah, <T as Operations>::Ah>;
/// A memory region with the driver's data.
pub(crate) type Mr<T> = Object<sys::ib_mr, <T as Operations>::Mr>;
/// A memory window with the driver's data.
pub(crate) type Mw<T> = Object<sys::ib_mw, <T as Operations>::Mw>;

/// C verbs structs, each of which names the device it belongs to.
pub(crate) trait VerbsObject {
    /// The `device` field.
    ///
    /// # Safety
    ///
    /// `this` points to a valid, initialised struct.
    unsafe fn device_of(this: *mut Self) -> *mut sys::ib_device;
}

macro_rules! verbs_object {
    ($($t:ident),*) => {$(
        impl VerbsObject for sys::$t {
            unsafe fn device_of(this: *mut Self) -> *mut sys::ib_device {
                // SAFETY: guaranteed by the caller.
                unsafe { (*this).device }
            }
        }
    )*};
}
verbs_object!(ib_pd, ib_cq, ib_qp, ib_mr, ib_ah, ib_srq, ib_mw);

impl<C: VerbsObject, D> Object<C, D> {
    /// The device this object belongs to.
    pub(crate) fn device<T: Operations>(&self) -> &IbDevice<T> {
        // SAFETY: a live object was created on one of the driver's devices,
        // which outlives it; its ops table is `IbDevice<T>`'s (the driver
        // has one device type).
        unsafe { IbDevice::from_raw(C::device_of(self.as_raw())) }
    }
}
