// SPDX-License-Identifier: GPL-2.0

//! The state a device shares with the receive path and netdev events
//! ([`Shared`]): the tables QPs are looked up in (by number, and by
//! multicast group), and the part of the device its QPs keep
//! ([`DevCtx`]: the port, the counters, the MR, MW and AH tables), which
//! `Shared` derefs to.
//!
//! It lives in the transport, not in `dev/`, because it holds QPs: the
//! receive path above finds QPs in it. A QP does not keep `Shared`, only
//! its `DevCtx`, so imports point one way: `shared` names [`qp`](super::qp),
//! [`mcast`](super::mcast) and [`dev_ctx`](super::dev_ctx), and none of them
//! names it.

use crate::{
    dev::irq_table::IrqTable,
    ffi::net::NetDevRef,
    transport::{dev_ctx::DevCtx, mcast::McastTable, qp::QpInner},
};
use core::ops::Deref;
use kernel::{prelude::*, sync::Arc, xarray::AllocKind};

/// The part of a device the registry and the data path share: the tables
/// the receive path looks QPs up in, and the [`DevCtx`] the QPs keep.
/// Its own `Arc`, so that the receive path (softirq) reaches it without
/// the device's registration.
#[pin_data]
pub(crate) struct Shared {
    /// Live QPs by number (the GSI QP at 1).
    #[pin]
    pub(crate) qps: IrqTable<QpInner>,
    /// Multicast groups and the QPs attached to them.
    #[pin]
    pub(crate) mcast: McastTable,
    /// The port, the counters and the memory and AH tables, which each QP
    /// keeps a reference on too. Declared last, so dropped after the
    /// tables of QPs (empty by then: every QP was destroyed, and left
    /// every group, before the device goes).
    pub(crate) ctx: Arc<DevCtx>,
}

impl Shared {
    /// Creates the shared state of a device attached to `netdev`.
    pub(crate) fn new(netdev: NetDevRef) -> Result<Arc<Self>> {
        let ctx = DevCtx::new(netdev)?;
        Arc::pin_init(
            pin_init!(Self {
                qps <- IrqTable::new(AllocKind::Alloc),
                mcast <- McastTable::new(),
                ctx,
            }),
            GFP_KERNEL,
        )
    }
}

/// The port, the counters and the memory tables are reached through
/// `Shared` as they were when it held them itself.
impl Deref for Shared {
    type Target = DevCtx;

    fn deref(&self) -> &DevCtx {
        &self.ctx
    }
}
