// SPDX-License-Identifier: GPL-2.0

//! IB multicast over RoCEv2 (IBA 10.5, 11.3.1; Annex A17.5.6): which GIDs
//! name multicast groups, the Ethernet address a group's packets are sent
//! to, and the limits on groups and attachments, as C rxe applies them
//! (`rxe_mcast.c`).
//!
//! A RoCEv2 multicast group is an IP multicast address, carried in the
//! MGID as a RoCEv2 GID carries any address (IPv6, or IPv4-mapped). The
//! multicast LID means nothing on Ethernet.

/// The BTH destination QP of every multicast packet.
pub(crate) const MULTICAST_QPN: u32 = 0x00ff_ffff;

/// Most multicast groups per device (`max_mcast_grp`, rxe's).
pub(crate) const MAX_GROUPS: u32 = 8192;
/// Most QPs attached to one group (`max_mcast_qp_attach`).
pub(crate) const MAX_QPS_PER_GROUP: u32 = 56;
/// Most attachments per device, all groups together
/// (`max_total_mcast_qp_attach`).
pub(crate) const MAX_ATTACHMENTS: u32 = 0x70000;

/// The prefix of an IPv4-mapped IPv6 address (`::ffff:0:0/96`).
const V4_MAPPED_PREFIX: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/// The IPv4 address an IPv4-mapped GID carries.
fn v4(gid: &[u8; 16]) -> Option<[u8; 4]> {
    let [.., a, b, c, d] = *gid;
    gid.starts_with(&V4_MAPPED_PREFIX).then_some([a, b, c, d])
}

/// Whether `gid` names a multicast group: an IPv6 multicast address
/// (`ff00::/8`) or an IPv4-mapped one in `224.0.0.0/4` (the core's
/// `rdma_is_multicast_addr`, which `ib_attach_mcast` checks).
pub(crate) fn is_multicast(gid: &[u8; 16]) -> bool {
    match v4(gid) {
        Some([a, ..]) => a & 0xf0 == 0xe0,
        None => gid[0] == 0xff,
    }
}

/// The Ethernet multicast address of group `mgid`, which the netdev must
/// receive: `01:00:5e` and the low 23 bits of an IPv4 group (RFC 1112,
/// the kernel's `ip_eth_mc_map`), `33:33` and the low 32 bits of an IPv6
/// group (RFC 2464, `ipv6_eth_mc_map`).
///
/// rxe maps every MGID as IPv6, which for an IPv4 group gives an address
/// no IPv4 multicast frame is sent to; rrxe joins the one the group's
/// frames carry.
pub(crate) fn group_mac(mgid: &[u8; 16]) -> [u8; 6] {
    match v4(mgid) {
        Some([_, b, c, d]) => [0x01, 0x00, 0x5e, b & 0x7f, c, d],
        None => {
            let [.., a, b, c, d] = *mgid;
            [0x33, 0x33, a, b, c, d]
        }
    }
}

/// How much of the device's multicast capacity is in use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    /// Groups with at least one QP attached.
    pub(crate) groups: u32,
    /// Attachments, all groups together.
    pub(crate) attachments: u32,
}

/// Why an attachment is refused (each `ENOMEM` in rxe).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AttachError {
    /// A new group would exceed [`MAX_GROUPS`].
    TooManyGroups,
    /// The device has [`MAX_ATTACHMENTS`] already.
    TooManyAttachments,
    /// The group has [`MAX_QPS_PER_GROUP`] QPs already.
    GroupFull,
}

/// Whether one more QP may be attached to a group that has `members` QPs
/// (0: the group does not exist yet and would be created). A QP already
/// in the group is not attached again; callers answer that with success
/// before asking. rxe's order of checks: groups, then the device's
/// attachments, then the group's.
pub(crate) fn check_attach(usage: Usage, members: u32) -> Result<(), AttachError> {
    if members == 0 && usage.groups >= MAX_GROUPS {
        return Err(AttachError::TooManyGroups);
    }
    if usage.attachments >= MAX_ATTACHMENTS {
        return Err(AttachError::TooManyAttachments);
    }
    if members >= MAX_QPS_PER_GROUP {
        return Err(AttachError::GroupFull);
    }
    Ok(())
}

impl Usage {
    /// The usage after attaching a QP to a group of `members` QPs (0: a
    /// new group), once [`check_attach`] allowed it.
    pub(crate) fn attached(self, members: u32) -> Self {
        Self {
            groups: self.groups + u32::from(members == 0),
            attachments: self.attachments.saturating_add(1),
        }
    }

    /// The usage after detaching a QP from a group of `members` QPs (1:
    /// the group goes with it).
    pub(crate) fn detached(self, members: u32) -> Self {
        Self {
            groups: self.groups.saturating_sub(u32::from(members <= 1)),
            attachments: self.attachments.saturating_sub(1),
        }
    }
}
