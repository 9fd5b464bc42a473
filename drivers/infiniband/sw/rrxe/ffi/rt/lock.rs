// SPDX-License-Identifier: GPL-2.0

//! [`SpinLockBh`]: a spinlock whose holder keeps out only the contexts
//! that also take it: bottom halves, or, for a lock that hard interrupts
//! take too, interrupts. Which one is chosen when the lock is made.
//!
//! The kernel crate's `SpinLockIrq` turns interrupts off for as long as it
//! is held. For a lock held over long work (rrxe's data path copies payload
//! and computes CRCs under its QP's locks) that delays every interrupt of
//! the CPU: timer ticks, the IPIs that hand work to another CPU, and the
//! profiler's sampling, which then charges the whole section to the unlock.
//! State that only process context and softirqs share needs no more than
//! `spin_lock_bh`. Where a caller has interrupts off already (a kernel
//! consumer posting under its own irqsave lock), bottom halves cannot run on
//! the CPU either, and turning them off and on again there would warn: the
//! lock is then taken as a plain spinlock. Lockdep sees each way as what it
//! is, and each mode has its own lock class (see [`new_spinlock_bh!`]), so
//! that a lock of one mode never makes the other's look inconsistent.
//!
//! A lock made for bottom halves is never taken in a hard interrupt (or an
//! NMI): a holder on the CPU it interrupted would never let go (the helper
//! warns). Nor is one taken under a lock that turns interrupts off: it
//! would be taken as a plain spinlock there, and released with bottom
//! halves on only if the outer lock is released after it.

use crate::ffi::sys;
use core::{
    cell::UnsafeCell,
    marker::{PhantomData, PhantomPinned},
    ops::{Deref, DerefMut},
};
use kernel::{
    bindings,
    prelude::*,
    str::CStr,
    sync::LockClassKey,
    types::{NotThreadSafe, Opaque},
};

/// Which contexts besides process context take a [`SpinLockBh`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TakenIn {
    /// Softirqs: held with bottom halves off.
    Softirq,
    /// Hard interrupts too: held with interrupts off.
    Hardirq,
}

/// A spinlock held with bottom halves off, or interrupts off for a lock
/// that hard interrupts take too ([`TakenIn`]); see the module docs.
///
/// # Invariants
///
/// `raw` is an initialised `spinlock_t`; `data` is only reached through a
/// [`SpinLockBhGuard`], which holds `raw`.
#[pin_data]
pub(crate) struct SpinLockBh<T> {
    #[pin]
    raw: Opaque<bindings::spinlock_t>,
    taken_in: TakenIn,
    /// A `spinlock_t` must not move once initialised.
    #[pin]
    _pin: PhantomPinned,
    data: UnsafeCell<T>,
}

// SAFETY: the lock may move to another thread with its data, which is then
// only reached by whoever holds it there.
unsafe impl<T: Send> Send for SpinLockBh<T> {}

// SAFETY: the lock hands its data to one holder at a time, from any thread,
// which only needs `T` to be `Send`.
unsafe impl<T: Send> Sync for SpinLockBh<T> {}

/// Creates a [`SpinLockBh`] initialiser for `$inner`, taken in the contexts
/// `$taken_in` says, with a lock class per mode for this call site (as the
/// kernel crate's `new_spinlock!` gives each its own).
macro_rules! new_spinlock_bh {
    ($inner:expr, $taken_in:expr $(,)?) => {{
        let taken_in: $crate::ffi::rt::TakenIn = $taken_in;
        // Named by the call site and the mode, for lockdep's reports.
        let (name, key) = match taken_in {
            $crate::ffi::rt::TakenIn::Softirq => (
                ::kernel::c_str!(::core::concat!(
                    ::core::file!(),
                    ":",
                    ::core::line!(),
                    " bh"
                )),
                ::kernel::static_lock_class!(),
            ),
            $crate::ffi::rt::TakenIn::Hardirq => (
                ::kernel::c_str!(::core::concat!(
                    ::core::file!(),
                    ":",
                    ::core::line!(),
                    " irq"
                )),
                ::kernel::static_lock_class!(),
            ),
        };
        $crate::ffi::rt::SpinLockBh::new($inner, taken_in, name, key)
    }};
}
pub(crate) use new_spinlock_bh;

