// SPDX-License-Identifier: GPL-2.0

//! QP state transitions against a transcription of the IB core's
//! `qp_state_table` and `ib_modify_qp_is_ok` (drivers/infiniband/core/verbs.c).

use proptest::prelude::*;
use std::vec::Vec;

use crate::logic::qp_state::{
    check_mask_supported, check_modify, modify_allowed, moves_to_err, transition_attrs, AttrMask,
    QpState, QpStateError, QpType, StateAction, Transition, TransitionAttrs,
};

// enum ib_qp_state.
const RESET: u32 = 0;
const INIT: u32 = 1;
const RTR: u32 = 2;
const RTS: u32 = 3;
const SQD: u32 = 4;
const SQE: u32 = 5;
const ERR: u32 = 6;

// enum ib_qp_type (below IB_QPT_MAX).
const SMI: u32 = 0;
const GSI: u32 = 1;
const RC: u32 = 2;
const UC: u32 = 3;
const UD: u32 = 4;
const RAW_IPV6: u32 = 5;
const RAW_ETHERTYPE: u32 = 6;
const RAW_PACKET: u32 = 8;
const XRC_INI: u32 = 9;
const XRC_TGT: u32 = 10;
const TYPES: [u32; 10] = [
    SMI,
    GSI,
    RC,
    UC,
    UD,
    RAW_IPV6,
    RAW_ETHERTYPE,
    RAW_PACKET,
    XRC_INI,
    XRC_TGT,
];

// enum ib_qp_attr_mask.
const STATE: u32 = 1;
const CUR_STATE: u32 = 1 << 1;
const EN_SQD_ASYNC_NOTIFY: u32 = 1 << 2;
const ACCESS_FLAGS: u32 = 1 << 3;
const PKEY_INDEX: u32 = 1 << 4;
const PORT: u32 = 1 << 5;
const QKEY: u32 = 1 << 6;
const AV: u32 = 1 << 7;
const PATH_MTU: u32 = 1 << 8;
const TIMEOUT: u32 = 1 << 9;
const RETRY_CNT: u32 = 1 << 10;
const RNR_RETRY: u32 = 1 << 11;
const RQ_PSN: u32 = 1 << 12;
const MAX_QP_RD_ATOMIC: u32 = 1 << 13;
const ALT_PATH: u32 = 1 << 14;
const MIN_RNR_TIMER: u32 = 1 << 15;
const SQ_PSN: u32 = 1 << 16;
const MAX_DEST_RD_ATOMIC: u32 = 1 << 17;
const PATH_MIG_STATE: u32 = 1 << 18;
const CAP: u32 = 1 << 19;
const DEST_QPN: u32 = 1 << 20;
const RATE_LIMIT: u32 = 1 << 25;

