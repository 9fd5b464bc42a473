// SPDX-License-Identifier: GPL-2.0

//! Device and port limits rrxe advertises, and the GUID it gives a device.
//! The values match C rxe's (drivers/infiniband/sw/rxe/rxe_param.h) so that
//! applications tuned for one behave the same on the other.

use crate::{
    ffi::ib::{
        self, AtomicCap, DeviceAttr, DeviceCapFlags, KernelCapFlags, OdpCaps, OdpTransportCaps,
        PortAttr, PortCapFlags, PortSpeed, PortWidth,
    },
    logic::mcast,
    proto::mtu,
};

/// IEEE OUI-less vendor id used by software RDMA devices.
pub(crate) const VENDOR_ID: u32 = 0xff_ffff;
/// Size of the GID table of the port (filled by the core's RoCE GID cache).
pub(crate) const GID_TABLE_LEN: i32 = 1024;
/// Size of the P_Key table: only the default full-membership key.
pub(crate) const PKEY_TABLE_LEN: u16 = 1;
/// The only port.
pub(crate) const PORT: u32 = 1;
/// ABI version of include/uapi/rdma/rdma_user_rxe.h that rdma-core expects.
pub(crate) const UVERBS_ABI_VERSION: u32 = 2;

const DEFAULT_MAX: u32 = 1 << 20;
/// Most SGEs in a send or receive work request.
pub(crate) const MAX_SGE: u32 = 32;
/// Most work requests in a send or receive queue.
pub(crate) const MAX_QP_WR: u32 = DEFAULT_MAX;
/// Most completions in a CQ.
/// Longest fast-registration page list advertised (rxe's).
pub(crate) const MAX_FAST_REG_PAGES: u32 = 512;
/// Largest page list `alloc_mr` accepts: consumers may ask for more than
/// advertised (rxe does not check), but the list is allocated up front.
pub(crate) const MAX_FAST_REG_ALLOC: u32 = 1 << 16;
/// Most completions in a CQ.
pub(crate) const MAX_CQE: u32 = (1 << 15) - 1;
/// Most inline bytes in a send work request (the room of `MAX_SGE` SGEs).
pub(crate) const MAX_INLINE_DATA: u32 = MAX_SGE * 16;
/// Most outstanding RDMA READ/atomic requests per QP, either direction.
pub(crate) const MAX_RD_ATOMIC: u32 = 128;
/// The first QP number handed out (lower ones are reserved, 1 is GSI).
pub(crate) const MIN_QPN: u32 = 16;
/// Most QPs, PDs and CQs per device.
pub(crate) const MAX_QP: u32 = DEFAULT_MAX - MIN_QPN;
/// Most SGEs in an SRQ receive.
pub(crate) const MAX_SRQ_SGE: u32 = 27;
/// Most SRQs per device.
pub(crate) const MAX_SRQ: u32 = DEFAULT_MAX - 0x0002_0001;
/// Most address handles per device.
pub(crate) const MAX_AH: u32 = (1 << 15) - 1;
/// Most PDs per device.
pub(crate) const MAX_PD: u32 = DEFAULT_MAX;
/// Most CQs per device.
pub(crate) const MAX_CQ: u32 = DEFAULT_MAX;

/// The device capability flags (`enum ib_device_cap_flags`).
fn device_cap_flags() -> DeviceCapFlags {
    DeviceCapFlags::BAD_PKEY_CNTR
        | DeviceCapFlags::BAD_QKEY_CNTR
        | DeviceCapFlags::AUTO_PATH_MIG
        | DeviceCapFlags::CHANGE_PHY_PORT
        | DeviceCapFlags::UD_AV_PORT_ENFORCE
        | DeviceCapFlags::PORT_ACTIVE_EVENT
        | DeviceCapFlags::SYS_IMAGE_GUID
        | DeviceCapFlags::RC_RNR_NAK_GEN
        | DeviceCapFlags::SRQ_RESIZE
        | DeviceCapFlags::MEM_MGT_EXTENSIONS
        | DeviceCapFlags::MEM_WINDOW
        | DeviceCapFlags::FLUSH_GLOBAL
        | DeviceCapFlags::FLUSH_PERSISTENT
        | DeviceCapFlags::MEM_WINDOW_TYPE_2B
        | DeviceCapFlags::ATOMIC_WRITE
}

/// What a QP of one transport may do with regions paged on demand: what C
/// rxe advertises, RC and UD (UC takes the same path but is not
/// advertised, as rxe); nothing without on-demand paging in the kernel
/// (`ib::odp_enabled`). Explicit and implicit ODP (the whole address
/// space, which C rxe refuses: `mem::implicit`).
fn odp_caps(attr: &mut DeviceAttr) {
    use OdpTransportCaps as T;
    if !ib::odp_enabled() {
        attr.set_odp_caps(OdpCaps::NONE, T::NONE, T::NONE, T::NONE);
        return;
    }
    let rc = T::SEND
        | T::RECV
        | T::WRITE
        | T::READ
        | T::ATOMIC
        | T::SRQ_RECV
        | T::FLUSH
        | T::ATOMIC_WRITE;
    let ud = T::SEND | T::RECV | T::SRQ_RECV;
    attr.set_odp_caps(OdpCaps::SUPPORT | OdpCaps::IMPLICIT, rc, T::NONE, ud);
}

