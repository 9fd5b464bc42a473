// SPDX-License-Identifier: GPL-2.0

//! In-kernel tests (KUnit), run when the module loads into a kernel with
//! CONFIG_KUNIT. They cover the pieces that need the kernel itself: the C
//! helpers behind GUID generation and the attributes handed to the core.

use kernel::prelude::*;

#[kunit_tests(rrxe)]
mod tests {
    use crate::{
        device, ib,
        logic::keys::KeyKind,
        logic::mr::{LOCAL_WRITE, REMOTE_READ, REMOTE_WRITE},
        mr::{MrSpec, MrTable},
        mw::{MwState, MwTable},
        params, proto,
    };
    use kernel::error::code::{EACCES, EINVAL, ENOMEM};
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
        let Ok(table) = KBox::pin_init(MrTable::new_mrs(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let spec = MrSpec::test_region(0x10000, 0x2000, LOCAL_WRITE | REMOTE_READ);
        let Ok(mr) = table.insert_spec(spec) else {
            panic!("insert failed");
        };
        let key = mr.keys().lkey;
        assert_eq!(
            table
                .lookup(key, 0, 0x10800, 0x100, REMOTE_READ)
                .map(|r| r.1),
            Ok(0x800)
        );
        assert_eq!(
            table.lookup(key, 0, 0x11f00, 0x100, 0).map(|r| r.1),
            Ok(0x1f00)
        );
        // Past the end, before the start, wrapping around.
        assert_eq!(table.lookup(key, 0, 0x11f00, 0x101, 0).err(), Some(EACCES));
        assert_eq!(table.lookup(key, 0, 0xffff, 1, 0).err(), Some(EACCES));
        assert_eq!(table.lookup(key, 0, u64::MAX, 2, 0).err(), Some(EACCES));
        // A permission the region does not grant.
        assert_eq!(
            table.lookup(key, 0, 0x10000, 8, REMOTE_WRITE).err(),
            Some(EACCES)
        );
        // Another PD's request.
        assert_eq!(table.lookup(key, 1, 0x10000, 8, 0).err(), Some(EACCES));
        // Same index, another variant: a stale key.
        assert_eq!(table.lookup(key ^ 1, 0, 0x10000, 8, 0).err(), Some(EINVAL));
        table.remove(&mr);
        assert_eq!(table.lookup(key, 0, 0x10000, 8, 0).err(), Some(EINVAL));
        // The index comes back with a different key.
        // A key of the right index but stale variant does not match either.
        assert!(table.get(key).is_none());
        let spec = MrSpec::test_region(0, 0x1000, 0);
        if let Ok(again) = table.insert_spec(spec) {
            assert_ne!(again.keys().lkey, key);
            table.remove(&again);
        }
    }

    #[test]
    fn mw_alloc_gives_fresh_rkeys_in_the_mw_range() {
        let Ok(table) = KBox::pin_init(MwTable::new_mws(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let (Ok(one), Ok(two)) = (
            table.alloc(7, ib::consts::IB_MW_TYPE_1),
            table.alloc(7, ib::consts::IB_MW_TYPE_2),
        ) else {
            panic!("alloc failed");
        };
        assert_eq!(
            one.describe(),
            (ib::consts::IB_MW_TYPE_1, 7, MwState::Valid)
        );
        assert_eq!(two.describe(), (ib::consts::IB_MW_TYPE_2, 7, MwState::Free));
        for mw in [&one, &two] {
            assert!(KeyKind::Mw.contains_index(mw.rkey() >> 8));
        }
        assert_ne!(one.rkey(), two.rkey());
        assert!(table.alloc(7, 3).is_err());
        let stale = one.rkey();
        table.remove(&one);
        assert!(table.get(stale).is_none());
        assert!(table.get(two.rkey()).is_some());
        table.remove(&two);
    }

    #[test]
    fn fast_mr_page_list_is_bounded() {
        let Ok(table) = KBox::pin_init(MrTable::new_mrs(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        assert!(MrSpec::fast(0, ib::consts::IB_MR_TYPE_MEM_REG + 1, 4).is_err());
        assert!(MrSpec::fast(0, ib::consts::IB_MR_TYPE_MEM_REG, 0).is_err());
        let Ok(spec) = MrSpec::fast(0, ib::consts::IB_MR_TYPE_MEM_REG, 3) else {
            panic!("fast MR refused");
        };
        let Ok(mr) = table.insert_spec(spec) else {
            panic!("insert failed");
        };
        // Not registered yet: the key names no memory.
        assert!(table.lookup(mr.keys().lkey, 0, 0, 1, 0).is_err());
        assert_eq!(mr.start_pages(3000).err(), Some(EINVAL));
        assert_eq!(mr.start_pages(4096), Ok(()));
        for i in 0..3 {
            assert_eq!(mr.add_page(0x1000 * i), Ok(()));
        }
        assert_eq!(mr.add_page(0x9000).err(), Some(ENOMEM));
        assert_eq!(mr.fast_pages(), Some((3, 4096)));
        // A new mapping starts over.
        assert_eq!(mr.start_pages(1 << 21), Ok(()));
        assert_eq!(mr.fast_pages(), Some((0, 1 << 21)));
        table.remove(&mr);
    }
}
