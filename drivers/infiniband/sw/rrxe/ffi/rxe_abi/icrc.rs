// SPDX-License-Identifier: GPL-2.0

//! The CRC-32 the module computes ICRCs with: the kernel's `crc32_le`, as
//! the [`Crc32Le`] that `proto::icrc` is generic over. `proto` is also
//! built on the host and cannot name the kernel, so the kernel's side of
//! it is given here, where rrxe's pure code meets the C side.

use crate::{ffi::rt, proto::icrc::Crc32Le};

/// The kernel's `crc32_le` (the fastest implementation the CPU has), for
/// the ICRC of every packet sent and received: the module's callers of
/// `proto::icrc` pass it as the type parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KernelCrc32;

impl Crc32Le for KernelCrc32 {
    fn update(crc: u32, data: &[u8]) -> u32 {
        rt::crc32_le(crc, data)
    }
}

// The kernel's CRC-32 against the reference table. The drop-in build names
// its suites apart (crate::names).
#[cfg_attr(not(dropin), kernel::prelude::kunit_tests(rrxe_rxe_abi_icrc))]
#[cfg_attr(dropin, kernel::prelude::kunit_tests(rrxe_rxe_abi_icrc_dropin))]
mod tests {
    use super::KernelCrc32;
    use crate::proto::icrc::{Crc32Le, TableCrc32};

    #[test]
    fn kernel_crc32_matches_the_reference_table() {
        let mut data = [0u8; 1500];
        for (i, b) in data.iter_mut().enumerate() {
            *b = (i * 7 + 3) as u8;
        }
        for len in [0usize, 1, 7, 64, 1024, 1500] {
            let bytes = &data[..len];
            assert_eq!(
                KernelCrc32::update(0xdebb_20e3, bytes),
                TableCrc32::update(0xdebb_20e3, bytes)
            );
        }
    }
}
