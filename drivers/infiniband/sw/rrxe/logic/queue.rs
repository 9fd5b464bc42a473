// SPDX-License-Identifier: GPL-2.0

//! Index arithmetic for the rings rxe shares with its clients.
//!
//! Work, receive and completion queues are rings of equal-sized slots in
//! one buffer that user space maps (`struct rxe_queue_buf` in
//! `include/uapi/rdma/rdma_user_rxe.h`): a header holding the slot size,
//! the index mask and the producer and consumer indices (each on its own
//! cache line), followed by the slots. The number of slots is a power of
//! two and indices are kept masked, so `prod == cons` means empty and one
//! slot always stays unused to tell full from empty.
//!
//! User space can write anything into that buffer at any time. So the ring
//! geometry lives only in the driver's [`Ring`], never read back from the
//! shared header, and every index read from shared memory goes through
//! [`Ring::mask`] (all functions here do it) before it becomes an offset.
//! Whatever the values, an offset from this module lies inside the slots.

/// Size of the shared header (`struct rxe_queue_buf` without `data`).
pub(crate) const HEADER_LEN: usize = 384;
/// Offset of `log2_elem_size` in the shared header.
pub(crate) const LOG2_ELEM_SIZE_OFFSET: usize = 0;
/// Offset of `index_mask` in the shared header.
pub(crate) const INDEX_MASK_OFFSET: usize = 4;
/// Offset of `producer_index` in the shared header (second cache line).
pub(crate) const PRODUCER_INDEX_OFFSET: usize = 128;
/// Offset of `consumer_index` in the shared header (third cache line).
pub(crate) const CONSUMER_INDEX_OFFSET: usize = 256;

/// `cache_line_size()` on x86-64 and most arm64 parts: the smallest slot
/// rxe uses, so two slots never share a line.
pub(crate) const DEFAULT_CACHE_LINE: u32 = 64;
/// Largest number of slots a ring may have (2^24). rxe's own limits
/// (2^20 work requests, so 2^21 slots) stay well below it.
pub(crate) const MAX_SLOTS: u32 = 1 << 24;
/// Largest slot size (64 KiB), far above any rxe work request or CQE.
pub(crate) const MAX_ELEM_SIZE: u32 = 1 << 16;
/// Largest whole buffer (header plus slots) a ring may need: 4 GiB.
pub(crate) const MAX_RING_BYTES: u64 = 1 << 32;

/// Why a ring cannot be created or an index cannot move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QueueError {
    /// The cache line size given is not a power of two.
    BadCacheLine(u32),
    /// The requested element size rounds up past [`MAX_ELEM_SIZE`].
    ElemTooLarge(u32),
    /// The requested number of elements needs more than [`MAX_SLOTS`]
    /// slots.
    TooManyElems(u32),
    /// The buffer would exceed [`MAX_RING_BYTES`] or the address space.
    TooLarge,
    /// The producer cannot advance: the ring is full.
    Full,
    /// The consumer cannot advance: the ring is empty.
    Empty,
}

/// The validated geometry of one ring. Only [`Ring::new`] and
/// [`Ring::with_cache_line`] make one, so `index_mask + 1` is always a power
/// of two of at most [`MAX_SLOTS`] and the whole buffer fits in `usize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ring {
    /// Number of slots minus one; masks any index into the ring.
    index_mask: u32,
    /// Log2 of the (padded) slot size.
    log2_elem_size: u32,
}

impl Ring {
    /// A ring for `num_elem` elements of `elem_size` bytes, with slots
    /// padded to at least [`DEFAULT_CACHE_LINE`]. See
    /// [`Ring::with_cache_line`].
    pub(crate) fn new(num_elem: u32, elem_size: u32) -> Result<Ring, QueueError> {
        Ring::with_cache_line(num_elem, elem_size, DEFAULT_CACHE_LINE)
    }

    /// A ring for `num_elem` elements of `elem_size` bytes, sized as C rxe's
    /// `rxe_queue_init` does: each slot is `elem_size` rounded up to at least
    /// `cache_line` and to a power of two, and there are `num_elem + 1`
    /// slots rounded up to a power of two (the extra slot tells full from
    /// empty). [`Ring::capacity`] is then at least `num_elem`, and is what
    /// rxe reports back as the queue's actual size.
    pub(crate) fn with_cache_line(
        num_elem: u32,
        elem_size: u32,
        cache_line: u32,
    ) -> Result<Ring, QueueError> {
        if !cache_line.is_power_of_two() {
            return Err(QueueError::BadCacheLine(cache_line));
        }
        let slot = elem_size
            .max(cache_line)
            .checked_next_power_of_two()
            .filter(|&s| s <= MAX_ELEM_SIZE)
            .ok_or(QueueError::ElemTooLarge(elem_size))?;
        let num_slots = num_elem
            .checked_add(1)
            .and_then(u32::checked_next_power_of_two)
            .filter(|&n| n <= MAX_SLOTS)
            .ok_or(QueueError::TooManyElems(num_elem))?;
        let ring = Ring {
            index_mask: num_slots - 1,
            log2_elem_size: slot.trailing_zeros(),
        };
        // Checked once here so that every later offset computation, which
        // stays below this size, is known not to overflow.
        let bytes = u64::from(num_slots)
            .checked_mul(u64::from(slot))
            .and_then(|d| d.checked_add(HEADER_LEN as u64))
            .filter(|&b| b <= MAX_RING_BYTES)
            .ok_or(QueueError::TooLarge)?;
        usize::try_from(bytes).map_err(|_| QueueError::TooLarge)?;
        Ok(ring)
    }

