// SPDX-License-Identifier: GPL-2.0

//! Per-network-namespace hooks (`register_pernet_device`).

use super::Net;
use crate::ffi::sys;
use core::marker::PhantomData;
use kernel::{error::to_result, prelude::*, types::Opaque};

/// Receiver of network namespace teardown.
pub(crate) trait PernetEvents {
    /// `net` is being dismantled. Called in process context, without RTNL,
    /// before any subsystem's `exit` runs for `net` (its netdevs, sockets and
    /// uevent socket all still exist), so it may sleep and wait for work that
    /// still needs them.
    fn pre_exit(net: &Net);
}

/// A registered set of per-netns operations; unregistered on drop.
///
/// # Invariants
///
/// `ops` is registered with `register_pernet_device` from the end of
/// initialisation until drop.
#[pin_data(PinnedDrop)]
pub(crate) struct Pernet<E: PernetEvents> {
    #[pin]
    ops: Opaque<sys::pernet_operations>,
    _events: PhantomData<E>,
}

// SAFETY: the operations block is only touched by the pernet machinery, which
// does its own locking.
unsafe impl<E: PernetEvents> Send for Pernet<E> {}
// SAFETY: as above; `&Pernet` exposes nothing.
unsafe impl<E: PernetEvents> Sync for Pernet<E> {}

impl<E: PernetEvents> Pernet<E> {
    /// Registers the hooks.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            ops <- Opaque::try_ffi_init(|ops: *mut sys::pernet_operations| {
                // SAFETY: `ops` points to pinned, writable memory that stays
                // pinned until `drop` unregisters it.
                unsafe {
                    ops.write(sys::pernet_operations {
                        pre_exit: Some(Self::pre_exit),
                        ..Default::default()
                    });
                    to_result(sys::register_pernet_device(ops))
                }
            }),
            _events: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called only by the pernet machinery, with a valid, dying `net`.
    unsafe extern "C" fn pre_exit(net: *mut sys::net) {
        // SAFETY: `net` is valid for the duration of the call.
        E::pre_exit(unsafe { Net::from_raw(net) });
    }
}

#[pinned_drop]
impl<E: PernetEvents> PinnedDrop for Pernet<E> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: by the type invariant the operations are registered.
        unsafe { sys::unregister_pernet_device(self.ops.get()) };
    }
}
