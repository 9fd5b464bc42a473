// SPDX-License-Identifier: GPL-2.0

//! `struct net_device`: a borrowed view ([`NetDev`]) and a counted reference
//! ([`NetDevRef`]).

use crate::ffi::sys;
use core::{ops::Deref, ptr::NonNull};
use kernel::{error::to_result, prelude::*, types::Opaque};

/// A network device, borrowed for as long as the caller holds it alive.
///
/// # Invariants
///
/// The wrapped `net_device` is valid (allocated and not freed) for the
/// lifetime of any `&NetDev`.
#[repr(transparent)]
pub(crate) struct NetDev(Opaque<sys::net_device>);

impl NetDev {
    /// Borrows a raw `net_device`.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a valid `net_device` that stays valid for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut sys::net_device) -> &'a NetDev {
        // SAFETY: `NetDev` is a transparent wrapper of the C struct and the caller
        // guarantees validity for `'a`.
        unsafe { &*ptr.cast::<NetDev>() }
    }

    /// The raw pointer, for the FFI layer.
    pub(crate) fn as_raw(&self) -> *mut sys::net_device {
        self.0.get()
    }

    /// A value that identifies this device while a reference to it is held.
    pub(crate) fn id(&self) -> usize {
        self.as_raw() as usize
    }

    /// The network namespace the device lives in.
    pub(crate) fn net(&self) -> &super::Net {
        // SAFETY: `self` is valid by the type invariant, and a netdev's
        // namespace outlives it (a device is moved or unregistered before its
        // namespace goes away).
        unsafe { super::Net::from_raw(sys::rrxe_netdev_net(self.as_raw())) }
    }

    /// The interface name, e.g. `eth0`.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: `self` is valid by the type invariant; `netdev_name` returns a
        // NUL-terminated string inside the device that lives as long as it does.
        unsafe { CStr::from_char_ptr(sys::rrxe_netdev_name(self.as_raw())) }
    }

    /// The current MTU in bytes.
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: `self` is valid by the type invariant.
        unsafe { sys::rrxe_netdev_mtu(self.as_raw()) }
    }

    /// Whether the interface is administratively up.
    pub(crate) fn is_up(&self) -> bool {
        // SAFETY: `self` is valid by the type invariant.
        unsafe { sys::rrxe_netdev_is_up(self.as_raw()) }
    }

    /// Whether the device is an Ethernet device (ARPHRD_ETHER).
    pub(crate) fn is_ether(&self) -> bool {
        // SAFETY: `self` is valid by the type invariant.
        unsafe { sys::rrxe_netdev_is_ether(self.as_raw()) }
    }

    /// Whether the device is a VLAN on top of another one.
    pub(crate) fn is_vlan(&self) -> bool {
        // SAFETY: `self` is valid by the type invariant.
        unsafe { sys::rrxe_netdev_is_vlan(self.as_raw()) }
    }

    /// Whether the device is registered (so it will see `NETDEV_UNREGISTER`).
    /// Only stable while the RTNL lock is held.
    pub(crate) fn is_registered(&self) -> bool {
        // SAFETY: `self` is valid by the type invariant.
        unsafe { sys::rrxe_netdev_is_registered(self.as_raw()) }
    }

    /// The 6-byte hardware address, if the device has one.
    pub(crate) fn mac(&self) -> Option<[u8; 6]> {
        let mut mac = [0u8; 6];
        // SAFETY: `self` is valid by the type invariant and `mac` has room for 6 bytes.
        unsafe { sys::rrxe_netdev_mac(self.as_raw(), mac.as_mut_ptr()) }.then_some(mac)
    }

    /// The interface index.
    pub(crate) fn ifindex(&self) -> i32 {
        // SAFETY: `self` is valid by the type invariant.
        unsafe { sys::rrxe_netdev_ifindex(self.as_raw()) }
    }

    /// Whether `addr` is one of this device's IP addresses.
    pub(crate) fn has_addr(&self, addr: &super::IpAddr) -> bool {
        // SAFETY: `self` is valid by the type invariant; `addr` is 16 bytes.
        unsafe { sys::rrxe_netdev_has_addr(self.as_raw(), addr.0.as_ptr()) }
    }

    /// Whether this is a loopback device (`IFF_LOOPBACK`).
    pub(crate) fn is_loopback(&self) -> bool {
        // SAFETY: `self` is valid by the type invariant.
        unsafe { sys::rrxe_netdev_is_loopback(self.as_raw()) }
    }

    /// Adds the link-layer multicast address `mac` to the device's
    /// multicast list (`dev_mc_add`), so that it receives frames sent
    /// there. Each add takes a reference that one [`NetDev::mc_del`] drops.
    pub(crate) fn mc_add(&self, mac: &[u8; 6]) -> Result {
        // SAFETY: `self` is valid by the type invariant; `mac` holds the
        // device's address length (6 bytes, Ethernet) and outlives the call.
        to_result(unsafe { sys::dev_mc_add(self.as_raw(), mac.as_ptr()) })
    }

    /// Drops one reference on the multicast address `mac` taken by
    /// [`NetDev::mc_add`] (`dev_mc_del`); `ENOENT` if there is none.
    pub(crate) fn mc_del(&self, mac: &[u8; 6]) -> Result {
        // SAFETY: as in `mc_add`.
        to_result(unsafe { sys::dev_mc_del(self.as_raw(), mac.as_ptr()) })
    }

    /// Whether the link can carry RDMA traffic: up and with carrier.
    pub(crate) fn is_active(&self) -> bool {
        // SAFETY: `self` is valid by the type invariant.
        let state = unsafe { sys::rrxe_netdev_port_state(self.as_raw()) };
        state == sys::IB_PORT_ACTIVE as i32
    }
}

