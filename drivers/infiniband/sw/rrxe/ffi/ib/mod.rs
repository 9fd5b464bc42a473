// SPDX-License-Identifier: GPL-2.0

//! Safe abstractions over the RDMA core (`drivers/infiniband/core`): device
//! allocation and registration with a `#[vtable]` operations trait, rdma
//! link types, and the plain-data attribute structs drivers fill in, with
//! the C enums and flags they hold as Rust types (`device_attr`,
//! `port_attr`, `verb_types`), so that no driver names a constant of the
//! bindings. Written to be independent of rrxe, as they would be in
//! `rust/kernel/rdma`.

/// The operations of a flag set or mask that the RDMA core passes to a
/// driver (`enum ib_device_modify_flags`, `enum ib_srq_attr_mask`, ...), on
/// a `#[repr(transparent)]` newtype over its `u32`: made from the core's
/// number as it is (any bits are representable, and the driver decides
/// what it refuses), tested and combined bit by bit. One definition for
/// every such type of this module; a type that needs more has its own
/// `impl` beside it.
macro_rules! core_mask_ops {
    ($name:ident) => {
        // Not every mask needs every operation.
        #[allow(dead_code)]
        impl $name {
            /// The mask the core passed as `raw`.
            pub(super) const fn from_raw(raw: u32) -> Self {
                Self(raw)
            }

            /// Whether every bit of `other` is set.
            pub(crate) const fn contains(self, other: Self) -> bool {
                self.0 & other.0 == other.0
            }

            /// The bits of this mask that are not in `other`.
            pub(crate) const fn without(self, other: Self) -> Self {
                Self(self.0 & !other.0)
            }

            /// Whether no bit is set.
            pub(crate) const fn is_empty(self) -> bool {
                self.0 == 0
            }
        }

        impl core::ops::BitOr for $name {
            type Output = Self;

            fn bitor(self, other: Self) -> Self {
                Self(self.0 | other.0)
            }
        }
    };
}

mod counter;
mod device;
mod device_attr;
mod handle;
mod kmem;
mod link;
mod object;
mod odp;
mod operations;
mod port_attr;
mod qp_attr;
mod queue_buf;
mod restrack;
mod stats;
mod udata;
mod umem;
mod verb_types;
mod vtable;
mod wr;

pub(crate) use counter::RdmaCounter;
pub(crate) use device::{
    DeviceHandle, DeviceParams, DriverId, IbDevice, PortEvent, Unregistered, UverbsCmd,
};
pub(crate) use device_attr::{
    AtomicCap, DeviceCapFlags, DeviceModifyMask, KernelCapFlags, OdpCaps, OdpTransportCaps,
};
pub(crate) use handle::{CqHandle, Event, QpHandle, SrqHandle};
pub(crate) use kmem::{AtomicOp, KernelMemory, PageRef};
pub(crate) use link::{LinkOps, LinkRegistration};
pub(crate) use object::{Ah, Cq, Mr, Mw, Object, Pd, Qp, Srq};
pub(crate) use odp::{odp_enabled, ImplicitRoot, OdpFault, OdpMirror, UmemOdp};
pub(crate) use operations::{MrKeys, Operations, PostError, QpBinding};
pub(crate) use port_attr::{
    CoreCapFlags, LinkLayer, PhysState, PortCapFlags, PortModifyMask, PortSpeed, PortState,
    PortWidth,
};
pub(crate) use qp_attr::{AhAttr, AhFlags, GidType, StoredAhAttr, StoredQpAttr};
pub(crate) use queue_buf::QueueBuf;
pub(crate) use restrack::ResMsg;
pub(crate) use stats::StatDesc;
pub(crate) use udata::Udata;
pub(crate) use umem::Umem;
pub(crate) use verb_types::{
    AdviseMrFlags, CqNotifyFlags, MrAdvice, MrReregFlags, MrType, NetworkHdrType, SignalType,
    SrqAttrMask, SrqType,
};
pub(crate) use wr::{KernelSge, RecvWr, RecvWrs, SendWr, SendWrs};

/// The size of a management datagram (`IB_MGMT_MAD_SIZE`, the size of
/// `struct ib_mad`): what `process_mad` reads and answers.
pub(crate) const MAD_SIZE: usize = 256;
// The number drivers give as a port's `max_mad_size` is the header's.
const _: () = assert!(MAD_SIZE == crate::ffi::sys::IB_MGMT_MAD_SIZE as usize);

