// SPDX-License-Identifier: GPL-2.0

//! Tests of the multicast rules: group addresses, their Ethernet
//! addresses, and the limits on groups and attachments.

use crate::logic::mcast::*;
use proptest::prelude::*;

fn v4(a: [u8; 4]) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[10] = 0xff;
    g[11] = 0xff;
    g[12..].copy_from_slice(&a);
    g
}

#[test]
fn multicast_gids() {
    assert!(is_multicast(&v4([224, 0, 0, 1])));
    assert!(is_multicast(&v4([239, 255, 255, 255])));
    assert!(!is_multicast(&v4([223, 255, 255, 255])));
    assert!(!is_multicast(&v4([240, 0, 0, 1])));
    assert!(!is_multicast(&v4([198, 18, 1, 1])));
    let mut v6 = [0u8; 16];
    v6[0] = 0xff;
    v6[1] = 0x0e;
    v6[15] = 1;
    assert!(is_multicast(&v6));
    v6[0] = 0xfe;
    assert!(!is_multicast(&v6));
    assert!(!is_multicast(&[0u8; 16]));
    // An IPv4-compatible (not mapped) address is IPv6, and not multicast.
    let mut compat = [0u8; 16];
    compat[12] = 239;
    assert!(!is_multicast(&compat));
}

#[test]
fn ipv4_groups_map_to_01_00_5e() {
    assert_eq!(
        group_mac(&v4([239, 1, 2, 3])),
        [0x01, 0x00, 0x5e, 0x01, 0x02, 0x03]
    );
    // Only the low 23 bits are kept.
    assert_eq!(
        group_mac(&v4([224, 129, 2, 3])),
        [0x01, 0x00, 0x5e, 0x01, 0x02, 0x03]
    );
    assert_eq!(
        group_mac(&v4([239, 255, 255, 255])),
        [0x01, 0x00, 0x5e, 0x7f, 0xff, 0xff]
    );
}

#[test]
fn ipv6_groups_map_to_33_33() {
    let mut g = [0u8; 16];
    g[0] = 0xff;
    g[1] = 0x12;
    g[12..].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    assert_eq!(group_mac(&g), [0x33, 0x33, 0xde, 0xad, 0xbe, 0xef]);
}

#[test]
fn limits_in_rxe_order() {
    let free = Usage::default();
    assert_eq!(check_attach(free, 0), Ok(()));
    assert_eq!(check_attach(free, MAX_QPS_PER_GROUP - 1), Ok(()));
    assert_eq!(
        check_attach(free, MAX_QPS_PER_GROUP),
        Err(AttachError::GroupFull)
    );
    let full_groups = Usage {
        groups: MAX_GROUPS,
        attachments: MAX_GROUPS,
    };
    // No new group, but existing ones still take QPs.
    assert_eq!(
        check_attach(full_groups, 0),
        Err(AttachError::TooManyGroups)
    );
    assert_eq!(check_attach(full_groups, 1), Ok(()));
    let full = Usage {
        groups: MAX_GROUPS,
        attachments: MAX_ATTACHMENTS,
    };
    assert_eq!(check_attach(full, 0), Err(AttachError::TooManyGroups));
    assert_eq!(check_attach(full, 1), Err(AttachError::TooManyAttachments));
    assert_eq!(
        check_attach(full, MAX_QPS_PER_GROUP),
        Err(AttachError::TooManyAttachments)
    );
}

#[test]
fn rxe_values() {
    // rxe_param.h: RXE_MAX_MCAST_GRP, _QP_ATTACH, RXE_MAX_TOT_MCAST_QP_ATTACH.
    assert_eq!(MAX_GROUPS, 8192);
    assert_eq!(MAX_QPS_PER_GROUP, 56);
    assert_eq!(MAX_ATTACHMENTS, 0x70000);
    assert_eq!(MULTICAST_QPN, 0xff_ffff);
}

proptest! {
    /// Every multicast GID maps to a multicast MAC of its family, and the
    /// MAC is a function of the address alone.
    #[test]
    fn group_macs_are_multicast(g in any::<[u8; 16]>(), a in any::<[u8; 4]>()) {
        let mac = group_mac(&g);
        prop_assert_eq!(mac[0] & 1, 1);
        let m4 = group_mac(&v4(a));
        prop_assert_eq!(&m4[..3], &[0x01, 0x00, 0x5e]);
        prop_assert_eq!(m4[3] & 0x80, 0);
    }

    /// Attaching then detaching gives the usage back; counts never wrap.
    #[test]
    fn usage_round_trips(groups in 0..=MAX_GROUPS, extra in 0u32..1000, members in 0..=MAX_QPS_PER_GROUP) {
        let u = Usage { groups, attachments: groups.saturating_add(extra) };
        if check_attach(u, members).is_ok() {
            let after = u.attached(members);
            prop_assert!(after.groups <= MAX_GROUPS);
            prop_assert!(after.attachments <= MAX_ATTACHMENTS);
            prop_assert_eq!(after.detached(members + 1), u);
        }
        let z = Usage::default().detached(1);
        prop_assert_eq!(z, Usage::default());
    }
}
