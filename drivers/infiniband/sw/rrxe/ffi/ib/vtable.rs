// SPDX-License-Identifier: GPL-2.0

//! The C side of [`Operations`]: [`OperationsVTable`], the `extern "C"`
//! callbacks the RDMA core calls through `struct ib_device_ops`, their
//! common contract, and the construction of that table.

use crate::ffi::sys;
use core::{marker::PhantomData, mem::MaybeUninit};
use kernel::{error::from_result, prelude::*};

use super::{
    counter::RdmaCounter,
    handle::SrqHandle,
    queue_buf,
    stats::StatDesc,
    wr::{RecvWrs, SendWrs},
    AdviseMrFlags, Ah, AhAttr, Cq, CqHandle, CqNotifyFlags, DeviceModifyMask, IbDevice, Mr,
    MrAdvice, MrKeys, MrReregFlags, MrType, Mw, Object, Operations, Pd, PortModifyMask, PostError,
    Qp, QpBinding, QpHandle, ResMsg, Srq, SrqAttrMask, Udata, WorkCompletion, MAD_SIZE,
};

/// An ops-table entry: the trampoline if the driver implements the
/// operation, else NULL (the core then answers `EOPNOTSUPP`).
macro_rules! op {
    ($implemented:expr, $f:expr) => {
        if $implemented {
            Some($f)
        } else {
            None
        }
    };
}

/// The common body of the destroy operations: runs the driver's `destroy`
/// and, if it succeeded, drops the object's data (the core frees the block
/// next). On failure the object stays as it was.
///
/// # Safety
///
/// `ptr` is the C struct of a live `Object<C, D>` whose data is initialised
/// and which the core is destroying.
unsafe fn destroy<C, D>(ptr: *mut C, f: impl FnOnce(&Object<C, D>) -> Result) -> i32 {
    from_result(|| {
        // SAFETY: guaranteed by the caller.
        f(unsafe { Object::<C, D>::from_raw(ptr) })?;
        // SAFETY: destroyed and no longer used.
        unsafe { Object::<C, D>::drop_data(ptr) };
        Ok(0)
    })
}

/// Wraps a udata pointer from the core.
///
/// # Safety
///
/// `ptr` is NULL or valid for the duration of the current callback.
unsafe fn udata(ptr: *mut sys::ib_udata) -> Option<Udata> {
    // SAFETY: guaranteed by the caller.
    unsafe { Udata::from_raw(ptr) }
}

/// The C side of an [`Operations`] implementation: the callbacks the RDMA
/// core calls, and the `struct ib_device_ops` table made of them
/// ([`OperationsVTable::build`]).
///
/// Each callback converts its raw arguments, calls the matching method of
/// [`Operations`] and converts the result back. What each one means is
/// documented with `struct ib_device_ops` in `include/rdma/ib_verbs.h`.
///
/// # Callback contract
///
/// Every `unsafe extern "C"` function of this type has the same contract,
/// stated here once; the documentation of each, and the comments that
/// justify its `unsafe` blocks, refer to it as "the callback contract":
///
/// - It is called only by the RDMA core, through the ops table of an
///   [`IbDevice<T>`] (which [`Unregistered::new`] installs), as the
///   `struct ib_device_ops` field its documentation names, with the
///   arguments the core passes to that field: pointers valid for the
///   duration of the call, out-parameters exclusive to it.
/// - The core calls a device's operations only between the installation of
///   the table and `dealloc_driver`, while its data `T` is initialised, so
///   `IbDevice::from_raw` is sound on the `struct ib_device` it passes, and
///   on the `device` field of any object it passes (an object belongs to
///   the device it was created on, one of ours).
/// - The core allocates each PD, CQ, QP, SRQ, AH and MW as a block of the
///   `size_ib_*` bytes [`OperationsVTable::build`] asks for, so
///   `Object::init` is sound on an object being created; it calls an
///   object's other operations only between its create and its destroy, so
///   `Object::from_raw` is sound on it. MRs are allocated by `new_mr` and
///   used by the core until `dereg_mr`.
///
/// [`Unregistered::new`]: super::Unregistered::new
pub(super) struct OperationsVTable<T: Operations>(PhantomData<T>);

