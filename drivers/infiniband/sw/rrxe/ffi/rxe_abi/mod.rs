// SPDX-License-Identifier: GPL-2.0

//! The bridge between rrxe's typed rules (`logic`) and the C side they
//! describe: the rxe user ABI (`include/uapi/rdma/rdma_user_rxe.h`) and the
//! numbers of the RDMA core's enums; and the kernel's CRC-32 for the ICRC
//! of `proto`.
//!
//! [`ib`](super::ib) is written as if it lived in `rust/kernel` and knows
//! nothing of rrxe; `logic` is plain Rust, also built on the host, and
//! cannot see the bindings. This module sees both: it converts rrxe's
//! typed work completions into the C numbers, and proves at build time
//! that the numbers and byte offsets `logic` (and `proto`) hard-code are
//! those of the kernel we build for. `proto`, plain Rust as well, computes
//! its ICRC with a CRC-32 it is given: the kernel's is [`KernelCrc32`].

mod icrc;
mod numbers;
mod resp;
mod wc;
mod wqe_layout;

pub(crate) use icrc::KernelCrc32;
pub(crate) use wc::{wc_opcode, wc_status};

use super::sys;

/// What the provider needs to map a queue (`struct mminfo`): the offset
/// [`QueueBuf::expose`](super::ib::QueueBuf::expose) returns and the size.
pub(crate) type MmInfo = sys::mminfo;
/// The create-AH response.
pub(crate) type CreateAhResp = sys::rxe_create_ah_resp;
/// The create-CQ response.
pub(crate) type CreateCqResp = sys::rxe_create_cq_resp;
/// The resize-CQ response.
pub(crate) type ResizeCqResp = sys::rxe_resize_cq_resp;
/// The create-QP response.
pub(crate) type CreateQpResp = sys::rxe_create_qp_resp;
/// The create-SRQ response.
pub(crate) type CreateSrqResp = sys::rxe_create_srq_resp;
/// The modify-SRQ command.
pub(crate) type ModifySrqCmd = sys::rxe_modify_srq_cmd;
/// The send WQE header (without the SGE/inline area).
pub(crate) type SendWqe = sys::rxe_send_wqe;
/// The receive WQE header (without the SGE area).
pub(crate) type RecvWqe = sys::rxe_recv_wqe;
/// A scatter/gather element as WQEs carry it.
pub(crate) type Sge = sys::rxe_sge;
