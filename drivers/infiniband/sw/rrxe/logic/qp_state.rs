// SPDX-License-Identifier: GPL-2.0

//! QP states, types and attribute masks, and the `modify_qp` rules.
//!
//! The numeric values of [`QpState`], [`QpType`] and [`AttrMask`] are those
//! of `enum ib_qp_state`, `enum ib_qp_type` and `enum ib_qp_attr_mask` in
//! `include/rdma/ib_verbs.h`, so they convert directly to and from the
//! values in `struct ib_qp_attr` and the `attr_mask` argument.
//!
//! [`modify_allowed`] is the IB core's `ib_modify_qp_is_ok`: the table of
//! IBA transitions with the attributes each one requires and permits per QP
//! type. [`check_modify`] wraps it with the rest of what C rxe checks when a
//! `modify_qp` carries `IB_QP_STATE`, and says what the driver must then do.

use core::ops::{BitAnd, BitOr};

use AttrMask as A;
use QpState as S;

/// An IBA QP state (`enum ib_qp_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum QpState {
    /// `IB_QPS_RESET`: freshly created or reset, no traffic.
    Reset = 0,
    /// `IB_QPS_INIT`: receives may be posted, nothing is processed.
    Init = 1,
    /// `IB_QPS_RTR`: ready to receive.
    Rtr = 2,
    /// `IB_QPS_RTS`: ready to send.
    Rts = 3,
    /// `IB_QPS_SQD`: send queue drain(ing/ed).
    Sqd = 4,
    /// `IB_QPS_SQE`: send queue error (UC/UD only).
    Sqe = 5,
    /// `IB_QPS_ERR`: error, all work requests are flushed.
    Err = 6,
}

impl QpState {
    /// Every state, in numeric order.
    pub(crate) const ALL: [QpState; 7] = [
        QpState::Reset,
        QpState::Init,
        QpState::Rtr,
        QpState::Rts,
        QpState::Sqd,
        QpState::Sqe,
        QpState::Err,
    ];

    /// The state with `enum ib_qp_state` value `raw`, if there is one.
    pub(crate) const fn from_raw(raw: u32) -> Option<QpState> {
        Some(match raw {
            0 => QpState::Reset,
            1 => QpState::Init,
            2 => QpState::Rtr,
            3 => QpState::Rts,
            4 => QpState::Sqd,
            5 => QpState::Sqe,
            6 => QpState::Err,
            _ => return None,
        })
    }

    /// The `enum ib_qp_state` value.
    pub(crate) const fn raw(self) -> u32 {
        self as u32
    }

    /// Whether `IB_QP_CUR_STATE` may be given while the QP is in this state:
    /// the core only accepts it from RTR, RTS, SQD and SQE.
    pub(crate) const fn accepts_cur_state(self) -> bool {
        matches!(
            self,
            QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe
        )
    }
}

/// A QP type (`enum ib_qp_type`), limited to those below `IB_QPT_MAX`,
/// which are the ones the core's transition table describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum QpType {
    /// `IB_QPT_SMI`: QP0, subnet management.
    Smi = 0,
    /// `IB_QPT_GSI`: QP1, general services (MADs, CM).
    Gsi = 1,
    /// `IB_QPT_RC`: reliable connected.
    Rc = 2,
    /// `IB_QPT_UC`: unreliable connected.
    Uc = 3,
    /// `IB_QPT_UD`: unreliable datagram.
    Ud = 4,
    /// `IB_QPT_RAW_IPV6`.
    RawIpv6 = 5,
    /// `IB_QPT_RAW_ETHERTYPE`.
    RawEthertype = 6,
    /// `IB_QPT_RAW_PACKET`.
    RawPacket = 8,
    /// `IB_QPT_XRC_INI`: XRC initiator.
    XrcIni = 9,
    /// `IB_QPT_XRC_TGT`: XRC target.
    XrcTgt = 10,
}

impl QpType {
    /// Every type, in numeric order.
    pub(crate) const ALL: [QpType; 10] = [
        QpType::Smi,
        QpType::Gsi,
        QpType::Rc,
        QpType::Uc,
        QpType::Ud,
        QpType::RawIpv6,
        QpType::RawEthertype,
        QpType::RawPacket,
        QpType::XrcIni,
        QpType::XrcTgt,
    ];

