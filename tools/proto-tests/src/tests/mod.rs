// SPDX-License-Identifier: GPL-2.0

//! Unit and property tests of the protocol and logic modules, plus the
//! proptest strategies they share.

mod flow;
mod flush;
mod headers;
mod icrc;
mod ids;
mod keys;
mod mad;
mod mcast;
mod mr;
mod mtu;
mod mw;
mod odp;
mod opcode;
mod packet;
mod psn;
mod qp_state;
mod queue;
mod ratelimit;
mod resp;
mod ring;
mod segment;
mod wc;
mod wqe;
mod wr;

use proptest::prelude::*;

use crate::proto::headers::{
    Aeth, AtomicAckEth, AtomicEth, AtomicWriteData, Bth, Deth, Feth, Ieth, ImmDt, Reth, Syndrome,
};
use crate::proto::opcode::{ExtHeader, Opcode};
use crate::proto::packet::Headers;
use crate::proto::psn::Psn;

/// Any 24-bit value.
pub(super) fn u24() -> impl Strategy<Value = u32> {
    0u32..(1 << 24)
}

/// Any PSN.
pub(super) fn arb_psn() -> impl Strategy<Value = Psn> {
    u24().prop_map(Psn::new)
}

/// Any BTH whose fields fit their widths, with the given opcode strategy.
pub(super) fn arb_bth_with(opcode: impl Strategy<Value = u8>) -> impl Strategy<Value = Bth> {
    (
        opcode,
        any::<(bool, bool, bool, bool, bool)>(),
        0u8..4,
        0u8..16,
        any::<u16>(),
        u24(),
        arb_psn(),
    )
        .prop_map(
            |(opcode, (solicited, migrated, fecn, becn, ack_req), pad, tver, pkey, qpn, psn)| Bth {
                opcode,
                solicited,
                migrated,
                pad,
                tver,
                pkey,
                fecn,
                becn,
                dest_qpn: qpn,
                ack_req,
                psn,
            },
        )
}

/// Any BTH whose fields fit their widths.
pub(super) fn arb_bth() -> impl Strategy<Value = Bth> {
    arb_bth_with(any::<u8>())
}

/// Any RETH.
pub(super) fn arb_reth() -> impl Strategy<Value = Reth> {
    any::<(u64, u32, u32)>().prop_map(|(va, rkey, len)| Reth { va, rkey, len })
}

/// Any AETH (every syndrome byte, 24-bit MSN).
pub(super) fn arb_aeth() -> impl Strategy<Value = Aeth> {
    (any::<u8>(), u24()).prop_map(|(syn, msn)| Aeth {
        syndrome: Syndrome::from_u8(syn),
        msn,
    })
}

/// Any AtomicETH.
pub(super) fn arb_atomic_eth() -> impl Strategy<Value = AtomicEth> {
    any::<(u64, u32, u64, u64)>().prop_map(|(va, rkey, swap_add, compare)| AtomicEth {
        va,
        rkey,
        swap_add,
        compare,
    })
}

/// Any AtomicAckETH.
pub(super) fn arb_atomic_ack_eth() -> impl Strategy<Value = AtomicAckEth> {
    any::<u64>().prop_map(|orig| AtomicAckEth { orig })
}

/// Any IETH.
pub(super) fn arb_ieth() -> impl Strategy<Value = Ieth> {
    any::<u32>().prop_map(|rkey| Ieth { rkey })
}

/// Any DETH with a 24-bit source QPN.
pub(super) fn arb_deth() -> impl Strategy<Value = Deth> {
    (any::<u32>(), u24()).prop_map(|(qkey, src_qpn)| Deth { qkey, src_qpn })
}

/// Any immediate data.
pub(super) fn arb_immdt() -> impl Strategy<Value = ImmDt> {
    any::<u32>().prop_map(|imm| ImmDt { imm })
}

/// Any FETH with in-range fields.
pub(super) fn arb_feth() -> impl Strategy<Value = Feth> {
    (0u8..16, 0u8..4).prop_map(|(placement_type, selectivity)| Feth {
        placement_type,
        selectivity,
    })
}

/// Any ATOMIC WRITE payload.
pub(super) fn arb_atomic_write() -> impl Strategy<Value = AtomicWriteData> {
    any::<[u8; 8]>().prop_map(|data| AtomicWriteData { data })
}

/// Any implemented opcode.
pub(super) fn arb_opcode() -> impl Strategy<Value = Opcode> {
    proptest::sample::select(Opcode::ALL.to_vec())
}

/// One value of every extension header, to fill into a [`Headers`].
#[derive(Clone, Debug)]
pub(super) struct AllExt {
    pub(super) reth: Reth,
    pub(super) aeth: Aeth,
    pub(super) atomic_eth: AtomicEth,
    pub(super) atomic_ack_eth: AtomicAckEth,
    pub(super) ieth: Ieth,
    pub(super) deth: Deth,
    pub(super) immdt: ImmDt,
    pub(super) feth: Feth,
}

/// Arbitrary values for every extension header.
pub(super) fn arb_all_ext() -> impl Strategy<Value = AllExt> {
    (
        (
            arb_reth(),
            arb_aeth(),
            arb_atomic_eth(),
            arb_atomic_ack_eth(),
        ),
        (arb_ieth(), arb_deth(), arb_immdt(), arb_feth()),
    )
        .prop_map(
            |((reth, aeth, atomic_eth, atomic_ack_eth), (ieth, deth, immdt, feth))| AllExt {
                reth,
                aeth,
                atomic_eth,
                atomic_ack_eth,
                ieth,
                deth,
                immdt,
                feth,
            },
        )
}

/// The headers `opcode` needs, taking the values from `ext`, with `bth`
/// (whose opcode is overwritten and version cleared).
pub(super) fn headers_for(opcode: Opcode, mut bth: Bth, ext: &AllExt) -> Headers {
    bth.opcode = opcode.value();
    bth.tver = 0;
    let info = opcode.info();
    let mut h = Headers::new(bth);
    for hdr in info.headers() {
        match hdr {
            ExtHeader::Reth => h.reth = Some(ext.reth),
            ExtHeader::Aeth => h.aeth = Some(ext.aeth),
            ExtHeader::AtomicEth => h.atomic_eth = Some(ext.atomic_eth),
            ExtHeader::AtomicAckEth => h.atomic_ack_eth = Some(ext.atomic_ack_eth),
            ExtHeader::Ieth => h.ieth = Some(ext.ieth),
            ExtHeader::Deth => h.deth = Some(ext.deth),
            ExtHeader::ImmDt => h.immdt = Some(ext.immdt),
            ExtHeader::Feth => h.feth = Some(ext.feth),
        }
    }
    h
}