/// One valid transition of the kernel table: current state, next state,
/// and the (type, required, optional) entries that are not zero.
type Row = (u32, u32, &'static [(u32, u32, u32)]);

/// `qp_state_table`, entry by entry as the kernel lists it.
const TABLE: &[Row] = &[
    (RESET, RESET, &[]),
    (
        RESET,
        INIT,
        &[
            (UD, PKEY_INDEX | PORT | QKEY, 0),
            (RAW_PACKET, PORT, 0),
            (UC, PKEY_INDEX | PORT | ACCESS_FLAGS, 0),
            (RC, PKEY_INDEX | PORT | ACCESS_FLAGS, 0),
            (XRC_INI, PKEY_INDEX | PORT | ACCESS_FLAGS, 0),
            (XRC_TGT, PKEY_INDEX | PORT | ACCESS_FLAGS, 0),
            (SMI, PKEY_INDEX | QKEY, 0),
            (GSI, PKEY_INDEX | QKEY, 0),
        ],
    ),
    (INIT, RESET, &[]),
    (INIT, ERR, &[]),
    (
        INIT,
        INIT,
        &[
            (UD, 0, PKEY_INDEX | PORT | QKEY),
            (UC, 0, PKEY_INDEX | PORT | ACCESS_FLAGS),
            (RC, 0, PKEY_INDEX | PORT | ACCESS_FLAGS),
            (XRC_INI, 0, PKEY_INDEX | PORT | ACCESS_FLAGS),
            (XRC_TGT, 0, PKEY_INDEX | PORT | ACCESS_FLAGS),
            (SMI, 0, PKEY_INDEX | QKEY),
            (GSI, 0, PKEY_INDEX | QKEY),
        ],
    ),
    (
        INIT,
        RTR,
        &[
            (UD, 0, PKEY_INDEX | QKEY),
            (
                UC,
                AV | PATH_MTU | DEST_QPN | RQ_PSN,
                ALT_PATH | ACCESS_FLAGS | PKEY_INDEX,
            ),
            (
                RC,
                AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER,
                ALT_PATH | ACCESS_FLAGS | PKEY_INDEX,
            ),
            (
                XRC_INI,
                AV | PATH_MTU | DEST_QPN | RQ_PSN,
                ALT_PATH | ACCESS_FLAGS | PKEY_INDEX,
            ),
            (
                XRC_TGT,
                AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER,
                ALT_PATH | ACCESS_FLAGS | PKEY_INDEX,
            ),
            (SMI, 0, PKEY_INDEX | QKEY),
            (GSI, 0, PKEY_INDEX | QKEY),
        ],
    ),
    (RTR, RESET, &[]),
    (RTR, ERR, &[]),
    (
        RTR,
        RTS,
        &[
            (UD, SQ_PSN, CUR_STATE | QKEY),
            (
                UC,
                SQ_PSN,
                CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE,
            ),
            (
                RC,
                TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC,
                CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE,
            ),
            (
                XRC_INI,
                TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC,
                CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE,
            ),
            (
                XRC_TGT,
                TIMEOUT | SQ_PSN,
                CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE,
            ),
            (SMI, SQ_PSN, CUR_STATE | QKEY),
            (GSI, SQ_PSN, CUR_STATE | QKEY),
        ],
    ),
    (RTS, RESET, &[]),
    (RTS, ERR, &[]),
    (
        RTS,
        RTS,
        &[
            (UD, 0, CUR_STATE | QKEY),
            (UC, 0, CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE),
            (
                RC,
                0,
                CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE | MIN_RNR_TIMER,
            ),
            (
                XRC_INI,
                0,
                CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE,
            ),
            (
                XRC_TGT,
                0,
                CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE | MIN_RNR_TIMER,
            ),
            (SMI, 0, CUR_STATE | QKEY),
            (GSI, 0, CUR_STATE | QKEY),
        ],
    ),
    (
        RTS,
        SQD,
        &[
            (UD, 0, EN_SQD_ASYNC_NOTIFY),
            (UC, 0, EN_SQD_ASYNC_NOTIFY),
            (RC, 0, EN_SQD_ASYNC_NOTIFY),
            (XRC_INI, 0, EN_SQD_ASYNC_NOTIFY),
            (XRC_TGT, 0, EN_SQD_ASYNC_NOTIFY),
            (SMI, 0, EN_SQD_ASYNC_NOTIFY),
            (GSI, 0, EN_SQD_ASYNC_NOTIFY),
        ],
    ),
    (SQD, RESET, &[]),
    (SQD, ERR, &[]),
    (
        SQD,
        RTS,
        &[
            (UD, 0, CUR_STATE | QKEY),
            (UC, 0, CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE),
            (
                RC,
                0,
                CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE,
            ),
            (
                XRC_INI,
                0,
                CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE,
            ),
            (
                XRC_TGT,
                0,
                CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE,
            ),
            (SMI, 0, CUR_STATE | QKEY),
            (GSI, 0, CUR_STATE | QKEY),
        ],
    ),
    (
        SQD,
        SQD,
        &[
            (UD, 0, PKEY_INDEX | QKEY),
            (
                UC,
                0,
                AV | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | PATH_MIG_STATE,
            ),
            (
                RC,
                0,
                PORT | AV
                    | TIMEOUT
                    | RETRY_CNT
                    | RNR_RETRY
                    | MAX_QP_RD_ATOMIC
                    | MAX_DEST_RD_ATOMIC
                    | ALT_PATH
                    | ACCESS_FLAGS
                    | PKEY_INDEX
                    | MIN_RNR_TIMER
                    | PATH_MIG_STATE,
            ),
            (
                XRC_INI,
                0,
                PORT | AV
                    | TIMEOUT
                    | RETRY_CNT
                    | RNR_RETRY
                    | MAX_QP_RD_ATOMIC
                    | ALT_PATH
                    | ACCESS_FLAGS
                    | PKEY_INDEX
                    | PATH_MIG_STATE,
            ),
            (
                XRC_TGT,
                0,
                PORT | AV
                    | TIMEOUT
                    | MAX_DEST_RD_ATOMIC
                    | ALT_PATH
                    | ACCESS_FLAGS
                    | PKEY_INDEX
                    | MIN_RNR_TIMER
                    | PATH_MIG_STATE,
            ),
            (SMI, 0, PKEY_INDEX | QKEY),
            (GSI, 0, PKEY_INDEX | QKEY),
        ],
    ),
    (SQE, RESET, &[]),
    (SQE, ERR, &[]),
    (
        SQE,
        RTS,
        &[
            (UD, 0, CUR_STATE | QKEY),
            (UC, 0, CUR_STATE | ACCESS_FLAGS),
            (SMI, 0, CUR_STATE | QKEY),
            (GSI, 0, CUR_STATE | QKEY),
        ],
    ),
    (ERR, RESET, &[]),
    (ERR, ERR, &[]),
];

/// The table entry for `(cur, next, ty)`: `None` if the transition is not
/// valid, else `(required, optional)` (zero where the kernel has no entry).
fn model_entry(cur: u32, next: u32, ty: u32) -> Option<(u32, u32)> {
    let (_, _, per_type) = TABLE.iter().find(|r| r.0 == cur && r.1 == next)?;
    Some(
        per_type
            .iter()
            .find(|e| e.0 == ty)
            .map_or((0, 0), |e| (e.1, e.2)),
    )
}

/// `ib_modify_qp_is_ok`, transcribed.
fn model_is_ok(cur: u32, next: u32, ty: u32, mask: u32) -> bool {
    if mask & CUR_STATE != 0 && cur != RTR && cur != RTS && cur != SQD && cur != SQE {
        return false;
    }
    let Some((req, opt)) = model_entry(cur, next, ty) else {
        return false;
    };
    if mask & req != req {
        return false;
    }
    mask & !(req | opt | STATE | RATE_LIMIT) == 0
}

fn st(raw: u32) -> QpState {
    QpState::from_raw(raw).unwrap()
}

fn ty(raw: u32) -> QpType {
    QpType::from_raw(raw).unwrap()
}

fn m(bits: u32) -> AttrMask {
    AttrMask::from_bits(bits)
}

/// Every `(cur, next, type)` triple.
fn triples() -> Vec<(u32, u32, u32)> {
    let mut v = Vec::new();
    for cur in RESET..=ERR {
        for next in RESET..=ERR {
            for &t in &TYPES {
                v.push((cur, next, t));
            }
        }
    }
    v
}

/// The bits of `bits`, one by one.
fn each_bit(bits: u32) -> impl Iterator<Item = u32> {
    (0..32).map(|b| 1u32 << b).filter(move |b| bits & b != 0)
}

#[test]
fn enum_values_match_kernel() {
    for raw in 0..=6 {
        assert_eq!(st(raw).raw(), raw);
    }
    assert_eq!(QpState::from_raw(7), None);
    assert_eq!(QpState::ALL.len(), 7);
    for &t in &TYPES {
        assert_eq!(ty(t).raw(), t);
    }
    assert_eq!(QpType::ALL.map(QpType::raw), TYPES);
    for bad in [7, 11, 0xff, 0x1000, u32::MAX] {
        assert_eq!(QpType::from_raw(bad), None);
    }
    let masks = [
        (AttrMask::STATE, STATE),
        (AttrMask::CUR_STATE, CUR_STATE),
        (AttrMask::EN_SQD_ASYNC_NOTIFY, EN_SQD_ASYNC_NOTIFY),
        (AttrMask::ACCESS_FLAGS, ACCESS_FLAGS),
        (AttrMask::PKEY_INDEX, PKEY_INDEX),
        (AttrMask::PORT, PORT),
        (AttrMask::QKEY, QKEY),
        (AttrMask::AV, AV),
        (AttrMask::PATH_MTU, PATH_MTU),
        (AttrMask::TIMEOUT, TIMEOUT),
        (AttrMask::RETRY_CNT, RETRY_CNT),
        (AttrMask::RNR_RETRY, RNR_RETRY),
        (AttrMask::RQ_PSN, RQ_PSN),
        (AttrMask::MAX_QP_RD_ATOMIC, MAX_QP_RD_ATOMIC),
        (AttrMask::ALT_PATH, ALT_PATH),
        (AttrMask::MIN_RNR_TIMER, MIN_RNR_TIMER),
        (AttrMask::SQ_PSN, SQ_PSN),
        (AttrMask::MAX_DEST_RD_ATOMIC, MAX_DEST_RD_ATOMIC),
        (AttrMask::PATH_MIG_STATE, PATH_MIG_STATE),
        (AttrMask::CAP, CAP),
        (AttrMask::DEST_QPN, DEST_QPN),
        (AttrMask::RATE_LIMIT, RATE_LIMIT),
        (AttrMask::STANDARD_BITS, 0x1f_ffff),
    ];
    for (mask, bits) in masks {
        assert_eq!(mask.bits(), bits);
    }
    assert!(ty(RC).rxe_supported() && ty(UC).rxe_supported());
    assert!(ty(UD).rxe_supported() && ty(GSI).rxe_supported());
    assert!(!ty(SMI).rxe_supported() && !ty(XRC_INI).rxe_supported());
}

#[test]
fn table_matches_kernel() {
    for (cur, next, t) in triples() {
        let got = transition_attrs(st(cur), st(next), ty(t));
        let want = model_entry(cur, next, t).map(|(r, o)| TransitionAttrs {
            required: m(r),
            optional: m(o),
        });
        assert_eq!(got, want, "{cur} -> {next} on type {t}");
    }
}

#[test]
fn required_and_optional_masks() {
    for (cur, next, t) in triples() {
        let (c, n, q) = (st(cur), st(next), ty(t));
        let Some((req, opt)) = model_entry(cur, next, t) else {
            assert_eq!(
                modify_allowed(c, n, q, m(STATE)),
                Err(QpStateError::InvalidTransition { from: c, to: n })
            );
            continue;
        };
        // Exactly the required ones, with or without STATE/RATE_LIMIT.
        for extra in [0, STATE, RATE_LIMIT, STATE | RATE_LIMIT] {
            assert_eq!(modify_allowed(c, n, q, m(req | extra)), Ok(()));
        }
        // Everything allowed at once.
        assert_eq!(modify_allowed(c, n, q, m(req | opt | STATE)), Ok(()));
        // Each required bit is needed.
        for bit in each_bit(req) {
            assert_eq!(
                modify_allowed(c, n, q, m((req | opt | STATE) & !bit)),
                Err(QpStateError::MissingRequired(m(bit))),
                "{cur} -> {next} on type {t} without {bit:#x}"
            );
        }
        // Any other bit, known or not, is refused.
        for bit in each_bit(!(req | opt | STATE | RATE_LIMIT)) {
            let got = modify_allowed(c, n, q, m(req | STATE | bit));
            if bit == CUR_STATE && !c.accepts_cur_state() {
                assert_eq!(got, Err(QpStateError::CurStateNotAllowed(c)));
            } else {
                assert_eq!(got, Err(QpStateError::NotAllowed(m(bit))));
            }
        }
    }
}

#[test]
fn cur_state_checked_first() {
    // From RESET, CUR_STATE is refused even on an invalid transition.
    assert_eq!(
        modify_allowed(QpState::Reset, QpState::Rts, QpType::Rc, m(CUR_STATE)),
        Err(QpStateError::CurStateNotAllowed(QpState::Reset))
    );
    // From RTS it is fine where the table allows it.
    assert_eq!(
        modify_allowed(QpState::Rts, QpState::Rts, QpType::Rc, m(STATE | CUR_STATE)),
        Ok(())
    );
    // ... and refused where it does not (RTS -> SQD takes only the notify).
    assert_eq!(
        modify_allowed(QpState::Rts, QpState::Sqd, QpType::Rc, m(STATE | CUR_STATE)),
        Err(QpStateError::NotAllowed(AttrMask::CUR_STATE))
    );
}

#[test]
fn rxe_mask_support() {
    assert_eq!(check_mask_supported(m(0x1f_ffff)), Ok(()));
    assert_eq!(
        check_mask_supported(m(STATE | RATE_LIMIT)),
        Err(QpStateError::Unsupported(AttrMask::RATE_LIMIT))
    );
    assert_eq!(
        check_mask_supported(m((1 << 21) | (1 << 31))),
        Err(QpStateError::Unsupported(m((1 << 21) | (1 << 31))))
    );
}

#[test]
fn check_modify_like_rxe() {
    let rc = QpType::Rc;
    let to_rtr = m(STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER);
    assert_eq!(
        check_modify(QpState::Init, false, rc, to_rtr, 0, RTR),
        Ok(Transition {
            from: QpState::Init,
            to: QpState::Rtr,
            action: StateAction::None
        })
    );
    // Without CUR_STATE the attribute's cur_qp_state is ignored, even if
    // garbage.
    assert!(check_modify(QpState::Init, false, rc, to_rtr, 99, RTR).is_ok());
    assert_eq!(
        check_modify(QpState::Init, false, rc, to_rtr, 0, 7),
        Err(QpStateError::UnknownState(7))
    );
    // With CUR_STATE the asserted state is checked instead of the real one:
    // SQE -> RTS exists for UD, RTR -> RTS would need SQ_PSN.
    let ud = QpType::Ud;
    let t = check_modify(QpState::Rtr, false, ud, m(STATE | CUR_STATE), SQE, RTS);
    assert_eq!(
        t.map(|t| (t.from, t.to, t.action)),
        Ok((QpState::Sqe, QpState::Rts, StateAction::None))
    );
    assert_eq!(
        check_modify(QpState::Sqe, false, ud, m(STATE | CUR_STATE), RTR, RTS),
        Err(QpStateError::MissingRequired(AttrMask::SQ_PSN))
    );
    // CUR_STATE is not among the attributes of a move to ERR.
    assert_eq!(
        check_modify(QpState::Rts, false, rc, m(STATE | CUR_STATE), SQE, ERR),
        Err(QpStateError::NotAllowed(AttrMask::CUR_STATE))
    );
    assert_eq!(
        check_modify(QpState::Rts, false, rc, m(STATE | CUR_STATE), 42, ERR),
        Err(QpStateError::UnknownState(42))
    );
    // A draining SQD may only go to ERR.
    assert_eq!(
        check_modify(QpState::Sqd, true, rc, m(STATE), 0, RTS),
        Err(QpStateError::SqDraining)
    );
    assert_eq!(
        check_modify(QpState::Sqd, true, rc, m(STATE), 0, RESET),
        Err(QpStateError::SqDraining)
    );
    assert!(check_modify(QpState::Sqd, true, rc, m(STATE), 0, ERR).is_ok());
    assert!(check_modify(QpState::Sqd, false, rc, m(STATE), 0, RTS).is_ok());
    // The table is consulted before the draining check.
    assert_eq!(
        check_modify(QpState::Sqd, true, rc, m(STATE), 0, INIT),
        Err(QpStateError::InvalidTransition {
            from: QpState::Sqd,
            to: QpState::Init
        })
    );
}

#[test]
fn actions() {
    for s in QpState::ALL {
        let a = StateAction::for_target(s);
        assert_eq!(moves_to_err(s), s == QpState::Err);
        assert_eq!(a == StateAction::Flush, s == QpState::Err);
        assert_eq!(a == StateAction::Reset, s == QpState::Reset);
        assert_eq!(a == StateAction::DrainSq, s == QpState::Sqd);
    }
    // ERR -> ERR is allowed and flushes again.
    let t = check_modify(QpState::Err, false, QpType::Ud, m(STATE), 0, ERR).unwrap();
    assert_eq!(t.action, StateAction::Flush);
}

#[test]
fn mask_ops() {
    let a = AttrMask::PORT | AttrMask::QKEY;
    assert!(a.contains(AttrMask::PORT));
    assert!(!a.contains(AttrMask::PORT | AttrMask::AV));
    assert!(a.intersects(AttrMask::QKEY | AttrMask::AV));
    assert_eq!(a & AttrMask::QKEY, AttrMask::QKEY);
    assert_eq!(a.difference(AttrMask::QKEY), AttrMask::PORT);
    assert!(AttrMask::EMPTY.is_empty());
    assert_eq!(AttrMask::default(), AttrMask::EMPTY);
}

/// Any state, type and mask, with masks biased towards the low bits.
fn arb_case() -> impl Strategy<Value = (u32, u32, u32, u32)> {
    (
        RESET..=ERR,
        RESET..=ERR,
        proptest::sample::select(TYPES.to_vec()),
        prop_oneof![0u32..(1 << 21), any::<u32>()],
    )
}

proptest! {
    #[test]
    fn any_mask_matches_model((cur, next, t, mask) in arb_case()) {
        let got = modify_allowed(st(cur), st(next), ty(t), m(mask));
        prop_assert_eq!(got.is_ok(), model_is_ok(cur, next, t, mask));
    }

    #[test]
    fn optional_subsets_pass(
        (cur, next, t, _) in arb_case(),
        pick in any::<u32>(),
        state in any::<bool>(),
    ) {
        if let Some((req, opt)) = model_entry(cur, next, t) {
            let mask = req | (opt & pick) | if state { STATE } else { 0 };
            prop_assert_eq!(modify_allowed(st(cur), st(next), ty(t), m(mask)), Ok(()));
        }
    }

    #[test]
    fn missing_required_fails((cur, next, t, _) in arb_case(), drop in any::<u32>()) {
        if let Some((req, opt)) = model_entry(cur, next, t) {
            let missing = req & drop;
            prop_assume!(missing != 0);
            let got = modify_allowed(st(cur), st(next), ty(t), m((req | opt) & !missing));
            prop_assert_eq!(got, Err(QpStateError::MissingRequired(m(missing))));
        }
    }

    #[test]
    fn unknown_bits_fail((cur, next, t, _) in arb_case(), bit in 21u32..32) {
        prop_assume!(bit != 25);
        if let Some((req, _)) = model_entry(cur, next, t) {
            let got = modify_allowed(st(cur), st(next), ty(t), m(req | STATE | (1 << bit)));
            prop_assert_eq!(got, Err(QpStateError::NotAllowed(m(1 << bit))));
        }
    }
}
