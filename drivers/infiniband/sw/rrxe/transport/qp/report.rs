// SPDX-License-Identifier: GPL-2.0

//! A QP's live state as text, what a maintainer asks for in a bug report:
//! its state and path, the requester's PSNs, window, flights and retry
//! budgets, the responder's PSN, MSN and resources, the queues' fill, the
//! packets it has queued in either direction.
//!
//! [`QpInner::report`] copies what it needs under each lock in turn (the
//! QP's state, then the send and receive queues, never two at once) and
//! formats nothing under them: a reader (debugfs, `verbs::debugfs`) only
//! makes the data path wait for a few copies.
//!
//! And the one kernel log line of the data path: a QP it puts into ERR
//! says why ([`QpInner::log_error`]), at most ten lines every five
//! seconds for the whole module, since the peer or the process can cause
//! them at will.

use super::{effects::ErrCause, inner::QpInner};
use crate::{
    ffi::{ib::ResMsg, rt},
    logic::{
        qp_state::{QpState, QpType},
        ratelimit::RateLimit,
    },
    queues::queue::SharedQueue,
    transport::{resp::state::RespReport, send::state::SendReport},
};
use core::{fmt, sync::atomic::Ordering};
use kernel::{prelude::*, sync::Arc};

/// A QP's report as a debugfs file (made by `verbs::debugfs`): removed
/// when dropped, which waits for readers in progress, then releases the
/// QP it holds.
pub(crate) type QpFile = Pin<KBox<kernel::debugfs::File<Arc<QpInner>>>>;

/// A queue's fill: elements waiting, and room (`None`: no such queue, or
/// destroyed).
type Fill = Option<(u32, u32)>;

/// A copy of a QP's state, printed by its `Display`.
pub(crate) struct QpReport {
    qpn: u32,
    ty: QpType,
    state: QpState,
    sq_draining: bool,
    destroyed: bool,
    dest_qpn: u32,
    sport: u16,
    mtu: u32,
    timeout_ns: Option<u64>,
    timer_armed: bool,
    home: u32,
    rx_backlog: u32,
    tx_skbs: u32,
    sq: Fill,
    rq: Fill,
    srq: bool,
    send: SendReport,
    resp: RespReport,
}

fn fill(q: &Option<SharedQueue>) -> Fill {
    q.as_ref().map(|q| (q.count(), q.capacity()))
}

impl QpInner {
    /// A copy of the QP's state for a report.
    pub(crate) fn report(&self) -> QpReport {
        let now = rt::now_ns();
        // The state's fields under its lock; the queues' fill after it,
        // each under its own lock in turn (never two at once).
        let mut r = {
            let st = self.state.lock();
            QpReport {
                qpn: self.qpn,
                ty: self.ty,
                state: st.state,
                sq_draining: st.sq_draining,
                destroyed: st.destroyed,
                dest_qpn: st.attr.get().dest_qp_num,
                sport: st.sport,
                mtu: st.mtu,
                timeout_ns: st.timeout_ns,
                timer_armed: st.timer_armed,
                home: self.home.load(Ordering::Relaxed),
                rx_backlog: self.rx_backlog.load(Ordering::Relaxed),
                tx_skbs: self.tx.in_flight(),
                sq: None,
                rq: None,
                srq: self.has_srq,
                send: st.send.report(now),
                resp: st.resp.report(),
            }
        };
        r.sq = fill(&self.sq.lock());
        r.rq = fill(&self.rq.lock());
        r
    }
}

/// The log lines of QPs entering ERR, all QPs together.
static ERR_LOG: RateLimit = RateLimit::new(5_000_000_000, 10);

impl QpInner {
    /// The data path put the QP into ERR for `cause`: one line in the
    /// kernel log (rate-limited), naming the QP, its netdev and the cause.
    pub(crate) fn log_error(&self, cause: ErrCause) {
        let Some(missed) = ERR_LOG.allow(rt::now_ns()) else {
            return;
        };
        let port = self.dev.port.lock();
        let ndev = port.netdev.as_ref().map_or(c"(gone)", |n| n.name());
        pr_info!(
            "qp {} ({:?}) on {} enters ERR: {}{}\n",
            self.qpn,
            self.ty,
            ndev,
            Because(cause),
            Missed(missed)
        );
    }
}

/// An [`ErrCause`] in words.
struct Because(ErrCause);

impl kernel::fmt::Display for Because {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            ErrCause::SendWc(s) => write!(f, "a send WQE completed with {s:?}"),
            ErrCause::RecvWc(s) => write!(f, "a receive WQE completed with {s:?}"),
            ErrCause::NakSent(c) => write!(f, "it answered a request with NAK {c:?}"),
        }
    }
}

/// How many lines the rate limit left out before this one, if any.
struct Missed(u32);

impl kernel::fmt::Display for Missed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => Ok(()),
            n => write!(f, " ({n} such lines left out before)"),
        }
    }
}

impl QpReport {
    /// Adds what the core does not show of the QP to `msg`: `rdma res show
    /// qp -dd` prints these after its own fields (state, PSNs, path MTU).
    pub(crate) fn fill(&self, msg: &mut ResMsg<'_>) -> Result {
        msg.put_u32(c"home_cpu", self.home)?;
        if let Some((n, _)) = self.sq {
            msg.put_u32(c"sq_waiting", n)?;
        }
        if let Some((n, _)) = self.rq {
            msg.put_u32(c"rq_waiting", n)?;
        }
        msg.put_u32(c"rx_backlog", self.rx_backlog)?;
        msg.put_u32(c"tx_skbs", self.tx_skbs)?;
        msg.put_u64(c"timeout_us", self.timeout_ns.map_or(0, |ns| ns / 1000))?;
        self.send.fill(msg)?;
        self.resp.fill(msg)
    }
}

/// Writes a queue's fill as `NAME WAITING/ROOM`.
fn write_fill(f: &mut fmt::Formatter<'_>, name: &str, q: Fill) -> fmt::Result {
    match q {
        Some((n, room)) => write!(f, " {name} {n}/{room}"),
        None => write!(f, " {name} -"),
    }
}

impl fmt::Display for QpReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "qp {} {:?} {:?}", self.qpn, self.ty, self.state)?;
        if self.sq_draining {
            write!(f, " (draining)")?;
        }
        if self.destroyed {
            write!(f, " (destroyed)")?;
        }
        if matches!(self.ty, QpType::Rc | QpType::Uc) {
            write!(f, " dest qp {}", self.dest_qpn)?;
        }
        writeln!(
            f,
            " sport {} mtu {} home cpu {}",
            self.sport, self.mtu, self.home
        )?;
        write!(f, "queues:")?;
        write_fill(f, "sq", self.sq)?;
        if self.srq {
            write!(f, " rq srq")?;
        } else {
            write_fill(f, "rq", self.rq)?;
        }
        writeln!(
            f,
            " rx backlog {} tx skbs {}",
            self.rx_backlog, self.tx_skbs
        )?;
        match self.timeout_ns {
            Some(ns) => write!(f, "timer: timeout {} us", ns / 1000)?,
            None => write!(f, "timer: no timeout")?,
        }
        writeln!(f, " armed {}", self.timer_armed)?;
        write!(f, "{}{}", self.send, self.resp)
    }
}
