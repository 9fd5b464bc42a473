// SPDX-License-Identifier: GPL-2.0

//! Active MTU selection: the IB MTU a netdev MTU can carry.

use crate::proto::mtu::{ib_mtu_bytes, ib_mtu_for_netdev, IB_MTU_256, IB_MTU_4096, ROCE_OVERHEAD};
use proptest::prelude::*;

#[test]
fn enum_to_bytes() {
    let bytes: [u32; 5] = [256, 512, 1024, 2048, 4096];
    for (m, b) in (IB_MTU_256..=IB_MTU_4096).zip(bytes) {
        assert_eq!(ib_mtu_bytes(m), b);
    }
    assert_eq!(ib_mtu_bytes(0), 0);
    assert_eq!(ib_mtu_bytes(6), 0);
    assert_eq!(ib_mtu_bytes(u32::MAX), 0);
}

#[test]
fn known_netdev_mtus() {
    // The values C rxe reports (eth_mtu_int_to_enum).
    for (netdev, ib) in [
        (1500, 3),
        (9000, 5),
        (4200, 5),
        (4000, 4),
        (1000, 2),
        (600, 1),
        (68, 1), // the smallest IPv4 MTU: never below 256
        (0, 1),
    ] {
        assert_eq!(ib_mtu_for_netdev(netdev), ib, "netdev mtu {netdev}");
    }
    // Exactly at the boundary: 1024 bytes of payload plus the overhead fits.
    assert_eq!(ib_mtu_for_netdev(1024 + ROCE_OVERHEAD), 3);
    assert_eq!(ib_mtu_for_netdev(1024 + ROCE_OVERHEAD - 1), 2);
}

proptest! {
    #[test]
    fn chosen_mtu_is_largest_that_fits(netdev in any::<u32>()) {
        let m = ib_mtu_for_netdev(netdev);
        prop_assert!((IB_MTU_256..=IB_MTU_4096).contains(&m));
        let room = netdev.saturating_sub(ROCE_OVERHEAD);
        // It fits (or it is the 256-byte floor)...
        prop_assert!(ib_mtu_bytes(m) <= room || m == IB_MTU_256);
        // ...and the next larger one does not.
        if m < IB_MTU_4096 {
            prop_assert!(ib_mtu_bytes(m + 1) > room);
        }
    }

    #[test]
    fn monotonic(a in any::<u32>(), b in any::<u32>()) {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        prop_assert!(ib_mtu_for_netdev(lo) <= ib_mtu_for_netdev(hi));
    }
}
