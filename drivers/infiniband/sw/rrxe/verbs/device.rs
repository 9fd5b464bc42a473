// SPDX-License-Identifier: GPL-2.0

//! An rrxe device: one RoCEv2 port on top of one Ethernet netdev. Here are
//! the driver data of its `ib_device` and the verbs; the state the data path
//! and netdev events share with it is [`Shared`], in [`crate::transport::shared`].

use crate::{
    dev::ah::RrxeAh,
    dev::counters,
    dev::counters::ObjectCount,
    dev::params,
    dev::pd::RrxePd,
    dev::round_robin::RoundRobin,
    ffi::ib::{
        self, Ah, AhAttr, Cq, CqHandle, CqInitAttr, DeviceAttr, DeviceModify, IbDevice,
        KernelMemory, Mr, MrKeys, Mw, Operations, Pd, PortAttr, PortImmutable, PortModify,
        PostError, Qp, QpAttr, QpBinding, QpInitAttr, RecvWrs, SendWrs, Srq, SrqHandle, Udata,
        WorkCompletion,
    },
    ffi::net::NetDevRef,
    ffi::rt,
    logic::{self, mad, qp_state::QpType},
    mem::mr::{MrSpec, RrxeMr},
    mem::mw::RrxeMw,
    proto,
    queues::cq::RrxeCq,
    queues::srq::{RrxeSrq, SrqNumbers},
    registry,
    rx::tunnel,
    transport::control::QpLinks,
    transport::qp::{QpInner, RrxeQp},
    transport::shared::Shared,
};
use core::mem::MaybeUninit;
use kernel::{
    new_mutex, new_spinlock,
    prelude::*,
    sync::{Arc, Mutex, SpinLock},
};

/// The driver data of an rrxe `ib_device`.
#[pin_data(PinnedDrop)]
pub(crate) struct RrxeDevice {
    /// Registry key; the registry entry is removed when the device goes.
    pub(crate) id: u64,
    /// State shared with the registry.
    pub(crate) shared: Arc<Shared>,
    /// `sys_image_guid`, wire byte order.
    #[pin]
    sys_image_guid: SpinLock<u64>,
    /// Serialises QP creation, so that a number found free stays free while
    /// the QP is built (which sleeps, so it cannot happen under `qps`' lock).
    #[pin]
    qp_create: Mutex<()>,
    /// Where the search for a free QP number continues.
    next_qpn: RoundRobin,
    srqs: ObjectCount,
    srq_numbers: SrqNumbers,
    pds: ObjectCount,
    cqs: ObjectCount,
}

impl RrxeDevice {
    /// The initialiser for the data of a new device.
    pub(crate) fn new(id: u64, shared: Arc<Shared>, guid: u64) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            id,
            shared,
            sys_image_guid <- new_spinlock!(guid),
            qp_create <- new_mutex!(()),
            srqs: ObjectCount::new(),
            srq_numbers: SrqNumbers::new(),
            next_qpn: RoundRobin::new(),
            pds: ObjectCount::new(),
            cqs: ObjectCount::new(),
        })
    }

    /// Enters `qp` into the QP table under a free number (1 for GSI).
    fn insert_qp(
        &self,
        make: impl FnOnce(u32) -> Result<Arc<QpInner>>,
        gsi: bool,
    ) -> Result<Arc<QpInner>> {
        let _creating = self.qp_create.lock();
        let qpn = if gsi {
            if self.shared.qps.contains(1) {
                return Err(EINVAL);
            }
            1
        } else {
            self.free_qpn()?
        };
        let qp = make(qpn)?;
        self.shared.qps.store(qpn as usize, qp.clone())?;
        Ok(qp)
    }

    /// A QP number from `MIN_QPN` on that is not in use, searched
    /// round-robin so that a number is not reused right after its QP is
    /// destroyed. Runs under `qp_create`, so a number found free stays so.
    fn free_qpn(&self) -> Result<u32> {
        self.next_qpn
            .find(params::MIN_QPN, params::MAX_QP, |qpn| {
                !self.shared.qps.contains(qpn as usize)
            })
            .map(|(qpn, _)| qpn)
            .ok_or(ENOMEM)
    }

    fn check_port(port: u32) -> Result {
        if port == params::PORT {
            Ok(())
        } else {
            Err(EINVAL)
        }
    }
}