    /// The type with `enum ib_qp_type` value `raw`, if it is one the core
    /// table covers (value 7 and `IB_QPT_DRIVER` and above are not).
    pub(crate) const fn from_raw(raw: u32) -> Option<QpType> {
        Some(match raw {
            0 => QpType::Smi,
            1 => QpType::Gsi,
            2 => QpType::Rc,
            3 => QpType::Uc,
            4 => QpType::Ud,
            5 => QpType::RawIpv6,
            6 => QpType::RawEthertype,
            8 => QpType::RawPacket,
            9 => QpType::XrcIni,
            10 => QpType::XrcTgt,
            _ => return None,
        })
    }

    /// The `enum ib_qp_type` value.
    pub(crate) const fn raw(self) -> u32 {
        self as u32
    }

    /// Whether C rxe can create a QP of this type (RC, UC, UD and GSI).
    pub(crate) const fn rxe_supported(self) -> bool {
        matches!(self, QpType::Rc | QpType::Uc | QpType::Ud | QpType::Gsi)
    }
}

/// A set of `enum ib_qp_attr_mask` bits: which fields of `struct
/// ib_qp_attr` a `modify_qp` call sets. Any `u32` is representable, so a
/// mask from user space can be held and checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct AttrMask(u32);

impl AttrMask {
    /// No attributes.
    pub(crate) const EMPTY: AttrMask = AttrMask(0);
    /// `IB_QP_STATE`: move to `qp_state`.
    pub(crate) const STATE: AttrMask = AttrMask(1);
    /// `IB_QP_CUR_STATE`: the caller asserts the current state.
    pub(crate) const CUR_STATE: AttrMask = AttrMask(1 << 1);
    /// `IB_QP_EN_SQD_ASYNC_NOTIFY`.
    pub(crate) const EN_SQD_ASYNC_NOTIFY: AttrMask = AttrMask(1 << 2);
    /// `IB_QP_ACCESS_FLAGS`.
    pub(crate) const ACCESS_FLAGS: AttrMask = AttrMask(1 << 3);
    /// `IB_QP_PKEY_INDEX`.
    pub(crate) const PKEY_INDEX: AttrMask = AttrMask(1 << 4);
    /// `IB_QP_PORT`.
    pub(crate) const PORT: AttrMask = AttrMask(1 << 5);
    /// `IB_QP_QKEY`.
    pub(crate) const QKEY: AttrMask = AttrMask(1 << 6);
    /// `IB_QP_AV`: primary path address vector.
    pub(crate) const AV: AttrMask = AttrMask(1 << 7);
    /// `IB_QP_PATH_MTU`.
    pub(crate) const PATH_MTU: AttrMask = AttrMask(1 << 8);
    /// `IB_QP_TIMEOUT`: local ACK timeout.
    pub(crate) const TIMEOUT: AttrMask = AttrMask(1 << 9);
    /// `IB_QP_RETRY_CNT`.
    pub(crate) const RETRY_CNT: AttrMask = AttrMask(1 << 10);
    /// `IB_QP_RNR_RETRY`.
    pub(crate) const RNR_RETRY: AttrMask = AttrMask(1 << 11);
    /// `IB_QP_RQ_PSN`.
    pub(crate) const RQ_PSN: AttrMask = AttrMask(1 << 12);
    /// `IB_QP_MAX_QP_RD_ATOMIC`: outstanding reads/atomics as initiator.
    pub(crate) const MAX_QP_RD_ATOMIC: AttrMask = AttrMask(1 << 13);
    /// `IB_QP_ALT_PATH`.
    pub(crate) const ALT_PATH: AttrMask = AttrMask(1 << 14);
    /// `IB_QP_MIN_RNR_TIMER`.
    pub(crate) const MIN_RNR_TIMER: AttrMask = AttrMask(1 << 15);
    /// `IB_QP_SQ_PSN`.
    pub(crate) const SQ_PSN: AttrMask = AttrMask(1 << 16);
    /// `IB_QP_MAX_DEST_RD_ATOMIC`: outstanding reads/atomics as responder.
    pub(crate) const MAX_DEST_RD_ATOMIC: AttrMask = AttrMask(1 << 17);
    /// `IB_QP_PATH_MIG_STATE`.
    pub(crate) const PATH_MIG_STATE: AttrMask = AttrMask(1 << 18);
    /// `IB_QP_CAP`: queue sizes (resize).
    pub(crate) const CAP: AttrMask = AttrMask(1 << 19);
    /// `IB_QP_DEST_QPN`.
    pub(crate) const DEST_QPN: AttrMask = AttrMask(1 << 20);
    /// `IB_QP_RATE_LIMIT`: packet pacing, outside the standard bits.
    pub(crate) const RATE_LIMIT: AttrMask = AttrMask(1 << 25);
    /// `IB_QP_ATTR_STANDARD_BITS`: bits 0 to 20, everything up to
    /// `IB_QP_DEST_QPN`. C rxe refuses any other bit with `-EOPNOTSUPP`.
    pub(crate) const STANDARD_BITS: AttrMask = AttrMask((1 << 21) - 1);
    /// Bits every transition accepts on top of its own: the target state
    /// itself and the rate limit (the core leaves those to the driver).
    const ALWAYS_ALLOWED: AttrMask = AttrMask(Self::STATE.0 | Self::RATE_LIMIT.0);

