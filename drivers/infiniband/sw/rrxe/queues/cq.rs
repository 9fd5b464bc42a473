// SPDX-License-Identifier: GPL-2.0

//! Completion queues. A user CQ is a ring the process maps and polls, as in
//! the rxe ABI (each slot holds a `struct ib_uverbs_wc`); a kernel CQ is a
//! private ring of `struct ib_wc` that `poll_cq` drains.

use crate::{
    dev::params,
    ffi::{
        ib::{
            CqHandle, CqInitAttr, CqNotifyFlags, Event, NetworkHdrType, QpHandle, QueuedWc, Udata,
            UserWorkCompletion, WorkCompletion,
        },
        rt,
        rxe_abi::{wc_opcode, wc_status, CreateCqResp, ResizeCqResp},
    },
    logic::{
        queue::{QueueType, Ring},
        ring::FixedRing,
        wc::{WcFlags, WcOpcode, WcStatus},
    },
    queues::queue::SharedQueue,
};
use core::mem::MaybeUninit;
use kernel::{
    new_spinlock_irq,
    prelude::*,
    sync::{Arc, SpinLockIrq},
};

/// The size of one user CQ slot: rxe's `struct rxe_cqe` is a union of the
/// kernel and the user work completion.
fn cqe_size() -> usize {
    size_of::<WorkCompletion>().max(size_of::<UserWorkCompletion>())
}

/// A completion as the driver produces it, before it takes the form its
/// consumer reads.
#[derive(Clone, Copy, Default)]
pub(crate) struct Completion {
    pub(crate) wr_id: u64,
    pub(crate) status: WcStatus,
    pub(crate) opcode: WcOpcode,
    pub(crate) byte_len: u32,
    pub(crate) qp_num: u32,
    pub(crate) src_qp: u32,
    pub(crate) wc_flags: WcFlags,
    /// Immediate data or invalidated key, per `wc_flags`.
    pub(crate) ex: u32,
    pub(crate) pkey_index: u16,
    pub(crate) port_num: u8,
    /// The network header of a receive (with
    /// [`WcFlags::WITH_NETWORK_HDR_TYPE`]).
    pub(crate) network_hdr_type: Option<NetworkHdrType>,
}

/// What posting a completion with [`CqInner::post_quiet`] leaves its
/// caller to do once it has dropped its own locks: a QP posts under its
/// lock, where no consumer's handler may be called.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Posted {
    /// Queued; nothing is due.
    Queued,
    /// Queued, and the consumer's completion handler is due
    /// ([`CqInner::notify`]).
    Notify,
    /// The CQ was full: the completion is lost, and `IB_EVENT_CQ_ERR` is
    /// due ([`CqInner::report_overflow`]), once per lost completion.
    Overflow,
    /// The CQ was destroyed: the completion is dropped, nothing is due.
    Gone,
}

/// `wc_flags` only kernel consumers get. `ib_uverbs_wc` has no network
/// header type, rxe's user completions never carry the flag, and its bit
/// means `IBV_WC_TM_DATA_VALID` to rdma-core.
const KERNEL_ONLY_WC_FLAGS: WcFlags = WcFlags::WITH_NETWORK_HDR_TYPE;

impl Completion {
    /// Marks a successful receive as having come with a network header, of
    /// IPv4 (`v4`) or IPv6. rxe's `do_complete` does so for every QP type:
    /// a RoCEv2 packet always has one (UD receives also find it in their
    /// buffer, as the 40-byte GRH).
    pub(crate) fn set_network_header(&mut self, v4: bool) {
        self.wc_flags |= WcFlags::GRH | WcFlags::WITH_NETWORK_HDR_TYPE;
        self.network_hdr_type = Some(if v4 {
            NetworkHdrType::Ipv4
        } else {
            NetworkHdrType::Ipv6
        });
    }

