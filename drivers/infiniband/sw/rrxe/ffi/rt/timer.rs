// SPDX-License-Identifier: GPL-2.0

//! Soft high-resolution timers of objects kept in an [`Arc`]: relative,
//! on the monotonic clock, expiring in softirq context (`hrtimer` in
//! `HRTIMER_MODE_REL_SOFT`), with nanosecond resolution.
//!
//! A [`SoftTimer`] sits inside its owner `T`. Arming it ([`SoftTimer::arm`])
//! while it is idle gives it one reference of the owner, which the expiry
//! hands to [`SoftTimerOwner::fired`]; arming it again before it fires
//! only moves the expiry. [`SoftTimer::cancel`] stops it and drops the
//! reference. So an armed timer keeps its owner alive (it can never fire on
//! freed memory), and once `cancel` returns, with nobody arming it any
//! more, the timer holds nothing: an owner that stops arming (a gate, as a
//! QP's `destroy` closes) and then cancels is rid of its timer.
//!
//! The kernel crate's `HrTimer` hands the reference to a handle the caller
//! must keep; here the timer keeps it itself, so that an owner can re-arm
//! its own timer from anywhere, its callback included.

use crate::ffi::sys;
use core::{marker::PhantomData, ptr};
use kernel::{
    new_spinlock_irq,
    prelude::*,
    sync::{Arc, ArcBorrow, SpinLockIrq},
    types::Opaque,
};

/// The owner of a [`SoftTimer`] (`ID` tells apart several timers of one
/// owner).
pub(crate) trait SoftTimerOwner<const ID: u64>: Send + Sync + Sized + 'static {
    /// The timer `ID`, inside `self`.
    fn soft_timer(&self) -> &SoftTimer<Self, ID>;

    /// The timer expired (softirq context), with the reference it held.
    fn fired(this: Arc<Self>);
}

/// The reference of its owner an armed timer holds: null when idle.
struct Held<T>(*const T);

// SAFETY: `Held` stands for an `Arc<T>` the timer owns, which may be
// dropped on any CPU when `T` is `Send + Sync`.
unsafe impl<T: Send + Sync> Send for Held<T> {}

/// A soft hrtimer inside an `Arc<T>`'s `T`; see the module docs.
///
/// # Invariants
///
/// - `timer` was set up by `rrxe_hrtimer_setup_soft` with
///   [`Self::expired`] as its function.
/// - While `timer` is queued, `held` is not null: it is a reference of
///   the `Arc<T>` that contains this timer, made by [`Arc::into_raw`].
///   `held` changes only under its lock, and `timer` is queued only under
///   that lock.
#[pin_data]
pub(crate) struct SoftTimer<T: SoftTimerOwner<ID>, const ID: u64> {
    #[pin]
    timer: Opaque<sys::hrtimer>,
    #[pin]
    held: SpinLockIrq<Held<T>>,
    _owner: PhantomData<T>,
}

// SAFETY: the hrtimer is only touched through the kernel's hrtimer calls,
// which do their own locking, and `held` is behind a lock.
unsafe impl<T: SoftTimerOwner<ID>, const ID: u64> Send for SoftTimer<T, ID> {}
// SAFETY: as above.
unsafe impl<T: SoftTimerOwner<ID>, const ID: u64> Sync for SoftTimer<T, ID> {}

