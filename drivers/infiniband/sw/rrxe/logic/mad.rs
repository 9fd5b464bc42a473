// SPDX-License-Identifier: GPL-2.0

//! The management datagrams a RoCE port answers itself (`process_mad`):
//! Performance Management `Get`s of ClassPortInfo, PortCounters and
//! PortCountersExtended, as rxe answers them. Everything else gets an
//! "unsupported" status. The core uses the same path for the port's sysfs
//! `counters/` files.

/// Size of a MAD (`struct ib_mad`).
pub(crate) const MAD_SIZE: usize = 256;
/// Where a MAD's class data starts (after the 24-byte common header).
const DATA: usize = 24;
/// Where the PMA attribute starts in the class data (after the 40 reserved
/// bytes of the PerfMgt header).
const PMA_ATTR: usize = DATA + 40;

/// `IB_MGMT_CLASS_PERF_MGMT`.
pub(crate) const CLASS_PERF_MGMT: u8 = 0x04;
/// `IB_MGMT_METHOD_GET`.
pub(crate) const METHOD_GET: u8 = 0x01;
/// `IB_PMA_CLASS_PORT_INFO`.
pub(crate) const ATTR_CLASS_PORT_INFO: u16 = 0x0001;
/// `IB_PMA_PORT_COUNTERS`.
pub(crate) const ATTR_PORT_COUNTERS: u16 = 0x0012;
/// `IB_PMA_PORT_COUNTERS_EXT`.
pub(crate) const ATTR_PORT_COUNTERS_EXT: u16 = 0x001D;
/// `IB_PMA_CLASS_CAP_EXT_WIDTH`: PortCountersExtended is supported.
const CAP_EXT_WIDTH: u16 = 1 << 9;
/// `IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD`.
pub(crate) const STATUS_UNSUPPORTED_METHOD: u16 = 0x0008;
/// `IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB`.
pub(crate) const STATUS_UNSUPPORTED_ATTRIB: u16 = 0x000c;

/// `IB_MAD_RESULT_FAILURE`.
pub(crate) const RESULT_FAILURE: u32 = 0;
/// `IB_MAD_RESULT_SUCCESS`.
pub(crate) const RESULT_SUCCESS: u32 = 1 << 0;
/// `IB_MAD_RESULT_REPLY`.
pub(crate) const RESULT_REPLY: u32 = 1 << 1;

/// The port counters a PMA reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PortCounters {
    pub(crate) link_downed: u64,
    pub(crate) sent_bytes: u64,
    pub(crate) rcvd_bytes: u64,
    pub(crate) sent_pkts: u64,
    pub(crate) rcvd_pkts: u64,
}

fn put(out: &mut [u8; MAD_SIZE], at: usize, bytes: &[u8]) {
    if let Some(dst) = out.get_mut(at..at + bytes.len()) {
        dst.copy_from_slice(bytes);
    }
}

/// Answers `mad` on `port` (the device's only port is `our_port`) into
/// `out`, which is cleared first; returns the `IB_MAD_RESULT_*` flags.
pub(crate) fn process(
    mad: &[u8; MAD_SIZE],
    port: u32,
    our_port: u32,
    counters: &PortCounters,
    out: &mut [u8; MAD_SIZE],
) -> u32 {
    if port != our_port {
        return RESULT_FAILURE;
    }
    *out = [0; MAD_SIZE];
    let (class, method) = (mad[1], mad[3]);
    let attr = u16::from_be_bytes([mad[16], mad[17]]);
    if class != CLASS_PERF_MGMT {
        put(out, 4, &STATUS_UNSUPPORTED_METHOD.to_be_bytes());
        return RESULT_SUCCESS;
    }
    if method != METHOD_GET {
        return RESULT_SUCCESS | RESULT_REPLY;
    }
    match attr {
        ATTR_CLASS_PORT_INFO => {
            // ClassPortInfo: capability mask after base and class version.
            put(out, PMA_ATTR + 2, &CAP_EXT_WIDTH.to_be_bytes());
        }
        ATTR_PORT_COUNTERS => {
            // The 8-bit LinkDownedCounter saturates instead of wrapping
            // (IBA 16.1.3.5).
            out[PMA_ATTR + 7] = counters.link_downed.min(u64::from(u8::MAX)) as u8;
        }
        ATTR_PORT_COUNTERS_EXT => {
            // Data counters count 32-bit words.
            put(out, PMA_ATTR + 8, &(counters.sent_bytes >> 2).to_be_bytes());
            put(
                out,
                PMA_ATTR + 16,
                &(counters.rcvd_bytes >> 2).to_be_bytes(),
            );
            put(out, PMA_ATTR + 24, &counters.sent_pkts.to_be_bytes());
            put(out, PMA_ATTR + 32, &counters.rcvd_pkts.to_be_bytes());
        }
        _ => {
            put(out, 4, &STATUS_UNSUPPORTED_ATTRIB.to_be_bytes());
            return RESULT_SUCCESS;
        }
    }
    RESULT_SUCCESS | RESULT_REPLY
}