    /// The `sl` of a user completion. RoCE has no service level (rxe
    /// reports 0); mlx5 reports there, for a packet received, the network
    /// header it came with (its CQE's RoCE L3 header type: 1 for IPv6, 2
    /// for IPv4), and UCX up to 1.18 reads it so for its UD transport:
    /// unless it says IPv4, UCX takes the 40 bytes before a datagram for
    /// an IPv6 header, finds no destination GID of its own there, and
    /// drops every datagram that came over IPv4 (`ud_verbs`, and UCP's
    /// wire-up through it, then hang). rrxe reports mlx5's values.
    fn user_sl(&self) -> u8 {
        match self.network_hdr_type {
            Some(NetworkHdrType::Ipv4) => 2,
            Some(NetworkHdrType::Ipv6) => 1,
            None => 0,
        }
    }

    fn to_user(self) -> UserWorkCompletion {
        let mut wc = UserWorkCompletion {
            wr_id: self.wr_id,
            status: wc_status(self.status),
            opcode: wc_opcode(self.opcode),
            qp_num: self.qp_num,
            src_qp: self.src_qp,
            wc_flags: self.wc_flags.without(KERNEL_ONLY_WC_FLAGS).raw(),
            byte_len: self.byte_len,
            pkey_index: self.pkey_index,
            port_num: self.port_num,
            sl: self.user_sl(),
            ..Default::default()
        };
        wc.ex.imm_data = self.ex;
        wc
    }

    fn to_kernel(self, qp: QpHandle) -> QueuedWc {
        let mut wc = WorkCompletion {
            status: wc_status(self.status),
            opcode: wc_opcode(self.opcode),
            byte_len: self.byte_len,
            qp: qp.as_raw(),
            src_qp: self.src_qp,
            wc_flags: self.wc_flags.raw() as i32,
            pkey_index: self.pkey_index,
            port_num: u32::from(self.port_num),
            ..Default::default()
        };
        // Without one, the field stays 0, which consumers do not read.
        if let Some(ty) = self.network_hdr_type {
            wc.set_network_hdr_type(ty);
        }
        wc.__bindgen_anon_1.wr_id = self.wr_id;
        wc.ex.imm_data = self.ex;
        QueuedWc(wc)
    }
}

/// A kernel consumer's completions, oldest first.
struct KernelRing {
    /// The completions `poll_cq` has not taken yet.
    wcs: FixedRing<KVec<QueuedWc>>,
}

impl KernelRing {
    /// Room for at least `entries`, rounded up as rxe rounds its rings (so
    /// both report the same capacity).
    fn new(entries: u32) -> Result<Self> {
        let ring = Ring::new(entries, cqe_size() as u32).map_err(|_| EINVAL)?;
        let slots = KVec::from_elem(QueuedWc::default(), ring.capacity() as usize, GFP_KERNEL)?;
        Ok(Self {
            wcs: FixedRing::new(slots),
        })
    }

    /// How many completions it can hold (below `MAX_CQE`: fits a `u32`).
    fn capacity(&self) -> u32 {
        self.wcs.capacity() as u32
    }

    /// How many completions wait.
    fn len(&self) -> u32 {
        self.wcs.len() as u32
    }

    /// Queues `wc`; `EBUSY` when full (the completion is lost).
    fn push(&mut self, wc: QueuedWc) -> Result {
        self.wcs.push_back(wc).map_err(|_| EBUSY)
    }

    /// Takes the oldest completion.
    fn pop(&mut self) -> Option<QueuedWc> {
        self.wcs.pop_front()
    }
}

enum Slots {
    User(SharedQueue),
    Kernel(KernelRing),
    /// `destroy_cq` ran: the ring is released and the consumer's handle
    /// is dead, so completions are dropped without a word.
    Gone,
}

struct CqState {
    slots: Slots,
    /// The armed notification (the [`CqNotifyFlags::SOLICITED_MASK`] flags
    /// asked: `IB_CQ_SOLICITED` or `IB_CQ_NEXT_COMP`), none when not armed.
    notify: CqNotifyFlags,
}

