// SPDX-License-Identifier: GPL-2.0

//! Multicast groups, as C rxe keeps them (`rxe_mcast.c`): per device, the
//! UD QPs attached to each multicast GID, the netdev's membership of each
//! group's Ethernet address, and the QPs a multicast packet goes to. The
//! rules (which GIDs, which address, which limits) are in
//! [`logic::mcast`].
//!
//! Attach and detach run in process context, serialised by a mutex: they
//! allocate and change the netdev's multicast list, which cannot happen
//! under a spinlock. The receive path looks groups up in softirq context.
//! The table maps each MGID to a list of QPs that is never changed once
//! published: attach and detach build a new list and swap it in under the
//! table's lock, so the receive path only holds that lock to take a
//! reference on the current list, and delivers to the QPs without it
//! (a QP's receive must not run with interrupts off).
//!
//! A list holds a reference on each of its QPs. The core refuses to
//! destroy an attached QP (and detaches a process's QPs itself when the
//! process goes), so a QP leaves every list before `destroy_qp`, whose
//! grace period then outlasts any receive still holding an old list: the
//! last reference on a QP is never dropped here.

use crate::{
    ffi::net::NetDev,
    logic::mcast::{self, Usage},
    transport::qp::QpInner,
};
use kernel::{
    new_mutex, new_spinlock_irq,
    prelude::*,
    rbtree::{RBTree, RBTreeNodeReservation},
    sync::{Arc, Mutex, SpinLockIrq},
};

/// A multicast GID (IPv6, or IPv4-mapped), network byte order.
pub(crate) type Mgid = [u8; 16];

/// The QPs attached to one group, in the order they were attached.
pub(crate) type Members = KVec<Arc<QpInner>>;

/// A device's multicast groups.
#[pin_data]
pub(crate) struct McastTable {
    /// Serialises attach, detach and teardown; how many groups and
    /// attachments there are.
    #[pin]
    control: Mutex<Usage>,
    /// Each group's current members. Interrupts off: read in softirq
    /// context. Groups without members are removed.
    #[pin]
    groups: SpinLockIrq<RBTree<Mgid, Arc<Members>>>,
}

impl McastTable {
    /// An empty table.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            control <- new_mutex!(Usage::default()),
            groups <- new_spinlock_irq!(RBTree::new()),
        })
    }

    /// The QPs attached to group `mgid`, if it has any.
    pub(crate) fn members(&self, mgid: &Mgid) -> Option<Arc<Members>> {
        self.groups.lock().get(mgid).cloned()
    }

    /// Publishes `list` as group `mgid`'s members; returns the list it
    /// replaces, to be dropped once the lock is released.
    fn publish(&self, mgid: &Mgid, list: Arc<Members>) -> Option<Arc<Members>> {
        self.groups
            .lock()
            .get_mut(mgid)
            .map(|slot| core::mem::replace(slot, list))
    }

    /// Attaches `qp` to group `mgid` (rxe's `rxe_attach_mcast`). The first
    /// QP of a group creates it and joins the group's Ethernet address on
    /// `ndev` (`ENODEV` without one). A QP already attached stays so
    /// (success); the device's limits give `ENOMEM`, as in rxe.
    pub(crate) fn attach(&self, qp: &Arc<QpInner>, mgid: &Mgid, ndev: Option<&NetDev>) -> Result {
        let mut usage = self.control.lock();
        let current = self.members(mgid);
        let now: &[Arc<QpInner>] = current.as_deref().map_or(&[], |m| m);
        if now.iter().any(|q| Arc::ptr_eq(q, qp)) {
            return Ok(());
        }
        let count = u32::try_from(now.len()).map_err(|_| ENOMEM)?;
        mcast::check_attach(*usage, count).map_err(|_| ENOMEM)?;

        let mut list = KVec::with_capacity(now.len() + 1, GFP_KERNEL)?;
        for q in now {
            list.push(q.clone(), GFP_KERNEL)?;
        }
        list.push(qp.clone(), GFP_KERNEL)?;
        let list = Arc::new(list, GFP_KERNEL)?;
        if current.is_some() {
            drop(self.publish(mgid, list));
        } else {
            let node = RBTreeNodeReservation::new(GFP_KERNEL)?;
            ndev.ok_or(ENODEV)?.mc_add(&mcast::group_mac(mgid))?;
            // No other group of this MGID can appear: `control` is held.
            let replaced = self.groups.lock().insert(node.into_node(*mgid, list));
            drop(replaced);
        }
        *usage = usage.attached(count);
        qp.mcast_attached();
        Ok(())
    }

    /// Detaches `qp` from group `mgid` (rxe's `rxe_detach_mcast`): `EINVAL`
    /// if it is not attached. The last QP of a group takes the group and
    /// the netdev's membership of its address with it.
    pub(crate) fn detach(&self, qp: &Arc<QpInner>, mgid: &Mgid, ndev: Option<&NetDev>) -> Result {
        let mut usage = self.control.lock();
        let current = self.members(mgid).ok_or(EINVAL)?;
        if !current.iter().any(|q| Arc::ptr_eq(q, qp)) {
            return Err(EINVAL);
        }
        let count = u32::try_from(current.len()).map_err(|_| EINVAL)?;
        if count <= 1 {
            let removed = self.groups.lock().remove_node(mgid);
            drop(removed);
            if let Some(ndev) = ndev {
                // The netdev may have flushed its list already (it is
                // being unregistered); nothing is left to drop then.
                let _ = ndev.mc_del(&mcast::group_mac(mgid));
            }
        } else {
            let mut list = KVec::with_capacity(current.len() - 1, GFP_KERNEL)?;
            for q in current.iter().filter(|q| !Arc::ptr_eq(q, qp)) {
                list.push(q.clone(), GFP_KERNEL)?;
            }
            drop(self.publish(mgid, Arc::new(list, GFP_KERNEL)?));
        }
        drop(current);
        *usage = usage.detached(count);
        qp.mcast_detached();
        Ok(())
    }

    /// Removes every group and leaves their addresses on `ndev` (device
    /// teardown). The core has detached every QP by then; this only
    /// guarantees that nothing is left behind.
    pub(crate) fn clear(&self, ndev: Option<&NetDev>) {
        let mut usage = self.control.lock();
        let groups = core::mem::replace(&mut *self.groups.lock(), RBTree::new());
        if let Some(ndev) = ndev {
            for mgid in groups.keys() {
                let _ = ndev.mc_del(&mcast::group_mac(mgid));
            }
        }
        for members in groups.values() {
            for qp in members.iter() {
                qp.mcast_detached();
            }
        }
        drop(groups);
        *usage = Usage::default();
    }
}
