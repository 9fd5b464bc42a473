// SPDX-License-Identifier: GPL-2.0

//! Where packets go: the IP addressing of a connected QP's path or of an
//! address handle, resolved once from the address vector (while the core
//! still holds its source GID) and kept as plain data.

use crate::{ffi::ib::AhAttr, ffi::net::IpAddr};

/// The addressing of a path.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Path {
    /// Our address (the source GID).
    pub(crate) src: IpAddr,
    /// The peer's address (the destination GID).
    pub(crate) dst: IpAddr,
    /// IPv4 TOS or IPv6 traffic class (the GRH traffic class).
    pub(crate) tos: u8,
    /// TTL or hop limit.
    pub(crate) ttl: u8,
    /// The GRH flow label (20 bits).
    pub(crate) flow_label: u32,
}

impl Path {
    /// The path of an address vector; `None` without a source GID or when
    /// the two GIDs are not of the same IP family.
    pub(crate) fn from_ah(ah: &AhAttr) -> Option<Path> {
        let src = IpAddr(ah.sgid()?);
        let dst = IpAddr(ah.dgid());
        if src.is_v4() != dst.is_v4() {
            return None;
        }
        let grh = &ah.get().grh;
        Some(Path {
            src,
            dst,
            tos: grh.traffic_class,
            ttl: grh.hop_limit,
            flow_label: grh.flow_label & 0xf_ffff,
        })
    }
}
