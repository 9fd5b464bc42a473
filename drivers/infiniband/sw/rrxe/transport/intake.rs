// SPDX-License-Identifier: GPL-2.0

//! Where received datagrams enter a QP: on the QP's home CPU.
//!
//! Each QP has a home CPU (chosen round robin at creation), where its
//! requester, completer and responder run, so that a host's QPs spread
//! over its CPUs and the two ends of a connection on one host work on two
//! CPUs. A datagram received on the home CPU, with none waiting before it,
//! is taken at once; one received elsewhere (a veth peer delivers on the
//! sending CPU) waits in the QP's bounded queue, and the QP's bottom-half
//! work runs the queue on the home CPU (bulk that arrived on the home CPU:
//! on another, `rx_cpu`). The checks that read the whole
//! packet (the ICRC) run there too, so that each side's per-byte work
//! stays on its side's CPU.

use crate::{
    ffi::{
        net::RxDatagram,
        rt::trace::{self, DropReason},
        rxe_abi::KernelCrc32,
    },
    proto::{
        headers::Syndrome,
        icrc::{self, IpHeader},
        opcode::Opcode,
        packet::{parse_packet, Packet},
    },
    transport::qp::{Deferred, Held, QpInner},
    transport::resp::RxMeta,
};
use core::sync::atomic::Ordering;
use kernel::sync::Arc;

/// Datagrams a QP's queue holds at most: about two windows of a
/// connection's packets. Beyond, they are dropped, as by a full NIC ring
/// (RC retransmits).
pub(crate) const RX_QUEUE_LEN: u32 = 256;

/// Datagrams one run of the queue takes before it yields the CPU (and
/// queues itself again).
const RX_BUDGET: u32 = 32;

/// Datagrams with less UDP payload than this (ACKs, small messages) are
/// taken on the CPU they arrive on when nothing waits before them: their
/// work is short, and handing them over would cost a round trip's worth
/// of latency (an IPI, and under a hypervisor often a wakeup of an idle
/// CPU). Bulk data goes to the home CPU, where its ICRC and copy run
/// beside the sender's.
const STEER_MIN_BYTES: usize = 256;

/// Whether a datagram's work is bulk, for another CPU than the one it
/// arrived on: a payload of [`STEER_MIN_BYTES`] or more, or an RDMA READ
/// request for that much (the responder's answer is the bulk).
pub(crate) fn is_bulk(dg: &RxDatagram, pkt: &Packet<'_>) -> bool {
    let big = |n: usize| n >= STEER_MIN_BYTES;
    big(dg.payload().len())
        || (pkt.opcode() == Opcode::RcRdmaReadRequest
            && pkt
                .headers
                .reth
                .is_some_and(|r| big(usize::try_from(r.len).unwrap_or(usize::MAX))))
}

/// Whether a P_Key is the default partition's (full or limited member),
/// the only one in rrxe's P_Key table.
fn pkey_ok(pkey: u16) -> bool {
    pkey & 0x7fff == 0x7fff
}

/// The packet of a datagram, if it parses, its ICRC is right and its
/// P_Key is ours; anything else is dropped (and traced, `rrxe_drop`). A
/// packet kept is traced (`rrxe_rx`, and `rrxe_nak` for an RNR NAK or NAK).
pub(crate) fn checked(dg: &RxDatagram) -> Option<Packet<'_>> {
    match check(dg) {
        Ok(pkt) => {
            let bth = &pkt.headers.bth;
            trace::rx(
                bth.dest_qpn,
                bth.opcode,
                bth.psn.get(),
                pkt.layout.payload_len as u32,
            );
            if let Some(a) = pkt.headers.aeth {
                if !matches!(a.syndrome, Syndrome::Ack { .. }) {
                    trace::nak(bth.dest_qpn, bth.psn.get(), a.syndrome.to_u8(), false);
                }
            }
            Some(pkt)
        }
        Err(reason) => {
            trace_drop(dg, reason);
            None
        }
    }
}

fn check(dg: &RxDatagram) -> Result<Packet<'_>, DropReason> {
    let ib = dg.payload();
    let pkt = parse_packet(ib).map_err(|_| DropReason::Malformed)?;
    let ip = IpHeader::from_slice(dg.ip_header()).map_err(|_| DropReason::Malformed)?;
    icrc::verify::<KernelCrc32>(ip, dg.udp_header(), ib).map_err(|_| DropReason::BadIcrc)?;
    if !pkey_ok(pkt.headers.bth.pkey) {
        return Err(DropReason::BadPkey);
    }
    Ok(pkt)
}

/// Traces a datagram dropped for `reason`, with what its first twelve
/// bytes say of the BTH's opcode, destination QPN and PSN (zeros if there
/// are not twelve: nothing else of it can be trusted).
pub(crate) fn trace_drop(dg: &RxDatagram, reason: DropReason) {
    let (dqpn, opcode, psn) = match dg.payload().get(..12) {
        Some(b) => (
            u32::from_be_bytes([0, b[5], b[6], b[7]]),
            b[0],
            u32::from_be_bytes([0, b[9], b[10], b[11]]),
        ),
        None => (0, 0, 0),
    };
    trace::drop_packet(dqpn, opcode, psn, reason);
}

/// What the responder and completer learn of a datagram besides its packet.
pub(crate) fn meta(dg: &RxDatagram) -> RxMeta<'_> {
    RxMeta {
        src: dg.src(),
        dst: dg.dst(),
        ip_header: dg.ip_header(),
        ndev: dg.netdev(),
    }
}