impl CqState {
    fn count(&self) -> u32 {
        match &self.slots {
            Slots::User(q) => q.count(),
            Slots::Kernel(r) => r.len(),
            Slots::Gone => 0,
        }
    }
}

/// A CQ's state, shared with the QPs that complete into it.
#[pin_data]
pub(crate) struct CqInner {
    /// Interrupts off: completions are posted from softirq and the
    /// consumer's handlers may run in hard interrupt context.
    #[pin]
    state: SpinLockIrq<CqState>,
    handle: CqHandle,
}

/// The driver data of a CQ.
pub(crate) struct RrxeCq {
    pub(crate) inner: Arc<CqInner>,
}

fn check_entries(entries: u32) -> Result {
    if entries == 0 || entries > params::MAX_CQE {
        return Err(EINVAL);
    }
    Ok(())
}

impl RrxeCq {
    /// Creates a CQ for `attr.cqe` completions; returns it and its capacity.
    pub(crate) fn new(
        handle: CqHandle,
        attr: &CqInitAttr,
        udata: Option<&Udata>,
    ) -> Result<(Self, u32)> {
        if attr.flags != 0 {
            return Err(EOPNOTSUPP);
        }
        check_entries(attr.cqe)?;
        // The core checks comp_vector against num_comp_vectors.
        let slots = match udata {
            Some(udata) => {
                let queue =
                    SharedQueue::new(attr.cqe, cqe_size(), QueueType::ToClient, Some(udata))?;
                udata.respond(&CreateCqResp { mi: queue.mminfo() })?;
                Slots::User(queue)
            }
            None => Slots::Kernel(KernelRing::new(attr.cqe)?),
        };
        let cap = match &slots {
            Slots::User(q) => q.capacity(),
            Slots::Kernel(r) => r.capacity(),
            Slots::Gone => 0,
        };
        let inner = Arc::pin_init(
            try_pin_init!(CqInner {
                state <- new_spinlock_irq!(CqState {
                    slots,
                    notify: CqNotifyFlags::NONE
                }),
                handle,
            }),
            GFP_KERNEL,
        )?;
        Ok((Self { inner }, cap))
    }

    /// Replaces the ring by one for `entries` completions, keeping the ones
    /// not yet polled; returns the new capacity.
    pub(crate) fn resize(&self, entries: u32, udata: Option<&Udata>) -> Result<u32> {
        check_entries(entries)?;
        let cq = &self.inner;
        let (count, is_user) = {
            let st = cq.state.lock();
            if matches!(st.slots, Slots::Gone) {
                return Err(EINVAL);
            }
            (st.count(), matches!(st.slots, Slots::User(_)))
        };
        if entries < count {
            return Err(EINVAL);
        }
        match udata {
            Some(udata) if is_user => cq.resize_user(entries, udata),
            None if !is_user => cq.resize_kernel(entries),
            _ => Err(EINVAL),
        }
    }

    /// Arms completion notification. Returns 1 if `REPORT_MISSED_EVENTS`
    /// was asked and completions are already waiting.
    pub(crate) fn req_notify(&self, flags: CqNotifyFlags) -> Result<i32> {
        let want = flags.intersection(CqNotifyFlags::SOLICITED_MASK);
        let mut st = self.inner.state.lock();
        // NEXT_COMP wins over SOLICITED when both are asked over time.
        if st.notify != CqNotifyFlags::NEXT_COMP {
            st.notify = want;
        }
        if flags.contains(CqNotifyFlags::REPORT_MISSED_EVENTS) && st.count() != 0 {
            return Ok(1);
        }
        Ok(0)
    }

    /// Moves up to `wc.len()` completions of a kernel CQ into `wc`.
    pub(crate) fn poll(&self, wc: &mut [MaybeUninit<WorkCompletion>]) -> Result<usize> {
        let mut st = self.inner.state.lock();
        let Slots::Kernel(ring) = &mut st.slots else {
            return Err(EINVAL);
        };
        let mut n = 0;
        for slot in wc.iter_mut() {
            let Some(c) = ring.pop() else { break };
            slot.write(c.0);
            n += 1;
        }
        Ok(n)
    }
}

