// SPDX-License-Identifier: GPL-2.0

//! rxe queues: a ring ([`logic::queue::Queue`]) in queue memory that the
//! process may map ([`ib::QueueBuf`]), laid out as `struct rxe_queue_buf`.
//!
//! The driver owns one end of each ring (the producer of a CQ, the consumer
//! of a send or receive queue) and keeps that index privately; the other
//! end's index is read from the shared header, masked, on every use.

use crate::{
    ffi::{
        ib::{QueueBuf, Udata},
        rxe_abi::MmInfo,
    },
    logic::queue::{
        End, Queue, QueueError, QueueType, Ring, CONSUMER_INDEX_OFFSET, HEADER_LEN,
        INDEX_MASK_OFFSET, LOG2_ELEM_SIZE_OFFSET, PRODUCER_INDEX_OFFSET,
    },
};
use kernel::prelude::*;

/// One rxe queue.
pub(crate) struct SharedQueue {
    q: Queue,
    buf: QueueBuf,
    /// Where the process maps it (zero for kernel queues).
    mminfo: MmInfo,
    /// Whether a process maps it (its header is then hostile).
    user: bool,
}

fn ring_error(e: QueueError) -> Error {
    match e {
        QueueError::TooLarge => ENOMEM,
        _ => EINVAL,
    }
}

/// Header offsets of the index the driver owns and of the peer's.
fn index_offsets(kind: QueueType) -> (usize, usize) {
    match kind.local_end() {
        End::Producer => (PRODUCER_INDEX_OFFSET, CONSUMER_INDEX_OFFSET),
        End::Consumer => (CONSUMER_INDEX_OFFSET, PRODUCER_INDEX_OFFSET),
    }
}

impl SharedQueue {
    /// A queue for at least `num_elem` elements of `elem_size` bytes, of
    /// which the driver owns the end `kind` says, mapped into the process
    /// behind `udata` if there is one.
    pub(crate) fn new(
        num_elem: u32,
        elem_size: usize,
        kind: QueueType,
        udata: Option<&Udata>,
    ) -> Result<Self> {
        let elem_size = u32::try_from(elem_size).map_err(|_| EINVAL)?;
        let ring = Ring::new(num_elem, elem_size).map_err(ring_error)?;
        let mut buf = QueueBuf::new(ring.buf_len())?;
        // The geometry is published for the provider; the kernel itself
        // never reads it back.
        buf.store_release(LOG2_ELEM_SIZE_OFFSET, ring.log2_elem_size());
        buf.store_release(INDEX_MASK_OFFSET, ring.index_mask());
        let mminfo = match udata {
            Some(udata) => {
                // The size first: a buffer too large to describe is never
                // exposed.
                let size = u32::try_from(ring.buf_len()).map_err(|_| EINVAL)?;
                MmInfo {
                    offset: buf.expose(udata)?,
                    size,
                    pad: 0,
                }
            }
            None => MmInfo::default(),
        };
        Ok(Self {
            q: Queue::new(ring, kind),
            buf,
            mminfo,
            user: udata.is_some(),
        })
    }

    /// The mapping information for the create response.
    pub(crate) fn mminfo(&self) -> MmInfo {
        self.mminfo
    }

    /// How many elements the queue holds (what rxe reports as its size).
    pub(crate) fn capacity(&self) -> u32 {
        self.q.ring().capacity()
    }

    fn ring(&self) -> &Ring {
        self.q.ring()
    }

    /// The peer's index as last published (masked by the users of
    /// [`Queue`]).
    fn peer(&self) -> u32 {
        self.buf.load_acquire(index_offsets(self.q.kind()).1)
    }

    fn publish(&self, index: u32) {
        self.buf
            .store_release(index_offsets(self.q.kind()).0, index);
    }

    /// Number of elements between consumer and producer.
    pub(crate) fn count(&self) -> u32 {
        self.q.count(self.peer())
    }

    /// Producer side: copies `elem` into the next slot and publishes it.
    /// `EBUSY` when the ring is full.
    pub(crate) fn push<T>(&mut self, elem: &T) -> Result {
        if self.q.kind().local_end() != End::Producer || size_of::<T>() > self.ring().elem_size() {
            return Err(EINVAL);
        }
        let peer = self.peer();
        if self.q.is_full(peer) {
            return Err(EBUSY);
        }
        let offset = self.ring().buf_offset(self.q.local_index()).ok_or(EINVAL)?;
        self.buf.write_value(offset, elem)?;
        let next = self.q.advance(peer).map_err(|_| EBUSY)?;
        self.publish(next);
        Ok(())
    }

    /// Consumer side: copies the start of the oldest element into `dst`;
    /// `false` when the queue is empty.
    pub(crate) fn peek(&self, dst: &mut [u8]) -> bool {
        if self.q.kind().local_end() != End::Consumer || self.q.is_empty(self.peer()) {
            return false;
        }
        let len = dst.len().min(self.ring().elem_size());
        match self.ring().buf_offset(self.q.local_index()) {
            Some(offset) => self.buf.read(offset, &mut dst[..len]).is_ok(),
            None => false,
        }
    }

    /// Consumer side: copies the element `n` places after the oldest into
    /// `dst` (as much as fits); `false` when fewer than `n + 1` are queued.
    /// The data path reads WQEs ahead of the ones it has consumed.
    pub(crate) fn peek_nth(&self, n: u32, dst: &mut [u8]) -> bool {
        if self.q.kind().local_end() != End::Consumer || n >= self.count() {
            return false;
        }
        let len = dst.len().min(self.ring().elem_size());
        let index = self.q.local_index().wrapping_add(n);
        match self.ring().buf_offset(index) {
            Some(offset) => self.buf.read(offset, &mut dst[..len]).is_ok(),
            None => false,
        }
    }

