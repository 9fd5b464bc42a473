// SPDX-License-Identifier: GPL-2.0

//! RDMA devices: allocation, registration and lifetime.
//!
//! The core allocates a driver's device as one block that starts with
//! `struct ib_device`; [`IbDevice<T>`] is that block, with the driver's data
//! `T` right after the C struct. Lifetime follows the core's rules:
//!
//! - [`Unregistered<T>`] owns a device that is not registered yet; dropping
//!   it deallocates it.
//! - After `ib_register_device`, the core owns the device. It calls
//!   `dealloc_driver` (dropping `T`) once unregistration is complete, which
//!   may happen at any time (`rdma link delete`, netdev removal, ...).
//! - [`DeviceHandle<T>`] keeps the memory of the device alive (a reference on
//!   its `struct device`) but not `T`; it can only unregister or upgrade.
//! - [`DeviceRef<T>`] is a registration reference (`ib_device_try_get`):
//!   while one exists the device cannot finish unregistering, so `T` is alive.
//!
//! The operations a driver implements are the [`Operations`] trait
//! (`operations.rs`); the C callbacks that call them, and the ops table
//! [`Unregistered::new`] installs, are `vtable.rs`.

use crate::ffi::sys;
use core::{marker::PhantomData, ops::Deref, ptr::NonNull};
use kernel::{error::to_result, prelude::*, types::Opaque, ThisModule};

use super::{vtable::OperationsVTable, Operations, PortSpeed, PortWidth};

/// Asynchronous port events a driver reports to the core's event handlers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum PortEvent {
    /// The port became usable (`IB_EVENT_PORT_ACTIVE`).
    Active,
    /// The port went down (`IB_EVENT_PORT_ERR`).
    Error,
}

/// Which driver a device belongs to (`enum rdma_driver_id`): what user
/// space reads to pick its provider library, and what
/// [`rxe_device_on`](super::rxe_device_on) looks for.
#[repr(u32)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum DriverId {
    /// `RDMA_DRIVER_RXE`: soft-RoCE (rdma-core's rxe provider).
    Rxe = sys::RDMA_DRIVER_RXE,
}

/// A uverbs write command a device accepts besides those every device
/// does (`enum ib_uverbs_write_cmds`): one bit of the `uverbs_cmd_mask`.
#[repr(u32)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum UverbsCmd {
    /// `IB_USER_VERBS_CMD_POST_SEND`.
    PostSend = sys::IB_USER_VERBS_CMD_POST_SEND,
    /// `IB_USER_VERBS_CMD_REQ_NOTIFY_CQ`.
    ReqNotifyCq = sys::IB_USER_VERBS_CMD_REQ_NOTIFY_CQ,
}

/// Fixed properties of a device, set before registration.
pub(crate) struct DeviceParams {
    /// Node GUID, in wire byte order.
    pub(crate) node_guid: [u8; 8],
    /// Node description (`node_desc`), truncated to 63 bytes.
    pub(crate) node_desc: &'static CStr,
    /// Number of completion vectors.
    pub(crate) num_comp_vectors: u32,
    /// Extra uverbs write commands accepted.
    pub(crate) uverbs_cmds: &'static [UverbsCmd],
}

/// A driver's RDMA device: the core's `struct ib_device` followed by the
/// driver's data.
///
/// # Invariants
///
/// `ibdev` was allocated by `_ib_alloc_device` with the size of `Self`, and
/// `data` is initialised from allocation until the core calls
/// `dealloc_driver`. The core only invokes operations in that window.
#[repr(C)]
#[pin_data]
pub(crate) struct IbDevice<T> {
    ibdev: Opaque<sys::ib_device>,
    #[pin]
    data: T,
}

impl<T: Operations> IbDevice<T> {
    /// # Safety
    ///
    /// `ptr` must be the `ib_device` of an `IbDevice<T>` whose data is
    /// initialised and stays so for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut sys::ib_device) -> &'a Self {
        // SAFETY: `ibdev` is the first field of a `repr(C)` struct, so the
        // pointers coincide; the caller guarantees liveness.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// Drops the driver's data (`dealloc_driver`).
    ///
    /// # Safety
    ///
    /// `ptr` is the `ib_device` of an `IbDevice<T>` whose data is
    /// initialised and which nothing uses any more.
    pub(super) unsafe fn drop_data(ptr: *mut sys::ib_device) {
        // SAFETY: guaranteed by the caller.
        unsafe { core::ptr::drop_in_place(&raw mut (*ptr.cast::<Self>()).data) };
    }