impl CqInner {
    fn resize_user(&self, entries: u32, udata: &Udata) -> Result<u32> {
        let mut new = SharedQueue::new(entries, cqe_size(), QueueType::ToClient, Some(udata))?;
        udata.respond(&ResizeCqResp { mi: new.mminfo() })?;
        let cap = new.capacity();
        let mut scratch = new.scratch()?;
        let mut st = self.state.lock();
        let Slots::User(old) = &st.slots else {
            return Err(EINVAL);
        };
        new.copy_pending_from(old, &mut scratch)?;
        let old = core::mem::replace(&mut st.slots, Slots::User(new));
        drop(st);
        // Freed (or handed to its mmap entry) outside the lock.
        drop(old);
        Ok(cap)
    }

    fn resize_kernel(&self, entries: u32) -> Result<u32> {
        let mut new = KernelRing::new(entries)?;
        let mut st = self.state.lock();
        let Slots::Kernel(old) = &mut st.slots else {
            return Err(EINVAL);
        };
        if old.len() > new.capacity() {
            return Err(EINVAL);
        }
        while let Some(wc) = old.pop() {
            new.push(wc)?;
        }
        let cap = new.capacity();
        let old = core::mem::replace(&mut st.slots, Slots::Kernel(new));
        drop(st);
        drop(old);
        Ok(cap)
    }

    /// Queues a completion of `qp` and leaves calling the consumer (its
    /// handler, or its event handler for a full CQ) to the caller, after it
    /// drops its own locks: the answer says what is due. A full CQ loses
    /// the completion (as rxe, which also reports `IB_EVENT_CQ_ERR`).
    pub(crate) fn post_quiet(&self, c: &Completion, qp: QpHandle) -> Posted {
        self.post_solicited_quiet(c, qp, false)
    }

    /// [`CqInner::post_quiet`] for a completion that may be solicited.
    pub(crate) fn post_solicited_quiet(
        &self,
        c: &Completion,
        qp: QpHandle,
        solicited: bool,
    ) -> Posted {
        if c.status != WcStatus::Success {
            rt::trace::wc_error(c.qp_num, c.status.raw() as u8, c.opcode.raw() as u8);
        }
        let mut st = self.state.lock();
        let queued = match &mut st.slots {
            Slots::User(q) => q.push(&c.to_user()),
            Slots::Kernel(r) => r.push(c.to_kernel(qp)),
            Slots::Gone => return Posted::Gone,
        };
        if queued.is_err() {
            return Posted::Overflow;
        }
        let fire = st.notify == CqNotifyFlags::NEXT_COMP || (!st.notify.is_empty() && solicited);
        if fire {
            st.notify = CqNotifyFlags::NONE;
            return Posted::Notify;
        }
        Posted::Queued
    }

    /// Calls the consumer's completion handler. Never with the CQ's lock
    /// held: a kernel consumer may poll from its handler.
    pub(crate) fn notify(&self) {
        self.handle.completion();
    }

    /// Reports `IB_EVENT_CQ_ERR` for a completion [`Posted::Overflow`]
    /// lost. Never with the CQ's lock or a QP's held: the consumer's event
    /// handler may call back into the driver.
    pub(crate) fn report_overflow(&self) {
        self.handle.event(Event::CqError);
    }

    /// `destroy_cq`: releases the ring now (a user ring's mmap entry
    /// belongs to the process's user context, which may go right after)
    /// and drops every later completion. QPs that still hold the CQ find
    /// it gone rather than a freed handle.
    pub(crate) fn destroy(&self) {
        let old = core::mem::replace(&mut self.state.lock().slots, Slots::Gone);
        // Freed (or handed to its mmap entry) outside the lock.
        drop(old);
    }
}