    /// The mask with exactly the bits of `bits`.
    pub(crate) const fn from_bits(bits: u32) -> AttrMask {
        AttrMask(bits)
    }

    /// The raw `attr_mask` bits.
    pub(crate) const fn bits(self) -> u32 {
        self.0
    }

    /// True if no bit is set.
    pub(crate) const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// True if every bit of `other` is set in `self`.
    pub(crate) const fn contains(self, other: AttrMask) -> bool {
        self.0 & other.0 == other.0
    }

    /// True if `self` and `other` share a bit.
    pub(crate) const fn intersects(self, other: AttrMask) -> bool {
        self.0 & other.0 != 0
    }

    /// Bits of `self` and of `other`.
    pub(crate) const fn union(self, other: AttrMask) -> AttrMask {
        AttrMask(self.0 | other.0)
    }

    /// Bits of `self` that are not in `other`.
    pub(crate) const fn difference(self, other: AttrMask) -> AttrMask {
        AttrMask(self.0 & !other.0)
    }
}

impl BitOr for AttrMask {
    type Output = AttrMask;

    fn bitor(self, rhs: AttrMask) -> AttrMask {
        self.union(rhs)
    }
}

impl BitAnd for AttrMask {
    type Output = AttrMask;

    fn bitand(self, rhs: AttrMask) -> AttrMask {
        AttrMask(self.0 & rhs.0)
    }
}

/// Attributes a transition requires and those it additionally permits,
/// for one QP type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TransitionAttrs {
    /// Attributes that must all be in the mask.
    pub(crate) required: AttrMask,
    /// Attributes that may be in the mask.
    pub(crate) optional: AttrMask,
}

/// Shorthand for building the table below.
const fn attrs(required: AttrMask, optional: AttrMask) -> TransitionAttrs {
    TransitionAttrs { required, optional }
}

/// No attributes required or permitted.
const NONE: TransitionAttrs = attrs(AttrMask::EMPTY, AttrMask::EMPTY);

/// Union of masks, for building the constants below at compile time.
const fn any(masks: &[AttrMask]) -> AttrMask {
    let mut bits = 0;
    let mut i = 0;
    while i < masks.len() {
        bits |= masks[i].0;
        i += 1;
    }
    AttrMask(bits)
}

/// Connected-service attributes set when entering INIT (and changeable in
/// INIT): partition, port and remote access rights.
const CONN_INIT: AttrMask = any(&[A::PKEY_INDEX, A::PORT, A::ACCESS_FLAGS]);
/// The same for UD: partition, port and Q_Key.
const UD_INIT: AttrMask = any(&[A::PKEY_INDEX, A::PORT, A::QKEY]);
/// Partition and Q_Key: what QP0/QP1 (whose port is fixed at creation) set
/// entering INIT, and what any datagram QP may change in RTR and SQD.
const PKEY_QKEY: AttrMask = any(&[A::PKEY_INDEX, A::QKEY]);

/// Path attributes a UC (or XRC initiator) QP needs to receive.
const UC_RTR: AttrMask = any(&[A::AV, A::PATH_MTU, A::DEST_QPN, A::RQ_PSN]);
/// RC (or XRC target) adds the responder resources and RNR timer.
const RC_RTR: AttrMask = any(&[UC_RTR, A::MAX_DEST_RD_ATOMIC, A::MIN_RNR_TIMER]);
/// Optional when entering RTR on a connected QP.
const CONN_RTR_OPT: AttrMask = any(&[A::ALT_PATH, A::ACCESS_FLAGS, A::PKEY_INDEX]);

