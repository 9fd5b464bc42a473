// SPDX-License-Identifier: GPL-2.0

//! Memory: regions and windows (registration, keys, access rights) and
//! moving message bytes between packets and the memory an SGE names.

pub(crate) mod copy;
pub(crate) mod mr;
pub(crate) mod mw;
