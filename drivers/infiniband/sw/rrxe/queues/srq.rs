// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues: one receive ring the process maps and several QPs
//! consume, with a limit that raises an event when it runs low.

use crate::{
    dev::params,
    ffi::{
        ib::{
            Event, PostError, RecvWrs, SrqAttr, SrqAttrMask, SrqHandle, SrqInitAttr, SrqType, Udata,
        },
        rxe_abi::{CreateSrqResp, ModifySrqCmd, RecvWqe, Sge},
    },
    logic::queue::QueueType,
    queues::post,
    queues::queue::SharedQueue,
};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    new_spinlock_irq,
    prelude::*,
    sync::{Arc, SpinLockIrq},
};

/// A receive taken from an SRQ ([`SrqInner::take`]).
pub(crate) struct Taken {
    /// The SRQ fell below its armed limit, which is now disarmed:
    /// `IB_EVENT_SRQ_LIMIT_REACHED` is due ([`SrqInner::report_limit`]).
    pub(crate) limit_reached: bool,
}

/// SRQ numbers start here, as in rxe.
const FIRST_SRQN: u32 = 0x0002_0001;

struct SrqState {
    queue: SharedQueue,
    limit: u32,
}

/// An SRQ's state, shared with the QPs that receive from it.
#[pin_data]
pub(crate) struct SrqInner {
    #[pin]
    state: SpinLockIrq<SrqState>,
    is_user: bool,
    max_sge: u32,
    handle: SrqHandle,
}

/// The driver data of an SRQ.
pub(crate) struct RrxeSrq {
    pub(crate) inner: Arc<SrqInner>,
}

impl core::ops::Deref for RrxeSrq {
    type Target = SrqInner;

    fn deref(&self) -> &SrqInner {
        &self.inner
    }
}

fn wqe_size(max_sge: u32) -> usize {
    size_of::<RecvWqe>() + max_sge as usize * size_of::<Sge>()
}

/// Checks a requested number of work requests.
fn check_max_wr(max_wr: u32) -> Result {
    if max_wr == 0 || max_wr > params::MAX_QP_WR {
        return Err(EINVAL);
    }
    Ok(())
}

/// Hands out SRQ numbers.
pub(crate) struct SrqNumbers(AtomicU32);

impl SrqNumbers {
    /// Numbering from rxe's first SRQ index.
    pub(crate) const fn new() -> Self {
        Self(AtomicU32::new(FIRST_SRQN))
    }

    fn next(&self) -> u32 {
        self.0.fetch_add(1, Ordering::Relaxed)
    }
}

impl RrxeSrq {
    /// Creates an SRQ as rxe does and answers the provider.
    pub(crate) fn new(
        numbers: &SrqNumbers,
        handle: SrqHandle,
        init: &mut SrqInitAttr,
        udata: Option<&Udata>,
    ) -> Result<Self> {
        // Basic SRQs only, as rxe.
        if init.kind() != SrqType::BASIC {
            return Err(EOPNOTSUPP);
        }
        if udata.is_some_and(|u| u.outlen() < size_of::<CreateSrqResp>()) {
            return Err(EINVAL);
        }
        let attr = &mut init.attr;
        check_max_wr(attr.max_wr)?;
        if attr.max_sge > params::MAX_SRQ_SGE {
            return Err(EINVAL);
        }
        let max_sge = attr.max_sge.max(1);
        let queue = SharedQueue::new(attr.max_wr, wqe_size(max_sge), QueueType::FromClient, udata)?;
        attr.max_wr = queue.capacity();
        attr.max_sge = max_sge;
        if let Some(udata) = udata {
            udata.respond(&CreateSrqResp {
                mi: queue.mminfo(),
                srq_num: numbers.next(),
                reserved: 0,
            })?;
        }
        let inner = Arc::pin_init(
            pin_init!(SrqInner {
                state <- new_spinlock_irq!(SrqState {
                    queue,
                    limit: attr.srq_limit,
                }),
                max_sge,
                is_user: udata.is_some(),
                handle,
            }),
            GFP_KERNEL,
        )?;
        Ok(Self { inner })
    }
}