/// What an RC (or XRC initiator) QP needs to send: timers, retries, the
/// send PSN and the initiator depth.
const RC_RTS: AttrMask = any(&[
    A::TIMEOUT,
    A::RETRY_CNT,
    A::RNR_RETRY,
    A::SQ_PSN,
    A::MAX_QP_RD_ATOMIC,
]);
/// The XRC target has no requester retries or initiator depth to set.
const XRC_TGT_RTS: AttrMask = any(&[A::TIMEOUT, A::SQ_PSN]);

/// Changeable on a datagram QP that is (or returns to) sending.
const DGRAM_RTS_OPT: AttrMask = any(&[A::CUR_STATE, A::QKEY]);
/// Changeable on a UC (or XRC initiator) QP that is (or returns to) sending.
const UC_RTS_OPT: AttrMask = any(&[
    A::CUR_STATE,
    A::ACCESS_FLAGS,
    A::ALT_PATH,
    A::PATH_MIG_STATE,
]);
/// RC (and XRC target) may also change the RNR timer.
const RC_RTS_OPT: AttrMask = any(&[UC_RTS_OPT, A::MIN_RNR_TIMER]);
/// Changeable by a UC QP recovering from SQE (no path changes).
const UC_SQE_OPT: AttrMask = any(&[A::CUR_STATE, A::ACCESS_FLAGS]);

/// Path and transport parameters an RC QP may change while drained.
const RC_SQD_OPT: AttrMask = any(&[
    A::PORT,
    A::AV,
    A::TIMEOUT,
    A::RETRY_CNT,
    A::RNR_RETRY,
    A::MAX_QP_RD_ATOMIC,
    A::MAX_DEST_RD_ATOMIC,
    A::ALT_PATH,
    A::ACCESS_FLAGS,
    A::PKEY_INDEX,
    A::MIN_RNR_TIMER,
    A::PATH_MIG_STATE,
]);
/// UC keeps its port and has no transport timers or RDMA read resources.
const UC_SQD_OPT: AttrMask = any(&[
    A::AV,
    A::ALT_PATH,
    A::ACCESS_FLAGS,
    A::PKEY_INDEX,
    A::PATH_MIG_STATE,
]);
/// The XRC initiator has no responder side.
const XRC_INI_SQD_OPT: AttrMask =
    RC_SQD_OPT.difference(any(&[A::MAX_DEST_RD_ATOMIC, A::MIN_RNR_TIMER]));
/// The XRC target has no requester retries or initiator depth.
const XRC_TGT_SQD_OPT: AttrMask =
    RC_SQD_OPT.difference(any(&[A::RETRY_CNT, A::RNR_RETRY, A::MAX_QP_RD_ATOMIC]));

/// The QP types the table groups together because IBA treats them alike at
/// most transitions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// UD and the two MAD QPs: datagram service with a Q_Key.
    Datagram,
    /// RC.
    Rc,
    /// UC.
    Uc,
    /// XRC initiator (behaves as an RC requester).
    XrcIni,
    /// XRC target (behaves as an RC responder).
    XrcTgt,
    /// The raw types, which carry no IBA transport state.
    Raw,
}

/// The table class of `ty`. SMI and GSI differ from UD only when entering
/// INIT, which [`transition_attrs`] handles itself.
const fn class(ty: QpType) -> Class {
    match ty {
        QpType::Smi | QpType::Gsi | QpType::Ud => Class::Datagram,
        QpType::Rc => Class::Rc,
        QpType::Uc => Class::Uc,
        QpType::XrcIni => Class::XrcIni,
        QpType::XrcTgt => Class::XrcTgt,
        QpType::RawIpv6 | QpType::RawEthertype | QpType::RawPacket => Class::Raw,
    }
}

/// Attributes entering or staying in INIT: required from RESET, optional
/// from INIT. Raw packet QPs only pick a port, and only from RESET.
const fn init_attrs(ty: QpType) -> AttrMask {
    match ty {
        QpType::Ud => UD_INIT,
        QpType::Smi | QpType::Gsi => PKEY_QKEY,
        QpType::Rc | QpType::Uc | QpType::XrcIni | QpType::XrcTgt => CONN_INIT,
        QpType::RawIpv6 | QpType::RawEthertype | QpType::RawPacket => AttrMask::EMPTY,
    }
}

/// Optional attributes when (re)entering RTS from RTR, RTS, SQD or SQE.
const fn rts_opt(class: Class) -> AttrMask {
    match class {
        Class::Datagram => DGRAM_RTS_OPT,
        Class::Uc | Class::XrcIni => UC_RTS_OPT,
        Class::Rc | Class::XrcTgt => RC_RTS_OPT,
        Class::Raw => AttrMask::EMPTY,
    }
}

