// SPDX-License-Identifier: GPL-2.0

//! The set of rrxe devices, so that netdev events reach the device on that
//! netdev, a second link on one netdev is refused, and module unload removes
//! every device (and only rrxe's: C rxe shares our driver id, so the core's
//! per-driver-id sweep would take its devices too).

use crate::{
    ffi::ib::DeviceHandle,
    ffi::net::{Net, NetDev, PernetEvents},
    transport::shared::Shared,
    verbs::{debugfs, device::RrxeDevice},
};
use kernel::{debugfs::Dir, prelude::*, sync::Arc};

/// One device.
pub(crate) struct Entry {
    id: u64,
    /// Identity of the netdev while attached; 0 once it is unregistered.
    netdev: usize,
    /// Identity of the netdev's network namespace while attached.
    net: usize,
    /// The device's port state, valid even when the device is not registered.
    pub(crate) shared: Arc<Shared>,
    /// Keeps the device's memory alive for unregistration and events.
    pub(crate) handle: DeviceHandle<RrxeDevice>,
}

/// All devices, the next id, and the module's debugfs directory.
pub(crate) struct Registry {
    next_id: u64,
    entries: KVec<Entry>,
    /// Where each device makes its own (`verbs::debugfs`); removed by the
    /// [`Sweeper`] once every device is gone.
    debugfs: Option<Dir>,
}

kernel::sync::global_lock! {
    // SAFETY: `init` is called first thing in module init, before any use.
    pub(crate) unsafe(uninit) static REGISTRY: Mutex<Registry> = Registry {
        next_id: 1,
        entries: KVec::new(),
        debugfs: None,
    };
}

/// Sets the registry up; module init calls this once, before anything else.
// The global lock's one-time initialisation: the kernel crate offers no
// safe form yet.
#[allow(unsafe_code)]
pub(crate) fn init() {
    // SAFETY: called exactly once, from module init, before any other use.
    unsafe { REGISTRY.init() };
    REGISTRY.lock().debugfs = Some(debugfs::root());
}

/// The debugfs directory of a new device named `name`.
pub(crate) fn debugfs_dir(name: &CStr) -> Option<Dir> {
    REGISTRY
        .lock()
        .debugfs
        .as_ref()
        .map(|root| root.subdir(name))
}

/// A fresh device id.
pub(crate) fn next_id() -> u64 {
    let mut reg = REGISTRY.lock();
    let id = reg.next_id;
    reg.next_id += 1;
    id
}

/// Whether an rrxe device is attached to `dev`.
pub(crate) fn has_netdev(dev: &NetDev) -> bool {
    REGISTRY.lock().entries.iter().any(|e| e.netdev == dev.id())
}

/// Adds a device. The caller holds RTNL and has checked that the netdev is
/// registered, so its `NETDEV_UNREGISTER` will find this entry.
pub(crate) fn insert(
    id: u64,
    dev: &NetDev,
    shared: Arc<Shared>,
    handle: DeviceHandle<RrxeDevice>,
) -> Result {
    let mut reg = REGISTRY.lock();
    if reg.entries.iter().any(|e| e.netdev == dev.id()) {
        return Err(EEXIST);
    }
    reg.entries.push(
        Entry {
            id,
            netdev: dev.id(),
            net: dev.net().id(),
            shared,
            handle,
        },
        GFP_KERNEL,
    )?;
    Ok(())
}

/// Removes device `id` (from its `dealloc_driver`).
pub(crate) fn remove(id: u64) {
    let mut reg = REGISTRY.lock();
    if let Some(i) = reg.entries.iter().position(|e| e.id == id) {
        // Dropping the entry releases its device reference; the core still
        // holds its own, so this is never the last one.
        drop(reg.entries.remove(i));
    }
    // The registry is a static, never dropped: give its buffer back with
    // the last device, or module unload leaks it.
    if reg.entries.is_empty() {
        reg.entries = KVec::new();
    }
}

/// Runs `f` on the entry attached to `dev`, if any, with the registry locked.
pub(crate) fn with_netdev<R>(dev: &NetDev, f: impl FnOnce(&mut Entry) -> R) -> Option<R> {
    let mut reg = REGISTRY.lock();
    reg.entries.iter_mut().find(|e| e.netdev == dev.id()).map(f)
}

impl Entry {
    /// Forgets the netdev identity (it is being unregistered).
    pub(crate) fn forget_netdev(&mut self) {
        self.netdev = 0;
        self.net = 0;
    }
}

/// Finishes, before `net` is dismantled, the removal of every device that
/// lives on a netdev in `net` or has lost its netdev (a veth peer in `net`,
/// say) and is still being unregistered.
///
/// Why: the RDMA core keeps a sysfs "compat device" per device in every
/// namespace. Its netns exit deletes the ones for `net`, but skips those a
/// concurrent unregistration has already taken, without waiting for that
/// deletion to finish; the uevent it sends then uses the namespace's freed
/// uevent socket. Completing our unregistrations here, while `net` is fully
/// alive, keeps rrxe devices out of that race.
pub(crate) struct NetnsTeardown;

impl PernetEvents for NetnsTeardown {
    fn pre_exit(net: &Net) {
        let mut doomed = KVec::new();
        for e in REGISTRY.lock().entries.iter() {
            if e.netdev == 0 || e.net == net.id() {
                // Out of memory only means this device takes the slow path.
                let _ = doomed.push(e.handle.clone(), GFP_KERNEL);
            }
        }
        // Synchronous: returns once the device is gone, including when an
        // unregistration queued earlier is still running.
        for handle in doomed {
            handle.unregister();
        }
    }
}

/// Unregisters every rrxe device when dropped: the last step of module
/// unload, after the link type and the notifier are gone.
pub(crate) struct Sweeper;

impl Drop for Sweeper {
    fn drop(&mut self) {
        // Entries leave the registry in their dealloc_driver, which the
        // synchronous unregistration runs, so take the first until none is
        // left. The registry lock is not held while unregistering.
        loop {
            let first = REGISTRY.lock().entries.first().map(|e| e.handle.clone());
            match first {
                Some(handle) => handle.unregister(),
                None => break,
            }
        }
        let root = REGISTRY.lock().debugfs.take();
        drop(root);
    }
}
