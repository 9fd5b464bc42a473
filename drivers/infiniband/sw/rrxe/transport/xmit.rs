// SPDX-License-Identifier: GPL-2.0

//! Building RoCEv2 packets into socket buffers and sending them.
//!
//! A packet is built (headers, payload copied from memory) while the QP's
//! lock is held, collected in an [`Outbox`], and sent once the lock is
//! dropped. The IP and UDP headers, and so the ICRC that covers them, are
//! only known once the IP stack has routed the packet, so the ICRC is
//! sealed by [`send_udp`]'s callback.

use crate::{
    dev::counters::{Counter, Tally},
    dev::path::Path,
    ffi::net::{send_udp, NetDev, RouteCache, RouteSlot, SkBuff, SkbOwner, UdpTx},
    ffi::rt::{self, Sink},
    ffi::rxe_abi::KernelCrc32,
    proto::{
        headers::Syndrome,
        icrc::{self, IpHeader},
        packet::{pad_len, Headers, ICRC_LEN},
    },
};
use kernel::{prelude::*, sync::Arc};

/// The RoCEv2 UDP port.
pub(crate) const ROCE_PORT: u16 = 4791;

/// A packet ready to be sent, but for its ICRC.
pub(crate) struct TxPacket {
    skb: SkBuff,
    tx: UdpTx,
    /// What the `rrxe_tx` and `rrxe_nak` events say of it.
    trace: TxTrace,
}

/// A sent packet as its trace events describe it.
#[derive(Clone, Copy)]
struct TxTrace {
    dqpn: u32,
    opcode: u8,
    psn: u32,
    /// The AETH syndrome of an RNR NAK or NAK.
    nak: Option<u8>,
}

/// Why a packet could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BuildError<E> {
    /// No memory for the buffer, or the headers did not fit.
    NoBuffer,
    /// The payload could not be gathered.
    Payload(E),
}

/// Builds a packet with `hdrs` and `payload_len` bytes of payload, which
/// `fill` writes, to go from `sport` along `path`.
pub(crate) fn build<E>(
    ndev: &NetDev,
    path: &Path,
    sport: u16,
    mut hdrs: Headers,
    payload_len: usize,
    fill: impl FnOnce(&mut Sink<'_>) -> Result<(), E>,
) -> Result<TxPacket, BuildError<E>> {
    let pad = pad_len(payload_len);
    hdrs.bth.pad = pad;
    let info = hdrs.check().map_err(|_| BuildError::NoBuffer)?;
    let trace = TxTrace {
        dqpn: hdrs.bth.dest_qpn,
        opcode: hdrs.bth.opcode,
        psn: hdrs.bth.psn.get(),
        nak: hdrs
            .aeth
            .map(|a| a.syndrome)
            .filter(|s| !matches!(s, Syndrome::Ack { .. }))
            .map(|s| s.to_u8()),
    };
    // The headers, the payload, then the pad and the ICRC (zeroed: `seal`
    // writes the ICRC once the IP and UDP headers are final).
    let parts = (info.header_len(), payload_len, usize::from(pad) + ICRC_LEN);
    let skb = SkBuff::alloc_udp_filled(ndev, !path.dst.is_v4(), parts, |head, body| {
        match hdrs.build(head) {
            Ok(hlen) if hlen == head.len() => fill(body).map_err(BuildError::Payload),
            _ => Err(BuildError::NoBuffer),
        }
    })
    .map_err(|_| BuildError::NoBuffer)??;
    Ok(TxPacket {
        skb,
        tx: UdpTx {
            src: path.src,
            dst: path.dst,
            sport,
            dport: ROCE_PORT,
            tos: path.tos,
            ttl: path.ttl,
            flow_label: path.flow_label,
        },
        trace,
    })
}

/// Writes the ICRC into the last four bytes of `ib`, computed over the
/// final IP and UDP headers.
fn seal(ip: &[u8], udp: &[u8; 8], ib: &mut [u8]) {
    let Some(body_len) = ib.len().checked_sub(ICRC_LEN) else {
        return;
    };
    let (body, crc) = ib.split_at_mut(body_len);
    let Ok(ip) = IpHeader::from_slice(ip) else {
        return;
    };
    if let Ok(value) = icrc::icrc::<KernelCrc32>(ip, udp, body) {
        crc.copy_from_slice(&icrc::to_wire(value));
    }
}

impl TxPacket {
    /// Sends the packet from `ndev` (routed through `routes`), counting it,
    /// charged to `owner` until the IP stack frees it.
    pub(crate) fn send<T: SkbOwner>(
        mut self,
        ndev: &NetDev,
        routes: &mut RouteCache,
        counters: Tally<'_>,
        owner: &Arc<T>,
    ) {
        let len = self.skb.payload().len() as u64;
        let t = self.trace;
        rt::trace::tx(t.dqpn, t.opcode, t.psn, len as u32);
        if let Some(syndrome) = t.nak {
            rt::trace::nak(t.dqpn, t.psn, syndrome, true);
        }
        owner.skb_account().charge(owner, &mut self.skb);
        match send_udp(ndev, Some(routes), self.skb, &self.tx, seal) {
            Ok(()) => {
                counters.add(Counter::SentPkts, 1);
                counters.add(Counter::SentBytes, len);
            }
            Err(_) => counters.add(Counter::SendErr, 1),
        }
    }
}

/// How many packets one pass under a QP's lock builds at most.
pub(crate) const OUTBOX_LEN: usize = 16;

/// Packets built under a lock, to send after it is dropped (a QP's pass
/// keeps one in its `Effects`). Made at every pass and every received
/// packet: its empty slots are never written (`ArrayBuf`).
pub(crate) struct Outbox {
    pkts: rt::ArrayBuf<TxPacket, OUTBOX_LEN>,
}

impl Outbox {
    /// An empty outbox.
    pub(crate) const fn new() -> Self {
        Self {
            pkts: rt::ArrayBuf::new(),
        }
    }

    /// Whether another packet fits.
    pub(crate) fn has_room(&self) -> bool {
        self.pkts.has_room()
    }

    /// Adds a packet; a full outbox drops it (callers check `has_room`).
    pub(crate) fn push(&mut self, pkt: TxPacket) {
        drop(self.pkts.push(pkt));
    }

    /// Sends everything, in order, charged to `owner`, along the route
    /// parked in `slot` while the addressing is the same (all of a
    /// connected QP's packets), which is parked back at the end.
    pub(crate) fn flush<T: SkbOwner>(
        &mut self,
        ndev: &NetDev,
        slot: &RouteSlot,
        counters: Tally<'_>,
        owner: &Arc<T>,
    ) {
        if self.pkts.is_empty() {
            return;
        }
        let mut routes = slot.take();
        for pkt in self.pkts.drain() {
            pkt.send(ndev, &mut routes, counters, owner);
        }
        slot.park(routes);
    }
}
