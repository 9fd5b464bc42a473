// SPDX-License-Identifier: GPL-2.0

//! Build-time proof that the numbers `logic` and `proto` hard-code for the
//! RDMA core are those of the kernel we build for: the work request opcodes
//! and flags (`enum ib_wr_opcode`, `enum ib_send_flags`), which rxe WQEs and
//! kernel work requests both carry, the size of a management datagram,
//! the memory window types (`enum ib_mw_type`), the path MTUs
//! (`enum ib_mtu`) and the default P_Key. `logic` and `proto` cannot see the
//! bindings (they are also built on the host) and [`ib`](crate::ffi::ib)
//! does not know them, so the checks live here; a mismatch fails the build.

use crate::ffi::{ib, sys};
use crate::logic::{mad, mw::MwType, wr};
use crate::proto::{headers, mtu};

// `enum ib_wr_opcode`.
const _: () = assert!(wr::opcode::RDMA_WRITE == sys::IB_WR_RDMA_WRITE);
const _: () = assert!(wr::opcode::RDMA_WRITE_WITH_IMM == sys::IB_WR_RDMA_WRITE_WITH_IMM);
const _: () = assert!(wr::opcode::SEND == sys::IB_WR_SEND);
const _: () = assert!(wr::opcode::SEND_WITH_IMM == sys::IB_WR_SEND_WITH_IMM);
const _: () = assert!(wr::opcode::RDMA_READ == sys::IB_WR_RDMA_READ);
const _: () = assert!(wr::opcode::ATOMIC_CMP_AND_SWP == sys::IB_WR_ATOMIC_CMP_AND_SWP);
const _: () = assert!(wr::opcode::ATOMIC_FETCH_AND_ADD == sys::IB_WR_ATOMIC_FETCH_AND_ADD);
const _: () = assert!(wr::opcode::LOCAL_INV == sys::IB_WR_LOCAL_INV);
const _: () = assert!(wr::opcode::BIND_MW == sys::IB_WR_BIND_MW);
const _: () = assert!(wr::opcode::SEND_WITH_INV == sys::IB_WR_SEND_WITH_INV);
const _: () = assert!(wr::opcode::LSO == sys::IB_WR_LSO);
const _: () = assert!(wr::opcode::RDMA_READ_WITH_INV == sys::IB_WR_RDMA_READ_WITH_INV);
const _: () = assert!(wr::opcode::FLUSH == sys::IB_WR_FLUSH);
const _: () = assert!(wr::opcode::ATOMIC_WRITE == sys::IB_WR_ATOMIC_WRITE);
const _: () = assert!(wr::opcode::REG_MR == sys::IB_WR_REG_MR);

// `enum ib_send_flags` (an `int` in `struct ib_send_wr`, a `__u32` in the
// rxe WQE, hence the bit-for-bit comparison).
const _: () = assert!(wr::SEND_INLINE as i32 == sys::IB_SEND_INLINE);

// The MAD `ib::Operations::process_mad` passes is the one `logic::mad`
// answers.
const _: () = assert!(mad::MAD_SIZE == ib::MAD_SIZE);

// `enum ib_mtu`: the bounds of the range `proto::mtu` chooses the active
// MTU from, and the largest one, which the port reports as its own.
const _: () = assert!(mtu::IB_MTU_256 == sys::IB_MTU_256);
const _: () = assert!(mtu::IB_MTU_4096 == sys::IB_MTU_4096);

// The P_Key the packets carry and `query_pkey` reports is the core's
// default, full-membership one.
const _: () = assert!(headers::DEFAULT_PKEY as u32 == sys::IB_DEFAULT_PKEY_FULL);

// `enum ib_mw_type`, both ways (`alloc_mw` is given the C number).
const _: () = {
    assert!(MwType::One.raw() == sys::IB_MW_TYPE_1);
    assert!(MwType::Two.raw() == sys::IB_MW_TYPE_2);
    assert!(matches!(
        MwType::from_raw(sys::IB_MW_TYPE_1),
        Some(MwType::One)
    ));
    assert!(matches!(
        MwType::from_raw(sys::IB_MW_TYPE_2),
        Some(MwType::Two)
    ));
};