/// The attributes `cur -> next` requires and permits on a QP of type `ty`,
/// or `None` if the core does not allow the transition at all (for any
/// type). This is the core's `qp_state_table`.
pub(crate) const fn transition_attrs(
    cur: QpState,
    next: QpState,
    ty: QpType,
) -> Option<TransitionAttrs> {
    let class = class(ty);
    Some(match (cur, next) {
        // Leaving for RESET or ERR is always possible and takes nothing,
        // except that a QP not yet initialised cannot fail.
        (S::Reset, S::Reset) => NONE,
        (S::Init | S::Rtr | S::Rts | S::Sqd | S::Sqe | S::Err, S::Reset | S::Err) => NONE,

        (S::Reset, S::Init) => match ty {
            QpType::RawPacket => attrs(A::PORT, A::EMPTY),
            _ => attrs(init_attrs(ty), A::EMPTY),
        },
        (S::Init, S::Init) => attrs(A::EMPTY, init_attrs(ty)),

        (S::Init, S::Rtr) => match class {
            Class::Datagram => attrs(A::EMPTY, PKEY_QKEY),
            Class::Uc | Class::XrcIni => attrs(UC_RTR, CONN_RTR_OPT),
            Class::Rc | Class::XrcTgt => attrs(RC_RTR, CONN_RTR_OPT),
            Class::Raw => NONE,
        },

        (S::Rtr, S::Rts) => match class {
            Class::Datagram | Class::Uc => attrs(A::SQ_PSN, rts_opt(class)),
            Class::Rc | Class::XrcIni => attrs(RC_RTS, rts_opt(class)),
            Class::XrcTgt => attrs(XRC_TGT_RTS, rts_opt(class)),
            Class::Raw => NONE,
        },
        (S::Rts | S::Sqd, S::Rts) => attrs(A::EMPTY, rts_opt(class)),

        (S::Rts, S::Sqd) => match class {
            Class::Raw => NONE,
            _ => attrs(A::EMPTY, A::EN_SQD_ASYNC_NOTIFY),
        },
        (S::Sqd, S::Sqd) => match class {
            Class::Datagram => attrs(A::EMPTY, PKEY_QKEY),
            Class::Rc => attrs(A::EMPTY, RC_SQD_OPT),
            Class::Uc => attrs(A::EMPTY, UC_SQD_OPT),
            Class::XrcIni => attrs(A::EMPTY, XRC_INI_SQD_OPT),
            Class::XrcTgt => attrs(A::EMPTY, XRC_TGT_SQD_OPT),
            Class::Raw => NONE,
        },

        // SQE only exists for UC and datagram QPs (RC goes straight to
        // ERR), so only they have attributes to change when recovering.
        (S::Sqe, S::Rts) => match class {
            Class::Datagram => attrs(A::EMPTY, DGRAM_RTS_OPT),
            Class::Uc => attrs(A::EMPTY, UC_SQE_OPT),
            _ => NONE,
        },

        _ => return None,
    })
}

/// Why a `modify_qp` request is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QpStateError {
    /// A state value in the attributes is not an `enum ib_qp_state`.
    UnknownState(u32),
    /// The mask has bits outside [`AttrMask::STANDARD_BITS`]; C rxe answers
    /// `-EOPNOTSUPP` rather than `-EINVAL`.
    Unsupported(AttrMask),
    /// `IB_QP_CUR_STATE` was given while the (asserted) current state is
    /// not RTR, RTS, SQD or SQE.
    CurStateNotAllowed(QpState),
    /// The core has no such transition.
    InvalidTransition {
        /// Current state.
        from: QpState,
        /// Requested state.
        to: QpState,
    },
    /// Required attributes are missing from the mask.
    MissingRequired(AttrMask),
    /// The mask has attributes this transition does not take.
    NotAllowed(AttrMask),
    /// The send queue is still draining into SQD; only ERR may be entered
    /// until it has drained.
    SqDraining,
}

