// SPDX-License-Identifier: GPL-2.0

//! `struct sk_buff`: an owned socket buffer being built for transmission,
//! and [`SkbAccount`], which counts the buffers an owner has handed to the
//! IP stack and hears back as each is freed.

use super::{dst::Dst, NetDev};
use crate::ffi::{rt::Sink, sys};
use core::{
    ffi::c_void,
    marker::PhantomData,
    mem::MaybeUninit,
    ptr::{self, NonNull},
    sync::atomic::{AtomicBool, AtomicU32, Ordering},
};
use kernel::{
    error::{code::*, to_result},
    prelude::*,
    sync::{Arc, ArcBorrow},
    time::{delay::fsleep, Delta},
};

/// Length of a UDP header.
pub(crate) const UDP_HLEN: usize = 8;
/// Length of an IPv4 header without options (the only kind we send).
pub(crate) const IPV4_HLEN: usize = 20;
/// Length of the fixed IPv6 header (we send no extension headers).
pub(crate) const IPV6_HLEN: usize = 40;

/// The largest UDP payload whose IP and UDP length fields still fit 16 bits.
fn max_udp_payload(v6: bool) -> usize {
    let ip_len_counted = if v6 { 0 } else { IPV4_HLEN };
    usize::from(u16::MAX) - UDP_HLEN - ip_len_counted
}

/// An owned `struct sk_buff`, freed on drop (counted as a drop, not a
/// consumption: a buffer that is sent is given away, not dropped).
///
/// # Invariants
///
/// - `skb` is a valid `sk_buff` of which this object owns the only reference;
///   its data is linear, initialised, and not shared with a clone, so the
///   bytes from `data` to `data + len` may be read and written through
///   `&mut self`.
/// - Outside [`super::route`], those bytes are exactly the UDP payload the
///   buffer was allocated for: headers are only pushed by `send_udp`, which
///   consumes the buffer.
pub(crate) struct SkBuff {
    skb: NonNull<sys::sk_buff>,
}

// SAFETY: An `sk_buff` that nobody else references may be used and freed from
// any thread.
unsafe impl Send for SkBuff {}
// SAFETY: `&SkBuff` only allows reading the buffer's bytes.
unsafe impl Sync for SkBuff {}

impl SkBuff {
    /// A buffer to send `len` bytes of UDP payload from `ndev` (`GFP_ATOMIC`),
    /// with headroom for the link layer (`LL_RESERVED_SPACE` and an Ethernet
    /// header), an IPv4 or IPv6 header (`v6`) and a UDP header. The `len`
    /// payload bytes are put and zeroed.
    ///
    /// `EMSGSIZE` if `len` does not fit the IP and UDP length fields,
    /// `ENOMEM` if no memory is available.
    pub(crate) fn alloc_udp(ndev: &NetDev, v6: bool, len: usize) -> Result<SkBuff> {
        let skb = Self::alloc_raw(ndev, v6, len, len, 0)?;
        // INVARIANT: a fresh, linear buffer that only we reference, whose data
        // is the `len` payload bytes just put and zeroed.
        Ok(Self { skb })
    }

