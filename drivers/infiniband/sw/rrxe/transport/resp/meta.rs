// SPDX-License-Identifier: GPL-2.0

//! What a received packet comes with besides its IB part: [`RxMeta`], the
//! addresses, the IP header and the netdev, from the receive path
//! (`rx/demux.rs`) through the engine to the responder. Its own file so
//! that those that read it (`ud.rs` for the GRH, the engine for the peer
//! check) name it here, not the responder's dispatch in `resp/mod.rs`.

use crate::{
    dev::path::Path,
    ffi::net::{IpAddr, NetDev},
};

/// What the packet came with besides its IB part.
pub(crate) struct RxMeta<'a> {
    /// The sender's address.
    pub(crate) src: IpAddr,
    /// The address the packet was sent to.
    pub(crate) dst: IpAddr,
    /// The whole IP header (for the GRH of UD receives).
    pub(crate) ip_header: &'a [u8],
    /// The netdev answers leave through (the device's).
    pub(crate) ndev: &'a NetDev,
}

impl RxMeta<'_> {
    /// Whether the packet belongs to a connection on `path`: it came from
    /// the peer's address to ours (rxe's `check_addr` compares both).
    pub(crate) fn follows(&self, path: &Path) -> bool {
        self.src == path.dst && self.dst == path.src
    }
}