/// The IB core's `ib_modify_qp_is_ok`: whether a `modify_qp` with `mask`
/// may take a QP of type `ty` from `cur` to `next`.
///
/// Checks, in the core's order: `IB_QP_CUR_STATE` only from RTR, RTS, SQD
/// or SQE; the transition exists; every required attribute is present; no
/// attribute beyond the required and optional ones, `IB_QP_STATE` and
/// `IB_QP_RATE_LIMIT`.
pub(crate) fn modify_allowed(
    cur: QpState,
    next: QpState,
    ty: QpType,
    mask: AttrMask,
) -> Result<(), QpStateError> {
    if mask.contains(A::CUR_STATE) && !cur.accepts_cur_state() {
        return Err(QpStateError::CurStateNotAllowed(cur));
    }
    let attrs = transition_attrs(cur, next, ty).ok_or(QpStateError::InvalidTransition {
        from: cur,
        to: next,
    })?;
    let missing = attrs.required.difference(mask);
    if !missing.is_empty() {
        return Err(QpStateError::MissingRequired(missing));
    }
    let allowed = attrs.required | attrs.optional | AttrMask::ALWAYS_ALLOWED;
    let extra = mask.difference(allowed);
    if !extra.is_empty() {
        return Err(QpStateError::NotAllowed(extra));
    }
    Ok(())
}

/// C rxe's first check of a `modify_qp` mask: only the standard bits are
/// implemented (so not even `IB_QP_RATE_LIMIT`).
pub(crate) fn check_mask_supported(mask: AttrMask) -> Result<(), QpStateError> {
    let unsupported = mask.difference(AttrMask::STANDARD_BITS);
    if unsupported.is_empty() {
        Ok(())
    } else {
        Err(QpStateError::Unsupported(unsupported))
    }
}

/// What the driver must do after a state change is accepted, mirroring the
/// C rxe `modify_qp` path. The decision depends only on the target state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StateAction {
    /// Nothing beyond recording the new state.
    None,
    /// Stop the tasks, drop all queued work and packets, reset the queues
    /// and the requester/responder/completer state.
    Reset,
    /// Start draining the send queue (SQD); the asynchronous "SQ drained"
    /// event follows once outstanding requests complete.
    DrainSq,
    /// Enter ERR: schedule the tasks so every posted work request is
    /// flushed with an error completion. Done even for ERR -> ERR.
    Flush,
}

impl StateAction {
    /// The action for a QP that has just been moved to `next`.
    pub(crate) const fn for_target(next: QpState) -> StateAction {
        match next {
            QpState::Reset => StateAction::Reset,
            QpState::Sqd => StateAction::DrainSq,
            QpState::Err => StateAction::Flush,
            QpState::Init | QpState::Rtr | QpState::Rts | QpState::Sqe => StateAction::None,
        }
    }
}

/// True if moving to `next` puts the QP in ERR, so its queues must be
/// flushed (also when it already was in ERR, as C rxe flushes again).
pub(crate) const fn moves_to_err(next: QpState) -> bool {
    matches!(next, QpState::Err)
}

/// An accepted state change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Transition {
    /// The state the check was made against (the asserted current state
    /// when `IB_QP_CUR_STATE` was given).
    pub(crate) from: QpState,
    /// The new state.
    pub(crate) to: QpState,
    /// What the driver must do now that the QP is in `to`.
    pub(crate) action: StateAction,
}

/// Checks the state part of a `modify_qp` as C rxe does when the mask has
/// `IB_QP_STATE` (without it rxe does no state check at all; callers skip
/// this function then).
///
/// `qp_state` is the QP's recorded state and `sq_draining` whether it is
/// still draining into SQD. `attr_cur_state` and `attr_qp_state` are the raw
/// `cur_qp_state` and `qp_state` fields of `struct ib_qp_attr`; the first is
/// used instead of `qp_state` only when the mask has `IB_QP_CUR_STATE`.
pub(crate) fn check_modify(
    qp_state: QpState,
    sq_draining: bool,
    ty: QpType,
    mask: AttrMask,
    attr_cur_state: u32,
    attr_qp_state: u32,
) -> Result<Transition, QpStateError> {
    let from = if mask.contains(A::CUR_STATE) {
        QpState::from_raw(attr_cur_state).ok_or(QpStateError::UnknownState(attr_cur_state))?
    } else {
        qp_state
    };
    let to = QpState::from_raw(attr_qp_state).ok_or(QpStateError::UnknownState(attr_qp_state))?;
    modify_allowed(from, to, ty, mask)?;
    // A QP still draining its send queue may only give up (ERR); anything
    // else would race the requester that is emptying the queue.
    if from == QpState::Sqd && sq_draining && to != QpState::Err {
        return Err(QpStateError::SqDraining);
    }
    Ok(Transition {
        from,
        to,
        action: StateAction::for_target(to),
    })
}
