// SPDX-License-Identifier: GPL-2.0

//! Driver attributes of a resource in the RDMA core's resource tracking:
//! what `rdma res show qp -dd` prints after the core's own fields
//! (`struct ib_device_ops::fill_res_qp_entry`).

use super::super::sys;
use core::marker::PhantomData;
use kernel::prelude::*;

/// The netlink message the core is filling with one resource's
/// attributes; the driver adds named values to it.
///
/// # Invariants
///
/// `skb` is the message the core passed to a `fill_res_*_entry` callback,
/// valid and used by nothing else for `'a` (the callback's duration).
pub(crate) struct ResMsg<'a> {
    skb: *mut sys::sk_buff,
    _msg: PhantomData<&'a mut sys::sk_buff>,
}

/// `0` or a negative errno (`-EMSGSIZE`: the message is full) to a
/// `Result`.
fn to_result(ret: i32) -> Result {
    if ret == 0 {
        Ok(())
    } else {
        Err(EMSGSIZE)
    }
}

impl ResMsg<'_> {
    /// Runs `fill` on the message `skb` inside the driver attributes' nest
    /// (`RDMA_NLDEV_ATTR_DRIVER`), which it opens first and closes after;
    /// if `fill` fails, what it put is taken back. `EMSGSIZE` when even
    /// the nest does not fit.
    ///
    /// # Safety
    ///
    /// `skb` is the message of a `fill_res_*_entry` callback that is
    /// running, and nothing else uses it during the call.
    pub(super) unsafe fn driver_table(
        skb: *mut sys::sk_buff,
        fill: impl FnOnce(&mut ResMsg<'_>) -> Result,
    ) -> Result {
        // SAFETY: `skb` is valid and ours (the caller's guarantee).
        let nest = unsafe { sys::rrxe_nl_driver_nest_start(skb) };
        if nest.is_null() {
            return Err(EMSGSIZE);
        }
        // INVARIANT: the caller's guarantee, for the call.
        let mut msg = ResMsg {
            skb,
            _msg: PhantomData,
        };
        let r = fill(&mut msg);
        // SAFETY: `nest` was opened in `skb` above, and is the last nest
        // opened in it (`fill` closes what it opens: it can only put
        // values).
        unsafe {
            if r.is_ok() {
                sys::rrxe_nl_nest_end(skb, nest);
            } else {
                sys::rrxe_nl_nest_cancel(skb, nest);
            }
        }
        r
    }

    /// Adds `name` = `value` (decimal). `EMSGSIZE` when the message is full.
    pub(crate) fn put_u32(&mut self, name: &CStr, value: u32) -> Result {
        // SAFETY: `skb` is valid and ours (type invariants); `name` is a
        // NUL-terminated string the call only reads.
        to_result(unsafe { sys::rdma_nl_put_driver_u32(self.skb, name.as_char_ptr(), value) })
    }

    /// Adds `name` = `value`, shown in hexadecimal.
    pub(crate) fn put_u32_hex(&mut self, name: &CStr, value: u32) -> Result {
        // SAFETY: as in `put_u32`.
        to_result(unsafe { sys::rdma_nl_put_driver_u32_hex(self.skb, name.as_char_ptr(), value) })
    }

    /// Adds `name` = `value` (decimal, 64 bits).
    pub(crate) fn put_u64(&mut self, name: &CStr, value: u64) -> Result {
        // SAFETY: as in `put_u32`.
        to_result(unsafe { sys::rdma_nl_put_driver_u64(self.skb, name.as_char_ptr(), value) })
    }
}