impl<T: Operations> OperationsVTable<T> {
    /// The ops table of an `IbDevice<T>`: the callbacks of the operations
    /// `T` implements, NULL for the others. Returned by value: the caller
    /// sets `owner`, and `ib_set_device_ops` copies the table.
    pub(super) fn build() -> sys::ib_device_ops {
        // The core calls `counter_init` and `counter_alloc_stats` whenever
        // it has `counter_dealloc`, and binds through all of them: a driver
        // has the counter operations together, and the port's names.
        const {
            let bind = T::HAS_COUNTER_BIND_QP;
            assert!(
                bind == T::HAS_COUNTER_UNBIND_QP
                    && bind == T::HAS_COUNTER_DEALLOC
                    && bind == T::HAS_COUNTER_UPDATE_STATS
                    && (!bind || T::HAS_HW_STAT_NAMES)
            );
        };
        sys::ib_device_ops {
            driver_id: T::DRIVER_ID as u32,
            uverbs_abi_ver: T::UVERBS_ABI_VER,
            size_ib_ucontext: size_of::<sys::ib_ucontext>(),
            query_device: Some(Self::query_device),
            query_port: Some(Self::query_port),
            get_port_immutable: Some(Self::port_immutable),
            get_link_layer: Some(Self::link_layer),
            get_netdev: op!(T::HAS_NETDEV, Self::netdev),
            query_pkey: op!(T::HAS_QUERY_PKEY, Self::query_pkey),
            modify_device: op!(T::HAS_MODIFY_DEVICE, Self::modify_device),
            modify_port: op!(T::HAS_MODIFY_PORT, Self::modify_port),
            alloc_ucontext: op!(T::HAS_ALLOC_UCONTEXT, Self::alloc_ucontext),
            dealloc_ucontext: op!(T::HAS_DEALLOC_UCONTEXT, Self::dealloc_ucontext),
            disassociate_ucontext: op!(T::HAS_DISASSOCIATE_UCONTEXT, Self::disassociate_ucontext),
            enable_driver: op!(T::HAS_ENABLED, Self::enable_driver),
            alloc_hw_port_stats: op!(T::HAS_HW_STAT_NAMES, Self::alloc_hw_port_stats),
            get_hw_stats: op!(T::HAS_HW_STATS, Self::get_hw_stats),
            fill_res_qp_entry: op!(T::HAS_FILL_RES_QP_ENTRY, Self::fill_res_qp_entry),
            process_mad: op!(T::HAS_PROCESS_MAD, Self::process_mad),
            counter_bind_qp: op!(T::HAS_COUNTER_BIND_QP, Self::counter_bind_qp),
            counter_unbind_qp: op!(T::HAS_COUNTER_UNBIND_QP, Self::counter_unbind_qp),
            counter_dealloc: op!(T::HAS_COUNTER_DEALLOC, Self::counter_dealloc),
            counter_alloc_stats: op!(T::HAS_COUNTER_DEALLOC, Self::counter_alloc_stats),
            counter_update_stats: op!(T::HAS_COUNTER_UPDATE_STATS, Self::counter_update_stats),
            counter_init: op!(T::HAS_COUNTER_DEALLOC, Self::counter_init),
            size_rdma_counter: size_of::<sys::rdma_counter>(),
            dealloc_driver: Some(Self::dealloc_driver),
            mmap: Some(queue_buf::mmap),
            mmap_free: Some(queue_buf::mmap_free),
            size_ib_pd: size_of::<Pd<T>>(),
            size_ib_cq: size_of::<Cq<T>>(),
            size_ib_qp: size_of::<Qp<T>>(),
            size_ib_ah: size_of::<Ah<T>>(),
            size_ib_srq: size_of::<Srq<T>>(),
            size_ib_mw: size_of::<Mw<T>>(),
            alloc_mw: op!(T::HAS_ALLOC_MW, Self::alloc_mw),
            dealloc_mw: op!(T::HAS_DEALLOC_MW, Self::dealloc_mw),
            rereg_user_mr: op!(T::HAS_REREG_USER_MR, Self::rereg_user_mr),
            alloc_mr: op!(T::HAS_ALLOC_MR, Self::alloc_mr),
            map_mr_sg: op!(T::HAS_MAP_MR_SG_START, Self::map_mr_sg),
            post_srq_recv: op!(T::HAS_POST_SRQ_RECV, Self::post_srq_recv),
            create_srq: op!(T::HAS_CREATE_SRQ, Self::create_srq),
            modify_srq: op!(T::HAS_MODIFY_SRQ, Self::modify_srq),
            query_srq: op!(T::HAS_QUERY_SRQ, Self::query_srq),
            destroy_srq: op!(T::HAS_DESTROY_SRQ, Self::destroy_srq),
            create_ah: op!(T::HAS_CREATE_AH, Self::create_ah),
            create_user_ah: op!(T::HAS_CREATE_AH, Self::create_ah),
            destroy_ah: op!(T::HAS_DESTROY_AH, Self::destroy_ah),
            query_ah: op!(T::HAS_QUERY_AH, Self::query_ah),
            modify_ah: op!(T::HAS_MODIFY_AH, Self::modify_ah),
            alloc_pd: op!(T::HAS_ALLOC_PD, Self::alloc_pd),
            dealloc_pd: op!(T::HAS_DEALLOC_PD, Self::dealloc_pd),
            create_cq: op!(T::HAS_CREATE_CQ, Self::create_cq),
            destroy_cq: op!(T::HAS_DESTROY_CQ, Self::destroy_cq),
            resize_user_cq: op!(T::HAS_RESIZE_CQ, Self::resize_cq),
            req_notify_cq: op!(T::HAS_REQ_NOTIFY_CQ, Self::req_notify_cq),
            poll_cq: op!(T::HAS_POLL_CQ, Self::poll_cq),
            create_qp: op!(T::HAS_CREATE_QP, Self::create_qp),
            modify_qp: op!(T::HAS_MODIFY_QP, Self::modify_qp),
            query_qp: op!(T::HAS_QUERY_QP, Self::query_qp),
            destroy_qp: op!(T::HAS_DESTROY_QP, Self::destroy_qp),
            post_send: op!(T::HAS_POST_SEND, Self::post_send),
            attach_mcast: op!(T::HAS_ATTACH_MCAST, Self::attach_mcast),
            detach_mcast: op!(T::HAS_DETACH_MCAST, Self::detach_mcast),
            get_dma_mr: op!(T::HAS_GET_DMA_MR, Self::get_dma_mr),
            reg_user_mr: op!(T::HAS_REG_USER_MR, Self::reg_user_mr),
            dereg_mr: op!(T::HAS_DEREG_MR, Self::dereg_mr),
            advise_mr: op!(T::HAS_ADVISE_MR, Self::advise_mr),
            post_recv: op!(T::HAS_POST_RECV, Self::post_recv),
            ..Default::default()
        }
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `query_device`.
    unsafe extern "C" fn query_device(
        ibdev: *mut sys::ib_device,
        attr: *mut sys::ib_device_attr,
        _udata: *mut sys::ib_udata,
    ) -> i32 {
        // SAFETY: the callback contract; `attr` is a valid, exclusive
        // out-parameter.
        from_result(|| unsafe {
            T::query_device(IbDevice::from_raw(ibdev), &mut *attr).map(|()| 0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `query_port`.
    unsafe extern "C" fn query_port(
        ibdev: *mut sys::ib_device,
        port: u32,
        attr: *mut sys::ib_port_attr,
    ) -> i32 {
        // SAFETY: the callback contract; `attr` is a valid, exclusive
        // out-parameter.
        from_result(|| unsafe {
            T::query_port(IbDevice::from_raw(ibdev), port, &mut *attr).map(|()| 0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as
    /// `get_port_immutable`.
    unsafe extern "C" fn port_immutable(
        ibdev: *mut sys::ib_device,
        port: u32,
        imm: *mut sys::ib_port_immutable,
    ) -> i32 {
        // SAFETY: the callback contract; `imm` is a valid, exclusive
        // out-parameter.
        from_result(|| unsafe {
            T::port_immutable(IbDevice::from_raw(ibdev), port, &mut *imm).map(|()| 0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `get_link_layer`.
    unsafe extern "C" fn link_layer(ibdev: *mut sys::ib_device, port: u32) -> u32 {
        // SAFETY: the callback contract.
        T::link_layer(unsafe { IbDevice::from_raw(ibdev) }, port) as u32
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `get_netdev`.
    unsafe extern "C" fn netdev(ibdev: *mut sys::ib_device, port: u32) -> *mut sys::net_device {
        // SAFETY: the callback contract.
        match T::netdev(unsafe { IbDevice::from_raw(ibdev) }, port) {
            // The core releases the reference with dev_put().
            Some(ndev) => ndev.into_raw(),
            None => core::ptr::null_mut(),
        }
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `query_pkey`.
    unsafe extern "C" fn query_pkey(
        ibdev: *mut sys::ib_device,
        port: u32,
        index: u16,
        pkey: *mut u16,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract.
            let value = T::query_pkey(unsafe { IbDevice::from_raw(ibdev) }, port, index)?;
            // SAFETY: `pkey` is a valid out-parameter.
            unsafe { pkey.write(value) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `modify_device`.
    unsafe extern "C" fn modify_device(
        ibdev: *mut sys::ib_device,
        mask: i32,
        attr: *mut sys::ib_device_modify,
    ) -> i32 {
        // The flags of an `int` mask, bit for bit.
        let mask = DeviceModifyMask::from_raw(mask as u32);
        // SAFETY: the callback contract; `attr` is valid for reads.
        from_result(|| unsafe {
            T::modify_device(IbDevice::from_raw(ibdev), mask, &*attr).map(|()| 0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `modify_port`.
    unsafe extern "C" fn modify_port(
        ibdev: *mut sys::ib_device,
        port: u32,
        mask: i32,
        attr: *mut sys::ib_port_modify,
    ) -> i32 {
        // The flags of an `int` mask, bit for bit.
        let mask = PortModifyMask::from_raw(mask as u32);
        // SAFETY: the callback contract; `attr` is valid for reads.
        from_result(|| unsafe {
            T::modify_port(IbDevice::from_raw(ibdev), port, mask, &*attr).map(|()| 0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `alloc_ucontext`.
    unsafe extern "C" fn alloc_ucontext(
        uctx: *mut sys::ib_ucontext,
        _udata: *mut sys::ib_udata,
    ) -> i32 {
        // SAFETY: the callback contract (the context's `device` is ours).
        from_result(|| unsafe { T::alloc_ucontext(IbDevice::from_raw((*uctx).device)).map(|()| 0) })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `dealloc_ucontext`.
    unsafe extern "C" fn dealloc_ucontext(uctx: *mut sys::ib_ucontext) {
        // SAFETY: as in `alloc_ucontext`.
        T::dealloc_ucontext(unsafe { IbDevice::from_raw((*uctx).device) })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as
    /// `disassociate_ucontext`.
    unsafe extern "C" fn disassociate_ucontext(uctx: *mut sys::ib_ucontext) {
        // SAFETY: as in `alloc_ucontext`.
        T::disassociate_ucontext(unsafe { IbDevice::from_raw((*uctx).device) })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `enable_driver`.
    unsafe extern "C" fn enable_driver(ibdev: *mut sys::ib_device) -> i32 {
        // SAFETY: the callback contract.
        from_result(|| T::enabled(unsafe { IbDevice::from_raw(ibdev) }).map(|()| 0))
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as
    /// `alloc_hw_port_stats`.
    unsafe extern "C" fn alloc_hw_port_stats(
        _ibdev: *mut sys::ib_device,
        _port: u32,
    ) -> *mut sys::rdma_hw_stats {
        Self::alloc_stats()
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `get_hw_stats`, on a
    /// struct from `alloc_hw_port_stats`.
    unsafe extern "C" fn get_hw_stats(
        ibdev: *mut sys::ib_device,
        stats: *mut sys::rdma_hw_stats,
        port: u32,
        _index: i32,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; `value` holds `num_counters`
            // entries and the core holds the struct's lock.
            let (dev, values) = unsafe {
                let n = usize::try_from((*stats).num_counters).map_err(|_| EINVAL)?;
                (IbDevice::from_raw(ibdev), (*stats).value.as_mut_slice(n))
            };
            T::hw_stats(dev, port, values)?;
            Ok(values.len() as i32)
        })
    }

    /// Allocates a `struct rdma_hw_stats` for the port's counter names.
    fn alloc_stats() -> *mut sys::rdma_hw_stats {
        let names = T::hw_stat_names();
        // SAFETY: the descriptions are static, as the core requires.
        unsafe {
            sys::rdma_alloc_hw_stats_struct(
                StatDesc::as_raw(names),
                names.len() as i32,
                sys::RDMA_HW_STATS_DEFAULT_LIFESPAN as usize,
            )
        }
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as
    /// `counter_bind_qp`: the core holds the counter's lock and references
    /// on the counter and the QP.
    unsafe extern "C" fn counter_bind_qp(
        counter: *mut sys::rdma_counter,
        qp: *mut sys::ib_qp,
        port: u32,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; the counter is one of this
            // device's, alive for the call.
            let (c, obj) = unsafe { (RdmaCounter::<T>::from_raw(counter), Qp::<T>::from_raw(qp)) };
            let id = T::counter_bind_qp(c, obj, port)?;
            // SAFETY: the core holds the counter's lock, under which it
            // reads `id` and expects the driver to set it on a first bind
            // and to record the binding in the QP (`qp->counter`).
            unsafe {
                if (*counter).id == 0 {
                    (*counter).id = id;
                }
                (*qp).counter = counter;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as
    /// `counter_unbind_qp`: the core holds the lock of the QP's counter.
    unsafe extern "C" fn counter_unbind_qp(qp: *mut sys::ib_qp, port: u32) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract.
            T::counter_unbind_qp(unsafe { Qp::<T>::from_raw(qp) }, port)?;
            // SAFETY: as in `counter_bind_qp`; the core drops its reference
            // on the counter next.
            unsafe { (*qp).counter = core::ptr::null_mut() };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as
    /// `counter_dealloc`: the counter's last reference is gone.
    unsafe extern "C" fn counter_dealloc(counter: *mut sys::rdma_counter) -> i32 {
        // SAFETY: the callback contract; the core frees the counter after.
        from_result(|| T::counter_dealloc(unsafe { RdmaCounter::from_raw(counter) }).map(|()| 0))
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as
    /// `counter_alloc_stats`.
    unsafe extern "C" fn counter_alloc_stats(
        _counter: *mut sys::rdma_counter,
    ) -> *mut sys::rdma_hw_stats {
        // The port's names: the core adds a counter's values to the port's
        // index by index (`counter_history_stat_update`).
        Self::alloc_stats()
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as
    /// `counter_update_stats`: the core holds the counter's lock, and its
    /// `stats` came from `counter_alloc_stats`.
    unsafe extern "C" fn counter_update_stats(counter: *mut sys::rdma_counter) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; `value` holds `num_counters`
            // entries, which the counter's lock makes ours for the call.
            let (c, values) = unsafe {
                let stats = (*counter).stats;
                let n = usize::try_from((*stats).num_counters).map_err(|_| EINVAL)?;
                (
                    RdmaCounter::<T>::from_raw(counter),
                    (*stats).value.as_mut_slice(n),
                )
            };
            T::counter_update_stats(c, values)?;
            Ok(0)
        })
    }

    /// `counter_init`, which the core calls on every counter it allocates:
    /// the driver keeps nothing in the core's block (see
    /// [`RdmaCounter`]), so there is nothing to initialise.
    extern "C" fn counter_init(_counter: *mut sys::rdma_counter) {}

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as
    /// `fill_res_qp_entry`: the core drains the QP's resource tracking entry
    /// before `destroy_qp`, so the QP is live.
    unsafe extern "C" fn fill_res_qp_entry(msg: *mut sys::sk_buff, qp: *mut sys::ib_qp) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract.
            let qp = unsafe { Qp::<T>::from_raw(qp) };
            // SAFETY: `msg` is the core's message, ours for the call.
            unsafe { ResMsg::driver_table(msg, |m| T::fill_res_qp_entry(qp, m)) }?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `process_mad`.
    unsafe extern "C" fn process_mad(
        ibdev: *mut sys::ib_device,
        _flags: i32,
        port: u32,
        _in_wc: *const sys::ib_wc,
        _in_grh: *const sys::ib_grh,
        in_mad: *const sys::ib_mad,
        out_mad: *mut sys::ib_mad,
        _out_size: *mut usize,
        _out_pkey_index: *mut u16,
    ) -> i32 {
        const { assert!(size_of::<sys::ib_mad>() == MAD_SIZE) };
        if in_mad.is_null() || out_mad.is_null() {
            return 0;
        }
        // SAFETY: the callback contract; both MADs are valid for their size;
        // the output is initialised (zeroed) before a reference to it is
        // formed.
        let (dev, mad, out) = unsafe {
            core::ptr::write_bytes(out_mad, 0, 1);
            (
                IbDevice::from_raw(ibdev),
                &*in_mad.cast::<[u8; MAD_SIZE]>(),
                &mut *out_mad.cast::<[u8; MAD_SIZE]>(),
            )
        };
        T::process_mad(dev, port, mad, out) as i32
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `alloc_pd`.
    unsafe extern "C" fn alloc_pd(pd: *mut sys::ib_pd, ud: *mut sys::ib_udata) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract.
            let (dev, ud) = unsafe { (IbDevice::from_raw((*pd).device), udata(ud)) };
            let data = T::alloc_pd(dev, ud.as_ref())?;
            // SAFETY: the callback contract.
            unsafe { Pd::<T>::init(pd, data) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `dealloc_pd`.
    unsafe extern "C" fn dealloc_pd(pd: *mut sys::ib_pd, _ud: *mut sys::ib_udata) -> i32 {
        // SAFETY: the callback contract.
        unsafe { destroy(pd, T::dealloc_pd) }
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `create_cq`.
    unsafe extern "C" fn create_cq(
        cq: *mut sys::ib_cq,
        attr: *const sys::ib_cq_init_attr,
        attrs: *mut sys::uverbs_attr_bundle,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; `attr` is valid for reads.
            let (dev, attr, ud) = unsafe {
                (
                    IbDevice::from_raw((*cq).device),
                    &*attr,
                    udata(sys::rrxe_attrs_udata(attrs)),
                )
            };
            // SAFETY: `cq` is being created on our device.
            let handle = unsafe { CqHandle::new(cq) }.ok_or(EINVAL)?;
            let (data, cqe) = T::create_cq(dev, handle, attr, ud.as_ref())?;
            // SAFETY: the callback contract; the driver sets the capacity it
            // created.
            unsafe {
                (*cq).cqe = i32::try_from(cqe).unwrap_or(i32::MAX);
                Cq::<T>::init(cq, data);
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `destroy_cq`.
    unsafe extern "C" fn destroy_cq(cq: *mut sys::ib_cq, _ud: *mut sys::ib_udata) -> i32 {
        // SAFETY: the callback contract.
        unsafe { destroy(cq, T::destroy_cq) }
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `resize_user_cq`.
    unsafe extern "C" fn resize_cq(cq: *mut sys::ib_cq, cqe: u32, ud: *mut sys::ib_udata) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract.
            let (obj, ud) = unsafe { (Cq::<T>::from_raw(cq), udata(ud)) };
            let cqe = T::resize_cq(obj, cqe, ud.as_ref())?;
            // SAFETY: the callback contract; the core serialises resize with
            // other verbs on this CQ.
            unsafe { (*cq).cqe = i32::try_from(cqe).unwrap_or(i32::MAX) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `req_notify_cq`.
    unsafe extern "C" fn req_notify_cq(cq: *mut sys::ib_cq, flags: u32) -> i32 {
        let flags = CqNotifyFlags::from_raw(flags);
        // SAFETY: the callback contract.
        from_result(|| T::req_notify_cq(unsafe { Cq::<T>::from_raw(cq) }, flags))
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `poll_cq`.
    unsafe extern "C" fn poll_cq(cq: *mut sys::ib_cq, num: i32, wc: *mut sys::ib_wc) -> i32 {
        from_result(|| {
            let max = usize::try_from(num).map_err(|_| EINVAL)?;
            if max == 0 || wc.is_null() {
                return Ok(0);
            }
            // SAFETY: the callback contract; `wc` has room for `num` entries,
            // which we only write.
            let (obj, wc) = unsafe {
                (
                    Cq::<T>::from_raw(cq),
                    core::slice::from_raw_parts_mut(wc.cast::<MaybeUninit<WorkCompletion>>(), max),
                )
            };
            let n = T::poll_cq(obj, wc)?;
            Ok(i32::try_from(n.min(max)).unwrap_or(0))
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `create_qp`.
    unsafe extern "C" fn create_qp(
        qp: *mut sys::ib_qp,
        init: *mut sys::ib_qp_init_attr,
        ud: *mut sys::ib_udata,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; `init` is valid and exclusive, and
            // the CQs and SRQ it names are objects of our device that the core
            // holds for the QP.
            let (dev, init, ud, binding) = unsafe {
                let init = &mut *init;
                let binding = QpBinding {
                    handle: QpHandle::new(qp).ok_or(EINVAL)?,
                    pd: (*qp).pd as usize,
                    send_cq: (!init.send_cq.is_null()).then(|| Cq::<T>::from_raw(init.send_cq)),
                    recv_cq: (!init.recv_cq.is_null()).then(|| Cq::<T>::from_raw(init.recv_cq)),
                    srq: (!init.srq.is_null()).then(|| Srq::<T>::from_raw(init.srq)),
                };
                (IbDevice::from_raw((*qp).device), init, udata(ud), binding)
            };
            let (data, qpn) = T::create_qp(dev, init, binding, ud.as_ref())?;
            // SAFETY: the callback contract.
            unsafe {
                (*qp).qp_num = qpn;
                Qp::<T>::init(qp, data);
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `modify_qp`.
    unsafe extern "C" fn modify_qp(
        qp: *mut sys::ib_qp,
        attr: *mut sys::ib_qp_attr,
        mask: i32,
        ud: *mut sys::ib_udata,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; `attr` is valid for reads.
            let (obj, attr, ud) = unsafe { (Qp::<T>::from_raw(qp), &*attr, udata(ud)) };
            T::modify_qp(obj, attr, mask as u32, ud.as_ref())?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `query_qp`.
    unsafe extern "C" fn query_qp(
        qp: *mut sys::ib_qp,
        attr: *mut sys::ib_qp_attr,
        _mask: i32,
        init: *mut sys::ib_qp_init_attr,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; both out-parameters are valid and
            // exclusive.
            let (obj, attr, init) = unsafe { (Qp::<T>::from_raw(qp), &mut *attr, &mut *init) };
            T::query_qp(obj, attr, init)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `destroy_qp`.
    unsafe extern "C" fn destroy_qp(qp: *mut sys::ib_qp, _ud: *mut sys::ib_udata) -> i32 {
        // SAFETY: the callback contract.
        unsafe { destroy(qp, T::destroy_qp) }
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `attach_mcast`.
    unsafe extern "C" fn attach_mcast(qp: *mut sys::ib_qp, gid: *mut sys::ib_gid, lid: u16) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; `gid` is valid for reads, and any
            // 16 bytes are a valid `raw` view of the union.
            let (obj, mgid) = unsafe { (Qp::<T>::from_raw(qp), (*gid).raw) };
            T::attach_mcast(obj, &mgid, lid)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `detach_mcast`.
    unsafe extern "C" fn detach_mcast(qp: *mut sys::ib_qp, gid: *mut sys::ib_gid, lid: u16) -> i32 {
        from_result(|| {
            // SAFETY: as in `attach_mcast`.
            let (obj, mgid) = unsafe { (Qp::<T>::from_raw(qp), (*gid).raw) };
            T::detach_mcast(obj, &mgid, lid)?;
            Ok(0)
        })
    }

    /// Reports a refused post: `bad` gets the request that failed.
    ///
    /// # Safety
    ///
    /// `first` is NULL or a valid chain of `W` whose first field is `next`,
    /// and `bad` is NULL or a valid out-parameter.
    unsafe fn post_result<W>(
        ret: Result<(), PostError>,
        first: *const W,
        bad: *mut *const W,
        next: impl Fn(*const W) -> *const W,
    ) -> i32 {
        let Err(e) = ret else { return 0 };
        if !bad.is_null() {
            let mut failed = first;
            for _ in 0..e.posted {
                if failed.is_null() {
                    break;
                }
                failed = next(failed);
            }
            // SAFETY: `bad` is a valid out-parameter.
            unsafe { *bad = failed };
        }
        e.err.to_errno()
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `post_send`.
    unsafe extern "C" fn post_send(
        qp: *mut sys::ib_qp,
        wr: *const sys::ib_send_wr,
        bad: *mut *const sys::ib_send_wr,
    ) -> i32 {
        // SAFETY: the callback contract. A user doorbell passes a NULL chain; a
        // kernel chain is valid during the call, and its layout follows the QP
        // type.
        unsafe {
            let obj = Qp::<T>::from_raw(qp);
            let datagram = matches!((*qp).qp_type, sys::IB_QPT_UD | sys::IB_QPT_GSI);
            let wrs = (!wr.is_null()).then(|| SendWrs::new(wr, datagram));
            Self::post_result(T::post_send(obj, wrs), wr, bad, |w| (*w).next)
        }
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `post_recv`.
    unsafe extern "C" fn post_recv(
        qp: *mut sys::ib_qp,
        wr: *const sys::ib_recv_wr,
        bad: *mut *const sys::ib_recv_wr,
    ) -> i32 {
        // SAFETY: the callback contract; as in `post_send`.
        unsafe {
            let obj = Qp::<T>::from_raw(qp);
            let wrs = (!wr.is_null()).then(|| RecvWrs::new(wr));
            Self::post_result(T::post_recv(obj, wrs), wr, bad, |w| (*w).next)
        }
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `post_srq_recv`.
    unsafe extern "C" fn post_srq_recv(
        srq: *mut sys::ib_srq,
        wr: *const sys::ib_recv_wr,
        bad: *mut *const sys::ib_recv_wr,
    ) -> i32 {
        // SAFETY: the callback contract; only kernel consumers call this, with
        // a valid chain.
        unsafe {
            let obj = Srq::<T>::from_raw(srq);
            let ret = T::post_srq_recv(obj, RecvWrs::new(wr));
            Self::post_result(ret, wr, bad, |w| (*w).next)
        }
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `create_srq`.
    unsafe extern "C" fn create_srq(
        srq: *mut sys::ib_srq,
        init: *mut sys::ib_srq_init_attr,
        ud: *mut sys::ib_udata,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; `init` is valid and exclusive.
            let (dev, init, ud) =
                unsafe { (IbDevice::from_raw((*srq).device), &mut *init, udata(ud)) };
            // SAFETY: the SRQ is being created on our device.
            let handle = unsafe { SrqHandle::new(srq) }.ok_or(EINVAL)?;
            let data = T::create_srq(dev, handle, init, ud.as_ref())?;
            // SAFETY: the callback contract.
            unsafe { Srq::<T>::init(srq, data) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `modify_srq`.
    unsafe extern "C" fn modify_srq(
        srq: *mut sys::ib_srq,
        attr: *mut sys::ib_srq_attr,
        mask: u32,
        ud: *mut sys::ib_udata,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; `attr` is valid and exclusive.
            let (obj, attr, ud) = unsafe { (Srq::<T>::from_raw(srq), &mut *attr, udata(ud)) };
            T::modify_srq(obj, attr, SrqAttrMask::from_raw(mask), ud.as_ref())?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `query_srq`.
    unsafe extern "C" fn query_srq(srq: *mut sys::ib_srq, attr: *mut sys::ib_srq_attr) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; `attr` is a valid, exclusive
            // out-parameter.
            let (obj, attr) = unsafe { (Srq::<T>::from_raw(srq), &mut *attr) };
            T::query_srq(obj, attr)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `destroy_srq`.
    unsafe extern "C" fn destroy_srq(srq: *mut sys::ib_srq, _ud: *mut sys::ib_udata) -> i32 {
        // SAFETY: the callback contract.
        unsafe { destroy(srq, T::destroy_srq) }
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `create_ah` or
    /// `create_user_ah`.
    unsafe extern "C" fn create_ah(
        ah: *mut sys::ib_ah,
        init: *mut sys::rdma_ah_init_attr,
        ud: *mut sys::ib_udata,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; `init` and its `ah_attr` are
            // valid, and the core holds the attribute's GID reference during
            // the call. The core set `ah->pd` to the caller's PD, an
            // initialised object that outlives the call (`_rdma_create_ah`).
            let (dev, pd, attr, flags, ud) = unsafe {
                (
                    IbDevice::from_raw((*ah).device),
                    Pd::<T>::from_raw((*ah).pd),
                    AhAttr::from_raw((*init).ah_attr),
                    (*init).flags,
                    udata(ud),
                )
            };
            let sleepable = flags & sys::RDMA_CREATE_AH_SLEEPABLE != 0;
            let data = T::create_ah(dev, pd, attr, sleepable, ud.as_ref())?;
            // SAFETY: the callback contract.
            unsafe { Ah::<T>::init(ah, data) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `destroy_ah`.
    unsafe extern "C" fn destroy_ah(ah: *mut sys::ib_ah, _flags: u32) -> i32 {
        // SAFETY: the callback contract.
        unsafe { destroy(ah, T::destroy_ah) }
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `query_ah`.
    unsafe extern "C" fn query_ah(ah: *mut sys::ib_ah, attr: *mut sys::rdma_ah_attr) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; `attr` is a valid, exclusive
            // out-parameter.
            let (obj, attr) = unsafe { (Ah::<T>::from_raw(ah), &mut *attr) };
            T::query_ah(obj, attr)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `modify_ah`.
    unsafe extern "C" fn modify_ah(ah: *mut sys::ib_ah, attr: *mut sys::rdma_ah_attr) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; `attr` is valid for reads, and the
            // core holds its GID reference during the call.
            let (obj, attr) = unsafe { (Ah::<T>::from_raw(ah), AhAttr::from_raw(attr)) };
            T::modify_ah(obj, attr)?;
            Ok(0)
        })
    }

    /// Boxes a new MR for the core, which fills in the rest of `ib_mr`.
    fn new_mr(made: Result<(T::Mr, MrKeys)>) -> *mut sys::ib_mr {
        let boxed = made.and_then(|(data, keys)| {
            let mr = KBox::new(Mr::<T>::new_unset(data), GFP_KERNEL)?;
            let raw = KBox::into_raw(mr).cast::<sys::ib_mr>();
            // SAFETY: `raw` is the zeroed `ib_mr` at the start of our box.
            unsafe {
                (*raw).lkey = keys.lkey;
                (*raw).rkey = keys.rkey;
            }
            Ok(raw)
        });
        boxed.unwrap_or_else(|e| e.to_ptr())
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `get_dma_mr`.
    unsafe extern "C" fn get_dma_mr(pd: *mut sys::ib_pd, access: i32) -> *mut sys::ib_mr {
        // SAFETY: the callback contract.
        let pd = unsafe { Pd::<T>::from_raw(pd) };
        Self::new_mr(T::get_dma_mr(pd, access as u32))
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `reg_user_mr`.
    unsafe extern "C" fn reg_user_mr(
        pd: *mut sys::ib_pd,
        start: u64,
        length: u64,
        iova: u64,
        access: i32,
        dmah: *mut sys::ib_dmah,
        ud: *mut sys::ib_udata,
    ) -> *mut sys::ib_mr {
        if !dmah.is_null() {
            return EOPNOTSUPP.to_ptr();
        }
        // SAFETY: the callback contract.
        let (pd, ud) = unsafe { (Pd::<T>::from_raw(pd), udata(ud)) };
        Self::new_mr(T::reg_user_mr(
            pd,
            start,
            length,
            iova,
            access as u32,
            ud.as_ref(),
        ))
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `dereg_mr`.
    unsafe extern "C" fn dereg_mr(mr: *mut sys::ib_mr, _ud: *mut sys::ib_udata) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract.
            T::dereg_mr(unsafe { Mr::<T>::from_raw(mr) })?;
            // SAFETY: the MR was boxed by `new_mr` and the core is done with it.
            drop(unsafe { KBox::from_raw(mr.cast::<Mr<T>>()) });
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `advise_mr`:
    /// `sg_list` holds `num_sge` SGEs.
    unsafe extern "C" fn advise_mr(
        pd: *mut sys::ib_pd,
        advice: u32,
        flags: u32,
        sg_list: *mut sys::ib_sge,
        num_sge: u32,
        _attrs: *mut sys::uverbs_attr_bundle,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract.
            let pd = unsafe { Pd::<T>::from_raw(pd) };
            let sges = if sg_list.is_null() || num_sge == 0 {
                &[][..]
            } else {
                // SAFETY: the core passes `num_sge` SGEs, valid (and not
                // written) for the call.
                unsafe { core::slice::from_raw_parts(sg_list.cast_const(), num_sge as usize) }
            };
            T::advise_mr(
                pd,
                MrAdvice::from_raw(advice),
                AdviseMrFlags::from_raw(flags),
                sges,
            )?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `rereg_user_mr`.
    unsafe extern "C" fn rereg_user_mr(
        mr: *mut sys::ib_mr,
        flags: i32,
        _start: u64,
        _length: u64,
        _iova: u64,
        access: i32,
        pd: *mut sys::ib_pd,
        _ud: *mut sys::ib_udata,
    ) -> *mut sys::ib_mr {
        // The flags of an `int`, bit for bit.
        let flags = MrReregFlags::from_raw(flags as u32);
        // SAFETY: the callback contract; the new PD, if the flags name one, is
        // an object of our device that the core holds during the call.
        let (obj, new_pd) = unsafe {
            let new_pd =
                (flags.contains(MrReregFlags::PD) && !pd.is_null()).then(|| Pd::<T>::from_raw(pd));
            (Mr::<T>::from_raw(mr), new_pd)
        };
        match T::rereg_user_mr(obj, flags, access as u32, new_pd) {
            // NULL: the MR was changed in place.
            Ok(()) => core::ptr::null_mut(),
            Err(e) => e.to_ptr(),
        }
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `alloc_mr`.
    unsafe extern "C" fn alloc_mr(
        pd: *mut sys::ib_pd,
        mr_type: u32,
        max_num_sg: u32,
    ) -> *mut sys::ib_mr {
        // SAFETY: the callback contract.
        let pd = unsafe { Pd::<T>::from_raw(pd) };
        Self::new_mr(T::alloc_mr(pd, MrType::from_raw(mr_type), max_num_sg))
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `map_mr_sg`.
    unsafe extern "C" fn map_mr_sg(
        mr: *mut sys::ib_mr,
        sg: *mut sys::scatterlist,
        nents: i32,
        offset: *mut u32,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; the core set `page_size` before
            // the call.
            let (obj, page_size) = unsafe { (Mr::<T>::from_raw(mr), (*mr).page_size) };
            T::map_mr_sg_start(obj, page_size)?;
            // SAFETY: the scatterlist is the consumer's, valid for the call;
            // `set_page` is called back synchronously on this MR.
            let n = unsafe { sys::ib_sg_to_pages(mr, sg, nents, offset, Some(Self::set_page)) };
            // SAFETY: `ib_sg_to_pages` set the MR's iova and length.
            let (iova, length) = unsafe { ((*mr).iova, (*mr).length) };
            T::mr_mapped(obj, iova, length);
            Ok(n)
        })
    }

    /// # Safety
    ///
    /// Called only by `ib_sg_to_pages` from `map_mr_sg`, on that MR.
    unsafe extern "C" fn set_page(mr: *mut sys::ib_mr, addr: u64) -> i32 {
        // SAFETY: see above.
        from_result(|| T::mr_set_page(unsafe { Mr::<T>::from_raw(mr) }, addr).map(|()| 0))
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `alloc_mw`.
    unsafe extern "C" fn alloc_mw(mw: *mut sys::ib_mw, _ud: *mut sys::ib_udata) -> i32 {
        from_result(|| {
            // SAFETY: the callback contract; the core set `pd` and `type`
            // before the call.
            let (pd, ty) = unsafe { (Pd::<T>::from_raw((*mw).pd), (*mw).type_) };
            let (data, rkey) = T::alloc_mw(pd, ty)?;
            // SAFETY: the callback contract.
            unsafe {
                (*mw).rkey = rkey;
                Mw::<T>::init(mw, data);
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `dealloc_mw`.
    unsafe extern "C" fn dealloc_mw(mw: *mut sys::ib_mw) -> i32 {
        // SAFETY: the callback contract.
        unsafe { destroy(mw, T::dealloc_mw) }
    }

    /// # Safety
    ///
    /// The [callback contract](Self#callback-contract), as `dealloc_driver`.
    unsafe extern "C" fn dealloc_driver(ibdev: *mut sys::ib_device) {
        // SAFETY: the callback contract; the core calls this exactly once,
        // after the last operation. The memory itself is freed later by the
        // core.
        unsafe { IbDevice::<T>::drop_data(ibdev) };
    }
}
