// SPDX-License-Identifier: GPL-2.0

//! In-kernel tests (KUnit), run when the module loads into a kernel with
//! CONFIG_KUNIT. They cover the pieces that need the kernel itself: the C
//! helpers behind GUID generation and the attributes handed to the core.

use kernel::prelude::*;

#[kunit_tests(rrxe)]
mod tests {
    use crate::{
        device, ib,
        logic::mr::{LOCAL_WRITE, REMOTE_READ, REMOTE_WRITE},
        mr::{MrSpec, MrTable},
        params, proto,
    };
    use kernel::error::code::{EACCES, EINVAL};
    use kernel::prelude::*;

    #[test]
    fn guid_is_eui64_of_mac() {
        let guid = ib::guid_from_mac(&[0x02, 0x11, 0x22, 0x33, 0x44, 0x55]);
        // ff:fe in the middle, universal/local bit flipped.
        assert_eq!(guid, [0x00, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55]);
    }

    #[test]
    fn random_guid_when_no_mac() {
        // Two devices without MACs must not share a GUID.
        assert_ne!(device::guid_for(None), device::guid_for(None));
    }

    #[test]
    fn device_attr_allows_user_unregistration() {
        let mut attr = ib::DeviceAttr::default();
        params::fill_device_attr(&mut attr, 0);
        assert_ne!(
            attr.kernel_cap_flags & u64::from(ib::consts::IBK_ALLOW_USER_UNREG),
            0
        );
        assert_eq!(attr.vendor_id, params::VENDOR_ID);
        assert_eq!(attr.max_qp_rd_atom, 128);
    }

    #[test]
    fn active_mtu_follows_netdev_mtu() {
        assert_eq!(proto::mtu::ib_mtu_for_netdev(1500), 3); // 1024
        assert_eq!(proto::mtu::ib_mtu_for_netdev(9000), ib::consts::IB_MTU_4096);
        assert_eq!(proto::mtu::ib_mtu_for_netdev(68), 1); // never below 256
    }

    #[test]
    fn mr_lookup_checks_key_bounds_and_access() {
        let Ok(table) = KBox::pin_init(MrTable::new(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let spec = MrSpec::test_region(0x10000, 0x2000, LOCAL_WRITE | REMOTE_READ);
        let Ok(mr) = table.insert(spec) else {
            panic!("insert failed");
        };
        let key = mr.keys().lkey;
        assert_eq!(
            table.lookup(key, 0x10800, 0x100, REMOTE_READ).map(|r| r.1),
            Ok(0x800)
        );
        assert_eq!(
            table.lookup(key, 0x11f00, 0x100, 0).map(|r| r.1),
            Ok(0x1f00)
        );
        // Past the end, before the start, wrapping around.
        assert_eq!(table.lookup(key, 0x11f00, 0x101, 0).err(), Some(EACCES));
        assert_eq!(table.lookup(key, 0xffff, 1, 0).err(), Some(EACCES));
        assert_eq!(table.lookup(key, u64::MAX, 2, 0).err(), Some(EACCES));
        // A permission the region does not grant.
        assert_eq!(
            table.lookup(key, 0x10000, 8, REMOTE_WRITE).err(),
            Some(EACCES)
        );
        // Same index, another variant: a stale key.
        assert_eq!(table.lookup(key ^ 1, 0x10000, 8, 0).err(), Some(EINVAL));
        table.remove(&mr);
        assert_eq!(table.lookup(key, 0x10000, 8, 0).err(), Some(EINVAL));
        // The index comes back with a different key.
        let spec = MrSpec::test_region(0, 0x1000, 0);
        if let Ok(again) = table.insert(spec) {
            assert_ne!(again.keys().lkey, key);
            table.remove(&again);
        }
    }
}