    pub(super) fn as_raw(&self) -> *mut sys::ib_device {
        self.ibdev.get()
    }

    /// The device name, e.g. `rrxe0`.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: the device is valid; its name lives as long as it does.
        unsafe { CStr::from_char_ptr(sys::rrxe_ib_device_name(self.as_raw())) }
    }

    /// Reports an asynchronous event on `port` to the core's handlers.
    pub(crate) fn port_event(&self, port: u32, event: PortEvent) {
        let ev = match event {
            PortEvent::Active => sys::IB_EVENT_PORT_ACTIVE,
            PortEvent::Error => sys::IB_EVENT_PORT_ERR,
        };
        // SAFETY: the device is valid and registered operations may dispatch events.
        unsafe { sys::rrxe_dispatch_port_event(self.as_raw(), port, ev as i32) };
    }

    /// The Ethernet speed and width of `port` as IB speed/width codes.
    pub(crate) fn eth_speed(&self, port: u32) -> Result<(PortSpeed, PortWidth)> {
        let (mut speed, mut width) = (0u16, 0u8);
        // SAFETY: the device is valid and both out-pointers are valid.
        to_result(unsafe { sys::ib_get_eth_speed(self.as_raw(), port, &mut speed, &mut width) })?;
        Ok((PortSpeed::from_raw(speed), PortWidth::from_raw(width)))
    }

    /// Replaces the node description (from `modify_device`).
    pub(crate) fn set_node_desc(&self, desc: &[u8; 64]) {
        // SAFETY: the device is valid. Like every driver we update the field
        // in place; readers copy it as an opaque byte string.
        unsafe { (*self.as_raw()).node_desc = *desc };
    }
}

impl<T> Deref for IbDevice<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.data
    }
}

/// A device that is allocated and initialised but not registered.
///
/// # Invariants
///
/// `dev` points to an `IbDevice<T>` with initialised data and installed ops,
/// owned by this object.
pub(crate) struct Unregistered<T: Operations> {
    dev: NonNull<IbDevice<T>>,
}

impl<T: Operations> Unregistered<T> {
    /// Allocates a device and initialises its data with `init`.
    pub(crate) fn new(
        module: &ThisModule,
        params: &DeviceParams,
        init: impl PinInit<T, Error>,
    ) -> Result<Self> {
        // kzalloc() alignment is what the core gives us.
        const { assert!(align_of::<IbDevice<T>>() <= 8) };
        // SAFETY: the size covers `struct ib_device` at offset 0.
        let raw = unsafe { sys::rrxe_ib_alloc_device(size_of::<IbDevice<T>>()) };
        let dev = NonNull::new(raw.cast::<IbDevice<T>>()).ok_or(ENOMEM)?;
        // SAFETY: the block is ours, zeroed and large enough; `data` is pinned
        // inside it until `dealloc_driver`.
        if let Err(e) = unsafe { pin_init::raw_try_init(&raw mut (*dev.as_ptr()).data, init) } {
            // SAFETY: no ops are installed yet, so this only frees the block.
            unsafe { sys::ib_dealloc_device(raw) };
            return Err(e);
        }
        let mut ops = OperationsVTable::<T>::build();
        ops.owner = module.as_ptr().cast();
        // SAFETY: `raw` is a valid, unregistered device that we own exclusively.
        unsafe {
            sys::ib_set_device_ops(raw, &ops);
            (*raw).node_type = sys::RDMA_NODE_IB_CA as u8;
            (*raw).phys_port_cnt = 1;
            (*raw).num_comp_vectors = params.num_comp_vectors as i32;
            (*raw).local_dma_lkey = 0;
            (*raw).node_guid = u64::from_ne_bytes(params.node_guid);
            for cmd in params.uverbs_cmds {
                (*raw).uverbs_cmd_mask |= 1u64 << (*cmd as u32);
            }
            let desc = params.node_desc.to_bytes();
            for (dst, src) in (*raw).node_desc.iter_mut().zip(desc.iter().take(63)) {
                *dst = *src;
            }
        }
        // INVARIANT: data initialised and ops installed above.
        Ok(Self { dev })
    }

    /// A handle that outlives registration.
    pub(crate) fn handle(&self) -> DeviceHandle<T> {
        DeviceHandle::new(self.dev.as_ptr().cast())
    }