    /// A buffer as [`SkBuff::alloc_udp`] gives, for a payload of `head`
    /// bytes, `body` bytes and `tail` bytes, of which `fill` writes the
    /// first two parts: the head (zeroed first) as a slice, the body (not
    /// zeroed: the copy that fills it is the only pass over its bytes)
    /// front to back through a [`Sink`]. The tail, and whatever `fill`
    /// leaves of the body, are zeroed. The outer error is the allocation's
    /// (as for `alloc_udp`), the inner one `fill`'s (the buffer is then
    /// freed).
    pub(crate) fn alloc_udp_filled<E>(
        ndev: &NetDev,
        v6: bool,
        (head, body, tail): (usize, usize, usize),
        fill: impl FnOnce(&mut [u8], &mut Sink<'_>) -> Result<(), E>,
    ) -> Result<Result<SkBuff, E>> {
        let len = head
            .checked_add(body)
            .and_then(|n| n.checked_add(tail))
            .ok_or(EMSGSIZE)?;
        let skb = Self::alloc_raw(ndev, v6, len, head, tail)?;
        // SAFETY: `skb` is the fresh, linear, unshared buffer just allocated,
        // whose data is the `len` bytes just put.
        let data = unsafe { sys::rrxe_skb_data(skb.as_ptr()) };
        // SAFETY: the first `head` bytes of the data, which the helper
        // zeroed, and which nothing else references.
        let head_bytes = unsafe { core::slice::from_raw_parts_mut(data, head) };
        // SAFETY: the `body` bytes after them, inside the data, not
        // initialised (hence `MaybeUninit`), and not aliased either.
        let body_bytes = unsafe {
            core::slice::from_raw_parts_mut(data.add(head).cast::<MaybeUninit<u8>>(), body)
        };
        let mut sink = Sink::new(body_bytes);
        let filled = fill(head_bytes, &mut sink);
        sink.zero_rest();
        // INVARIANT: a fresh, linear buffer that only we reference, whose
        // `len` payload bytes are all initialised now: the head and tail
        // zeroed by the helper, the body filled or zeroed by the sink.
        let skb = Self { skb };
        Ok(filled.map(|()| skb))
    }

    /// Allocates a buffer for a payload of `len` bytes (checked against the
    /// UDP and IP length fields), of which the first `zero_head` and the last
    /// `zero_tail` are zeroed.
    fn alloc_raw(
        ndev: &NetDev,
        v6: bool,
        len: usize,
        zero_head: usize,
        zero_tail: usize,
    ) -> Result<NonNull<sys::sk_buff>> {
        if len > max_udp_payload(v6) {
            return Err(EMSGSIZE);
        }
        let ip_len = if v6 { IPV6_HLEN } else { IPV4_HLEN };
        let hdr_len = sys::ETH_HLEN as usize + ip_len + UDP_HLEN;
        // All fit: `len` is below 64 KiB, `hdr_len` is a few bytes, and the
        // parts to zero are at most `len` (the helper bounds them too).
        let (hdr_len, len) = (hdr_len as u32, len as u32);
        let zero_head = zero_head.min(len as usize) as u32;
        let zero_tail = zero_tail.min(len as usize) as u32;
        // SAFETY: `ndev` is a valid net device.
        let skb = unsafe { sys::rrxe_skb_alloc(ndev.as_raw(), hdr_len, len, zero_head, zero_tail) };
        NonNull::new(skb).ok_or(ENOMEM)
    }

    /// The UDP payload of a buffer from [`SkBuff::alloc_udp`] or
    /// [`SkBuff::alloc_udp_filled`], before it is sent.
    pub(crate) fn payload_mut(&mut self) -> &mut [u8] {
        let (data, len) = self.data_raw();
        // SAFETY: by the type invariants the `len` bytes at `data` are the
        // linear, unshared data of the buffer that `&mut self` owns.
        unsafe { core::slice::from_raw_parts_mut(data, len) }
    }

    /// The UDP payload of a buffer from [`SkBuff::alloc_udp`], before it is sent.
    pub(crate) fn payload(&self) -> &[u8] {
        let (data, len) = self.data_raw();
        // SAFETY: as in `payload_mut`, and `&self` only reads.
        unsafe { core::slice::from_raw_parts(data, len) }
    }

    fn data_raw(&self) -> (*mut u8, usize) {
        let skb = self.skb.as_ptr();
        // SAFETY: `skb` is valid by the type invariants.
        let (data, len) = unsafe { (sys::rrxe_skb_data(skb), sys::rrxe_skb_len(skb)) };
        (data, len as usize)
    }

    /// Bytes of headroom before the data.
    pub(super) fn headroom(&self) -> usize {
        // SAFETY: `skb` is valid by the type invariants.
        unsafe { sys::rrxe_skb_headroom(self.skb.as_ptr()) as usize }
    }

    /// Prepends `hdr` to the data and marks its start as the transport header
    /// (or, with `network`, the network header).
    ///
    /// `EINVAL` if the headroom is too small (never the case for a buffer
    /// from `alloc_udp` with the headers it was sized for).
    pub(super) fn push_header(&mut self, hdr: &[u8], network: bool) -> Result {
        if hdr.len() > self.headroom() {
            return Err(EINVAL);
        }
        let skb = self.skb.as_ptr();
        // Fits: below the headroom, which is below 64 KiB.
        let len = hdr.len() as u32;
        // SAFETY: `skb` is valid and unshared by the type invariants, and has
        // at least `len` bytes of headroom, so the push cannot underflow.
        let start = unsafe {
            if network {
                sys::rrxe_skb_push_network(skb, len)
            } else {
                sys::rrxe_skb_push_transport(skb, len)
            }
        };
        // SAFETY: `start` points to the `len` bytes just pushed, inside the
        // buffer we own, which cannot overlap `hdr` (a borrowed Rust slice).
        unsafe { core::ptr::copy_nonoverlapping(hdr.as_ptr(), start, hdr.len()) };
        Ok(())
    }

    /// The whole data of the buffer, headers pushed so far included.
    pub(super) fn data_mut(&mut self) -> &mut [u8] {
        self.payload_mut()
    }

    /// Hands the buffer to IP output through `dst` from `ndev`: sets the
    /// route and the protocol, clears state that must not leak into a new
    /// packet.
    pub(super) fn set_route(&mut self, ndev: &NetDev, dst: Dst, v6: bool) {
        // SAFETY: `skb` is valid by the type invariants, `ndev` is a valid
        // device (the skb keeps no reference on it: nothing reads `skb->dev`
        // before output sets it from the route), and `dst`'s reference is
        // handed to the skb.
        unsafe { sys::rrxe_skb_set_route(self.skb.as_ptr(), ndev.as_raw(), dst.into_raw(), v6) };
    }

    /// Picks the IPv4 identification of the packet, as the IP stack does.
    ///
    /// # Safety
    ///
    /// A route must have been set with [`SkBuff::set_route`], and a complete
    /// IPv4 header pushed as the network header.
    pub(super) unsafe fn ip_select_ident(&mut self) {
        // SAFETY: `skb` is valid; the caller guarantees the route and the
        // header `__ip_select_ident` reads and writes.
        unsafe { sys::rrxe_ip_select_ident(self.skb.as_ptr()) };
    }

    /// Sends the packet with `ip_local_out` or `ip6_local_out` (`v6`).
    ///
    /// # Safety
    ///
    /// A route must have been set with [`SkBuff::set_route`] for the same
    /// family, and complete IP and UDP headers pushed.
    pub(super) unsafe fn local_out(self, v6: bool) -> Result {
        let skb = self.skb.as_ptr();
        core::mem::forget(self);
        // SAFETY: we own `skb`, which the call consumes; the caller
        // guarantees its route and headers.
        to_result(unsafe { sys::rrxe_ip_local_out(skb, v6) })
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: by the type invariants we own the only reference.
        unsafe { sys::rrxe_skb_free(self.skb.as_ptr()) };
    }
}

/// An owner of transmitted socket buffers (a QP): charges them to its
/// [`SkbAccount`] and is told when few enough are left in flight.
pub(crate) trait SkbOwner: Send + Sync + Sized {
    /// The account this owner charges its buffers to.
    fn skb_account(&self) -> &SkbAccount<Self>;

