// SPDX-License-Identifier: GPL-2.0

//! Memory windows: type 1 (bound by the bind verb) and type 2B (bound by a
//! `BIND_MW` work request), allocated with an R_Key from the MW range of
//! the key space. Binding, using and invalidating them is the data path's.

use crate::{
    ib::consts::*,
    key_table::{KeyTable, Keyed},
    logic::keys::{Key, KeyKind},
};
use kernel::{prelude::*, sync::Arc};

/// A window's binding state (rxe's `enum rxe_mw_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MwState {
    /// Type 2 windows start unbound.
    Free,
    /// Type 1 windows start valid (bound to nothing yet).
    Valid,
}

/// A window's state, shared with the device's MW table.
pub(crate) struct MwInner {
    key: Key,
    mw_type: u32,
    /// The PD it was allocated in (an identity, never dereferenced).
    pd: usize,
    state: MwState,
}

impl Keyed for MwInner {
    fn key(&self) -> Key {
        self.key
    }
}

/// A device's memory windows.
pub(crate) type MwTable = KeyTable<MwInner>;

/// The driver data of an MW.
pub(crate) struct RrxeMw {
    pub(crate) inner: Arc<MwInner>,
}

impl MwTable {
    /// An empty table.
    pub(crate) fn new_mws() -> impl PinInit<Self> {
        KeyTable::new(KeyKind::Mw)
    }

    /// Allocates a window of `mw_type` in the PD `pd`.
    pub(crate) fn alloc(&self, pd: usize, mw_type: u32) -> Result<Arc<MwInner>> {
        let state = match mw_type {
            IB_MW_TYPE_1 => MwState::Valid,
            IB_MW_TYPE_2 => MwState::Free,
            _ => return Err(EINVAL),
        };
        self.insert(|key| {
            Ok(Arc::new(
                MwInner {
                    key,
                    mw_type,
                    pd,
                    state,
                },
                GFP_KERNEL,
            )?)
        })
    }
}

impl MwInner {
    /// The R_Key.
    pub(crate) fn rkey(&self) -> u32 {
        self.key.raw()
    }

    /// Type, PD and state, for the data path's bind checks.
    pub(crate) fn describe(&self) -> (u32, usize, MwState) {
        (self.mw_type, self.pd, self.state)
    }
}
