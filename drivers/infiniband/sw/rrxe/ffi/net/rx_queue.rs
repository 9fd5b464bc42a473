// SPDX-License-Identifier: GPL-2.0

//! A bounded queue of received datagrams (an `sk_buff_head`): how the CPU
//! that received a datagram hands it to the CPU that processes it.

use super::udp_tunnel::{RxDatagram, Stash};
use crate::ffi::sys;
use core::ptr::NonNull;
use kernel::{prelude::*, types::Opaque};

/// A queue of at most `limit` datagrams, safe to use from any context.
/// Whatever is left in it is freed on drop.
///
/// # Invariants
///
/// `head` is an initialised `sk_buff_head` whose buffers are each the
/// buffer of an [`RxDatagram`] taken apart by `RxDatagram::into_parts`,
/// with the rest of it (a [`Stash`]) written in the buffer's `cb`.
#[pin_data(PinnedDrop)]
pub(crate) struct RxQueue {
    #[pin]
    head: Opaque<sys::sk_buff_head>,
    limit: u32,
}

// SAFETY: the queue has its own lock; the datagrams in it are `Send`.
unsafe impl Send for RxQueue {}
// SAFETY: every operation takes the queue's lock (or reads its length
// without one, which the kernel allows).
unsafe impl Sync for RxQueue {}

impl RxQueue {
    /// An empty queue that takes at most `limit` datagrams.
    pub(crate) fn new(limit: u32) -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `q` is pinned memory for a queue head, set up here.
            head <- Opaque::ffi_init(|q| unsafe { sys::rrxe_rxq_init(q) }),
            limit,
        })
    }

    /// Queues `dg` at the tail: `Ok(true)` if the queue was empty, or the
    /// datagram back if the queue is full.
    pub(crate) fn push(&self, dg: RxDatagram) -> Result<bool, RxDatagram> {
        let (skb, stash) = dg.into_parts();
        // SAFETY: we own the buffer; its `cb` is 48 bytes, 8-aligned, ours
        // while we own it, and `Stash` fits (checked where it is defined).
        let cb = unsafe { sys::rrxe_skb_cb(skb.as_ptr()) }.cast::<Stash>();
        // SAFETY: as above; the slot is written before the buffer is queued.
        unsafe { cb.write(stash) };
        // SAFETY: the head is initialised (type invariants); the buffer is
        // ours, and becomes the queue's if it is queued.
        let r = unsafe { sys::rrxe_rxq_push(self.head.get(), skb.as_ptr(), self.limit) };
        if r < 0 {
            // SAFETY: not queued: the buffer and the stash just written in
            // it are still ours, from one `into_parts`.
            return Err(unsafe { RxDatagram::from_parts(skb, cb.read()) });
        }
        Ok(r == 1)
    }

    /// Queues `dg` at the head, whatever the queue holds: a datagram taken
    /// out and put back, which must be taken first again (the queue may
    /// then hold one more than its limit).
    pub(crate) fn push_front(&self, dg: RxDatagram) {
        let (skb, stash) = dg.into_parts();
        // SAFETY: as in `push`.
        let cb = unsafe { sys::rrxe_skb_cb(skb.as_ptr()) }.cast::<Stash>();
        // SAFETY: as in `push`.
        unsafe { cb.write(stash) };
        // SAFETY: the head is initialised (type invariants); the buffer,
        // ours with its stash in `cb`, becomes the queue's.
        unsafe { sys::rrxe_rxq_push_head(self.head.get(), skb.as_ptr()) };
    }

    /// The datagram at the head, if any.
    pub(crate) fn pop(&self) -> Option<RxDatagram> {
        // SAFETY: the head is initialised (type invariants).
        let skb = NonNull::new(unsafe { sys::rrxe_rxq_pop(self.head.get()) })?;
        // SAFETY: every queued buffer carries its stash in `cb` (type
        // invariants); dequeued, buffer and stash are ours again.
        let stash = unsafe { sys::rrxe_skb_cb(skb.as_ptr()).cast::<Stash>().read() };
        // SAFETY: both come from one `into_parts`, the data unchanged.
        Some(unsafe { RxDatagram::from_parts(skb, stash) })
    }

    /// Whether the queue is empty (a snapshot).
    pub(crate) fn is_empty(&self) -> bool {
        // SAFETY: the head is initialised (type invariants).
        unsafe { sys::rrxe_rxq_empty(self.head.get()) }
    }

    /// Frees every datagram in the queue.
    pub(crate) fn purge(&self) {
        while let Some(dg) = self.pop() {
            drop(dg);
        }
    }
}

#[pinned_drop]
impl PinnedDrop for RxQueue {
    fn drop(self: Pin<&mut Self>) {
        self.purge();
    }
}
