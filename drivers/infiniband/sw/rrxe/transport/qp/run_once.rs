// SPDX-License-Identifier: GPL-2.0

//! Run-once: lets one CPU at a time run a QP's work, without a lock held
//! while it runs, so that a caller arriving meanwhile (a post, a packet, a
//! completion handler that reposts) neither waits nor recurses but asks
//! the runner to go round again. The requester's run and the flush in ERR
//! each have one.

use core::sync::atomic::{AtomicU8, Ordering};

/// Runs a QP's work on one CPU at a time: a second caller only asks the
/// running one to go round again.
pub(in crate::transport) struct RunOnce(AtomicU8);

/// Nobody runs.
const IDLE: u8 = 0;
/// A runner runs.
const RUNNING: u8 = 1;
/// A runner runs and was asked to go round again.
const AGAIN: u8 = 2;

impl RunOnce {
    /// Idle.
    pub(in crate::transport) const fn new() -> Self {
        Self(AtomicU8::new(IDLE))
    }

    /// `true` if the caller now runs; else the runner will run again.
    pub(in crate::transport) fn try_start(&self) -> bool {
        loop {
            match self
                .0
                .compare_exchange(IDLE, RUNNING, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(RUNNING) => {
                    if self
                        .0
                        .compare_exchange(RUNNING, AGAIN, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
                    {
                        return false;
                    }
                }
                Err(_) => return false,
            }
        }
    }

    /// `true` if the runner may stop; `false` if asked to run again.
    pub(in crate::transport) fn finish(&self) -> bool {
        if self
            .0
            .compare_exchange(RUNNING, IDLE, Ordering::Release, Ordering::Relaxed)
            .is_ok()
        {
            return true;
        }
        self.0.store(RUNNING, Ordering::Release);
        false
    }

    /// Gives up running (the rest continues from the work queue).
    pub(in crate::transport) fn stop(&self) {
        self.0.store(IDLE, Ordering::Release);
    }
}
