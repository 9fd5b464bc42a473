// SPDX-License-Identifier: GPL-2.0

//! rxe queues: a ring ([`logic::queue::Ring`]) in queue memory that the
//! process may map ([`ib::QueueBuf`]), laid out as `struct rxe_queue_buf`.

use crate::{
    ib::{MmInfo, QueueBuf, Udata},
    logic::queue::{
        QueueError, Ring, CONSUMER_INDEX_OFFSET, INDEX_MASK_OFFSET, LOG2_ELEM_SIZE_OFFSET,
        PRODUCER_INDEX_OFFSET,
    },
};
use kernel::prelude::*;

/// One rxe queue.
pub(crate) struct SharedQueue {
    ring: Ring,
    buf: QueueBuf,
    /// Where the process maps it (zero for kernel queues).
    mminfo: MmInfo,
}

fn ring_error(e: QueueError) -> Error {
    match e {
        QueueError::TooLarge => ENOMEM,
        _ => EINVAL,
    }
}

impl SharedQueue {
    /// A queue for at least `num_elem` elements of `elem_size` bytes, mapped
    /// into the process behind `udata` if there is one.
    pub(crate) fn new(num_elem: u32, elem_size: usize, udata: Option<&Udata>) -> Result<Self> {
        let elem_size = u32::try_from(elem_size).map_err(|_| EINVAL)?;
        let ring = Ring::new(num_elem, elem_size).map_err(ring_error)?;
        let mut buf = QueueBuf::new(ring.buf_len())?;
        // The geometry is published for the provider; the kernel itself
        // never reads it back.
        buf.store_release(LOG2_ELEM_SIZE_OFFSET, ring.log2_elem_size());
        buf.store_release(INDEX_MASK_OFFSET, ring.index_mask());
        let mminfo = match udata {
            Some(udata) => buf.expose(udata)?,
            None => MmInfo::default(),
        };
        Ok(Self { ring, buf, mminfo })
    }

    /// The mapping information for the create response.
    pub(crate) fn mminfo(&self) -> MmInfo {
        self.mminfo
    }

    /// How many elements the queue holds (what rxe reports as its size).
    pub(crate) fn capacity(&self) -> u32 {
        self.ring.capacity()
    }

    /// The producer index as last published, masked into the ring.
    pub(crate) fn producer(&self) -> u32 {
        self.ring.mask(self.buf.load_acquire(PRODUCER_INDEX_OFFSET))
    }

    /// The consumer index as last published, masked into the ring.
    pub(crate) fn consumer(&self) -> u32 {
        self.ring.mask(self.buf.load_acquire(CONSUMER_INDEX_OFFSET))
    }

    /// Number of elements between consumer and producer.
    pub(crate) fn count(&self) -> u32 {
        self.ring.count(self.producer(), self.consumer())
    }
}

impl SharedQueue {
    /// A buffer for one element, for [`SharedQueue::copy_pending_from`]
    /// (which may run under a spinlock, so it cannot allocate).
    pub(crate) fn scratch(&self) -> Result<KVec<u8>> {
        Ok(KVec::from_elem(0u8, self.ring.elem_size(), GFP_KERNEL)?)
    }

    /// Copies the elements `other` holds (consumer to producer) to the start
    /// of this empty queue and publishes them. `EINVAL` if they do not fit.
    pub(crate) fn copy_pending_from(&self, other: &SharedQueue, slot: &mut [u8]) -> Result {
        let count = other.count();
        if count > self.capacity()
            || other.ring.elem_size() != self.ring.elem_size()
            || slot.len() != self.ring.elem_size()
        {
            return Err(EINVAL);
        }
        let cons = other.consumer();
        for i in 0..count {
            let from = other.ring.buf_offset(cons.wrapping_add(i)).ok_or(EINVAL)?;
            let to = self.ring.buf_offset(i).ok_or(EINVAL)?;
            other.buf.read(from, slot)?;
            self.buf.write(to, slot)?;
        }
        self.buf.store_release(CONSUMER_INDEX_OFFSET, 0);
        self.buf.store_release(PRODUCER_INDEX_OFFSET, count);
        Ok(())
    }
}