    /// The size of one element.
    pub(crate) fn elem_size(&self) -> usize {
        self.ring().elem_size()
    }

    /// Consumer side: drops the oldest element; `false` when empty.
    pub(crate) fn pop(&mut self) -> bool {
        match self.q.advance(self.peer()) {
            Ok(next) => {
                self.publish(next);
                true
            }
            Err(_) => false,
        }
    }

    /// Consumer side: consumes the elements queued now, handing the first
    /// eight bytes of each (zeroes if unreadable) to `each` for as long as
    /// it returns `true`; the rest are consumed unread. The peer's index is
    /// read once, so however a process rewrites it meanwhile this reads at
    /// most the ring's capacity: callers hold spinlocks with interrupts off.
    pub(crate) fn drain(&mut self, mut each: impl FnMut(&[u8; 8]) -> bool) {
        if self.q.kind().local_end() != End::Consumer {
            return;
        }
        let peer = self.peer();
        let len = self.ring().elem_size().min(8);
        for _ in 0..self.q.count(peer) {
            let mut head = [0u8; 8];
            if let Some(offset) = self.ring().buf_offset(self.q.local_index()) {
                let _ = self.buf.read(offset, &mut head[..len]);
            }
            let more = each(&head);
            if self.q.advance(peer).is_err() || !more {
                break;
            }
        }
        let (next, _) = self.q.consume_all(peer);
        self.publish(next);
    }

    /// Drops every element and zeroes the slots, as rxe does when its QP
    /// is reset. The indices stay where they are (the provider keeps its
    /// own copy of its end).
    pub(crate) fn clear(&mut self) {
        let (next, _) = self.q.consume_all(self.peer());
        self.publish(next);
        let data = self.ring().data_len();
        // Cannot fail: the slots follow the header inside the buffer.
        let _ = self.buf.zero(HEADER_LEN, data);
    }

    /// The client side of a kernel consumer's queue: lets `fill` write
    /// the producer's slot, then publishes it. `EINVAL` for a user queue
    /// (whose producer is the process), `ENOMEM` when full (as rxe).
    pub(crate) fn client_push(&self, fill: impl FnOnce(&mut Slot<'_>) -> Result) -> Result {
        if self.user || self.q.kind().local_end() != End::Consumer {
            return Err(EINVAL);
        }
        let ring = self.ring();
        let prod = ring.mask(self.peer());
        if ring.is_full(prod, self.q.local_index()) {
            return Err(ENOMEM);
        }
        let base = ring.buf_offset(prod).ok_or(EINVAL)?;
        fill(&mut Slot {
            buf: &self.buf,
            base,
            len: ring.elem_size(),
        })?;
        self.buf
            .store_release(PRODUCER_INDEX_OFFSET, ring.next(prod));
        Ok(())
    }
}

/// One slot of a queue, being filled.
pub(crate) struct Slot<'a> {
    buf: &'a QueueBuf,
    base: usize,
    len: usize,
}

impl Slot<'_> {
    /// Writes `value` at `offset` in the slot; `EINVAL` past its end.
    pub(crate) fn put<T>(&mut self, offset: usize, value: &T) -> Result {
        match offset.checked_add(size_of::<T>()) {
            Some(end) if end <= self.len => self.buf.write_value(self.base + offset, value),
            _ => Err(EINVAL),
        }
    }

    /// Writes `bytes` at `offset` in the slot; `EINVAL` past its end.
    pub(crate) fn put_bytes(&mut self, offset: usize, bytes: &[u8]) -> Result {
        match offset.checked_add(bytes.len()) {
            Some(end) if end <= self.len => self.buf.write(self.base + offset, bytes),
            _ => Err(EINVAL),
        }
    }
}

impl SharedQueue {
    /// A buffer for one element, for [`SharedQueue::copy_pending_from`]
    /// (which may run under a spinlock, so it cannot allocate).
    pub(crate) fn scratch(&self) -> Result<KVec<u8>> {
        Ok(KVec::from_elem(0u8, self.ring().elem_size(), GFP_KERNEL)?)
    }

    /// Copies the elements `other` holds (consumer to producer) to the start
    /// of this empty queue of the same kind and publishes them. `EINVAL` if
    /// they do not fit.
    pub(crate) fn copy_pending_from(&mut self, other: &SharedQueue, slot: &mut [u8]) -> Result {
        let count = other.count();
        if count > self.capacity()
            || other.q.kind() != self.q.kind()
            || other.ring().elem_size() != self.ring().elem_size()
            || slot.len() != self.ring().elem_size()
        {
            return Err(EINVAL);
        }
        let (_, cons) = other.q.indices(other.peer());
        for i in 0..count {
            let from = other
                .ring()
                .buf_offset(cons.wrapping_add(i))
                .ok_or(EINVAL)?;
            let to = self.ring().buf_offset(i).ok_or(EINVAL)?;
            other.buf.read(from, slot)?;
            self.buf.write(to, slot)?;
        }
        self.buf.store_release(CONSUMER_INDEX_OFFSET, 0);
        if self.q.kind().local_end() == End::Producer {
            // Our own end: move it past the copies, then publish.
            for _ in 0..count {
                self.q.advance(0).map_err(|_| EINVAL)?;
            }
        }
        self.buf.store_release(PRODUCER_INDEX_OFFSET, count);
        Ok(())
    }
}