impl<T: SoftTimerOwner<ID>, const ID: u64> SoftTimer<T, ID> {
    /// An idle timer.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `t` is pinned memory for an hrtimer, set up here
            // before any other use.
            timer <- Opaque::ffi_init(|t| unsafe {
                sys::rrxe_hrtimer_setup_soft(t, Some(Self::expired))
            }),
            held <- new_spinlock_irq!(Held(ptr::null())),
            _owner: PhantomData,
        })
    }

    /// (Re)arms the timer of `this` to expire in `ns` nanoseconds, or up
    /// to `slack_ns` later. Any context.
    pub(crate) fn arm(this: &Arc<T>, ns: u64, slack_ns: u64) {
        let t = this.soft_timer();
        let mut held = t.held.lock();
        if held.0.is_null() {
            held.0 = Arc::into_raw(this.clone());
        }
        // SAFETY: by the type invariants the timer is set up; it lives as
        // long as `T`, which the reference in `held` keeps alive while the
        // timer is queued.
        unsafe { sys::rrxe_hrtimer_start_soft(t.timer.get(), ns, slack_ns) };
        drop(held);
    }

    /// Stops the timer, waiting for an expiry that is running, and drops
    /// the reference it held. Process context; never from the owner's
    /// [`SoftTimerOwner::fired`]. If someone arms the timer meanwhile, it
    /// is stopped again: when this returns the timer is idle, though a
    /// later `arm` may start it again.
    pub(crate) fn cancel(&self) {
        loop {
            let mut held = self.held.lock();
            // SAFETY: the timer is set up (type invariants); this does not
            // sleep.
            let r = unsafe { sys::hrtimer_try_to_cancel(self.timer.get()) };
            if r >= 0 {
                // Neither queued nor running, and nothing queues it but
                // `arm`, under the lock we hold: the reference is ours.
                let p = core::mem::replace(&mut held.0, ptr::null());
                drop(held);
                if !p.is_null() {
                    // SAFETY: `p` came from `Arc::into_raw` in `arm`, and
                    // the timer no longer owns it.
                    drop(unsafe { Arc::from_raw(p) });
                }
                return;
            }
            // The expiry is running: it takes `held`'s lock, so wait for
            // it without holding that.
            drop(held);
            // SAFETY: the timer is set up; we are in process context and
            // not in its callback.
            unsafe { sys::hrtimer_cancel(self.timer.get()) };
        }
    }

    /// The hrtimer's function: hands the owner's reference to `fired`.
    ///
    /// # Safety
    ///
    /// Called only by the hrtimer core, for a `timer` inside a
    /// `SoftTimer<T, ID>`.
    unsafe extern "C" fn expired(timer: *mut sys::hrtimer) -> sys::hrtimer_restart {
        // CAST: `Opaque<hrtimer>` is `repr(transparent)`.
        let timer = timer.cast::<Opaque<sys::hrtimer>>();
        // SAFETY: `timer` is the `timer` field of a `SoftTimer<T, ID>`.
        let this: *const Self = unsafe { kernel::container_of!(timer, Self, timer) };
        // SAFETY: the timer was queued, so its owner is alive: `held`
        // holds a reference (type invariants), which `cancel` cannot take
        // while this runs.
        let this = unsafe { &*this };
        let mut held = this.held.lock();
        let p = held.0;
        if p.is_null() {
            // Cannot happen (type invariants): nothing to run for.
            return sys::HRTIMER_NORESTART;
        }
        // SAFETY: the timer is set up; reading its state has no
        // preconditions.
        let owner = if unsafe { sys::rrxe_hrtimer_is_queued(this.timer.get()) } {
            // Armed again while on its way here: that expiry keeps the
            // reference, this one runs with a new one.
            // SAFETY: `p` is a live reference from `Arc::into_raw`.
            Arc::from(unsafe { ArcBorrow::from_raw(p) })
        } else {
            held.0 = ptr::null();
            // SAFETY: `p` came from `Arc::into_raw`; the timer gives it up.
            unsafe { Arc::from_raw(p) }
        };
        drop(held);
        T::fired(owner);
        sys::HRTIMER_NORESTART
    }
}

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kernel::prelude::kunit_tests(rrxe_rt_timer))]
#[cfg_attr(dropin, kernel::prelude::kunit_tests(rrxe_rt_timer_dropin))]
mod tests {
    use super::{SoftTimer, SoftTimerOwner};
    use kernel::{
        prelude::*,
        sync::{
            atomic::{Atomic, Relaxed},
            Arc,
        },
        time::{delay::fsleep, Delta},
    };

    /// A timer's owner, counting the expiries.
    #[pin_data]
    struct Tick {
        #[pin]
        timer: SoftTimer<Tick, 0>,
        /// Expiries so far.
        fired: Atomic<i32>,
        /// How many more times an expiry arms the timer again (1 ms).
        rearm: Atomic<i32>,
    }

    impl SoftTimerOwner<0> for Tick {
        fn soft_timer(&self) -> &SoftTimer<Self, 0> {
            &self.timer
        }

        fn fired(this: Arc<Self>) {
            this.fired.add(1, Relaxed);
            if this.rearm.load(Relaxed) > 0 {
                this.rearm.add(-1, Relaxed);
                SoftTimer::<_, 0>::arm(&this, MS, 0);
            }
        }
    }

    const MS: u64 = 1_000_000;
    const HOUR: u64 = 3600 * 1000 * MS;

    fn tick(rearm: i32) -> Result<Arc<Tick>> {
        Arc::pin_init(
            pin_init!(Tick {
                timer <- SoftTimer::new(),
                fired: Atomic::new(0),
                rearm: Atomic::new(rearm),
            }),
            GFP_KERNEL,
        )
    }

    /// Whether `arc` is the only reference left (and drops it).
    fn only_reference(arc: Arc<Tick>) -> bool {
        Arc::into_unique_or_drop(arc).is_some()
    }

    #[test]
    fn an_expiry_hands_over_the_reference() {
        let Ok(t) = tick(0) else { panic!("no memory") };
        SoftTimer::<_, 0>::arm(&t, MS, 0);
        fsleep(Delta::from_millis(50));
        assert_eq!(t.fired.load(Relaxed), 1);
        assert!(only_reference(t));
    }

    #[test]
    fn arming_again_moves_the_expiry_and_takes_no_second_reference() {
        let Ok(t) = tick(0) else { panic!("no memory") };
        SoftTimer::<_, 0>::arm(&t, HOUR, 0);
        SoftTimer::<_, 0>::arm(&t, HOUR, 0);
        t.timer.cancel();
        // Cancelling an idle timer does nothing.
        t.timer.cancel();
        assert_eq!(t.fired.load(Relaxed), 0);
        assert!(only_reference(t));
    }

    #[test]
    fn an_expiry_may_arm_its_timer_again() {
        let Ok(t) = tick(2) else { panic!("no memory") };
        SoftTimer::<_, 0>::arm(&t, MS, 0);
        fsleep(Delta::from_millis(100));
        assert_eq!(t.fired.load(Relaxed), 3);
        t.timer.cancel();
        assert!(only_reference(t));
    }
}
