// SPDX-License-Identifier: GPL-2.0

//! Protection domains. A PD has no state of its own in rxe: it only scopes
//! which MRs, QPs and AHs may be used together, which the core tracks.

/// The driver data of a PD.
pub(crate) struct RrxePd;
