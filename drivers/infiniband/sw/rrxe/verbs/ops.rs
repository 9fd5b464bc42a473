// SPDX-License-Identifier: GPL-2.0

//! The table of an rrxe device's `ib_device` operations: the verbs of the
//! device and its port are here, and each object's verbs go to the room of
//! its kind: [`super::pd`] (PDs, AHs), [`super::queues`] (CQs, SRQs),
//! [`super::qp`] and [`super::mem`] (MRs, MWs). The rooms name the device
//! ([`super::device`]), never this table, so imports in `verbs/` point one
//! way: `ops` → rooms → `device`.

use crate::{
    dev::ah::RrxeAh,
    dev::counters::NAMES,
    dev::params,
    ffi::ib::{
        self, Ah, AhAttr, Cq, CqHandle, CqInitAttr, DeviceAttr, DeviceModify, IbDevice, Mr, MrKeys,
        Mw, Operations, Pd, PortAttr, PortImmutable, PortModify, PostError, Qp, QpAttr, QpBinding,
        QpInitAttr, RecvWrs, ResMsg, SendWrs, Srq, SrqHandle, Udata, WorkCompletion,
    },
    ffi::net::NetDevRef,
    logic::mad,
    mem::mr::RrxeMr,
    mem::mw::RrxeMw,
    proto,
    queues::cq::RrxeCq,
    queues::srq::RrxeSrq,
    transport::qp::RrxeQp,
    verbs::device::RrxeDevice,
    verbs::pd::{self, RrxePd},
    verbs::{counters, mem, qp, queues},
};
use core::mem::MaybeUninit;
use kernel::prelude::*;

#[vtable]
impl Operations for RrxeDevice {
    const DRIVER_ID: ib::DriverId = ib::DriverId::Rxe;
    const UVERBS_ABI_VER: u32 = params::UVERBS_ABI_VERSION;

    fn query_device(dev: &IbDevice<Self>, attr: &mut DeviceAttr) -> Result {
        params::fill_device_attr(attr, *dev.sys_image_guid.lock());
        Ok(())
    }

    fn query_port(dev: &IbDevice<Self>, port: u32, attr: &mut PortAttr) -> Result {
        Self::check_port(port)?;
        let ndev = dev.shared.netdev().ok_or(ENODEV)?;
        params::fill_port_attr(attr, dev.shared.port.lock().cap_flags);
        attr.active_mtu = proto::mtu::ib_mtu_for_netdev(ndev.mtu());
        attr.phys_mtu = proto::mtu::ib_mtu_bytes(proto::mtu::IB_MTU_4096);
        if let Ok((speed, width)) = dev.eth_speed(port) {
            attr.set_active_speed(speed);
            attr.set_active_width(width);
        }
        let (state, phys) = if ndev.is_active() {
            (ib::PortState::Active, ib::PhysState::LinkUp)
        } else if ndev.is_up() {
            (ib::PortState::Down, ib::PhysState::Polling)
        } else {
            (ib::PortState::Down, ib::PhysState::Disabled)
        };
        attr.set_states(state, phys);
        Ok(())
    }

    fn port_immutable(_dev: &IbDevice<Self>, port: u32, imm: &mut PortImmutable) -> Result {
        Self::check_port(port)?;
        imm.set_core_caps(ib::CoreCapFlags::IBA_ROCE_UDP_ENCAP);
        imm.pkey_tbl_len = i32::from(params::PKEY_TABLE_LEN);
        imm.gid_tbl_len = params::GID_TABLE_LEN;
        imm.max_mad_size = ib::MAD_SIZE as u32;
        Ok(())
    }

    fn link_layer(_dev: &IbDevice<Self>, _port: u32) -> ib::LinkLayer {
        ib::LinkLayer::Ethernet
    }

    fn netdev(dev: &IbDevice<Self>, port: u32) -> Option<NetDevRef> {
        Self::check_port(port).ok()?;
        dev.shared.netdev()
    }

    fn query_pkey(_dev: &IbDevice<Self>, port: u32, index: u16) -> Result<u16> {
        Self::check_port(port)?;
        if index >= params::PKEY_TABLE_LEN {
            return Err(EINVAL);
        }
        Ok(proto::headers::DEFAULT_PKEY)
    }

    fn modify_device(
        dev: &IbDevice<Self>,
        mask: ib::DeviceModifyMask,
        attr: &DeviceModify,
    ) -> Result {
        let supported = ib::DeviceModifyMask::SYS_IMAGE_GUID | ib::DeviceModifyMask::NODE_DESC;
        if !mask.without(supported).is_empty() {
            return Err(EOPNOTSUPP);
        }
        if mask.contains(ib::DeviceModifyMask::SYS_IMAGE_GUID) {
            // The core passes the GUID in host order; the attribute is wire order.
            *dev.sys_image_guid.lock() = attr.sys_image_guid.to_be();
        }
        if mask.contains(ib::DeviceModifyMask::NODE_DESC) {
            dev.set_node_desc(&attr.node_desc);
        }
        Ok(())
    }