    /// Registers the device as `name`. On failure the device is deallocated
    /// (its data dropped); on success the core owns it.
    pub(crate) fn register(self, name: &CStr) -> Result {
        let raw = self.dev.as_ptr().cast::<sys::ib_device>();
        // SAFETY: the device is valid and unregistered; a NULL DMA device makes
        // the core use virtual DMA, as software drivers do.
        let ret =
            unsafe { sys::ib_register_device(raw, name.as_char_ptr(), core::ptr::null_mut()) };
        if ret != 0 {
            // Dropping `self` deallocates, as the core requires after a failure.
            return Err(Error::from_errno(ret));
        }
        core::mem::forget(self);
        Ok(())
    }
}

impl<T: Operations> Drop for Unregistered<T> {
    fn drop(&mut self) {
        // SAFETY: we own the unregistered device; this runs `dealloc_driver`
        // (dropping `T`) and releases the allocation reference.
        unsafe { sys::ib_dealloc_device(self.dev.as_ptr().cast()) };
    }
}

/// Keeps a device's memory alive, registered or not.
///
/// # Invariants
///
/// `ptr` is an `IbDevice<T>`'s `ib_device` on whose `struct device` this
/// object holds a reference. `T` may already be dropped.
pub(crate) struct DeviceHandle<T: Operations> {
    ptr: NonNull<sys::ib_device>,
    _t: PhantomData<T>,
}

// SAFETY: references on `struct device` may be taken and dropped on any thread.
unsafe impl<T: Operations> Send for DeviceHandle<T> {}
// SAFETY: the shared methods only call thread-safe core functions.
unsafe impl<T: Operations> Sync for DeviceHandle<T> {}

impl<T: Operations> DeviceHandle<T> {
    fn new(ptr: *mut sys::ib_device) -> Self {
        // SAFETY: callers pass a valid device; we take the reference we own.
        unsafe { sys::rrxe_ib_device_get_dev(ptr) };
        // INVARIANT: reference taken above; callers never pass NULL.
        Self {
            // SAFETY: see above.
            ptr: unsafe { NonNull::new_unchecked(ptr) },
            _t: PhantomData,
        }
    }

    /// A registration reference, if the device is fully registered.
    pub(crate) fn try_get(&self) -> Option<DeviceRef<T>> {
        // SAFETY: the memory is alive by the type invariant.
        unsafe { sys::rrxe_ib_device_try_get(self.ptr.as_ptr()) }.then(|| DeviceRef {
            // INVARIANT: `ib_device_try_get` succeeded.
            ptr: self.ptr,
            _t: PhantomData,
        })
    }

    /// Unregisters the device and waits for it, if it is still registered.
    /// Must not be called from the device's own operations.
    pub(crate) fn unregister(&self) {
        // SAFETY: the memory is alive; the core serialises concurrent
        // unregistration and ignores devices that are already unregistered.
        unsafe { sys::ib_unregister_device(self.ptr.as_ptr()) };
    }
}

impl<T: Operations> Clone for DeviceHandle<T> {
    fn clone(&self) -> Self {
        Self::new(self.ptr.as_ptr())
    }
}

impl<T: Operations> Drop for DeviceHandle<T> {
    fn drop(&mut self) {
        // SAFETY: we own one reference by the type invariant.
        unsafe { sys::rrxe_ib_device_put_dev(self.ptr.as_ptr()) };
    }
}

/// A registration reference: the device stays registered (and `T` alive)
/// while it exists.
///
/// # Invariants
///
/// This object owns one `ib_device_try_get` reference on `ptr`.
pub(crate) struct DeviceRef<T: Operations> {
    ptr: NonNull<sys::ib_device>,
    _t: PhantomData<T>,
}

impl<T: Operations> DeviceRef<T> {
    /// Starts asynchronous unregistration (safe from notifier context).
    pub(crate) fn unregister_queued(self) {
        // SAFETY: we hold a registration reference, as the core requires; it
        // is dropped right after, letting the queued work proceed.
        unsafe { sys::ib_unregister_device_queued(self.ptr.as_ptr()) };
    }
}

impl<T: Operations> Deref for DeviceRef<T> {
    type Target = IbDevice<T>;

    fn deref(&self) -> &IbDevice<T> {
        // SAFETY: a registration reference keeps `dealloc_driver` from running.
        unsafe { IbDevice::from_raw(self.ptr.as_ptr()) }
    }
}

impl<T: Operations> Drop for DeviceRef<T> {
    fn drop(&mut self) {
        // SAFETY: we own one registration reference.
        unsafe { sys::ib_device_put(self.ptr.as_ptr()) };
    }
}
