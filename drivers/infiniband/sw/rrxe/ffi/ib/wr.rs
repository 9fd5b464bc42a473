// SPDX-License-Identifier: GPL-2.0

//! Work requests a kernel consumer posts (`ib_post_send`, `ib_post_recv`,
//! `ib_post_srq_recv`): read-only views of the consumer's chain.
//!
//! A send request is a `struct ib_send_wr` embedded in a larger struct
//! chosen by the QP type and the opcode (`ib_ud_wr` on datagram QPs,
//! `ib_rdma_wr`, `ib_atomic_wr`, `ib_reg_wr` by opcode), as
//! `include/rdma/ib_verbs.h` requires of consumers. The views only reach
//! into the larger struct when the QP type and opcode say it is there.

use super::{Ah, Object, Operations};
use crate::ffi::sys;
use core::marker::PhantomData;

/// A scatter/gather element (plain C data).
pub(crate) type KernelSge = sys::ib_sge;

/// The SGE array of a request.
///
/// # Safety
///
/// `list` points to `num` valid SGEs (or `num <= 0`) that live for `'a`.
unsafe fn sges<'a>(list: *const sys::ib_sge, num: i32) -> &'a [KernelSge] {
    if list.is_null() || num <= 0 {
        return &[];
    }
    // SAFETY: guaranteed by the caller.
    unsafe { core::slice::from_raw_parts(list, num as usize) }
}

/// One receive request of a chain.
#[derive(Clone, Copy)]
pub(crate) struct RecvWr<'a> {
    raw: &'a sys::ib_recv_wr,
}

impl<'a> RecvWr<'a> {
    /// The consumer's identifier (or `wr_cqe`), returned in its completion.
    pub(crate) fn wr_id(&self) -> u64 {
        // SAFETY: both union members are plain 64-bit values.
        unsafe { self.raw.__bindgen_anon_1.wr_id }
    }

    /// The number of SGEs the consumer claims (may be negative).
    pub(crate) fn num_sge(&self) -> i32 {
        self.raw.num_sge
    }

    /// The SGEs.
    pub(crate) fn sges(&self) -> &'a [KernelSge] {
        // SAFETY: the consumer's SGE list is valid during the post call.
        unsafe { sges(self.raw.sg_list, self.raw.num_sge) }
    }
}

/// A chain of receive requests.
pub(crate) struct RecvWrs<'a> {
    next: *const sys::ib_recv_wr,
    _chain: PhantomData<&'a sys::ib_recv_wr>,
}

impl RecvWrs<'_> {
    /// # Safety
    ///
    /// `first` is NULL or the head of a valid chain that lives for `'a`.
    pub(super) unsafe fn new(first: *const sys::ib_recv_wr) -> Self {
        Self {
            next: first,
            _chain: PhantomData,
        }
    }
}

impl<'a> Iterator for RecvWrs<'a> {
    type Item = RecvWr<'a>;

    fn next(&mut self) -> Option<RecvWr<'a>> {
        // SAFETY: the chain is valid for `'a` by the invariant of `new`.
        let raw = unsafe { self.next.as_ref() }?;
        self.next = raw.next;
        Some(RecvWr { raw })
    }
}

/// The datagram part of a send request on a UD or GSI QP.
pub(crate) struct UdWr<'a, T: Operations> {
    pub(crate) ah: &'a Ah<T>,
    pub(crate) remote_qpn: u32,
    pub(crate) remote_qkey: u32,
    pub(crate) pkey_index: u16,
}

/// The target of an RDMA READ or WRITE.
pub(crate) struct RdmaWr {
    pub(crate) remote_addr: u64,
    pub(crate) rkey: u32,
}

/// The operands of an atomic.
pub(crate) struct AtomicWr {
    pub(crate) remote_addr: u64,
    pub(crate) compare_add: u64,
    pub(crate) swap: u64,
    pub(crate) rkey: u32,
}

/// A fast registration: the MR (as the core's pointer), its new key and
/// access.
pub(crate) struct RegWr {
    pub(crate) mr: *mut sys::ib_mr,
    pub(crate) key: u32,
    pub(crate) access: u32,
    /// The `ib_mr`'s `iova` as the consumer posts the request: ULPs change
    /// it after `ib_map_mr_sg` (rpcrdma puts the RPC's XID in its upper 32
    /// bits, `frwr_map`), and the registration is at this address, as in
    /// rxe (`rxe_reg_fast_mr` takes `wr.reg.mr->iova`).
    pub(crate) iova: u64,
}

/// One send request of a chain.
#[derive(Clone, Copy)]
pub(crate) struct SendWr<'a> {
    raw: &'a sys::ib_send_wr,
    datagram: bool,
}

impl<'a> SendWr<'a> {
    /// The consumer's identifier (or `wr_cqe`), returned in its completion.
    pub(crate) fn wr_id(&self) -> u64 {
        // SAFETY: both union members are plain 64-bit values.
        unsafe { self.raw.__bindgen_anon_1.wr_id }
    }

    /// `enum ib_wr_opcode`.
    pub(crate) fn opcode(&self) -> u32 {
        self.raw.opcode
    }

    /// `IB_SEND_*` flags.
    pub(crate) fn send_flags(&self) -> u32 {
        self.raw.send_flags as u32
    }

    /// Immediate data (wire order) or the key to invalidate.
    pub(crate) fn ex(&self) -> u32 {
        // SAFETY: both union members are plain 32-bit values.
        unsafe { self.raw.ex.invalidate_rkey }
    }