    /// Whether an owner with `in_flight` charged buffers stops sending.
    fn must_pause(in_flight: u32) -> bool;

    /// Whether a paused owner with `in_flight` buffers left may go on.
    fn may_resume(in_flight: u32) -> bool;

    /// Wakes a paused owner. Runs where the buffer is freed: softirq or
    /// process context, with interrupts on but perhaps bottom halves off.
    /// It must not sleep and should only schedule work: the stack may be
    /// in the middle of sending on this CPU.
    fn resume(this: ArcBorrow<'_, Self>);
}

/// The buffers an owner `T` has in flight: each one charged with
/// [`SkbAccount::charge`] is counted until the IP stack frees it (sent
/// through the device, delivered locally, or dropped anywhere), when the
/// account's destructor hook runs and may resume a paused owner.
///
/// How: the account has a kernel socket of its own and charges buffers to
/// it as any socket charges what it sends (`skb_set_owner_w`); the stack's
/// destructor, `sock_wfree`, calls the socket's `sk_write_space`, which is
/// ours, while it still holds a byte of the socket's write memory. So
/// neither the skb's destructor nor its final release is module code: once
/// the socket's write memory is back to zero, no buffer is charged and no
/// hook is running. [`SkbAccount::close`] waits for exactly that, so after
/// it nothing of this module runs for this account's buffers, and the
/// module may go away.
///
/// The hook reaches the owner through the socket's user data, which holds
/// a reference on the owner from the first charge until `close`: the owner
/// cannot be freed while it has buffers in flight, and must call `close`
/// (which sleeps) to give that reference back. An owner that never calls
/// `close` after charging is leaked, never freed early.
///
/// # Invariants
///
/// - `sock` is a socket from `rrxe_tx_sock_create` with [`write_space::<T>`]
///   as its `sk_write_space`; only `drop` releases it.
/// - The socket's user data is null or a pointer from [`Arc::into_raw`] on
///   an `Arc<T>` whose reference the account owns; that `T`'s
///   `skb_account()` is this account. It is set (from null) at most once
///   before `closed`, and only taken out by `close`.
/// - `armed` is only set once the user data is set; no buffer is charged
///   before.
pub(crate) struct SkbAccount<T: SkbOwner> {
    sock: NonNull<sys::socket>,
    /// Buffers charged and not yet freed (a hint: the stack may split the
    /// charge of one buffer over two, so it saturates at zero).
    in_flight: AtomicU32,
    /// The owner paused at its high mark and waits for `resume`.
    paused: AtomicBool,
    /// The socket's user data holds the owner.
    armed: AtomicBool,
    /// `close` was called: nothing is charged any more.
    closed: AtomicBool,
    _owner: PhantomData<T>,
}

// SAFETY: The socket is only used through thread-safe kernel calls
// (`skb_set_owner_w`, atomic reads and cmpxchg of its user data), and the
// owner it refers to is `Send + Sync`.
unsafe impl<T: SkbOwner> Send for SkbAccount<T> {}
// SAFETY: As above; every field is atomic or immutable.
unsafe impl<T: SkbOwner> Sync for SkbAccount<T> {}

impl<T: SkbOwner> SkbAccount<T> {
    /// A new, empty account. Process context (it creates a socket).
    pub(crate) fn new() -> Result<Self> {
        let mut sock = ptr::null_mut();
        // SAFETY: `write_space::<T>` has the signature the socket expects;
        // `sock` is a valid place for the result.
        to_result(unsafe { sys::rrxe_tx_sock_create(Some(write_space::<T>), &mut sock) })?;
        let sock = NonNull::new(sock).ok_or(ENOMEM)?;
        // INVARIANT: a fresh socket with our hook and no user data.
        Ok(Self {
            sock,
            in_flight: AtomicU32::new(0),
            paused: AtomicBool::new(false),
            armed: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            _owner: PhantomData,
        })
    }