    fn modify_port(
        dev: &IbDevice<Self>,
        port: u32,
        mask: ib::PortModifyMask,
        attr: &PortModify,
    ) -> Result {
        Self::check_port(port)?;
        if !mask.without(ib::PortModifyMask::RESET_QKEY_CNTR).is_empty() {
            return Err(EOPNOTSUPP);
        }
        let mut p = dev.shared.port.lock();
        p.cap_flags = (p.cap_flags | attr.set_port_cap_mask) & !attr.clr_port_cap_mask;
        Ok(())
    }

    fn alloc_ucontext(_dev: &IbDevice<Self>) -> Result {
        Ok(())
    }

    fn dealloc_ucontext(_dev: &IbDevice<Self>) {}

    fn disassociate_ucontext(_dev: &IbDevice<Self>) {
        // Nothing left to revoke. Before calling this the core destroyed
        // every object of the context, and each `destroy_*` cancelled its
        // deferred work and released its rings. A ring the process still
        // maps is not zapped (the core only tracks IO mappings), but its
        // pages were inserted with their own references: the process keeps
        // pages nobody reads any more, and the mapping holds no module code
        // (see `ib::queue_buf`), so removal and `rmmod` need not wait.
    }

    // The verbs of the objects are in their rooms of `verbs/` (see the
    // module's documentation), as functions with the method's name and
    // signature: `pd`, `queues`, `qp` and `mem`.
    type Pd = RrxePd;
    type Cq = RrxeCq;
    type Qp = RrxeQp;

    fn alloc_pd(dev: &IbDevice<Self>, udata: Option<&Udata>) -> Result<RrxePd> {
        pd::alloc_pd(dev, udata)
    }

    fn dealloc_pd(pd: &Pd<Self>) -> Result {
        pd::dealloc_pd(pd)
    }

    fn create_cq(
        dev: &IbDevice<Self>,
        handle: CqHandle,
        attr: &CqInitAttr,
        udata: Option<&Udata>,
    ) -> Result<(RrxeCq, u32)> {
        queues::create_cq(dev, handle, attr, udata)
    }

    fn destroy_cq(cq: &Cq<Self>) -> Result {
        queues::destroy_cq(cq)
    }

    fn resize_cq(cq: &Cq<Self>, entries: u32, udata: Option<&Udata>) -> Result<u32> {
        queues::resize_cq(cq, entries, udata)
    }

    fn req_notify_cq(cq: &Cq<Self>, flags: ib::CqNotifyFlags) -> Result<i32> {
        queues::req_notify_cq(cq, flags)
    }

    fn poll_cq(cq: &Cq<Self>, wc: &mut [MaybeUninit<WorkCompletion>]) -> Result<usize> {
        queues::poll_cq(cq, wc)
    }

    fn create_qp(
        dev: &IbDevice<Self>,
        init: &mut QpInitAttr,
        binding: QpBinding<'_, Self>,
        udata: Option<&Udata>,
    ) -> Result<(RrxeQp, u32)> {
        qp::create_qp(dev, init, binding, udata)
    }

    fn modify_qp(qp: &Qp<Self>, attr: &QpAttr, mask: u32, udata: Option<&Udata>) -> Result {
        qp::modify_qp(qp, attr, mask, udata)
    }

    fn query_qp(qp: &Qp<Self>, attr: &mut QpAttr, init: &mut QpInitAttr) -> Result {
        qp::query_qp(qp, attr, init)
    }

    fn destroy_qp(qp: &Qp<Self>) -> Result {
        qp::destroy_qp(qp)
    }

    fn fill_res_qp_entry(qp: &Qp<Self>, msg: &mut ResMsg<'_>) -> Result {
        qp.inner.report().fill(msg)
    }

    fn post_send(qp: &Qp<Self>, wrs: Option<SendWrs<'_>>) -> Result<(), PostError> {
        qp::post_send(qp, wrs)
    }

    fn post_recv(qp: &Qp<Self>, wrs: Option<RecvWrs<'_>>) -> Result<(), PostError> {
        qp::post_recv(qp, wrs)
    }

    fn attach_mcast(qp: &Qp<Self>, mgid: &[u8; 16], mlid: u16) -> Result {
        qp::attach_mcast(qp, mgid, mlid)
    }

    fn detach_mcast(qp: &Qp<Self>, mgid: &[u8; 16], mlid: u16) -> Result {
        qp::detach_mcast(qp, mgid, mlid)
    }

    type Srq = RrxeSrq;

    fn create_srq(
        dev: &IbDevice<Self>,
        handle: SrqHandle,
        init: &mut ib::SrqInitAttr,
        udata: Option<&Udata>,
    ) -> Result<RrxeSrq> {
        queues::create_srq(dev, handle, init, udata)
    }

    fn modify_srq(
        srq: &Srq<Self>,
        attr: &mut ib::SrqAttr,
        mask: ib::SrqAttrMask,
        udata: Option<&Udata>,
    ) -> Result {
        queues::modify_srq(srq, attr, mask, udata)
    }