#[pinned_drop]
// The macro writes the `unsafe impl` that `PinnedDrop` requires.
#[allow(unsafe_code)]
impl PinnedDrop for RrxeDevice {
    fn drop(self: Pin<&mut Self>) {
        // Every QP is gone, so every group is empty by now; leave nothing
        // joined on the netdev in any case (and drop the QP references).
        self.shared.mcast.clear(self.shared.netdev().as_deref());
        tunnel::detach(&self.shared);
        registry::remove(self.id);
    }
}

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
            attr.active_speed = speed;
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
    type Pd = RrxePd;
    type Cq = RrxeCq;
    type Qp = RrxeQp;

    fn alloc_pd(dev: &IbDevice<Self>, _udata: Option<&Udata>) -> Result<RrxePd> {
        dev.pds.take(params::MAX_PD)?;
        Ok(RrxePd)
    }

    fn dealloc_pd(pd: &Pd<Self>) -> Result {
        pd.device::<Self>().pds.give();
        Ok(())
    }

    fn create_cq(
        dev: &IbDevice<Self>,
        handle: CqHandle,
        attr: &CqInitAttr,
        udata: Option<&Udata>,
    ) -> Result<(RrxeCq, u32)> {
        dev.cqs.take(params::MAX_CQ)?;
        RrxeCq::new(handle, attr, udata).inspect_err(|_| dev.cqs.give())
    }

    fn destroy_cq(cq: &Cq<Self>) -> Result {
        cq.inner.destroy();
        cq.device::<Self>().cqs.give();
        Ok(())
    }

    fn resize_cq(cq: &Cq<Self>, entries: u32, udata: Option<&Udata>) -> Result<u32> {
        cq.resize(entries, udata)
    }

    fn req_notify_cq(cq: &Cq<Self>, flags: ib::CqNotifyFlags) -> Result<i32> {
        cq.req_notify(flags)
    }

    fn poll_cq(cq: &Cq<Self>, wc: &mut [MaybeUninit<WorkCompletion>]) -> Result<usize> {
        cq.poll(wc)
    }

    fn create_qp(
        dev: &IbDevice<Self>,
        init: &mut QpInitAttr,
        binding: QpBinding<'_, Self>,
        udata: Option<&Udata>,
    ) -> Result<(RrxeQp, u32)> {
        let gsi = init.qp_type == QpType::Gsi.raw();
        let (Some(scq), Some(rcq)) = (binding.send_cq, binding.recv_cq) else {
            return Err(EINVAL);
        };
        let links = QpLinks {
            handle: binding.handle,
            send_cq: scq.inner.clone(),
            recv_cq: rcq.inner.clone(),
            srq: binding.srq.map(|s| s.inner.clone()),
            pd: binding.pd,
            dev: dev.shared.clone(),
        };
        let inner = dev.insert_qp(|qpn| QpInner::new(qpn, init, links, udata), gsi)?;
        let qpn = inner.qpn();
        Ok((RrxeQp { inner }, qpn))
    }

    fn modify_qp(qp: &Qp<Self>, attr: &QpAttr, mask: u32, _udata: Option<&Udata>) -> Result {
        qp.inner.modify(attr, mask)
    }

    fn query_qp(qp: &Qp<Self>, attr: &mut QpAttr, init: &mut QpInitAttr) -> Result {
        qp.inner.query(attr, init);
        Ok(())
    }

    fn destroy_qp(qp: &Qp<Self>) -> Result {
        // IBA o10-2.2.3, as rxe: not while attached to a multicast group
        // (the core already refuses, counting attachments in `usecnt`).
        if qp.inner.in_mcast_group() {
            return Err(EBUSY);
        }
        let removed = qp
            .device::<Self>()
            .shared
            .qps
            .remove(qp.inner.qpn() as usize);
        drop(removed);
        // Softirqs that found the QP in the table are done with it once a
        // grace period has passed (receive runs under RCU); then no
        // reference but ours is left, and the QP's queues are freed here,
        // in process context.
        rt::synchronize_rcu();
        qp.inner.destroy();
        Ok(())
    }

    fn post_send(qp: &Qp<Self>, wrs: Option<SendWrs<'_>>) -> Result<(), PostError> {
        QpInner::post_send::<Self>(&qp.inner, wrs)
    }

    fn post_recv(qp: &Qp<Self>, wrs: Option<RecvWrs<'_>>) -> Result<(), PostError> {
        qp.inner.post_recv(wrs)
    }

    fn attach_mcast(qp: &Qp<Self>, mgid: &[u8; 16], _mlid: u16) -> Result {
        check_mcast(qp, mgid)?;
        let shared = &qp.device::<Self>().shared;
        shared
            .mcast
            .attach(&qp.inner, mgid, shared.netdev().as_deref())
    }

    fn detach_mcast(qp: &Qp<Self>, mgid: &[u8; 16], _mlid: u16) -> Result {
        check_mcast(qp, mgid)?;
        let shared = &qp.device::<Self>().shared;
        shared
            .mcast
            .detach(&qp.inner, mgid, shared.netdev().as_deref())
    }

    type Srq = RrxeSrq;

    fn create_srq(
        dev: &IbDevice<Self>,
        handle: SrqHandle,
        init: &mut ib::SrqInitAttr,
        udata: Option<&Udata>,
    ) -> Result<RrxeSrq> {
        dev.srqs.take(params::MAX_SRQ)?;
        RrxeSrq::new(&dev.srq_numbers, handle, init, udata).inspect_err(|_| dev.srqs.give())
    }

    fn modify_srq(
        srq: &Srq<Self>,
        attr: &mut ib::SrqAttr,
        mask: ib::SrqAttrMask,
        udata: Option<&Udata>,
    ) -> Result {
        srq.modify(attr, mask, udata)
    }

    fn query_srq(srq: &Srq<Self>, attr: &mut ib::SrqAttr) -> Result {
        srq.query(attr);
        Ok(())
    }

    fn destroy_srq(srq: &Srq<Self>) -> Result {
        srq.device::<Self>().srqs.give();
        Ok(())
    }

    fn post_srq_recv(srq: &Srq<Self>, wrs: RecvWrs<'_>) -> Result<(), PostError> {
        srq.post(wrs)
    }

    type Ah = RrxeAh;

    fn create_ah(
        dev: &IbDevice<Self>,
        pd: &Pd<Self>,
        attr: &AhAttr,
        sleepable: bool,
        udata: Option<&Udata>,
    ) -> Result<RrxeAh> {
        dev.shared
            .ahs
            .create(pd.as_raw() as usize, attr, sleepable, udata)
    }

    fn destroy_ah(ah: &Ah<Self>) -> Result {
        ah.device::<Self>().shared.ahs.remove(&ah.inner);
        Ok(())
    }

    fn query_ah(ah: &Ah<Self>, attr: &mut ib::AhAttrRaw) -> Result {
        *attr = *ah.inner.attr().get();
        Ok(())
    }

    fn modify_ah(ah: &Ah<Self>, attr: &AhAttr) -> Result {
        ah.inner.modify(attr)
    }

    type Mr = RrxeMr;

    fn get_dma_mr(pd: &Pd<Self>, access: u32) -> Result<(RrxeMr, MrKeys)> {
        let kmem = KernelMemory::for_pd::<Self>(pd)?;
        let spec = MrSpec::dma(pd.as_raw() as usize, kmem, access)?;
        let inner = pd.device::<Self>().shared.mrs.insert_spec(spec)?;
        let keys = inner.keys();
        Ok((RrxeMr { inner }, keys))
    }

    fn reg_user_mr(
        pd: &Pd<Self>,
        start: u64,
        length: u64,
        iova: u64,
        access: u32,
        _udata: Option<&Udata>,
    ) -> Result<(RrxeMr, MrKeys)> {
        let dev = pd.device::<Self>();
        let spec = MrSpec::user(dev, pd.as_raw() as usize, start, length, iova, access)?;
        let inner = dev.shared.mrs.insert_spec(spec)?;
        let keys = inner.keys();
        Ok((RrxeMr { inner }, keys))
    }

    fn dereg_mr(mr: &Mr<Self>) -> Result {
        // Refused while memory windows are bound (as rxe); afterwards no
        // window can bind to it.
        mr.inner.start_dereg()?;
        mr.device::<Self>().shared.mrs.remove(&mr.inner);
        // The data path only holds an MR while it copies, under RCU (see
        // destroy_qp): after a grace period the pages are ours to unpin.
        rt::synchronize_rcu();
        Ok(())
    }

    fn alloc_mr(pd: &Pd<Self>, mr_type: ib::MrType, max_num_sg: u32) -> Result<(RrxeMr, MrKeys)> {
        let kmem = KernelMemory::for_pd::<Self>(pd)?;
        let spec = MrSpec::fast(pd.as_raw() as usize, kmem, mr_type, max_num_sg)?;
        let inner = pd.device::<Self>().shared.mrs.insert_spec(spec)?;
        let keys = inner.keys();
        Ok((RrxeMr { inner }, keys))
    }

    fn map_mr_sg_start(mr: &Mr<Self>, page_size: u32) -> Result {
        mr.inner.start_pages(page_size)
    }

    fn mr_set_page(mr: &Mr<Self>, addr: u64) -> Result {
        mr.inner.add_page(addr)
    }

    fn mr_mapped(mr: &Mr<Self>, iova: u64, length: u64) {
        mr.inner.set_mapping(iova, length);
    }

    fn rereg_user_mr(
        mr: &Mr<Self>,
        flags: ib::MrReregFlags,
        _access: u32,
        new_pd: Option<&Pd<Self>>,
    ) -> Result {
        // As rxe: only moving to another PD (new access rights or pages
        // would race with the data path's use of the region).
        if !flags.without(ib::MrReregFlags::PD).is_empty() {
            return Err(EOPNOTSUPP);
        }
        if let Some(pd) = new_pd {
            mr.inner.set_pd(pd.as_raw() as usize);
        }
        Ok(())
    }

    type Mw = RrxeMw;

    fn alloc_mw(pd: &Pd<Self>, mw_type: u32) -> Result<(RrxeMw, u32)> {
        let inner = pd
            .device::<Self>()
            .shared
            .mws
            .alloc(pd.as_raw() as usize, mw_type)?;
        let rkey = inner.rkey();
        Ok((RrxeMw { inner }, rkey))
    }

    fn dealloc_mw(mw: &Mw<Self>) -> Result {
        mw.device::<Self>().shared.mws.dealloc(&mw.inner);
        Ok(())
    }

    fn hw_stat_names() -> &'static [ib::StatDesc] {
        &counters::NAMES
    }

    fn hw_stats(dev: &IbDevice<Self>, port: u32, values: &mut [u64]) -> Result {
        Self::check_port(port)?;
        dev.shared.counters.read(values);
        Ok(())
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

/// What the core checks before attaching or detaching (a UD QP, a
/// multicast GID), checked again: `EINVAL` otherwise.
fn check_mcast(qp: &Qp<RrxeDevice>, mgid: &[u8; 16]) -> Result {
    if qp.inner.ty == QpType::Ud && logic::mcast::is_multicast(mgid) {
        Ok(())
    } else {
        Err(EINVAL)
    }
}
