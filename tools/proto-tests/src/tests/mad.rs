// SPDX-License-Identifier: GPL-2.0

//! Tests of the PMA answers.

use crate::logic::mad::*;
use proptest::prelude::*;

fn get(class: u8, method: u8, attr: u16) -> [u8; MAD_SIZE] {
    let mut m = [0u8; MAD_SIZE];
    m[0] = 1;
    m[1] = class;
    m[2] = 1;
    m[3] = method;
    m[16..18].copy_from_slice(&attr.to_be_bytes());
    m
}

const COUNTERS: PortCounters = PortCounters {
    link_downed: 300,
    sent_bytes: 4000,
    rcvd_bytes: 8,
    sent_pkts: 7,
    rcvd_pkts: 9,
};

#[test]
fn port_counters() {
    let mut out = [0xffu8; MAD_SIZE];
    let r = process(
        &get(CLASS_PERF_MGMT, METHOD_GET, ATTR_PORT_COUNTERS),
        1,
        1,
        &COUNTERS,
        &mut out,
    );
    assert_eq!(r, RESULT_SUCCESS | RESULT_REPLY);
    // Saturated at 255, everything else cleared.
    assert_eq!(out[64 + 7], 255);
    assert_eq!(out.iter().filter(|&&b| b != 0).count(), 1);
}

#[test]
fn extended_counters_in_words() {
    let mut out = [0u8; MAD_SIZE];
    process(
        &get(CLASS_PERF_MGMT, METHOD_GET, ATTR_PORT_COUNTERS_EXT),
        1,
        1,
        &COUNTERS,
        &mut out,
    );
    let be = |at: usize| u64::from_be_bytes(out[at..at + 8].try_into().unwrap());
    assert_eq!(be(64 + 8), 1000);
    assert_eq!(be(64 + 16), 2);
    assert_eq!(be(64 + 24), 7);
    assert_eq!(be(64 + 32), 9);
}

#[test]
fn class_port_info_and_refusals() {
    let mut out = [0u8; MAD_SIZE];
    process(
        &get(CLASS_PERF_MGMT, METHOD_GET, ATTR_CLASS_PORT_INFO),
        1,
        1,
        &COUNTERS,
        &mut out,
    );
    assert_eq!(&out[66..68], &(1u16 << 9).to_be_bytes());
    let r = process(
        &get(CLASS_PERF_MGMT, METHOD_GET, 0x99),
        1,
        1,
        &COUNTERS,
        &mut out,
    );
    assert_eq!(r, RESULT_SUCCESS);
    assert_eq!(&out[4..6], &STATUS_UNSUPPORTED_ATTRIB.to_be_bytes());
    let r = process(
        &get(0x07, METHOD_GET, ATTR_PORT_COUNTERS),
        1,
        1,
        &COUNTERS,
        &mut out,
    );
    assert_eq!(r, RESULT_SUCCESS);
    assert_eq!(&out[4..6], &STATUS_UNSUPPORTED_METHOD.to_be_bytes());
    assert_eq!(
        process(
            &get(CLASS_PERF_MGMT, METHOD_GET, ATTR_PORT_COUNTERS),
            2,
            1,
            &COUNTERS,
            &mut out
        ),
        RESULT_FAILURE
    );
}

proptest! {
    /// Any MAD gets an answer without panicking.
    #[test]
    fn any_mad(bytes in proptest::collection::vec(any::<u8>(), MAD_SIZE), port in 0u32..4) {
        let mut mad = [0u8; MAD_SIZE];
        mad.copy_from_slice(&bytes);
        let mut out = [0u8; MAD_SIZE];
        let r = process(&mad, port, 1, &COUNTERS, &mut out);
        prop_assert!(r & !(RESULT_SUCCESS | RESULT_REPLY) == 0);
    }
}