impl QpInner {
    /// A datagram for this QP from the receive path (softirq, any CPU).
    /// Nothing overtakes a datagram that waits or is being taken
    /// (`rx_backlog`):
    /// taken now if nothing waits before it, it is small ([`is_bulk`]) and
    /// this is the home CPU or the QP does not stream (its SQ holds at most
    /// one WQE: an ACK of a stream is taken home, beside the requester it
    /// opens the window for); else queued, bulk for another CPU than this
    /// one ([`QpInner::rx_cpu`](crate::transport::qp::QpInner)).
    pub(crate) fn arrive(self: &Arc<Self>, dg: RxDatagram, bulk: bool) {
        let here = !bulk && (self.runs_here() || !self.streaming());
        // Counted while it is taken, from the moment the backlog is found
        // empty (one atomic step): a datagram that arrives meanwhile on
        // another CPU is queued behind it, not taken around it, should it
        // turn out to wait for a page fault. (Counted only once held, the
        // other could be taken first.) The queue's run on the home CPU
        // cannot run beside a take there (both are softirq work, or run
        // with bottom halves off); one taken elsewhere (a QP that does not
        // stream, or a run still on the old home for a while after the
        // home moved: `QpInner::step_aside`) may still see the run take a
        // later datagram before this one is put back, in which case the
        // transport's order checks (PSNs) sort them out.
        if here
            && self
                .rx_backlog
                .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            match self.take(&dg) {
                // It waits for a page fault: queued after all, first, and
                // still counted.
                Some(held) => {
                    self.hold(dg, held);
                }
                None => {
                    drop(dg);
                    self.rx_backlog.fetch_sub(1, Ordering::AcqRel);
                }
            }
            return;
        }
        // Counted before it can be seen in the queue, so that nothing
        // overtakes it.
        self.rx_backlog.fetch_add(1, Ordering::AcqRel);
        match self.rxq.push(dg) {
            Ok(_) => self.defer(Deferred::Rx),
            Err(dg) => {
                // A full queue drops the datagram (freed here, with the
                // error).
                trace_drop(&dg, DropReason::QueueFull);
                self.rx_backlog.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }

    /// The run of the queue: bottom-half work on the CPU `rx_cpu` chose, or
    /// after a run's budget process context with bottom halves off on any
    /// CPU; on one CPU at a time: a run that
    /// finds another going asks it to look again. What a run leaves after
    /// its budget goes on in process context ([`Deferred::RxLeft`]).
    pub(crate) fn take_queued(self: &Arc<Self>) {
        if !self.rx_runner.try_start() {
            return;
        }
        let mut taken = 0;
        loop {
            // Nothing is taken while the datagram at the head waits for a
            // page fault: the fault work queues a run once it is resolved.
            while !self.rx_held.load(Ordering::Acquire) {
                let Some(dg) = self.rxq.pop() else {
                    break;
                };
                if let Some(held) = self.take(&dg) {
                    // Still counted in the backlog. Unless the QP was reset
                    // meanwhile (it is then dropped): the rest are taken.
                    if self.hold(dg, held) {
                        break;
                    }
                    continue;
                }
                drop(dg);
                self.rx_backlog.fetch_sub(1, Ordering::AcqRel);
                taken += 1;
                if taken >= RX_BUDGET {
                    self.rx_runner.stop();
                    if !self.rxq.is_empty() {
                        self.defer(Deferred::RxLeft);
                    }
                    return;
                }
            }
            if self.rx_runner.finish() {
                return;
            }
        }
    }

    /// Checks a datagram and hands its packet to the completer or
    /// responder. Returns whether it waits for a page fault (nothing of it
    /// done): the caller holds it ([`QpInner::hold`]).
    fn take(self: &Arc<Self>, dg: &RxDatagram) -> Option<Held> {
        checked(dg).and_then(|pkt| self.receive(&pkt, &meta(dg)))
    }

    /// `dg`, counted in `rx_backlog`, waits for a page fault of a region
    /// paged on demand: back at the head of the queue, where no run takes
    /// it (nor anything behind it) until the fault work has resolved the
    /// fault and cleared `rx_held`. The flag is set first, so that no run
    /// takes the datagram back before; the fault work is queued last, so
    /// that it finds the datagram held.
    ///
    /// Unless the QP was reset (or flushed) since the datagram was found
    /// waiting (`held`): it is then the old connection's, and is dropped
    /// here rather than replayed into the next. Checked under the QP's
    /// lock, under which a reset moves the epoch on before it purges the
    /// queue ([`QpInner::purge_rx`]): a datagram is either put back before
    /// (and purged) or dropped here. Returns whether it was put back.
    fn hold(self: &Arc<Self>, dg: RxDatagram, held: Held) -> bool {
        {
            let st = self.state.lock();
            if st.faults.is_current(held) {
                self.rx_held.store(true, Ordering::Release);
                self.rxq.push_front(dg);
                drop(st);
                self.defer(Deferred::Fault);
                return true;
            }
        }
        trace_drop(&dg, DropReason::QpState);
        drop(dg);
        self.rx_backlog.fetch_sub(1, Ordering::AcqRel);
        false
    }

    /// The QP was reset: the datagrams queued for it are its old
    /// connection's, the held one first (whose fault was forgotten). All
    /// go, as posted work does on RESET, instead of being taken in the
    /// QP's next life (where a held one, replayed after RESET, INIT and
    /// RTR, would enter the new connection). One put back meanwhile by a
    /// run that found it waiting before the reset is dropped by
    /// [`QpInner::hold`]; one that arrives meanwhile is as one that
    /// arrived before the reset, lost (RC retransmits what matters).
    pub(in crate::transport) fn purge_rx(&self) {
        while let Some(dg) = self.rxq.pop() {
            trace_drop(&dg, DropReason::QpState);
            drop(dg);
            self.rx_backlog.fetch_sub(1, Ordering::AcqRel);
        }
        self.rx_held.store(false, Ordering::Release);
    }
}