// The namespace side of the namespace/device pair lives here, so that
// `netns.rs` need not name the device type.
impl super::Net {
    /// The namespace's loopback device (`lo`).
    // Only the KUnit tests need it so far.
    #[cfg_attr(not(CONFIG_KUNIT), expect(dead_code))]
    pub(crate) fn loopback(&self) -> &super::NetDev {
        // SAFETY: `self` is valid; the loopback device is the last device of
        // a namespace to go, when the namespace itself is dismantled.
        unsafe { super::NetDev::from_raw(sys::rrxe_net_loopback_dev(self.as_raw())) }
    }
}

/// A counted reference to a network device (`dev_hold`/`dev_put`).
///
/// # Invariants
///
/// `ptr` is a valid `net_device` on which this object owns one reference.
pub(crate) struct NetDevRef {
    ptr: NonNull<sys::net_device>,
}

// SAFETY: The reference count may be dropped from any thread.
unsafe impl Send for NetDevRef {}
// SAFETY: `&NetDevRef` only gives access to `&NetDev`, whose methods are thread-safe.
unsafe impl Sync for NetDevRef {}

impl NetDevRef {
    /// Takes a new reference on `dev`.
    pub(crate) fn new(dev: &NetDev) -> Self {
        // SAFETY: `dev` is valid, so taking a reference is allowed.
        unsafe { sys::rrxe_netdev_hold(dev.as_raw()) };
        // INVARIANT: we just took the reference this object owns.
        Self {
            // SAFETY: `as_raw` of a valid reference is never null.
            ptr: unsafe { NonNull::new_unchecked(dev.as_raw()) },
        }
    }

    /// Gives the reference to C, which will release it with `dev_put`.
    pub(crate) fn into_raw(self) -> *mut sys::net_device {
        let ptr = self.ptr.as_ptr();
        core::mem::forget(self);
        ptr
    }
}

impl Clone for NetDevRef {
    fn clone(&self) -> Self {
        Self::new(self)
    }
}

impl Deref for NetDevRef {
    type Target = NetDev;

    fn deref(&self) -> &NetDev {
        // SAFETY: we own a reference, so the device stays valid while `self` lives.
        unsafe { NetDev::from_raw(self.ptr.as_ptr()) }
    }
}

impl Drop for NetDevRef {
    fn drop(&mut self) {
        // SAFETY: by the type invariant we own exactly one reference.
        unsafe { sys::rrxe_netdev_put(self.ptr.as_ptr()) };
    }
}