/// The capabilities offered to kernel consumers and the core: user
/// unregistration (`rdma link delete`) and, if the kernel has it,
/// on-demand paging (the core refuses `IB_ACCESS_ON_DEMAND` without it).
fn kernel_cap_flags() -> KernelCapFlags {
    if ib::odp_enabled() {
        KernelCapFlags::ALLOW_USER_UNREG | KernelCapFlags::ON_DEMAND_PAGING
    } else {
        KernelCapFlags::ALLOW_USER_UNREG
    }
}

/// Fills `attr` with rrxe's limits; `sys_image_guid` is in wire byte order.
pub(crate) fn fill_device_attr(attr: &mut DeviceAttr, sys_image_guid: u64) {
    attr.sys_image_guid = sys_image_guid;
    attr.max_mr_size = u64::MAX;
    attr.page_size_cap = 0xffff_f000;
    attr.vendor_id = VENDOR_ID;
    attr.max_qp = MAX_QP;
    attr.max_qp_wr = MAX_QP_WR;
    attr.set_device_caps(device_cap_flags());
    attr.set_kernel_caps(kernel_cap_flags());
    odp_caps(attr);
    attr.max_send_sge = MAX_SGE;
    attr.max_recv_sge = MAX_SGE;
    attr.max_sge_rd = MAX_SGE;
    attr.max_cq = MAX_CQ;
    attr.max_cqe = MAX_CQE;
    attr.max_mr = (DEFAULT_MAX >> 1) - 1;
    attr.max_mw = DEFAULT_MAX - (DEFAULT_MAX >> 1) - 1;
    attr.max_pd = MAX_PD;
    attr.max_qp_rd_atom = MAX_RD_ATOMIC;
    attr.max_res_rd_atom = 0x3f000;
    attr.max_qp_init_rd_atom = MAX_RD_ATOMIC;
    attr.set_atomic_cap(AtomicCap::Hca);
    attr.max_mcast_grp = mcast::MAX_GROUPS;
    attr.max_mcast_qp_attach = mcast::MAX_QPS_PER_GROUP;
    attr.max_total_mcast_qp_attach = mcast::MAX_ATTACHMENTS;
    attr.max_ah = MAX_AH;
    attr.max_srq = MAX_SRQ;
    attr.max_srq_wr = DEFAULT_MAX;
    attr.max_srq_sge = MAX_SRQ_SGE;
    attr.max_fast_reg_page_list_len = MAX_FAST_REG_PAGES;
    attr.max_pkeys = 64;
    attr.local_ca_ack_delay = 15;
}

/// Fills the parts of `attr` that do not depend on the netdev's state.
pub(crate) fn fill_port_attr(attr: &mut PortAttr, port_cap_flags: u32) {
    attr.max_mtu = mtu::IB_MTU_4096;
    attr.gid_tbl_len = GID_TABLE_LEN;
    attr.port_cap_flags = port_cap_flags;
    attr.max_msg_sz = 1 << 31;
    attr.pkey_tbl_len = PKEY_TABLE_LEN;
    attr.max_vl_num = 1;
    attr.set_active_width(PortWidth::X1);
    attr.set_active_speed(PortSpeed::SDR);
}

/// Port capabilities at creation (connection management supported), as
/// the `port_cap_flags` number that `modify_port` changes.
pub(crate) const PORT_CAP_FLAGS: u32 = PortCapFlags::CM_SUP.raw();

/// The GUID of a device on a netdev with hardware address `mac` (or a random
/// one, so that connection management still sees a unique GUID).
pub(crate) fn guid_for(mac: Option<[u8; 6]>) -> u64 {
    let mac = mac.unwrap_or_else(ib::random_mac);
    u64::from_ne_bytes(ib::guid_from_mac(&mac))
}

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kernel::prelude::kunit_tests(rrxe_dev_params))]
#[cfg_attr(dropin, kernel::prelude::kunit_tests(rrxe_dev_params_dropin))]
mod tests {
    use super::{fill_device_attr, guid_for, VENDOR_ID};
    use crate::ffi::ib;

    #[test]
    fn random_guid_when_no_mac() {
        // Two devices without MACs must not share a GUID.
        assert_ne!(guid_for(None), guid_for(None));
    }

    #[test]
    fn device_attr_allows_user_unregistration() {
        let mut attr = ib::DeviceAttr::default();
        fill_device_attr(&mut attr, 0);
        assert!(attr
            .kernel_caps()
            .contains(ib::KernelCapFlags::ALLOW_USER_UNREG));
        assert_eq!(attr.vendor_id, VENDOR_ID);
        assert_eq!(attr.max_qp_rd_atom, 128);
        // On-demand paging, explicit as rxe, and implicit; nothing without
        // it in the kernel.
        use ib::{OdpCaps, OdpTransportCaps as T};
        let (general, rc, ud) = attr.odp_caps();
        assert_eq!(
            attr.kernel_caps()
                .contains(ib::KernelCapFlags::ON_DEMAND_PAGING),
            ib::odp_enabled()
        );
        assert_eq!(general.contains(OdpCaps::SUPPORT), ib::odp_enabled());
        assert_eq!(general.contains(OdpCaps::IMPLICIT), ib::odp_enabled());
        if ib::odp_enabled() {
            let want = T::SEND | T::RECV | T::WRITE | T::READ | T::ATOMIC;
            assert_eq!(rc & want.raw(), want.raw());
            assert_eq!(ud, (T::SEND | T::RECV | T::SRQ_RECV).raw());
        }
    }
}
