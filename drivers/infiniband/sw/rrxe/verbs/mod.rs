// SPDX-License-Identifier: GPL-2.0

//! The verbs: the ib_device operations ([`device`]) and kernel consumers'
//! work requests ([`post`]).

pub(crate) mod device;
pub(crate) mod post;
