// SPDX-License-Identifier: GPL-2.0

//! Host build of rrxe's kernel-independent protocol and logic modules.
//!
//! The module sources live in the driver tree and are included here by path,
//! so the tests exercise exactly the code the kernel module compiles. Their
//! items are `pub(crate)` (as the kernel's `unreachable_pub` lint wants), so
//! the tests live inside this crate rather than in `tests/`.

#![no_std]

#[cfg(test)]
extern crate std;

// Nothing in this library uses the protocol items outside `cfg(test)`, as
// in the driver before its users are written.
#[expect(dead_code)]
#[path = "../../../drivers/infiniband/sw/rrxe/proto/mod.rs"]
pub mod proto;

// The control-path logic, likewise compiled unchanged from the driver tree.
#[expect(dead_code)]
#[path = "../../../drivers/infiniband/sw/rrxe/logic/mod.rs"]
pub mod logic;

#[cfg(test)]
mod tests;