    /// Buffers in flight.
    pub(crate) fn in_flight(&self) -> u32 {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Gives the socket a reference on `owner`, once; `false` once closed.
    /// Whoever publishes it first wins; the others drop their copy. A
    /// buffer is only charged once the reference is published, so every
    /// hook finds it.
    fn arm(&self, owner: &Arc<T>) -> bool {
        if self.closed.load(Ordering::Acquire) {
            return false;
        }
        if self.armed.load(Ordering::Acquire) {
            return true;
        }
        let raw: *mut c_void = Arc::into_raw(owner.clone()).cast_mut().cast();
        // SAFETY: the socket is valid by the type invariants; the user data
        // only changes from null here, once.
        let prev =
            unsafe { sys::rrxe_tx_sock_cmpxchg_owner(self.sock.as_ptr(), ptr::null_mut(), raw) };
        if prev.is_null() {
            self.armed.store(true, Ordering::Release);
        } else {
            // SAFETY: `raw` came from `Arc::into_raw` just above and was not
            // published.
            drop(unsafe { Arc::<T>::from_raw(raw.cast_const().cast()) });
        }
        true
    }

    /// Charges `skb`, which `owner` (whose account this is) is about to
    /// send. After [`SkbAccount::close`] the buffer goes uncharged.
    pub(crate) fn charge(&self, owner: &Arc<T>, skb: &mut SkBuff) {
        if !self.arm(owner) {
            return;
        }
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        // SAFETY: the buffer is valid and ours (type invariants of
        // `SkBuff`), the socket is valid; the charge is undone by the
        // stack's destructor wherever the buffer ends.
        unsafe { sys::rrxe_skb_set_owner(skb.skb.as_ptr(), self.sock.as_ptr()) };
    }

    /// Whether the owner must stop sending now. When it must, the account
    /// remembers it and [`SkbOwner::resume`] follows once enough buffers
    /// are freed.
    pub(crate) fn must_pause(&self) -> bool {
        if !T::must_pause(self.in_flight.load(Ordering::Relaxed)) {
            return false;
        }
        self.paused.store(true, Ordering::SeqCst);
        // The buffers may all have been freed before the hooks could see
        // the flag: look again, after setting it.
        if T::may_resume(self.in_flight.load(Ordering::SeqCst)) {
            self.paused.store(false, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// One buffer freed; how many are left.
    fn uncharge(&self) -> u32 {
        let prev = self
            .in_flight
            .fetch_update(Ordering::SeqCst, Ordering::Relaxed, |n| {
                Some(n.saturating_sub(1))
            })
            .unwrap_or(0);
        prev.saturating_sub(1)
    }

    /// Charges nothing more, waits until every buffer charged is freed
    /// (and our hook has returned for each), and drops the reference on
    /// the owner. Sleeps. The owner's sending should have stopped first;
    /// a buffer charged concurrently is still waited for.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        // SAFETY: the socket is valid by the type invariants.
        let owner = unsafe { sys::rrxe_tx_sock_xchg_owner(self.sock.as_ptr(), ptr::null_mut()) };
        self.drain();
        self.paused.store(false, Ordering::Relaxed);
        if !owner.is_null() {
            // SAFETY: a non-null user data is an `Arc::into_raw` whose
            // reference the account owns (type invariants); taken out
            // above, so no later hook sees it, and the hooks that saw it
            // have all returned (the socket's write memory drained).
            drop(unsafe { Arc::<T>::from_raw(owner.cast_const().cast()) });
        }
    }

    /// Sleeps until the socket owns no buffer any more.
    fn drain(&self) {
        let mut waited_ms: u32 = 0;
        // SAFETY: the socket is valid by the type invariants.
        while unsafe { sys::rrxe_tx_sock_wmem(self.sock.as_ptr()) } > 0 {
            fsleep(Delta::from_millis(1));
            waited_ms = waited_ms.saturating_add(1);
            if waited_ms % 10_000 == 0 {
                pr_warn!(
                    "still waiting for {} transmitted buffers to be freed\n",
                    self.in_flight()
                );
            }
        }
    }
}

impl<T: SkbOwner> Drop for SkbAccount<T> {
    fn drop(&mut self) {
        // Normally already closed by the owner; an account never armed has
        // nothing to wait for.
        self.close();
        // SAFETY: the socket is valid and owns no buffer any more; nothing
        // else refers to it.
        unsafe { sys::rrxe_tx_sock_release(self.sock.as_ptr()) };
    }
}

/// The socket's `sk_write_space`: a buffer charged to an [`SkbAccount<T>`]
/// is being freed.
///
/// # Safety
///
/// Called only by `sock_wfree` on an account's socket, which holds a byte
/// of the socket's write memory for the duration of the call.
unsafe extern "C" fn write_space<T: SkbOwner>(sk: *mut sys::sock) {
    // SAFETY: `sk` is valid for the call (the caller holds write memory).
    let owner = unsafe { sys::rrxe_tx_sock_owner(sk) };
    if owner.is_null() {
        // Closing: nobody to count for or to wake.
        return;
    }
    // SAFETY: by the invariants of `SkbAccount` a non-null user data is an
    // `Arc::into_raw` whose reference the account holds; `close` drops it
    // only once the write memory drained, which cannot happen before this
    // call returns, and nothing makes a `UniqueArc` of a shared owner.
    let owner = unsafe { ArcBorrow::<T>::from_raw(owner.cast_const().cast()) };
    let account = owner.skb_account();
    let left = account.uncharge();
    if T::may_resume(left) && account.paused.swap(false, Ordering::SeqCst) {
        T::resume(owner);
    }
}

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kunit_tests(rrxe_net_skb))]
#[cfg_attr(dropin, kunit_tests(rrxe_net_skb_dropin))]
mod tests {
    use super::super::Net;
    use super::{SkBuff, SkbAccount, SkbOwner};
    use core::sync::atomic::{AtomicU32, Ordering};
    use kernel::{
        prelude::*,
        sync::{Arc, ArcBorrow},
    };