    /// The number of SGEs the consumer claims (may be negative).
    pub(crate) fn num_sge(&self) -> i32 {
        self.raw.num_sge
    }

    /// The SGEs.
    pub(crate) fn sges(&self) -> &'a [KernelSge] {
        // SAFETY: the consumer's SGE list is valid during the post call.
        unsafe { sges(self.raw.sg_list, self.raw.num_sge) }
    }

    /// The bytes an SGE of an inline request names: kernel consumers pass
    /// kernel virtual addresses as DMA addresses to software devices.
    pub(crate) fn inline_bytes(&self, sge: &KernelSge) -> &'a [u8] {
        if sge.addr == 0 || sge.length == 0 {
            return &[];
        }
        // SAFETY: an inline request's SGEs name kernel memory the consumer
        // owns for the duration of the post call (the core's contract for
        // devices that use virtual DMA addresses).
        unsafe { core::slice::from_raw_parts(sge.addr as usize as *const u8, sge.length as usize) }
    }

    /// The datagram part, on UD and GSI QPs.
    pub(crate) fn ud<T: Operations>(&self) -> Option<UdWr<'a, T>> {
        if !self.datagram {
            return None;
        }
        // SAFETY: requests on datagram QPs are embedded in `ib_ud_wr`.
        let ud = unsafe { &*core::ptr::from_ref(self.raw).cast::<sys::ib_ud_wr>() };
        if ud.ah.is_null() {
            return None;
        }
        Some(UdWr {
            // SAFETY: the AH was created on this device (its ops are ours)
            // and lives at least as long as the post call.
            ah: unsafe { Object::from_raw(ud.ah) },
            remote_qpn: ud.remote_qpn,
            remote_qkey: ud.remote_qkey,
            pkey_index: ud.pkey_index,
        })
    }

    /// The target of an RDMA request.
    pub(crate) fn rdma(&self) -> Option<RdmaWr> {
        use sys::{
            IB_WR_RDMA_READ, IB_WR_RDMA_READ_WITH_INV, IB_WR_RDMA_WRITE, IB_WR_RDMA_WRITE_WITH_IMM,
        };
        if self.datagram
            || !matches!(
                self.opcode(),
                IB_WR_RDMA_WRITE
                    | IB_WR_RDMA_WRITE_WITH_IMM
                    | IB_WR_RDMA_READ
                    | IB_WR_RDMA_READ_WITH_INV
            )
        {
            return None;
        }
        // SAFETY: RDMA requests are embedded in `ib_rdma_wr`.
        let r = unsafe { &*core::ptr::from_ref(self.raw).cast::<sys::ib_rdma_wr>() };
        Some(RdmaWr {
            remote_addr: r.remote_addr,
            rkey: r.rkey,
        })
    }

    /// The operands of an atomic request.
    pub(crate) fn atomic(&self) -> Option<AtomicWr> {
        use sys::{IB_WR_ATOMIC_CMP_AND_SWP, IB_WR_ATOMIC_FETCH_AND_ADD};
        if self.datagram
            || !matches!(
                self.opcode(),
                IB_WR_ATOMIC_CMP_AND_SWP | IB_WR_ATOMIC_FETCH_AND_ADD
            )
        {
            return None;
        }
        // SAFETY: atomic requests are embedded in `ib_atomic_wr`.
        let a = unsafe { &*core::ptr::from_ref(self.raw).cast::<sys::ib_atomic_wr>() };
        Some(AtomicWr {
            remote_addr: a.remote_addr,
            compare_add: a.compare_add,
            swap: a.swap,
            rkey: a.rkey,
        })
    }

    /// The fast registration of a `REG_MR` request.
    pub(crate) fn reg(&self) -> Option<RegWr> {
        if self.datagram || self.opcode() != sys::IB_WR_REG_MR {
            return None;
        }
        // SAFETY: registration requests are embedded in `ib_reg_wr`.
        let r = unsafe { &*core::ptr::from_ref(self.raw).cast::<sys::ib_reg_wr>() };
        Some(RegWr {
            mr: r.mr,
            key: r.key,
            access: r.access as u32,
            // SAFETY: a consumer posts a registration of a live MR of its
            // own, mapped by `ib_map_mr_sg`.
            iova: unsafe { (*r.mr).iova },
        })
    }
}

/// A chain of send requests.
pub(crate) struct SendWrs<'a> {
    next: *const sys::ib_send_wr,
    datagram: bool,
    _chain: PhantomData<&'a sys::ib_send_wr>,
}

impl SendWrs<'_> {
    /// # Safety
    ///
    /// `first` is NULL or the head of a valid chain that lives for `'a`,
    /// posted on a QP that is a datagram QP exactly if `datagram`.
    pub(super) unsafe fn new(first: *const sys::ib_send_wr, datagram: bool) -> Self {
        Self {
            next: first,
            datagram,
            _chain: PhantomData,
        }
    }
}

impl<'a> Iterator for SendWrs<'a> {
    type Item = SendWr<'a>;

    fn next(&mut self) -> Option<SendWr<'a>> {
        // SAFETY: the chain is valid for `'a` by the invariant of `new`.
        let raw = unsafe { self.next.as_ref() }?;
        self.next = raw.next;
        Some(SendWr {
            raw,
            datagram: self.datagram,
        })
    }
}
