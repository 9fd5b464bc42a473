// SPDX-License-Identifier: GPL-2.0

//! Memory: regions and windows (registration, keys, access rights),
//! moving message bytes between packets and the memory an SGE names, and
//! the page faults of regions paged on demand ([`odp`]), of a range or of
//! the whole address space ([`implicit`]).
//!
//! The operations a QP runs on memory (window binds and invalidations,
//! R_Key checks) see the QP only through a [`MemCtx`], which the transport
//! builds from it.

pub(crate) mod copy;
pub(crate) mod implicit;
pub(crate) mod mr;
pub(crate) mod mw;
pub(crate) mod odp;

pub(crate) use self::mw::MemCtx;