    /// A QP's high mark (C rxe's `RXE_INFLIGHT_SKBS_PER_QP_HIGH`): its
    /// sender pauses above it. Written out rather than taken from
    /// `logic::flow` (whose marks the host tests check): `ffi/net` names
    /// nothing of the driver.
    const INFLIGHT_SKBS_HIGH: u32 = 64;
    /// A QP's low mark (`RXE_INFLIGHT_SKBS_PER_QP_LOW`): a paused sender
    /// resumes below it.
    const INFLIGHT_SKBS_LOW: u32 = 16;

    fn skbs_must_pause(in_flight: u32) -> bool {
        in_flight > INFLIGHT_SKBS_HIGH
    }

    fn skbs_may_resume(in_flight: u32) -> bool {
        in_flight < INFLIGHT_SKBS_LOW
    }

    /// An owner of transmitted buffers with a QP's marks, which counts how
    /// often it is woken instead of scheduling work.
    struct Sender {
        /// The buffers charged to it.
        tx: SkbAccount<Sender>,
        /// How often the account woke it.
        resumed: AtomicU32,
    }

    impl SkbOwner for Sender {
        fn skb_account(&self) -> &SkbAccount<Self> {
            &self.tx
        }

        fn must_pause(in_flight: u32) -> bool {
            skbs_must_pause(in_flight)
        }