    fn query_srq(srq: &Srq<Self>, attr: &mut ib::SrqAttr) -> Result {
        queues::query_srq(srq, attr)
    }

    fn destroy_srq(srq: &Srq<Self>) -> Result {
        queues::destroy_srq(srq)
    }

    fn post_srq_recv(srq: &Srq<Self>, wrs: RecvWrs<'_>) -> Result<(), PostError> {
        queues::post_srq_recv(srq, wrs)
    }

    type Ah = RrxeAh;

    fn create_ah(
        dev: &IbDevice<Self>,
        pd: &Pd<Self>,
        attr: &AhAttr,
        sleepable: bool,
        udata: Option<&Udata>,
    ) -> Result<RrxeAh> {
        pd::create_ah(dev, pd, attr, sleepable, udata)
    }

    fn destroy_ah(ah: &Ah<Self>) -> Result {
        pd::destroy_ah(ah)
    }

    fn query_ah(ah: &Ah<Self>, attr: &mut ib::AhAttrRaw) -> Result {
        pd::query_ah(ah, attr)
    }

    fn modify_ah(ah: &Ah<Self>, attr: &AhAttr) -> Result {
        pd::modify_ah(ah, attr)
    }

    type Mr = RrxeMr;

    fn get_dma_mr(pd: &Pd<Self>, access: u32) -> Result<(RrxeMr, MrKeys)> {
        mem::get_dma_mr(pd, access)
    }

    fn reg_user_mr(
        pd: &Pd<Self>,
        start: u64,
        length: u64,
        iova: u64,
        access: u32,
        udata: Option<&Udata>,
    ) -> Result<(RrxeMr, MrKeys)> {
        mem::reg_user_mr(pd, start, length, iova, access, udata)
    }

    fn dereg_mr(mr: &Mr<Self>) -> Result {
        mem::dereg_mr(mr)
    }

    fn advise_mr(
        pd: &Pd<Self>,
        advice: ib::MrAdvice,
        flags: ib::AdviseMrFlags,
        sges: &[ib::KernelSge],
    ) -> Result {
        mem::advise_mr(pd, advice, flags, sges)
    }

    fn alloc_mr(pd: &Pd<Self>, mr_type: ib::MrType, max_num_sg: u32) -> Result<(RrxeMr, MrKeys)> {
        mem::alloc_mr(pd, mr_type, max_num_sg)
    }

    fn map_mr_sg_start(mr: &Mr<Self>, page_size: u32) -> Result {
        mem::map_mr_sg_start(mr, page_size)
    }

    fn mr_set_page(mr: &Mr<Self>, addr: u64) -> Result {
        mem::mr_set_page(mr, addr)
    }

    fn mr_mapped(mr: &Mr<Self>, iova: u64, length: u64) {
        mem::mr_mapped(mr, iova, length)
    }

    fn rereg_user_mr(
        mr: &Mr<Self>,
        flags: ib::MrReregFlags,
        access: u32,
        new_pd: Option<&Pd<Self>>,
    ) -> Result {
        mem::rereg_user_mr(mr, flags, access, new_pd)
    }

    type Mw = RrxeMw;

    fn alloc_mw(pd: &Pd<Self>, mw_type: u32) -> Result<(RrxeMw, u32)> {
        mem::alloc_mw(pd, mw_type)
    }

    fn dealloc_mw(mw: &Mw<Self>) -> Result {
        mem::dealloc_mw(mw)
    }

    fn hw_stat_names() -> &'static [ib::StatDesc] {
        &NAMES
    }

    fn hw_stats(dev: &IbDevice<Self>, port: u32, values: &mut [u64]) -> Result {
        Self::check_port(port)?;
        dev.shared.counters.read(values);
        Ok(())
    }

    fn counter_bind_qp(counter: &ib::RdmaCounter<Self>, qp: &Qp<Self>, port: u32) -> Result<u32> {
        counters::bind_qp(counter, qp, port)
    }

    fn counter_unbind_qp(qp: &Qp<Self>, port: u32) -> Result {
        counters::unbind_qp(qp, port)
    }

    fn counter_dealloc(counter: &ib::RdmaCounter<Self>) -> Result {
        counters::dealloc(counter)
    }

    fn counter_update_stats(counter: &ib::RdmaCounter<Self>, values: &mut [u64]) -> Result {
        counters::update_stats(counter, values)
    }

    fn process_mad(
        dev: &IbDevice<Self>,
        port: u32,
        mad: &[u8; mad::MAD_SIZE],
        out: &mut [u8; mad::MAD_SIZE],
    ) -> u32 {
        mad::process(mad, port, params::PORT, &dev.shared.counters.pma(), out)
    }

    fn enabled(dev: &IbDevice<Self>) -> Result {
        if let Some(ev) = dev.shared.update_state() {
            dev.port_event(params::PORT, ev);
        }
        if let Some(ndev) = dev.shared.netdev() {
            pr_info!("{}: added on {}\n", dev.name(), ndev.name());
        }
        Ok(())
    }
}
