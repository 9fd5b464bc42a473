// SPDX-License-Identifier: GPL-2.0

//! RoCEv2 / IBA transport wire format, independent of the kernel.
//!
//! Everything here is pure computation over byte slices: no allocation, no
//! `unsafe`, no kernel APIs, and no panics on any input. That lets the same
//! source be compiled into the driver and, unchanged, into a host test
//! crate (`tools/proto-tests`) that checks it with unit and property tests.
//!
//! - [`mtu`]: which IB MTU fits a netdev MTU.
//! - [`psn`]: 24-bit packet sequence numbers and their wrapping order.
//! - [`opcode`]: the opcode table (transport, headers, role of each opcode).
//! - [`headers`]: the BTH and extension header layouts.
//! - [`packet`]: validating a received packet and building headers.
//! - [`icrc`]: the invariant CRC that ends every packet.
//! - [`wire`]: the bounds-checked big-endian cursors the codecs use.
//! - [`error`]: parse and build errors.

pub(crate) mod error;
pub(crate) mod headers;
pub(crate) mod icrc;
pub(crate) mod mtu;
pub(crate) mod opcode;
pub(crate) mod packet;
pub(crate) mod psn;
pub(crate) mod wire;