        fn may_resume(in_flight: u32) -> bool {
            skbs_may_resume(in_flight)
        }

        fn resume(this: ArcBorrow<'_, Self>) {
            this.resumed.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn sender() -> Arc<Sender> {
        let Ok(tx) = SkbAccount::new() else {
            panic!("no socket for the account");
        };
        let sender = Sender {
            tx,
            resumed: AtomicU32::new(0),
        };
        let Ok(sender) = Arc::new(sender, GFP_KERNEL) else {
            panic!("no memory for the sender");
        };
        sender
    }

    /// Charges a new buffer to `s` and keeps it in `held` (unsent: freeing
    /// it runs the same destructor as the IP stack's freeing it).
    fn charge_one(s: &Arc<Sender>, held: &mut KVec<SkBuff>) {
        let Ok(mut skb) = SkBuff::alloc_udp(Net::init().loopback(), false, 8) else {
            panic!("no memory for a buffer");
        };
        s.tx.charge(s, &mut skb);
        if held.push(skb, GFP_KERNEL).is_err() {
            panic!("no memory to hold a buffer");
        }
    }

    /// Charges buffers to `s` until it pauses, checking that it goes on
    /// sending up to the high mark in flight and pauses one past it.
    fn charge_until_paused(s: &Arc<Sender>, held: &mut KVec<SkBuff>) {
        for n in 1..=INFLIGHT_SKBS_HIGH {
            charge_one(s, held);
            assert_eq!(s.tx.in_flight(), n);
            assert!(!s.tx.must_pause());
        }
        charge_one(s, held);
        assert_eq!(s.tx.in_flight(), INFLIGHT_SKBS_HIGH + 1);
        assert!(s.tx.must_pause());
    }

    #[test]
    fn skb_account_pauses_above_high_mark_and_resumes_below_low_mark() {
        let s = sender();
        let mut held = KVec::new();
        charge_until_paused(&s, &mut held);
        // Freeing down to the low mark does not wake it...
        while s.tx.in_flight() > INFLIGHT_SKBS_LOW {
            drop(held.pop());
        }
        assert_eq!(s.resumed.load(Ordering::SeqCst), 0);
        // ...one below it does, once.
        drop(held.pop());
        assert_eq!(s.tx.in_flight(), INFLIGHT_SKBS_LOW - 1);
        assert_eq!(s.resumed.load(Ordering::SeqCst), 1);
        assert!(!s.tx.must_pause());
        // An owner that did not pause again is not woken again.
        held.clear();
        assert_eq!(s.tx.in_flight(), 0);
        assert_eq!(s.resumed.load(Ordering::SeqCst), 1);
        // Gives back the reference the socket held on the owner.
        s.tx.close();
    }

    #[test]
    fn skb_account_charges_nothing_after_close() {
        let s = sender();
        let mut held = KVec::new();
        charge_until_paused(&s, &mut held);
        held.clear();
        assert_eq!(s.resumed.load(Ordering::SeqCst), 1);
        // Closed (as `destroy_qp` does), a buffer goes out uncharged: it
        // is not counted and its freeing wakes nobody.
        s.tx.close();
        charge_one(&s, &mut held);
        assert_eq!(s.tx.in_flight(), 0);
        held.clear();
        assert_eq!(s.resumed.load(Ordering::SeqCst), 1);
    }
}
