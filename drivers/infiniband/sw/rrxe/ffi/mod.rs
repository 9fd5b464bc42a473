// SPDX-License-Identifier: GPL-2.0

//! The FFI layer: the only code that touches the kernel's C API.
//!
//! [`sys`] holds the generated bindings and is private to this module, so
//! the compiler, not a convention, keeps the rest of the driver from naming
//! them: the driver reaches the kernel only through the safe abstractions
//! here, written as if they lived in `rust/kernel` ([`ib`]: the RDMA core,
//! [`net`]: net devices, sockets and notifiers, [`rt`]: work items, timers,
//! CRC). [`rxe_abi`] is the bridge between rrxe's typed rules and the
//! numbers and layouts of the rxe user ABI and the C enums, and gives
//! `proto`'s ICRC the kernel's CRC-32. The crate denies `unsafe` outside this layer, but for the few
//! items that allow it and say why (two global locks' initialisation,
//! the tunnel sockets' lifetime contract, a macro's expansion).

// The layer that may be `unsafe` (the crate root denies it elsewhere).
#![allow(unsafe_code)]

pub(crate) mod ib;
pub(crate) mod net;
pub(crate) mod rt;
pub(crate) mod rxe_abi;
mod sys;
