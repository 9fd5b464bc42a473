// SPDX-License-Identifier: GPL-2.0

//! Memory: regions and windows (registration, keys, access rights) and
//! moving message bytes between packets and the memory an SGE names.
//!
//! The operations a QP runs on memory (window binds and invalidations,
//! R_Key checks) see the QP only through a [`MemCtx`], which the transport
//! builds from it.

pub(crate) mod copy;
pub(crate) mod mr;
pub(crate) mod mw;

use self::{
    mr::MrTable,
    mw::{MwTable, QpId},
};

/// What a memory operation run for a QP reads of it: the device's key
/// tables, the QP's PD and the QP's identity. Plain, read-only and cheap
/// to copy; the transport builds it from the QP.
#[derive(Clone, Copy)]
pub(crate) struct MemCtx<'a> {
    /// The device's memory regions.
    pub(crate) mrs: &'a MrTable,
    /// The device's memory windows.
    pub(crate) mws: &'a MwTable,
    /// The QP's PD (its address: an identity compared with MRs' and MWs').
    pub(crate) pd: usize,
    /// The QP, as type 2B windows remember the one that bound them.
    pub(crate) qp: QpId,
}
