// SPDX-License-Identifier: GPL-2.0

//! IP addresses as RoCEv2 GIDs carry them.

/// The prefix of an IPv4-mapped IPv6 address (`::ffff:0:0/96`).
const V4_MAPPED_PREFIX: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/// An IP address in the form RoCEv2 GIDs carry it: IPv6, or IPv4-mapped
/// (`::ffff:a.b.c.d`). Bytes in network order.
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
pub(crate) struct IpAddr(pub(crate) [u8; 16]);

impl IpAddr {
    /// Whether this is an IPv4-mapped address (`::ffff:0:0/96`).
    pub(crate) fn is_v4(&self) -> bool {
        self.0.starts_with(&V4_MAPPED_PREFIX)
    }

    /// The IPv4 address, if this is an IPv4-mapped one.
    pub(crate) fn v4(&self) -> Option<[u8; 4]> {
        let [.., a, b, c, d] = self.0;
        self.is_v4().then_some([a, b, c, d])
    }

    /// The IPv4-mapped form of `a`.
    pub(crate) fn from_v4(a: [u8; 4]) -> Self {
        let mut bytes = [0u8; 16];
        let (prefix, tail) = bytes.split_at_mut(12);
        prefix.copy_from_slice(&V4_MAPPED_PREFIX);
        tail.copy_from_slice(&a);
        Self(bytes)
    }
}
