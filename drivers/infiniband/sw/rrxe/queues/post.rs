// SPDX-License-Identifier: GPL-2.0

//! Kernel consumers' work requests (`ib_post_send`, `ib_post_recv`,
//! `ib_post_srq_recv`), checked and written into the QP's rings in the same
//! rxe WQE layout a process writes, so that the requester and responder
//! read one format whoever posted.

use crate::{
    dev::ah::RrxeAh,
    ffi::{
        ib::{KernelSge, Operations, PostError, RecvWr, RecvWrs, SendWr, SendWrs},
        rxe_abi::{RecvWqe, SendWqe, Sge},
    },
    logic::{
        qp_state::QpType,
        wr::{check_recv, check_send, opcode, SendCheck, WrClass, SEND_INLINE},
    },
    queues::queue::{SharedQueue, Slot},
};
use kernel::prelude::*;

/// rxe's `WR_*_MASK` bits, which the WQE's `mask` carries.
fn rxe_mask(class: WrClass) -> u32 {
    const INLINE: u32 = 1 << 0;
    match class {
        WrClass::Atomic => 1 << 1,
        WrClass::Send => INLINE | 1 << 2,
        WrClass::Read => 1 << 3,
        WrClass::Write => INLINE | 1 << 4,
        WrClass::LocalOp => 1 << 5,
        WrClass::Flush => 1 << 6,
        WrClass::AtomicWrite => 1 << 7,
    }
}

/// Posts each request of a chain with `post_one`, stopping at the first
/// refused one, which the error names by its position.
fn post_each<W>(
    wrs: impl Iterator<Item = W>,
    mut post_one: impl FnMut(W) -> Result,
) -> Result<(), PostError> {
    for (posted, wr) in wrs.enumerate() {
        post_one(wr).map_err(|err| PostError { posted, err })?;
    }
    Ok(())
}

/// Writes a kernel consumer's receive requests into `q` (rxe's
/// `post_one_recv` for each).
pub(crate) fn post_recvs(q: &SharedQueue, wrs: RecvWrs<'_>, max_sge: u32) -> Result<(), PostError> {
    post_each(wrs, |wr| post_one_recv(q, wr, max_sge))
}

fn post_one_recv(q: &SharedQueue, wr: RecvWr<'_>, max_sge: u32) -> Result {
    let num_sge = u32::try_from(wr.num_sge()).map_err(|_| EINVAL)?;
    // Before the SGE list is touched: it has only `num_sge` entries.
    if num_sge > max_sge {
        return Err(EINVAL);
    }
    let sges = wr.sges();
    let length: u64 = sges.iter().map(|s| u64::from(s.length)).sum();
    check_recv(num_sge, length, max_sge).map_err(|_| EINVAL)?;
    let mut head = RecvWqe {
        wr_id: wr.wr_id(),
        ..Default::default()
    };
    // `check_recv` bounded the length by the largest message, 2^31.
    head.dma.length = length as u32;
    head.dma.resid = length as u32;
    head.dma.num_sge = num_sge;
    q.client_push(|slot| {
        slot.put(0, &head)?;
        put_sges(slot, size_of::<RecvWqe>(), sges)
    })
}

/// Writes `sges` in rxe's layout from `offset` on.
fn put_sges(slot: &mut Slot<'_>, offset: usize, sges: &[KernelSge]) -> Result {
    for (i, s) in sges.iter().enumerate() {
        let sge = Sge {
            addr: s.addr,
            length: s.length,
            lkey: s.lkey,
        };
        slot.put(offset + i * size_of::<Sge>(), &sge)?;
    }
    Ok(())
}

/// The limits of the send queue requests are checked against.
pub(crate) struct SendLimits {
    pub(crate) ty: QpType,
    pub(crate) max_sge: u32,
    pub(crate) max_inline: u32,
}

/// Writes a kernel consumer's send requests into `q` (rxe's
/// `post_one_send` for each). `D` is the device whose address handles
/// datagram requests name.
pub(crate) fn post_sends<D: Operations<Ah = RrxeAh>>(
    q: &SharedQueue,
    wrs: SendWrs<'_>,
    limits: &SendLimits,
) -> Result<(), PostError> {
    post_each(wrs, |wr| post_one_send::<D>(q, wr, limits))
}

