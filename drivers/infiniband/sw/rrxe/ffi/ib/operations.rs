// SPDX-License-Identifier: GPL-2.0

//! The operations of an RDMA device: the [`Operations`] trait a driver
//! implements, with the types its methods take and return. The C callbacks
//! that call it are in [`super::vtable`].

use crate::ffi::net::NetDevRef;
use crate::ffi::sys;
use core::mem::MaybeUninit;
use kernel::{error::VTABLE_DEFAULT_ERROR, prelude::*};

use super::{
    counter::RdmaCounter,
    handle::SrqHandle,
    stats::StatDesc,
    wr::{RecvWrs, SendWrs},
    AdviseMrFlags, Ah, AhAttr, Cq, CqHandle, CqInitAttr, CqNotifyFlags, DeviceAttr, DeviceModify,
    DeviceModifyMask, DriverId, IbDevice, KernelSge, LinkLayer, Mr, MrAdvice, MrReregFlags, MrType,
    Mw, Pd, PortAttr, PortImmutable, PortModify, PortModifyMask, Qp, QpAttr, QpHandle, QpInitAttr,
    ResMsg, Srq, SrqAttrMask, Udata, WorkCompletion, MAD_SIZE,
};

/// What `create_qp` gets besides the attributes: the objects the new QP is
/// bound to (the core holds them for the QP's lifetime) and its handle.
pub(crate) struct QpBinding<'a, T: Operations> {
    pub(crate) handle: QpHandle,
    /// The QP's PD (its address: an identity, never dereferenced).
    pub(crate) pd: usize,
    pub(crate) send_cq: Option<&'a Cq<T>>,
    pub(crate) recv_cq: Option<&'a Cq<T>>,
    pub(crate) srq: Option<&'a Srq<T>>,
}

/// A refused post: how many requests of the chain were queued before the
/// one that failed, and why it failed.
pub(crate) struct PostError {
    pub(crate) posted: usize,
    pub(crate) err: Error,
}

/// The keys of a new memory region.
#[derive(Clone, Copy)]
pub(crate) struct MrKeys {
    /// L_Key.
    pub(crate) lkey: u32,
    /// R_Key (0 without remote access).
    pub(crate) rkey: u32,
}
/// The operations of an RDMA device. Operations a driver does not implement
/// are left out of the C ops table, so the core answers `EOPNOTSUPP` to them.
#[vtable]
pub(crate) trait Operations: Sized + Send + Sync {
    /// The driver id reported to userspace.
    const DRIVER_ID: DriverId;
    /// ABI version the userspace provider checks.
    const UVERBS_ABI_VER: u32;

