// SPDX-License-Identifier: GPL-2.0

//! Build-time proof that the byte offsets `logic::wqe` decodes WQEs at are
//! those of the kernel's `include/uapi/rdma/rdma_user_rxe.h`, as bindgen
//! lays the structs out. `logic::wqe` cannot see the bindings (it is also
//! built on the host), so the check lives here; a mismatch fails the build.

use crate::ffi::sys::{rxe_recv_wqe, rxe_send_wqe, rxe_sge};
use crate::logic::wqe::layout as l;
use core::mem::{offset_of, size_of};

// The request header (`struct rxe_send_wr`, at the start of the WQE).
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr_id) == l::SEND_WR_ID);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.opcode) == l::SEND_OPCODE);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.send_flags) == l::SEND_FLAGS);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.ex.imm_data) == l::SEND_EX);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.ex.invalidate_rkey) == l::SEND_EX);

// `wr.wr.rdma`, also read for ATOMIC WRITE.
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.rdma.remote_addr) == l::RDMA_REMOTE_ADDR);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.rdma.rkey) == l::RDMA_RKEY);

// `wr.wr.atomic`.
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.atomic.remote_addr) == l::ATOMIC_REMOTE_ADDR);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.atomic.compare_add) == l::ATOMIC_COMPARE_ADD);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.atomic.swap) == l::ATOMIC_SWAP);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.atomic.rkey) == l::ATOMIC_RKEY);

// `wr.wr.flush` (bindgen renames the C member `type`).
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.flush.remote_addr) == l::FLUSH_REMOTE_ADDR);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.flush.rkey) == l::FLUSH_RKEY);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.flush.type_) == l::FLUSH_TYPE);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.flush.level) == l::FLUSH_LEVEL);

// `wr.wr.ud`.
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.ud.remote_qpn) == l::UD_REMOTE_QPN);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.ud.remote_qkey) == l::UD_REMOTE_QKEY);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.ud.pkey_index) == l::UD_PKEY_INDEX);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.ud.ah_num) == l::UD_AH_NUM);

// `wr.wr.mw`.
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.mw.addr) == l::MW_ADDR);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.mw.length) == l::MW_LENGTH);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.mw.mr_lkey) == l::MW_MR_LKEY);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.mw.mw_rkey) == l::MW_MW_RKEY);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.mw.rkey) == l::MW_RKEY);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.mw.access) == l::MW_ACCESS);

// `wr.wr.reg` (kernel only).
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.reg.key) == l::REG_KEY);
const _: () = assert!(offset_of!(rxe_send_wqe, wr.wr.reg.access) == l::REG_ACCESS);
const _: () = assert!(offset_of!(rxe_send_wqe, iova) == l::SEND_IOVA);

// The send WQE's `dma` and the data area after the header, which
// `post.rs` writes at `size_of::<rxe_send_wqe>()`.
// (`__bindgen_anon_1` is the C anonymous union of `sge`, `inline_data`
// and `atomic_wr`.)
const _: () = assert!(offset_of!(rxe_send_wqe, dma.length) == l::SEND_DMA_LENGTH);
const _: () = assert!(offset_of!(rxe_send_wqe, dma.num_sge) == l::SEND_DMA_NUM_SGE);
const _: () = assert!(offset_of!(rxe_send_wqe, dma.__bindgen_anon_1) == l::SEND_DATA);
const _: () = assert!(size_of::<rxe_send_wqe>() == l::SEND_DATA);

// The receive WQE.
const _: () = assert!(offset_of!(rxe_recv_wqe, wr_id) == l::RECV_WR_ID);
const _: () = assert!(offset_of!(rxe_recv_wqe, dma.length) == l::RECV_DMA_LENGTH);
const _: () = assert!(offset_of!(rxe_recv_wqe, dma.num_sge) == l::RECV_DMA_NUM_SGE);
const _: () = assert!(offset_of!(rxe_recv_wqe, dma.__bindgen_anon_1) == l::RECV_DATA);
const _: () = assert!(size_of::<rxe_recv_wqe>() == l::RECV_DATA);

// One SGE.
const _: () = assert!(size_of::<rxe_sge>() == l::SGE_SIZE);
const _: () = assert!(offset_of!(rxe_sge, addr) == l::SGE_ADDR);
const _: () = assert!(offset_of!(rxe_sge, length) == l::SGE_LENGTH);
const _: () = assert!(offset_of!(rxe_sge, lkey) == l::SGE_LKEY);