fn post_one_send<D: Operations<Ah = RrxeAh>>(
    q: &SharedQueue,
    wr: SendWr<'_>,
    limits: &SendLimits,
) -> Result {
    let num_sge = u32::try_from(wr.num_sge()).map_err(|_| EINVAL)?;
    // Before the SGE list is touched: it has only `num_sge` entries.
    if num_sge > limits.max_sge {
        return Err(EINVAL);
    }
    let sges = wr.sges();
    let length: u64 = sges.iter().map(|s| u64::from(s.length)).sum();
    let check = SendCheck {
        opcode: wr.opcode(),
        send_flags: wr.send_flags(),
        num_sge,
        length,
        atomic_addr: wr.atomic().map_or(0, |a| a.remote_addr),
    };
    let class =
        check_send(&check, limits.ty, limits.max_sge, limits.max_inline).map_err(|_| EINVAL)?;
    // Datagrams carry an address handle and are plain sends (rxe's
    // `init_send_wr`).
    if matches!(limits.ty, QpType::Ud | QpType::Gsi)
        && (wr.ud::<D>().is_none() || !matches!(wr.opcode(), opcode::SEND | opcode::SEND_WITH_IMM))
    {
        return Err(EINVAL);
    }
    // `check_send` bounded the length by the largest message, 2^31.
    let wqe = send_wqe::<D>(&wr, class, length as u32, num_sge)?;
    let inline = wr.send_flags() & SEND_INLINE != 0;
    q.client_push(|slot| {
        slot.put(0, &wqe)?;
        if class == WrClass::LocalOp {
            return Ok(());
        }
        let data = size_of::<SendWqe>();
        if !inline {
            return put_sges(slot, data, sges);
        }
        let mut at = data;
        for sge in sges {
            let bytes = wr.inline_bytes(sge);
            slot.put_bytes(at, bytes)?;
            at += bytes.len();
        }
        Ok(())
    })
}

/// The WQE header of `wr` (rxe's `init_send_wr` and `init_send_wqe`).
fn send_wqe<D: Operations<Ah = RrxeAh>>(
    wr: &SendWr<'_>,
    class: WrClass,
    length: u32,
    num_sge: u32,
) -> Result<SendWqe> {
    let mut wqe = SendWqe::default();
    let w = &mut wqe.wr;
    w.wr_id = wr.wr_id();
    w.opcode = wr.opcode();
    w.send_flags = wr.send_flags();
    w.ex.invalidate_rkey = wr.ex();
    if let Some(ud) = wr.ud::<D>() {
        w.wr.ud.remote_qpn = ud.remote_qpn;
        w.wr.ud.remote_qkey = ud.remote_qkey;
        w.wr.ud.pkey_index = ud.pkey_index;
        w.wr.ud.ah_num = ud.ah.inner.num();
    } else if let Some(r) = wr.rdma() {
        w.wr.rdma.remote_addr = r.remote_addr;
        w.wr.rdma.rkey = r.rkey;
        wqe.iova = r.remote_addr;
    } else if let Some(a) = wr.atomic() {
        w.wr.atomic.remote_addr = a.remote_addr;
        w.wr.atomic.compare_add = a.compare_add;
        w.wr.atomic.swap = a.swap;
        w.wr.atomic.rkey = a.rkey;
        wqe.iova = a.remote_addr;
    } else if let Some(r) = wr.reg() {
        w.wr.reg.__bindgen_anon_1.mr = r.mr;
        w.wr.reg.key = r.key;
        w.wr.reg.access = r.access;
        wqe.iova = r.iova;
    } else if wr.opcode() == opcode::REG_MR {
        return Err(EINVAL);
    }
    wqe.mask = rxe_mask(class);
    if class != WrClass::LocalOp {
        wqe.dma.length = length;
        wqe.dma.resid = length;
        wqe.dma.num_sge = num_sge;
    }
    Ok(wqe)
}