impl SrqInner {
    /// The most SGEs of one receive.
    pub(crate) fn max_sge(&self) -> u32 {
        self.max_sge
    }

    /// The size of one receive WQE.
    pub(crate) fn elem_size(&self) -> usize {
        self.state.lock().queue.elem_size()
    }

    /// Takes the oldest receive for a QP's message, copying it into `dst`;
    /// `None` if there is none. Crossing below the armed limit disarms it
    /// and makes `IB_EVENT_SRQ_LIMIT_REACHED` due, once (IBA o10-16): the
    /// caller reports it ([`SrqInner::report_limit`]) after it dropped its
    /// own locks, since a QP takes receives under its lock.
    pub(crate) fn take(&self, dst: &mut [u8]) -> Option<Taken> {
        let mut st = self.state.lock();
        if !st.queue.peek(dst) {
            return None;
        }
        st.queue.pop();
        let limit_reached = st.limit != 0 && st.queue.count() < st.limit;
        if limit_reached {
            st.limit = 0;
        }
        Some(Taken { limit_reached })
    }

    /// Reports `IB_EVENT_SRQ_LIMIT_REACHED`, which a [`Taken`] said is due.
    /// Never with the SRQ's lock or a QP's held: the consumer's event
    /// handler may post receives or re-arm the limit.
    pub(crate) fn report_limit(&self) {
        self.handle.event(Event::SrqLimitReached);
    }

    /// `post_srq_recv` from a kernel consumer.
    pub(crate) fn post(&self, wrs: RecvWrs<'_>) -> Result<(), PostError> {
        if self.is_user {
            return Err(PostError {
                posted: 0,
                err: EINVAL,
            });
        }
        post::post_recvs(&self.state.lock().queue, wrs, self.max_sge)
    }

    /// `modify_srq`: a new size (keeping posted receives) and/or limit.
    pub(crate) fn modify(
        &self,
        attr: &mut SrqAttr,
        mask: SrqAttrMask,
        udata: Option<&Udata>,
    ) -> Result {
        let supported = SrqAttrMask::MAX_WR | SrqAttrMask::LIMIT;
        if !mask.without(supported).is_empty() {
            return Err(EINVAL);
        }
        let (capacity, limit) = {
            let st = self.state.lock();
            (st.queue.capacity(), st.limit)
        };
        if mask.contains(SrqAttrMask::MAX_WR) {
            check_max_wr(attr.max_wr)?;
            if limit != 0 && attr.max_wr < limit {
                return Err(EINVAL);
            }
        }
        if mask.contains(SrqAttrMask::LIMIT) && attr.srq_limit > capacity {
            return Err(EINVAL);
        }
        if mask.contains(SrqAttrMask::MAX_WR) {
            self.resize(attr, udata)?;
        }
        if mask.contains(SrqAttrMask::LIMIT) {
            self.state.lock().limit = attr.srq_limit;
        }
        Ok(())
    }

    /// rxe's ABI puts the new ring's `mminfo` at an address in the command
    /// rather than in the response.
    fn resize(&self, attr: &mut SrqAttr, udata: Option<&Udata>) -> Result {
        let cmd = match udata {
            Some(u) => Some(u.read::<ModifySrqCmd>()?),
            None => None,
        };
        let mut new = SharedQueue::new(
            attr.max_wr,
            wqe_size(self.max_sge),
            QueueType::FromClient,
            udata,
        )?;
        if let (Some(u), Some(cmd)) = (udata, cmd) {
            u.write_user(cmd.mmap_info_addr, &new.mminfo())?;
        }
        let mut scratch = new.scratch()?;
        attr.max_wr = new.capacity();
        let mut st = self.state.lock();
        new.copy_pending_from(&st.queue, &mut scratch)?;
        let old = core::mem::replace(&mut st.queue, new);
        drop(st);
        // Freed (or handed to its mmap entry) outside the lock.
        drop(old);
        Ok(())
    }

    /// `query_srq`.
    pub(crate) fn query(&self, attr: &mut SrqAttr) {
        let st = self.state.lock();
        attr.max_wr = st.queue.capacity();
        attr.srq_limit = st.limit;
        attr.max_sge = self.max_sge;
    }
}