    /// Fills the device attributes.
    fn query_device(dev: &IbDevice<Self>, attr: &mut DeviceAttr) -> Result;
    /// Fills the attributes of `port`.
    fn query_port(dev: &IbDevice<Self>, port: u32, attr: &mut PortAttr) -> Result;
    /// Fills the immutable properties of `port`.
    fn port_immutable(dev: &IbDevice<Self>, port: u32, imm: &mut PortImmutable) -> Result;
    /// The link layer of `port`.
    fn link_layer(dev: &IbDevice<Self>, port: u32) -> LinkLayer;
    /// The net device behind `port`, if any.
    fn netdev(_dev: &IbDevice<Self>, _port: u32) -> Option<NetDevRef> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// The P_Key at `index` of `port`'s table.
    fn query_pkey(_dev: &IbDevice<Self>, _port: u32, _index: u16) -> Result<u16> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Applies `mask`ed changes to the device.
    fn modify_device(
        _dev: &IbDevice<Self>,
        _mask: DeviceModifyMask,
        _attr: &DeviceModify,
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Applies `mask`ed changes to `port`.
    fn modify_port(
        _dev: &IbDevice<Self>,
        _port: u32,
        _mask: PortModifyMask,
        _attr: &PortModify,
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// A user process opened the device.
    fn alloc_ucontext(_dev: &IbDevice<Self>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// The user context is gone.
    fn dealloc_ucontext(_dev: &IbDevice<Self>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// The device is being removed while a process still has it open: drop
    /// every mapping of the context. Implementing this lets removal proceed
    /// without waiting for the process to exit.
    fn disassociate_ucontext(_dev: &IbDevice<Self>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Adds the driver's attributes of `qp` to the message the core is
    /// building for `rdma res show qp -dd`. Called between the QP's creation
    /// and its destroy (the core drains its resource tracking first).
    fn fill_res_qp_entry(_qp: &Qp<Self>, _msg: &mut ResMsg<'_>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Registration finished and the device is visible.
    fn enabled(_dev: &IbDevice<Self>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// The names of a port's hardware counters.
    fn hw_stat_names() -> &'static [StatDesc] {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Reads `port`'s counters into `values` (in the order of the names).
    fn hw_stats(_dev: &IbDevice<Self>, _port: u32, _values: &mut [u64]) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Binds `qp` to `counter` on `port` (`rdma statistic qp bind`, or the
    /// core's auto mode as the QP moves to INIT): from now on the QP's
    /// events are counted in the counter and no longer in the port's
    /// [`Operations::hw_stats`], which the core adds the counters to.
    /// Returns the counter's number: `counter.id()`, or a new one, unique
    /// on the device, when that is 0 (its first bind). The core holds the
    /// counter's lock; the abstraction records the binding in the core's QP.
    /// A driver that implements this implements the other `counter_`
    /// operations and [`Operations::hw_stat_names`] too.
    fn counter_bind_qp(_counter: &RdmaCounter<Self>, _qp: &Qp<Self>, _port: u32) -> Result<u32> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Unbinds `qp` from its counter: its events go to the port's counters
    /// again. The core holds the counter's lock; it unbinds a bound QP
    /// before `destroy_qp`.
    fn counter_unbind_qp(_qp: &Qp<Self>, _port: u32) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// The counter's last QP was unbound and the core has read its values
    /// a last time (into the port's history): the driver forgets it. Not
    /// called for a counter whose first bind failed.
    fn counter_dealloc(_counter: &RdmaCounter<Self>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Reads the counter's values into `values`, in the order of
    /// [`Operations::hw_stat_names`]: the core adds a counter's values to
    /// the port's index by index, so both have the same names.
    fn counter_update_stats(_counter: &RdmaCounter<Self>, _values: &mut [u64]) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Answers a management datagram addressed to `port` itself; returns
    /// the `IB_MAD_RESULT_*` flags.
    fn process_mad(
        _dev: &IbDevice<Self>,
        _port: u32,
        _mad: &[u8; MAD_SIZE],
        _out: &mut [u8; MAD_SIZE],
    ) -> u32 {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Driver data of a protection domain.
    type Pd: Send + Sync;
    /// Driver data of a completion queue.
    type Cq: Send + Sync;
    /// Driver data of a queue pair.
    type Qp: Send + Sync;

    /// Creates a protection domain.
    fn alloc_pd(_dev: &IbDevice<Self>, _udata: Option<&Udata>) -> Result<Self::Pd> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Destroys a protection domain; its data is dropped right after.
    fn dealloc_pd(_pd: &Pd<Self>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Creates a completion queue; returns its data and its capacity.
    fn create_cq(
        _dev: &IbDevice<Self>,
        _handle: CqHandle,
        _attr: &CqInitAttr,
        _udata: Option<&Udata>,
    ) -> Result<(Self::Cq, u32)> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Destroys a completion queue; its data is dropped right after.
    fn destroy_cq(_cq: &Cq<Self>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Resizes a user completion queue; returns the new capacity.
    fn resize_cq(_cq: &Cq<Self>, _entries: u32, _udata: Option<&Udata>) -> Result<u32> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Arms the completion event as `flags` ask; returns 1 if completions
    /// may have been missed and [`CqNotifyFlags::REPORT_MISSED_EVENTS`] was
    /// asked.
    fn req_notify_cq(_cq: &Cq<Self>, _flags: CqNotifyFlags) -> Result<i32> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Moves up to `wc.len()` completions of a kernel CQ into `wc`;
    /// returns how many.
    fn poll_cq(_cq: &Cq<Self>, _wc: &mut [MaybeUninit<WorkCompletion>]) -> Result<usize> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Creates a queue pair; returns its data and its number. May update
    /// `init.cap` with the actual capabilities.
    fn create_qp(
        _dev: &IbDevice<Self>,
        _init: &mut QpInitAttr,
        _binding: QpBinding<'_, Self>,
        _udata: Option<&Udata>,
    ) -> Result<(Self::Qp, u32)> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Applies `mask`ed attributes to a queue pair.
    fn modify_qp(_qp: &Qp<Self>, _attr: &QpAttr, _mask: u32, _udata: Option<&Udata>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Reports a queue pair's attributes.
    fn query_qp(_qp: &Qp<Self>, _attr: &mut QpAttr, _init: &mut QpInitAttr) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Destroys a queue pair; its data is dropped right after.
    fn destroy_qp(_qp: &Qp<Self>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Posts send requests: a kernel consumer's chain (`ib_post_send`), or
    /// `None` for a user doorbell (the provider has already written its
    /// WQEs into the mapped ring).
    fn post_send(_qp: &Qp<Self>, _wrs: Option<SendWrs<'_>>) -> Result<(), PostError> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Posts receive requests; as [`Operations::post_send`].
    fn post_recv(_qp: &Qp<Self>, _wrs: Option<RecvWrs<'_>>) -> Result<(), PostError> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Attaches a queue pair to the multicast group `mgid` (IBA 11.3.1).
    /// The core has checked that the QP is UD and `mgid` a multicast GID;
    /// `mlid` is the group's LID, which means nothing on Ethernet. Once it
    /// succeeds the core refuses to destroy the QP until it is detached.
    fn attach_mcast(_qp: &Qp<Self>, _mgid: &[u8; 16], _mlid: u16) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Detaches a queue pair from the multicast group `mgid` (IBA 11.3.2);
    /// checked by the core as [`Operations::attach_mcast`].
    fn detach_mcast(_qp: &Qp<Self>, _mgid: &[u8; 16], _mlid: u16) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Driver data of a shared receive queue.
    type Srq: Send + Sync;

    /// Creates an SRQ; may raise `init.attr` to the actual sizes.
    fn create_srq(
        _dev: &IbDevice<Self>,
        _handle: SrqHandle,
        _init: &mut sys::ib_srq_init_attr,
        _udata: Option<&Udata>,
    ) -> Result<Self::Srq> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Changes an SRQ's size or limit, as `mask` asks.
    fn modify_srq(
        _srq: &Srq<Self>,
        _attr: &mut sys::ib_srq_attr,
        _mask: SrqAttrMask,
        _udata: Option<&Udata>,
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Reports an SRQ's attributes.
    fn query_srq(_srq: &Srq<Self>, _attr: &mut sys::ib_srq_attr) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Destroys an SRQ; its data is dropped right after.
    fn destroy_srq(_srq: &Srq<Self>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Posts a kernel consumer's receive requests on an SRQ.
    fn post_srq_recv(_srq: &Srq<Self>, _wrs: RecvWrs<'_>) -> Result<(), PostError> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Driver data of an address handle.
    type Ah: Send + Sync;

    /// Creates an address handle in the PD `pd`. `sleepable` is false when
    /// a kernel consumer creates it in atomic context (allocate with
    /// `GFP_ATOMIC`).
    fn create_ah(
        _dev: &IbDevice<Self>,
        _pd: &Pd<Self>,
        _attr: &AhAttr,
        _sleepable: bool,
        _udata: Option<&Udata>,
    ) -> Result<Self::Ah> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Destroys an address handle; its data is dropped right after.
    fn destroy_ah(_ah: &Ah<Self>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Reports an address handle's attributes.
    fn query_ah(_ah: &Ah<Self>, _attr: &mut super::AhAttrRaw) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Replaces an address handle's address vector (kernel consumers).
    fn modify_ah(_ah: &Ah<Self>, _attr: &AhAttr) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Driver data of a memory region.
    type Mr: Send + Sync;

    /// Creates the all-of-memory region of a kernel consumer.
    fn get_dma_mr(_pd: &Pd<Self>, _access: u32) -> Result<(Self::Mr, MrKeys)> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Registers `[start, start + length)` of the calling process, to be
    /// addressed as `iova`.
    fn reg_user_mr(
        _pd: &Pd<Self>,
        _start: u64,
        _length: u64,
        _iova: u64,
        _access: u32,
        _udata: Option<&Udata>,
    ) -> Result<(Self::Mr, MrKeys)> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Advises about ranges of memory regions of `pd` (`ibv_advise_mr`):
    /// `sges` name them by L_Key, address and length; with
    /// [`AdviseMrFlags::FLUSH`], before returning and reporting errors.
    fn advise_mr(
        _pd: &Pd<Self>,
        _advice: MrAdvice,
        _flags: AdviseMrFlags,
        _sges: &[KernelSge],
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Deregisters a memory region; its data is dropped right after.
    fn dereg_mr(_mr: &Mr<Self>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Changes a user MR in place, as `flags` ask: `new_pd` is the PD it
    /// moves to, if asked.
    fn rereg_user_mr(
        _mr: &Mr<Self>,
        _flags: MrReregFlags,
        _access: u32,
        _new_pd: Option<&Pd<Self>>,
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Creates a fast-registration MR of `mr_type` for up to `max_num_sg`
    /// pages, to be registered by `REG_MR` work requests.
    fn alloc_mr(_pd: &Pd<Self>, _mr_type: MrType, _max_num_sg: u32) -> Result<(Self::Mr, MrKeys)> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Starts a new page list of `page_size`-byte pages on a fast MR
    /// (`ib_map_mr_sg`); the core then passes each page to `mr_set_page`.
    fn map_mr_sg_start(_mr: &Mr<Self>, _page_size: u32) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Appends the page at DMA address `addr` to a fast MR's page list.
    fn mr_set_page(_mr: &Mr<Self>, _addr: u64) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// `ib_map_mr_sg` mapped `[iova, iova + length)` onto the page list
    /// (what a later `REG_MR` work request registers).
    fn mr_mapped(_mr: &Mr<Self>, _iova: u64, _length: u64) {}

    /// Driver data of a memory window.
    type Mw: Send + Sync;

    /// Creates a memory window of `mw_type` (`IB_MW_TYPE_*`); returns its
    /// data and R_Key.
    fn alloc_mw(_pd: &Pd<Self>, _mw_type: u32) -> Result<(Self::Mw, u32)> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Destroys a memory window; its data is dropped right after.
    fn dealloc_mw(_mw: &Mw<Self>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}
