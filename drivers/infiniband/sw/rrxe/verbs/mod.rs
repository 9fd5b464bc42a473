// SPDX-License-Identifier: GPL-2.0

//! The verbs: the ib_device operations ([`device`]). Kernel consumers'
//! work requests are written into the rings by [`crate::queues::post`].

pub(crate) mod device;
