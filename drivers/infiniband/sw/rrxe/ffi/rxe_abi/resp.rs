// SPDX-License-Identifier: GPL-2.0

//! The byte layout guarantees of the rxe ABI's command and response structs
//! (`include/uapi/rdma/rdma_user_rxe.h`), which let
//! [`Udata`](crate::ffi::ib::Udata) copy them to and from user space.

use crate::ffi::sys;
use kernel::transmute::{AsBytes, FromBytes};

// SAFETY: two `u32` fields, no padding.
unsafe impl AsBytes for sys::rxe_create_ah_resp {}
// SAFETY: an `mminfo` and two `u32`s, no padding (checked below).
unsafe impl AsBytes for sys::rxe_create_srq_resp {}
// SAFETY: `u64`, `u32`, `u32`: no padding.
unsafe impl AsBytes for sys::mminfo {}
// SAFETY: one `u64`; any bytes are a valid value.
unsafe impl FromBytes for sys::rxe_modify_srq_cmd {}

// SAFETY: `struct mminfo`-based responses are `u64`/`u32` fields laid out
// without padding (checked below), so every byte is initialised.
unsafe impl AsBytes for sys::rxe_create_cq_resp {}
// SAFETY: as above.
unsafe impl AsBytes for sys::rxe_resize_cq_resp {}
// SAFETY: as above.
unsafe impl AsBytes for sys::rxe_create_qp_resp {}

const _: () = {
    assert!(size_of::<sys::mminfo>() == 16);
    assert!(size_of::<sys::rxe_create_cq_resp>() == 16);
    assert!(size_of::<sys::rxe_resize_cq_resp>() == 16);
    assert!(size_of::<sys::rxe_create_qp_resp>() == 32);
    assert!(size_of::<sys::rxe_create_srq_resp>() == 24);
    assert!(size_of::<sys::rxe_modify_srq_cmd>() == 8);
};
