// SPDX-License-Identifier: GPL-2.0

//! rdma link types: `rdma link add NAME type TYPE netdev DEV`.

use crate::{ffi::net::NetDev, ffi::sys};
use core::marker::PhantomData;
use kernel::{prelude::*, types::Opaque};

/// A link type's behaviour.
pub(crate) trait LinkOps {
    /// The `type` word users pass to `rdma link add`.
    const TYPE: &'static CStr;

    /// Creates device `name` on `ndev`. Runs in process context; the core
    /// holds a reference on `ndev` for the duration of the call.
    fn newlink(name: &CStr, ndev: &NetDev) -> Result;
}

/// A registered link type; unregistered on drop. After drop no `newlink`
/// call is running or will start.
///
/// # Invariants
///
/// `ops` is registered with the rdma core from initialisation until drop.
#[pin_data(PinnedDrop)]
pub(crate) struct LinkRegistration<L: LinkOps> {
    #[pin]
    ops: Opaque<sys::rdma_link_ops>,
    _l: PhantomData<L>,
}

// SAFETY: only the rdma core touches `ops`, under its own lock.
unsafe impl<L: LinkOps> Send for LinkRegistration<L> {}
// SAFETY: as above; `&LinkRegistration` exposes nothing.
unsafe impl<L: LinkOps> Sync for LinkRegistration<L> {}

impl<L: LinkOps> LinkRegistration<L> {
    /// Registers link type `L::TYPE`.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            ops <- Opaque::try_ffi_init(|ops: *mut sys::rdma_link_ops| {
                // SAFETY: `ops` is pinned, writable memory that stays registered
                // until drop; `TYPE` is 'static.
                unsafe {
                    ops.write(sys::rdma_link_ops {
                        type_: L::TYPE.as_char_ptr(),
                        newlink: Some(Self::newlink),
                        ..Default::default()
                    });
                    sys::rdma_link_register(ops);
                }
                Ok::<(), Error>(())
            }),
            _l: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called only by the kernel as `rdma_link_ops.newlink`, with valid arguments.
    unsafe extern "C" fn newlink(
        name: *const kernel::ffi::c_char,
        ndev: *mut sys::net_device,
    ) -> kernel::ffi::c_int {
        // SAFETY: the core passes a NUL-terminated name and a referenced netdev,
        // both valid for the call.
        let (name, ndev) = unsafe { (CStr::from_char_ptr(name), NetDev::from_raw(ndev)) };
        match L::newlink(name, ndev) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }
}

#[pinned_drop]
impl<L: LinkOps> PinnedDrop for LinkRegistration<L> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: registered by the type invariant; unregistering takes the
        // core's link lock for writing, so it waits for running `newlink`s.
        unsafe { sys::rdma_link_unregister(self.ops.get()) };
    }
}
