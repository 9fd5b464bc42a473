// SPDX-License-Identifier: GPL-2.0

//! Path MTU: which IB MTU a RoCEv2 port can use on a given Ethernet MTU.
//!
//! An IB MTU counts payload only, so the Ethernet MTU must also fit the
//! largest RoCEv2 header stack: IPv6 (40), UDP (8), BTH (12), XRC ETH (4),
//! AtomicETH (28) and ICRC (4). This matches C rxe, so both ends of an
//! rxe/rrxe pair agree on the active MTU.

/// Bytes of RoCEv2 headers and trailer an IB MTU must leave room for.
pub(crate) const ROCE_OVERHEAD: u32 = 40 + 8 + 12 + 4 + 28 + 4;

/// `enum ib_mtu` value for 256 bytes.
pub(crate) const IB_MTU_256: u32 = 1;
/// `enum ib_mtu` value for 4096 bytes, the largest IB MTU.
pub(crate) const IB_MTU_4096: u32 = 5;

/// Bytes of payload per packet for an `enum ib_mtu` value, or 0 if invalid.
pub(crate) fn ib_mtu_bytes(mtu: u32) -> u32 {
    match mtu {
        IB_MTU_256..=IB_MTU_4096 => 128 << mtu,
        _ => 0,
    }
}

/// The active `enum ib_mtu` for a netdev MTU: the largest IB MTU whose packets
/// fit, and never less than 256 (as rxe does, even on a tiny netdev MTU).
pub(crate) fn ib_mtu_for_netdev(netdev_mtu: u32) -> u32 {
    let room = netdev_mtu.saturating_sub(ROCE_OVERHEAD);
    (IB_MTU_256..=IB_MTU_4096)
        .rev()
        .find(|&m| ib_mtu_bytes(m) <= room)
        .unwrap_or(IB_MTU_256)
}

// In the module only (the host tests cover the same in tools/proto-tests;
// the build checks the `enum ib_mtu` numbers in ffi/rxe_abi/numbers.rs).
// The drop-in build names its suites apart (crate::names). `proto` is
// also built on the host, where neither the test nor the macro exists.
#[cfg(CONFIG_KUNIT)]
#[cfg_attr(not(dropin), kernel::prelude::kunit_tests(rrxe_proto_mtu))]
#[cfg_attr(dropin, kernel::prelude::kunit_tests(rrxe_proto_mtu_dropin))]
mod tests {
    use super::{ib_mtu_for_netdev, IB_MTU_4096};

    #[test]
    fn active_mtu_follows_netdev_mtu() {
        assert_eq!(ib_mtu_for_netdev(1500), 3); // 1024
        assert_eq!(ib_mtu_for_netdev(9000), IB_MTU_4096);
        assert_eq!(ib_mtu_for_netdev(68), 1); // never below 256
    }
}
