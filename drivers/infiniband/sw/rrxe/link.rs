// SPDX-License-Identifier: GPL-2.0

//! `rdma link add NAME type rrxe netdev DEV` (`type rxe` for the drop-in
//! build, [`crate::names`]): validate the netdev, create the device, register
//! it.

use crate::{
    dev::params::guid_for,
    ffi::ib::{self, DeviceParams, LinkOps, Unregistered},
    ffi::net::{NetDev, NetDevRef},
    names, registry,
    rx::tunnel,
    transport::shared::Shared,
    verbs::device::RrxeDevice,
};
use kernel::prelude::*;

/// The link type: `rrxe`, or `rxe` for the drop-in build.
pub(crate) struct RrxeLink;

/// Every refusal gets one line in the kernel log saying why.
fn refuse(name: &CStr, ndev: &NetDev, why: impl kernel::fmt::Display, err: Error) -> Result {
    pr_err!("cannot add {} on {}: {}\n", name, ndev.name(), why);
    Err(err)
}

impl LinkOps for RrxeLink {
    const TYPE: &'static CStr = names::LINK_TYPE;

    fn newlink(name: &CStr, ndev: &NetDev) -> Result {
        if !ndev.is_ether() {
            return refuse(name, ndev, "not an Ethernet device", EOPNOTSUPP);
        }
        if ndev.is_vlan() {
            return refuse(
                name,
                ndev,
                "a VLAN device; add the link on its real device",
                EPERM,
            );
        }
        if registry::has_netdev(ndev) {
            return refuse(
                name,
                ndev,
                fmt!("it already has an {} device", names::MODULE),
                EEXIST,
            );
        }
        if ib::rxe_device_on(ndev) {
            return refuse(
                name,
                ndev,
                fmt!("it already has an {} device", names::OTHER),
                EEXIST,
            );
        }

        let id = registry::next_id();
        let shared = Shared::new(NetDevRef::new(ndev))?;
        let params = DeviceParams {
            node_guid: guid_for(ndev.mac()).to_ne_bytes(),
            node_desc: c"rrxe",
            num_comp_vectors: ib::num_possible_cpus(),
            uverbs_cmds: &[ib::UverbsCmd::PostSend, ib::UverbsCmd::ReqNotifyCq],
        };
        let guid = u64::from_ne_bytes(params.node_guid);
        let dev = Unregistered::new(
            crate::this_module(),
            &params,
            RrxeDevice::new(id, shared.clone(), guid, registry::debugfs_dir(name)),
        )?;
        // The device's drop detaches it again, whatever happens next.
        if let Err(e) = tunnel::attach(&shared, ndev) {
            if e == EADDRINUSE {
                return refuse(
                    name,
                    ndev,
                    fmt!(
                        "UDP port 4791 is taken in its network namespace (by {}?)",
                        names::OTHER
                    ),
                    e,
                );
            }
            return refuse(name, ndev, "cannot open the RoCE UDP socket", e);
        }

        // Under RTNL the netdev cannot start unregistering between the check
        // and the insert, so its NETDEV_UNREGISTER is sure to find us.
        ib::with_rtnl(|| {
            if !ndev.is_registered() {
                return Err(ENODEV);
            }
            registry::insert(id, ndev, shared.clone(), dev.handle())
        })
        .or_else(|e| refuse(name, ndev, "it is going away or already taken", e))?;

        let handle = dev.handle();
        if let Err(e) = dev.register(name) {
            // The core says ENFILE when the name is in use.
            let (why, e) = if e == ENFILE {
                ("the device name is already in use", EEXIST)
            } else {
                ("registration failed", e)
            };
            return refuse(name, ndev, why, e);
        }
        // The netdev may have gone while we registered: the notifier then
        // found no registered device to remove, so remove it here.
        if shared.netdev().is_none() {
            handle.unregister();
            return Err(ENODEV);
        }
        Ok(())
    }
}
