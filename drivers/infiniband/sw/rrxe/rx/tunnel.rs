// SPDX-License-Identifier: GPL-2.0

//! UDP port 4791, per network namespace: one IPv4 and one IPv6 tunnel
//! socket, opened with the first rrxe device of the namespace and closed
//! with its last. Each datagram goes to the device whose netdev it
//! arrived on.
//!
//! C rdma_rxe opens the same port the same way, so the two drivers cannot
//! both have devices in one namespace: whichever comes second gets
//! `EADDRINUSE`.

use crate::{
    ffi::net::{Net, NetDev, RxDatagram, TunnelRecv, UdpTunnel},
    rx::demux,
    transport::shared::Shared,
    transport::xmit::ROCE_PORT,
};
use kernel::{
    new_spinlock_irq,
    prelude::*,
    sync::{Arc, SpinLockIrq},
};

/// The devices of one namespace, as the receive path sees them.
#[pin_data]
pub(crate) struct NetnsRx {
    /// Interrupts off: read in softirq context.
    #[pin]
    devices: SpinLockIrq<KVec<Arc<Shared>>>,
}

impl NetnsRx {
    /// The device on the netdev `ndev`, with a reference.
    fn find(&self, ndev: &NetDev) -> Option<Arc<Shared>> {
        let id = ndev.id();
        self.devices
            .lock()
            .iter()
            .find(|d| d.netdev_id == id)
            .cloned()
    }
}

/// The receive side of the tunnel sockets.
#[derive(Clone)]
pub(crate) struct Rx(Arc<NetnsRx>);

impl NetnsRx {
    /// The device whose netdev has the address `dst`: where a packet a
    /// device sent to its own address (or to another device of the same
    /// namespace) goes, since such packets arrive on the loopback device.
    fn find_local(&self, dst: &crate::ffi::net::IpAddr) -> Option<Arc<Shared>> {
        let devices = self.devices.lock();
        let found = devices
            .iter()
            .find(|d| d.netdev().is_some_and(|n| n.has_addr(dst)))
            .cloned();
        drop(devices);
        found
    }
}

impl TunnelRecv for Rx {
    fn recv(&self, pkt: RxDatagram) {
        let dev = match self.0.find(pkt.netdev()) {
            Some(dev) => Some(dev),
            None if pkt.netdev().is_loopback() => self.0.find_local(&pkt.dst()),
            None => None,
        };
        if let Some(dev) = dev {
            demux::receive(&dev, pkt);
        }
    }
}

/// One namespace's sockets.
struct Netns {
    /// Identity of the namespace.
    net: usize,
    rx: Arc<NetnsRx>,
    _v4: UdpTunnel<Rx>,
    _v6: Option<UdpTunnel<Rx>>,
}

kernel::sync::global_lock! {
    // SAFETY: `init` is called first thing in module init, before any use.
    unsafe(uninit) static TUNNELS: Mutex<KVec<Netns>> = KVec::new();
}

/// Sets the table up; module init calls this once, before anything else.
// The global lock's one-time initialisation is the one `unsafe` of its kind
// (also in `registry`): the kernel crate offers no safe form yet.
#[allow(unsafe_code)]
pub(crate) fn init() {
    // SAFETY: called exactly once, from module init, before any other use.
    unsafe { TUNNELS.init() };
}

/// Opens the sockets of `net`.
// `UdpTunnel::open` cannot check that the sockets go before the namespace
// does: rrxe's teardown order ensures it (SAFETY below).
#[allow(unsafe_code)]
fn open(net: &Net) -> Result<Netns> {
    let rx = Arc::pin_init(
        pin_init!(NetnsRx {
            devices <- new_spinlock_irq!(KVec::new()),
        }),
        GFP_KERNEL,
    )?;
    // SAFETY: the sockets live as long as a device of `net` does, and
    // every rrxe device on a netdev of `net` is unregistered (which
    // detaches it, closing the sockets with the last one) from the pernet
    // `pre_exit` hook, before `net` is dismantled
    // (`registry::NetnsTeardown`).
    let v4 = unsafe { UdpTunnel::open(net, false, ROCE_PORT, Rx(rx.clone())) }?;
    // A kernel without IPv6 still serves IPv4.
    // SAFETY: as above.
    let v6 = match unsafe { UdpTunnel::open(net, true, ROCE_PORT, Rx(rx.clone())) } {
        Ok(t) => Some(t),
        Err(e) if e == EADDRINUSE => return Err(e),
        Err(_) => None,
    };
    Ok(Netns {
        net: net.id(),
        rx,
        _v4: v4,
        _v6: v6,
    })
}

/// Makes device `dev`, on `ndev`, receive: opens the namespace's sockets
/// if it is the first there. `EADDRINUSE` if another driver (rdma_rxe)
/// holds the port in that namespace.
pub(crate) fn attach(dev: &Arc<Shared>, ndev: &NetDev) -> Result {
    let net = ndev.net();
    let mut all = TUNNELS.lock();
    let i = match all.iter().position(|n| n.net == net.id()) {
        Some(i) => i,
        None => {
            let n = open(net)?;
            all.push(n, GFP_KERNEL)?;
            all.len() - 1
        }
    };
    let rx = all.get(i).map(|n| n.rx.clone()).ok_or(EINVAL)?;
    // The list only grows here, in process context; reserve outside the
    // interrupt-disabling lock.
    let n = rx.devices.lock().len();
    let mut devices = KVec::with_capacity(n + 1, GFP_KERNEL)?;
    let mut cur = rx.devices.lock();
    for d in cur.iter() {
        devices.push(d.clone(), GFP_ATOMIC)?;
    }
    devices.push(dev.clone(), GFP_ATOMIC)?;
    let old = core::mem::replace(&mut *cur, devices);
    drop(cur);
    drop(old);
    Ok(())
}

/// Stops device `dev` receiving; closes the namespace's sockets with its
/// last device. Closing waits for receivers to finish.
pub(crate) fn detach(dev: &Arc<Shared>) {
    let mut all = TUNNELS.lock();
    let mut empty = None;
    for (i, n) in all.iter().enumerate() {
        let mut devices = n.rx.devices.lock();
        if let Some(j) = devices.iter().position(|d| Arc::ptr_eq(d, dev)) {
            let gone = devices.remove(j);
            let last = devices.is_empty();
            drop(devices);
            drop(gone);
            if last {
                empty = Some(i);
            }
            break;
        }
    }
    let closing = empty.map(|i| all.remove(i));
    // The table is a static, never dropped: give its buffer back with the
    // last namespace, or module unload leaks it.
    if all.is_empty() {
        *all = KVec::new();
    }
    drop(all);
    // Dropping the sockets waits for an RCU grace period: not under the lock.
    drop(closing);
}
