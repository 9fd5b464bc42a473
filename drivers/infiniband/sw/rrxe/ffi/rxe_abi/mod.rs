// SPDX-License-Identifier: GPL-2.0

//! The bridge between rrxe's typed rules (`logic`) and the C side they
//! describe: the rxe user ABI (`include/uapi/rdma/rdma_user_rxe.h`) and the
//! numbers of the RDMA core's enums.
//!
//! [`ib`](super::ib) is written as if it lived in `rust/kernel` and knows
//! nothing of rrxe; `logic` is plain Rust, also built on the host, and
//! cannot see the bindings. This module sees both: it converts rrxe's
//! typed work completions into the C numbers, and proves at build time
//! that the numbers and byte offsets `logic` hard-codes are those of the
//! kernel we build for.

mod numbers;
mod wc;
mod wqe_layout;

pub(crate) use wc::{wc_opcode, wc_status};