    /// The value of `index_mask` (number of slots minus one) to publish in
    /// the shared header.
    pub(crate) const fn index_mask(&self) -> u32 {
        self.index_mask
    }

    /// The value of `log2_elem_size` to publish in the shared header.
    pub(crate) const fn log2_elem_size(&self) -> u32 {
        self.log2_elem_size
    }

    /// Number of slots, a power of two.
    pub(crate) const fn num_slots(&self) -> u32 {
        // Cannot overflow: the mask is below MAX_SLOTS.
        self.index_mask + 1
    }

    /// Most elements the ring holds at once: one less than the slots.
    pub(crate) const fn capacity(&self) -> u32 {
        self.index_mask
    }

    /// Bytes per slot (the padded element size).
    pub(crate) const fn elem_size(&self) -> usize {
        1 << self.log2_elem_size
    }

    /// Bytes of all slots together (the buffer after the header).
    pub(crate) fn data_len(&self) -> usize {
        // In range by construction (see `with_cache_line`).
        (self.num_slots() as usize) << self.log2_elem_size
    }

    /// Bytes of the whole shared buffer: header plus slots.
    pub(crate) fn buf_len(&self) -> usize {
        HEADER_LEN + self.data_len()
    }

    /// `index` reduced into the ring. Apply to any index read from memory
    /// the other side can write.
    pub(crate) const fn mask(&self, index: u32) -> u32 {
        index & self.index_mask
    }

    /// The index after `index`, wrapping to 0.
    pub(crate) const fn next(&self, index: u32) -> u32 {
        index.wrapping_add(1) & self.index_mask
    }

    /// Number of elements between consumer `cons` and producer `prod`.
    /// Never more than [`Ring::capacity`], whatever the inputs.
    pub(crate) const fn count(&self, prod: u32, cons: u32) -> u32 {
        prod.wrapping_sub(cons) & self.index_mask
    }

    /// True if there is nothing to consume.
    pub(crate) const fn is_empty(&self, prod: u32, cons: u32) -> bool {
        self.count(prod, cons) == 0
    }

    /// True if the producer may not advance (one slot stays unused).
    pub(crate) const fn is_full(&self, prod: u32, cons: u32) -> bool {
        self.count(prod, cons) == self.index_mask
    }

    /// Number of elements the producer can still add.
    pub(crate) const fn free_slots(&self, prod: u32, cons: u32) -> u32 {
        self.index_mask - self.count(prod, cons)
    }

    /// True if slot `index` holds an element produced but not yet consumed
    /// (lies in `cons..prod` around the ring).
    pub(crate) const fn is_in_use(&self, prod: u32, cons: u32, index: u32) -> bool {
        self.count(index, cons) < self.count(prod, cons)
    }

    /// True if `count` elements fit, as when resizing a ring that holds
    /// them.
    pub(crate) const fn can_hold(&self, count: u32) -> bool {
        count <= self.index_mask
    }

    /// Offset of slot `index` (masked first) from the start of the slots,
    /// always `< data_len()` and a multiple of [`Ring::elem_size`]. `None`
    /// only if the geometry were inconsistent, which construction rules out.
    pub(crate) fn slot_offset(&self, index: u32) -> Option<usize> {
        let slot = usize::try_from(self.mask(index)).ok()?;
        slot.checked_mul(self.elem_size())
    }

    /// Offset of slot `index` (masked first) from the start of the shared
    /// buffer, i.e. after the header.
    pub(crate) fn buf_offset(&self, index: u32) -> Option<usize> {
        self.slot_offset(index)?.checked_add(HEADER_LEN)
    }

    /// The index of the slot starting at `offset` from the start of the
    /// slots, or `None` if `offset` is past the slots or not at a slot
    /// boundary (the inverse of [`Ring::slot_offset`]).
    pub(crate) fn index_at(&self, offset: usize) -> Option<u32> {
        if offset >= self.data_len() || offset & (self.elem_size() - 1) != 0 {
            return None;
        }
        u32::try_from(offset >> self.log2_elem_size).ok()
    }
}

/// Which side of a ring an index belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// Writes elements and advances `producer_index`.
    Producer,
    /// Reads elements and advances `consumer_index`.
    Consumer,
}