/// Device attributes returned by `query_device` (plain C data).
pub(crate) type DeviceAttr = crate::ffi::sys::ib_device_attr;
/// Port attributes returned by `query_port` (plain C data).
pub(crate) type PortAttr = crate::ffi::sys::ib_port_attr;
/// Immutable port properties returned by `get_port_immutable` (plain C data).
pub(crate) type PortImmutable = crate::ffi::sys::ib_port_immutable;
/// Arguments of `modify_device` (plain C data).
pub(crate) type DeviceModify = crate::ffi::sys::ib_device_modify;
/// Arguments of `modify_port` (plain C data).
pub(crate) type PortModify = crate::ffi::sys::ib_port_modify;
/// Arguments of `create_cq` (plain C data).
pub(crate) type CqInitAttr = crate::ffi::sys::ib_cq_init_attr;
/// Arguments of `create_qp`, updated with the actual capabilities.
pub(crate) type QpInitAttr = crate::ffi::sys::ib_qp_init_attr;
/// QP capabilities (plain C data).
pub(crate) type QpCap = crate::ffi::sys::ib_qp_cap;
/// QP attributes of `modify_qp` and `query_qp` (plain C data).
pub(crate) type QpAttr = crate::ffi::sys::ib_qp_attr;
/// A kernel work completion (plain C data).
pub(crate) type WorkCompletion = crate::ffi::sys::ib_wc;
/// A kernel work completion queued by a driver until its consumer polls it.
#[derive(Clone, Copy, Default)]
pub(crate) struct QueuedWc(pub(crate) WorkCompletion);

// SAFETY: plain data; the pointers in it (the QP, the consumer's `wr_cqe`)
// are never dereferenced by the driver, only handed back to the consumer
// that polls them, on whatever thread it polls.
unsafe impl Send for QueuedWc {}
// SAFETY: as above.
unsafe impl Sync for QueuedWc {}

/// A user work completion (`struct ib_uverbs_wc` of the uverbs ABI).
pub(crate) type UserWorkCompletion = crate::ffi::sys::ib_uverbs_wc;
/// SRQ creation arguments (plain C data).
pub(crate) type SrqInitAttr = crate::ffi::sys::ib_srq_init_attr;
/// SRQ attributes (plain C data).
pub(crate) type SrqAttr = crate::ffi::sys::ib_srq_attr;
/// An address vector as `query_ah` fills it (plain C data).
pub(crate) type AhAttrRaw = crate::ffi::sys::rdma_ah_attr;

/// The EUI-64 GUID the RDMA core expects for a MAC address (IPv6 style, with
/// the universal/local bit flipped), in wire (big-endian) byte order.
pub(crate) fn guid_from_mac(mac: &[u8; 6]) -> [u8; 8] {
    let mut eui = [0u8; 8];
    // SAFETY: both buffers are valid for the sizes `addrconf_addr_eui48` uses.
    unsafe { crate::ffi::sys::rrxe_eui48(eui.as_mut_ptr(), mac.as_ptr()) };
    eui
}

/// A random locally administered unicast MAC, for netdevs without one.
pub(crate) fn random_mac() -> [u8; 6] {
    let mut mac = [0u8; 6];
    // SAFETY: `mac` has room for the 6 bytes `eth_random_addr` writes.
    unsafe { crate::ffi::sys::rrxe_random_mac(mac.as_mut_ptr()) };
    mac
}

/// The number of possible CPUs: the completion vectors a device offers.
pub(crate) fn num_possible_cpus() -> u32 {
    // SAFETY: reads a boot-time constant.
    unsafe { crate::ffi::sys::rrxe_num_possible_cpus() }
}

/// Runs `f` with the RTNL lock held.
pub(crate) fn with_rtnl<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: rtnl_lock may sleep; all callers are in process context.
    unsafe { crate::ffi::sys::rrxe_rtnl_lock() };
    let r = f();
    // SAFETY: we took the lock just above.
    unsafe { crate::ffi::sys::rrxe_rtnl_unlock() };
    r
}

/// Whether the C `rdma_rxe` driver (same driver id) already serves `dev`.
pub(crate) fn rxe_device_on(dev: &crate::ffi::net::NetDev) -> bool {
    // SAFETY: `dev` is valid; a non-null result carries a registration
    // reference that we drop right away.
    let ibdev =
        unsafe { crate::ffi::sys::ib_device_get_by_netdev(dev.as_raw(), DriverId::Rxe as u32) };
    if ibdev.is_null() {
        return false;
    }
    // SAFETY: `ibdev` was returned with a reference held, which we release.
    unsafe { crate::ffi::sys::ib_device_put(ibdev) };
    true
}

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kernel::prelude::kunit_tests(rrxe_ib))]
#[cfg_attr(dropin, kernel::prelude::kunit_tests(rrxe_ib_dropin))]
mod tests {
    use super::guid_from_mac;

    #[test]
    fn guid_is_eui64_of_mac() {
        let guid = guid_from_mac(&[0x02, 0x11, 0x22, 0x33, 0x44, 0x55]);
        // ff:fe in the middle, universal/local bit flipped.
        assert_eq!(guid, [0x00, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55]);
    }
}
