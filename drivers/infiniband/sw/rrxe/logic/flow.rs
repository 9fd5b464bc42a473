// SPDX-License-Identifier: GPL-2.0

//! Flow entropy, window arithmetic and retry budgets shared by the
//! requester and completer.

use crate::proto::psn::Psn;

/// The lowest UDP source port RoCEv2 uses for flow entropy.
pub(crate) const SPORT_MIN: u16 = 0xc000;

/// Most request PSNs a QP keeps unacknowledged (as C rxe).
pub(crate) const MAX_UNACKED_PSNS: u32 = 128;

/// Most request packets between two ACK requests (as C rxe).
pub(crate) const MAX_PKTS_PER_ACK: u32 = 64;

/// Most socket buffers a QP has in the IP stack before its requester
/// pauses (as C rxe's `RXE_INFLIGHT_SKBS_PER_QP_HIGH`).
pub(crate) const INFLIGHT_SKBS_HIGH: u32 = 64;

/// A paused requester resumes once fewer than this many of its QP's
/// buffers are left in the IP stack (`RXE_INFLIGHT_SKBS_PER_QP_LOW`).
pub(crate) const INFLIGHT_SKBS_LOW: u32 = 16;

/// Whether a requester whose QP has `in_flight` buffers in the IP stack
/// stops before building more.
pub(crate) const fn skbs_must_pause(in_flight: u32) -> bool {
    in_flight > INFLIGHT_SKBS_HIGH
}

/// Whether a paused requester goes on with `in_flight` buffers left.
pub(crate) const fn skbs_may_resume(in_flight: u32) -> bool {
    in_flight < INFLIGHT_SKBS_LOW
}

/// The flow label the RDMA core derives from a QP pair when the path has
/// none (`rdma_calc_flow_label`).
pub(crate) const fn flow_label(lqpn: u32, rqpn: u32) -> u32 {
    let mut v = lqpn as u64 * rqpn as u64;
    v ^= v >> 20;
    v ^= v >> 40;
    (v & 0xf_ffff) as u32
}

/// The UDP source port of a connected QP (`rdma_get_udp_sport`): from the
/// path's flow label, or one derived from both QP numbers, folded into
/// `0xc000..=0xffff`.
pub(crate) const fn udp_sport(flow: u32, lqpn: u32, rqpn: u32) -> u16 {
    let fl = if flow == 0 {
        flow_label(lqpn, rqpn)
    } else {
        flow
    };
    let mut low = fl & 0x3fff;
    let high = fl & 0xf_c000;
    low ^= high >> 14;
    (low as u16) | SPORT_MIN
}

/// The UDP source port of a QP before it has a path (UD QPs): a hash of
/// its number, as C rxe (`hash_32(qpn, 14)`).
pub(crate) const fn qp_sport(qpn: u32) -> u16 {
    let h = qpn.wrapping_mul(0x61c8_8647) >> (32 - 14);
    SPORT_MIN + (h & 0x3fff) as u16
}

/// The window a requester starts again with after a retransmit timeout.
pub(crate) const RETRY_WINDOW: u32 = 8;

/// Most doublings of the retransmit timeout in a row without progress: a
/// timeout waits at most 4 times the QP's, so that `retry_cnt` still
/// bounds how long a dead peer takes to notice.
pub(crate) const MAX_TIMEOUT_BACKOFF: u8 = 2;

/// How many PSNs a requester may have unacknowledged.
///
/// A timeout usually means the responder fell behind rather than that the
/// whole window was lost: C rxe, for one, queues what it receives without
/// bound and answers late. Sending the whole window again at every
/// timeout then only lengthens its queue, and its answers come later
/// still, so that every timeout fires again: the transfer stalls while
/// memory grows. After a timeout the requester sends `RETRY_WINDOW` PSNs
/// and asks for an ACK; each acknowledgement doubles the window again, up
/// to `MAX_UNACKED_PSNS` (TCP's slow start, in PSNs).
///
/// # Invariants
///
/// `RETRY_WINDOW <= limit <= MAX_UNACKED_PSNS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SendWindow {
    limit: u32,
}

impl Default for SendWindow {
    fn default() -> Self {
        Self::new()
    }
}

impl SendWindow {
    /// The full window of a QP that has not timed out.
    pub(crate) const fn new() -> Self {
        Self {
            limit: MAX_UNACKED_PSNS,
        }
    }

    /// The PSNs that may be unacknowledged now.
    pub(crate) const fn limit(&self) -> u32 {
        self.limit
    }

    /// A retransmit timeout: start again small.
    pub(crate) fn timed_out(&mut self) {
        self.limit = RETRY_WINDOW;
    }

    /// The responder acknowledged something new: double the window.
    pub(crate) fn acked(&mut self) {
        self.limit = self.limit.saturating_mul(2).min(MAX_UNACKED_PSNS);
    }

    /// Whether a requester that has sent up to (not including) `next` and
    /// has everything before `oldest` acknowledged may send `count` more
    /// PSNs (a `count` above the window counts as the whole window, so
    /// that a long message can start once the window is empty).
    pub(crate) const fn open(&self, oldest: Psn, next: Psn, count: u32) -> bool {
        let used = oldest.distance(next);
        let count = if count < self.limit {
            count
        } else {
            self.limit
        };
        used < Psn::HALF && used + count <= self.limit
    }
}

/// The retransmit timeout after `timeouts` timeouts in a row without
/// progress: `period` doubled each time, at most `MAX_TIMEOUT_BACKOFF`
/// times.
pub(crate) const fn backed_off(period: u64, timeouts: u8) -> u64 {
    let shift = if timeouts < MAX_TIMEOUT_BACKOFF {
        timeouts
    } else {
        MAX_TIMEOUT_BACKOFF
    };
    period.saturating_mul(1 << shift)
}

/// What is left of a retry count that `modify_qp` sets (`retry_cnt` or
/// `rnr_retry`, 3 bits) and each retry spends. A count of 7 never runs
/// out: IBA's rule for `rnr_retry`, which C rxe applies to `retry_cnt`
/// too, and rrxe with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RetryBudget(u8);

impl RetryBudget {
    /// The count that means "retry forever".
    pub(crate) const FOREVER: u8 = 7;

    /// A budget of `count` retries.
    pub(crate) const fn new(count: u8) -> Self {
        Self(count)
    }

    /// The retries left (7: forever).
    pub(crate) const fn left(&self) -> u8 {
        self.0
    }

    /// Spends one retry; `false`, and nothing spent, when none is left.
    pub(crate) fn spend(&mut self) -> bool {
        if self.0 == 0 {
            return false;
        }
        if self.0 != Self::FOREVER {
            self.0 -= 1;
        }
        true
    }
}
