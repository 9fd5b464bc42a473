// SPDX-License-Identifier: GPL-2.0

//! rrxe's trace events (include/rrxe/trace.h), fired through the C
//! wrappers of `ffi/rrxe_trace.c`: each function here is one event. They
//! take plain numbers and enums, may be called from any context, and cost
//! a function call when their event is off.
//!
//! Users see them as the `rrxe` trace system (`rrxe_dropin` for the
//! drop-in build): `perf trace -e 'rrxe:*'`, `trace-cmd record -e rrxe`,
//! or /sys/kernel/tracing/events/rrxe/ (Documentation/usage.rst).

use crate::ffi::sys;

/// Why the receive path dropped a packet (`reason` of `rrxe_drop`; the
/// values are trace.h's `rrxe_show_drop`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum DropReason {
    /// The headers do not parse.
    Malformed = 0,
    /// No QP has the destination QPN.
    NoQp = 1,
    /// The opcode's transport is not the QP's.
    WrongTransport = 2,
    /// The QP's receive queue for its home CPU is full.
    QueueFull = 3,
    /// The ICRC is wrong.
    BadIcrc = 4,
    /// The P_Key is not the default partition's.
    BadPkey = 5,
    /// The QP's state takes no such packet (a request before RTR, a
    /// response when it does not send).
    QpState = 6,
    /// A connected QP's packet from another address than its peer's.
    WrongPath = 7,
}

/// Why the requester sends again (`cause` of `rrxe_retransmit`; trace.h's
/// `rrxe_show_retry`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum RetryCause {
    /// The retransmit timer expired.
    Timeout = 0,
    /// The responder sent a PSN sequence error NAK.
    SeqNak = 1,
    /// READ responses skipped a PSN.
    ReadGap = 2,
}

/// `rrxe_rx`: a packet passed the receive checks (`dqpn`: the local QP).
pub(crate) fn rx(dqpn: u32, opcode: u8, psn: u32, len: u32) {
    // SAFETY: the wrapper takes numbers only and may run in any context.
    unsafe { sys::rrxe_trace_rx(dqpn, opcode, psn, len) }
}

/// `rrxe_tx`: a packet was handed to the IP stack (`dqpn`: the peer's
/// QP).
pub(crate) fn tx(dqpn: u32, opcode: u8, psn: u32, len: u32) {
    // SAFETY: as in `rx`.
    unsafe { sys::rrxe_trace_tx(dqpn, opcode, psn, len) }
}

/// `rrxe_drop`: a received packet was dropped for `reason`.
pub(crate) fn drop_packet(dqpn: u32, opcode: u8, psn: u32, reason: DropReason) {
    // SAFETY: as in `rx`.
    unsafe { sys::rrxe_trace_drop(dqpn, opcode, psn, reason as u8) }
}

/// `rrxe_nak`: an RNR NAK or NAK (AETH `syndrome`) was sent or received.
pub(crate) fn nak(dqpn: u32, psn: u32, syndrome: u8, sent: bool) {
    // SAFETY: as in `rx`.
    unsafe { sys::rrxe_trace_nak(dqpn, psn, syndrome, sent) }
}

/// `rrxe_retransmit`: QP `qpn` sends again from `psn`.
pub(crate) fn retransmit(qpn: u32, psn: u32, cause: RetryCause) {
    // SAFETY: as in `rx`.
    unsafe { sys::rrxe_trace_retransmit(qpn, psn, cause as u8) }
}

/// `rrxe_rnr_wait`: QP `qpn` waits `usecs` after an RNR NAK.
pub(crate) fn rnr_wait(qpn: u32, usecs: u32) {
    // SAFETY: as in `rx`.
    unsafe { sys::rrxe_trace_rnr_wait(qpn, usecs) }
}

/// `rrxe_qp_state`: QP `qpn` went from state `from` to `to` (IBA state
/// numbers, `enum ib_qp_state`).
pub(crate) fn qp_state(qpn: u32, from: u8, to: u8) {
    // SAFETY: as in `rx`.
    unsafe { sys::rrxe_trace_qp_state(qpn, from, to) }
}

/// `rrxe_wc_error`: a completion of QP `qpn` with error `status`
/// (`enum ib_wc_status`) and work completion opcode `opcode`.
pub(crate) fn wc_error(qpn: u32, status: u8, opcode: u8) {
    // SAFETY: as in `rx`.
    unsafe { sys::rrxe_trace_wc_error(qpn, status, opcode) }
}