/// Who produces and who consumes on a ring, from the point of view of the
/// code holding it (C rxe's `enum queue_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QueueType {
    /// `QUEUE_TYPE_TO_CLIENT`: rxe produces, a client (possibly user
    /// space) consumes. Completion queues. Held by rxe.
    ToClient,
    /// `QUEUE_TYPE_FROM_CLIENT`: a client (possibly user space) produces,
    /// rxe consumes. Send and receive queues. Held by rxe.
    FromClient,
    /// `QUEUE_TYPE_FROM_ULP`: a kernel ULP produces, rxe consumes. Held by
    /// the verbs code posting on the ULP's behalf.
    FromUlp,
    /// `QUEUE_TYPE_TO_ULP`: rxe produces, a kernel ULP consumes. Held by
    /// the verbs code polling on the ULP's behalf.
    ToUlp,
}

impl QueueType {
    /// The end the holder of this view advances; the other end belongs to
    /// the peer and is only ever read.
    pub(crate) const fn local_end(self) -> End {
        match self {
            QueueType::ToClient | QueueType::FromUlp => End::Producer,
            QueueType::FromClient | QueueType::ToUlp => End::Consumer,
        }
    }

    /// True if the peer may be a user process, so its index in the shared
    /// header is hostile and the holder must keep its own index privately.
    pub(crate) const fn peer_may_be_user(self) -> bool {
        matches!(self, QueueType::ToClient | QueueType::FromClient)
    }
}

/// One side's view of a ring: the geometry, which end it owns, and the
/// private copy of that end's index.
///
/// The owned index is only ever changed here and is always masked; the
/// driver publishes it to the shared header with a release store after
/// [`Queue::advance`]. The peer's index is read from the shared header
/// (with an acquire load) and passed in as `peer`; it is masked before use,
/// so a garbage value can at worst make the ring look fuller or emptier,
/// never address outside it.
///
/// There is deliberately no way to rewind the owned index: when a QP is
/// reset C rxe drains the queues and clears the slots but leaves both
/// indices where they are, and user space relies on that.
///
/// C rxe keeps a private copy only when the peer is a client and reads its
/// own index back from the header for the ULP types (whose header is not
/// user-mapped). Keeping it privately for every type is equivalent there
/// and simpler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Queue {
    /// The ring geometry.
    ring: Ring,
    /// Which end this view owns.
    kind: QueueType,
    /// The owned end's index, always `< ring.num_slots()`.
    local: u32,
}

impl Queue {
    /// A view of an empty ring (both indices 0, as after allocation).
    pub(crate) const fn new(ring: Ring, kind: QueueType) -> Queue {
        Queue {
            ring,
            kind,
            local: 0,
        }
    }

    /// The ring geometry.
    pub(crate) const fn ring(&self) -> &Ring {
        &self.ring
    }

    /// Which end this view owns.
    pub(crate) const fn kind(&self) -> QueueType {
        self.kind
    }

    /// The owned end's index (masked), the value last published.
    pub(crate) const fn local_index(&self) -> u32 {
        self.local
    }

    /// Producer and consumer indices, both masked, given the peer's `peer`
    /// index as read from the shared header.
    pub(crate) const fn indices(&self, peer: u32) -> (u32, u32) {
        let peer = self.ring.mask(peer);
        match self.kind.local_end() {
            End::Producer => (self.local, peer),
            End::Consumer => (peer, self.local),
        }
    }

    /// Number of elements in the ring.
    pub(crate) const fn count(&self, peer: u32) -> u32 {
        let (prod, cons) = self.indices(peer);
        self.ring.count(prod, cons)
    }

    /// True if there is nothing to consume.
    pub(crate) const fn is_empty(&self, peer: u32) -> bool {
        self.count(peer) == 0
    }

    /// True if nothing more can be produced.
    pub(crate) const fn is_full(&self, peer: u32) -> bool {
        self.count(peer) == self.ring.capacity()
    }

    /// Offset (from the start of the slots) of the slot the owned end works
    /// on next: the one to fill for a producer, the one to read for a
    /// consumer. Callers check [`Queue::is_full`] or [`Queue::is_empty`]
    /// first, or use [`Queue::advance`] which does.
    pub(crate) fn local_slot_offset(&self) -> Option<usize> {
        self.ring.slot_offset(self.local)
    }

    /// Consumer side: consumes everything the peer's index `peer` says is
    /// queued, at once, and returns the new index to publish and how many
    /// elements that was (never more than the capacity). A producer's view
    /// does not move.
    pub(crate) fn consume_all(&mut self, peer: u32) -> (u32, u32) {
        if self.kind.local_end() != End::Consumer {
            return (self.local, 0);
        }
        let n = self.count(peer);
        self.local = self.ring.mask(peer);
        (self.local, n)
    }

    /// Moves the owned end on by one slot and returns the new index to
    /// publish. Refuses to overrun the peer: a producer cannot advance on a
    /// full ring nor a consumer on an empty one (C rxe leaves that check to
    /// its callers).
    pub(crate) fn advance(&mut self, peer: u32) -> Result<u32, QueueError> {
        match self.kind.local_end() {
            End::Producer if self.is_full(peer) => return Err(QueueError::Full),
            End::Consumer if self.is_empty(peer) => return Err(QueueError::Empty),
            _ => {}
        }
        self.local = self.ring.next(self.local);
        Ok(self.local)
    }
}
