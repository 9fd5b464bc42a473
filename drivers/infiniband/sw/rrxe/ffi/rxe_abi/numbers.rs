// SPDX-License-Identifier: GPL-2.0

//! Build-time proof that the numbers `logic` and `proto` hard-code for the
//! RDMA core are those of the kernel we build for: the work request opcodes
//! and flags (`enum ib_wr_opcode`, `enum ib_send_flags`), which rxe WQEs and
//! kernel work requests both carry, the size of a management datagram,
//! the memory window types (`enum ib_mw_type`), the path MTUs
//! (`enum ib_mtu`), the default P_Key, and the QP states and types
//! (`enum ib_qp_state`, `enum ib_qp_type`) that `modify_qp`, `create_qp`
//! and the trace events carry. `logic` and `proto` cannot see the
//! bindings (they are also built on the host) and [`ib`](crate::ffi::ib)
//! does not know them, so the checks live here; a mismatch fails the build.

use crate::ffi::{ib, sys};
use crate::logic::{
    mad,
    mw::MwType,
    qp_state::{QpState, QpType},
    wr,
};
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

// `enum ib_qp_state`, every state: `modify_qp` and `query_qp` pass the C
// number through `QpState::{from_raw, raw}`, and the `rrxe_qp_state`
// trace event prints it by the kernel's names.
const _: () = {
    let c = [
        sys::IB_QPS_RESET,
        sys::IB_QPS_INIT,
        sys::IB_QPS_RTR,
        sys::IB_QPS_RTS,
        sys::IB_QPS_SQD,
        sys::IB_QPS_SQE,
        sys::IB_QPS_ERR,
    ];
    let ours = QpState::ALL;
    assert!(c.len() == ours.len());
    let mut i = 0;
    while i < c.len() {
        assert!(ours[i].raw() == c[i]);
        assert!(matches!(QpState::from_raw(c[i]), Some(s) if s.raw() == c[i]));
        i += 1;
    }
};

// `enum ib_qp_type`, the types rrxe creates (the others are refused by
// number, so only their being distinct from these matters).
const _: () = {
    assert!(QpType::Smi.raw() == sys::IB_QPT_SMI);
    assert!(QpType::Gsi.raw() == sys::IB_QPT_GSI);
    assert!(QpType::Rc.raw() == sys::IB_QPT_RC);
    assert!(QpType::Uc.raw() == sys::IB_QPT_UC);
    assert!(QpType::Ud.raw() == sys::IB_QPT_UD);
};
