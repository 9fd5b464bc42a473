// SPDX-License-Identifier: GPL-2.0

//! The verbs: the ib_device operations ([`device`]) and the protection
//! domains they create ([`pd`]). Kernel consumers' work requests are
//! written into the rings by [`crate::queues::post`].

pub(crate) mod device;
pub(crate) mod pd;