impl<T> SpinLockBh<T> {
    /// An initialiser of a lock around `data`, taken in `taken_in`, named
    /// `name` in lockdep's reports, of the class `key`. Use
    /// [`new_spinlock_bh!`], which gives each mode a class of its own.
    pub(crate) fn new(
        data: T,
        taken_in: TakenIn,
        name: &'static CStr,
        key: Pin<&'static LockClassKey>,
    ) -> impl PinInit<Self> {
        pin_init!(Self {
            data: UnsafeCell::new(data),
            taken_in,
            _pin: PhantomPinned,
            // SAFETY: `slot` is valid for writes; `name` and `key` are
            // static.
            raw <- Opaque::ffi_init(|slot| unsafe {
                bindings::__spin_lock_init(slot, name.as_char_ptr(), key.as_ptr())
            }),
        })
    }

    /// Takes the lock, waiting for it, with what its mode keeps out turned
    /// off until the guard is dropped (on this CPU: the guard is not
    /// `Send`).
    pub(crate) fn lock(&self) -> SpinLockBhGuard<'_, T> {
        let irq = self.taken_in == TakenIn::Hardirq;
        // SAFETY: `raw` is initialised (type invariant); a lock taken in
        // softirqs only is never taken in a hard interrupt (its mode's
        // contract, which the helper asserts).
        let held = Held::from_raw(unsafe { sys::rrxe_spin_lock_held(self.raw_ptr(), irq) });
        // INVARIANT: the guard holds the lock, taken the way `held` says.
        SpinLockBhGuard {
            lock: self,
            held,
            _not_send: NotThreadSafe,
            _data: PhantomData,
        }
    }

    fn raw_ptr(&self) -> *mut sys::spinlock_t {
        // The kernel crate's `spinlock_t` and the one rrxe's helpers are
        // declared with are the same C type, named by two bindgen runs.
        self.raw.get().cast()
    }
}

/// A held [`SpinLockBh`]: its data, until dropped.
///
/// # Invariants
///
/// The guard holds `lock`, taken the way `held` says, on the CPU it was made on.
pub(crate) struct SpinLockBhGuard<'a, T> {
    lock: &'a SpinLockBh<T>,
    held: Held,
    _not_send: NotThreadSafe,
    _data: PhantomData<&'a mut T>,
}

impl<T> Deref for SpinLockBhGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock (type invariant), so nothing
        // else reaches the data meanwhile.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for SpinLockBhGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this the only borrow.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for SpinLockBhGuard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: the guard holds the lock, taken as `held` says, on this
        // CPU (type invariant).
        unsafe { sys::rrxe_spin_unlock_held(self.lock.raw_ptr(), self.held.raw()) };
    }
}

/// How a [`SpinLockBhGuard`] holds its lock (the helpers' `RRXE_HELD_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    /// Interrupts were off already: a plain `spin_lock`.
    Plain,
    /// `spin_lock_bh`.
    Bh,
    /// `spin_lock_irq_disable`.
    Irq,
}

impl Held {
    fn from_raw(raw: i32) -> Self {
        match u32::try_from(raw) {
            Ok(sys::RRXE_HELD_IRQ) => Self::Irq,
            Ok(sys::RRXE_HELD_BH) => Self::Bh,
            _ => Self::Plain,
        }
    }

    fn raw(self) -> i32 {
        let raw = match self {
            Self::Plain => sys::RRXE_HELD_PLAIN,
            Self::Bh => sys::RRXE_HELD_BH,
            Self::Irq => sys::RRXE_HELD_IRQ,
        };
        // The three are 0, 1 and 2.
        raw as i32
    }
}

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kernel::prelude::kunit_tests(rrxe_rt_lock))]
#[cfg_attr(dropin, kernel::prelude::kunit_tests(rrxe_rt_lock_dropin))]
mod tests {
    use super::{new_spinlock_bh, Held, SpinLockBh, TakenIn};
    use kernel::prelude::*;

    fn make(taken_in: TakenIn) -> Result<Pin<KBox<SpinLockBh<u32>>>> {
        KBox::pin_init(new_spinlock_bh!(7, taken_in), GFP_KERNEL)
    }

    #[test]
    fn each_mode_holds_as_it_says_from_process_context() -> Result {
        let bh = make(TakenIn::Softirq)?;
        {
            let mut g = bh.lock();
            assert_eq!(g.held, Held::Bh);
            *g += 1;
        }
        assert_eq!(*bh.lock(), 8);
        let irq = make(TakenIn::Hardirq)?;
        {
            let g = irq.lock();
            assert_eq!(g.held, Held::Irq);
            // A softirq lock under interrupts off is a plain spinlock.
            assert_eq!(bh.lock().held, Held::Plain);
            assert_eq!(*g, 7);
        }
        Ok(())
    }
}
