// SPDX-License-Identifier: GPL-2.0

//! Runtime helpers missing from the kernel crate: flushing and cancelling
//! work items, and jiffies. Written to be independent of rrxe, like `net/`.

pub(crate) mod time;
pub(crate) mod work;

#[cfg(CONFIG_KUNIT)]
mod kunit;
