// SPDX-License-Identifier: GPL-2.0

//! The netdev notifier chain (`register_netdevice_notifier`).

use super::NetDev;
use crate::ffi::sys;
use core::marker::PhantomData;
use kernel::{error::to_result, prelude::*, types::Opaque};

/// A netdev event rrxe cares about; everything else is [`NetdevEvent::Other`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum NetdevEvent {
    /// The device went administratively up.
    Up,
    /// The device went administratively down.
    Down,
    /// Carrier or other state changed.
    Change,
    /// The MTU changed.
    ChangeMtu,
    /// The device is being unregistered: drop every reference to it.
    Unregister,
    /// Any other event.
    Other,
}

impl NetdevEvent {
    fn from_raw(event: usize) -> Self {
        match u32::try_from(event) {
            Ok(sys::NETDEV_UP) => Self::Up,
            Ok(sys::NETDEV_DOWN) => Self::Down,
            Ok(sys::NETDEV_CHANGE) => Self::Change,
            Ok(sys::NETDEV_CHANGEMTU) => Self::ChangeMtu,
            Ok(sys::NETDEV_UNREGISTER) => Self::Unregister,
            _ => Self::Other,
        }
    }
}

/// Receiver of netdev events. Called in process context with RTNL held.
pub(crate) trait NetdevEvents {
    /// Handles `event` on `dev`.
    fn event(event: NetdevEvent, dev: &NetDev);
}

/// A registered netdev notifier; unregistered on drop.
///
/// # Invariants
///
/// `nb` is registered with the netdev notifier chain from the end of
/// initialisation until drop.
#[pin_data(PinnedDrop)]
pub(crate) struct NetdevNotifier<E: NetdevEvents> {
    #[pin]
    nb: Opaque<sys::notifier_block>,
    _events: PhantomData<E>,
}

// SAFETY: The notifier block is only touched by the notifier chain, which does
// its own locking.
unsafe impl<E: NetdevEvents> Send for NetdevNotifier<E> {}
// SAFETY: As above; `&NetdevNotifier` exposes nothing.
unsafe impl<E: NetdevEvents> Sync for NetdevNotifier<E> {}

impl<E: NetdevEvents> NetdevNotifier<E> {
    /// Registers the notifier. Existing devices are not replayed: rrxe only
    /// needs events for devices it attaches to after registration.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            nb <- Opaque::try_ffi_init(|nb: *mut sys::notifier_block| {
                // SAFETY: `nb` points to pinned, writable memory for a notifier block;
                // it stays pinned until `drop` unregisters it.
                unsafe {
                    nb.write(sys::notifier_block {
                        notifier_call: Some(Self::call),
                        ..Default::default()
                    });
                    to_result(sys::register_netdevice_notifier(nb))
                }
            }),
            _events: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called only by the kernel as a netdev notifier callback, with valid arguments.
    unsafe extern "C" fn call(
        _nb: *mut sys::notifier_block,
        event: kernel::ffi::c_ulong,
        info: *mut kernel::ffi::c_void,
    ) -> kernel::ffi::c_int {
        // SAFETY: the notifier chain passes a valid `netdev_notifier_info`.
        let ndev = unsafe { sys::rrxe_netdev_from_notifier_info(info) };
        // SAFETY: the device is valid for the duration of the notification.
        let dev = unsafe { NetDev::from_raw(ndev) };
        E::event(NetdevEvent::from_raw(event), dev);
        sys::NOTIFY_DONE as kernel::ffi::c_int
    }
}

#[pinned_drop]
impl<E: NetdevEvents> PinnedDrop for NetdevNotifier<E> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: by the type invariant the block is registered.
        unsafe { sys::unregister_netdevice_notifier(self.nb.get()) };
    }
}
