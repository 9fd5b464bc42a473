// SPDX-License-Identifier: GPL-2.0

//! The names that tell the two builds of these sources apart.
//!
//! `make` builds `rrxe.ko`, link type `rrxe`, which lives next to the C
//! `rdma_rxe`. `make DROPIN=1` builds the same sources with `--cfg dropin`
//! as `rdma_rxe.ko`, link type `rxe`: installed over the C driver, it is
//! what `modprobe rdma_rxe` and `rdma link add … type rxe` load
//! (Documentation/usage.rst, "Drop-in for rdma_rxe"). Both builds behave
//! alike but for these names; the rest of what differs must be literals
//! where it is used: the `module!` invocation in `rrxe_main.rs` (checked
//! against [`MODULE`] there) and the KUnit suite names (`_dropin` suffix).
//!
//! Both builds keep `rrxe` as their devices' node description, which is how
//! the drop-in is told from the C driver (whose devices say `rxe`).

#[cfg(not(dropin))]
mod this {
    use kernel::prelude::*;

    /// The module's name (KBUILD_MODNAME): the `.ko`, `/sys/module/NAME`,
    /// the log prefix, and what [`OTHER`] calls the other build.
    pub(crate) const MODULE: &str = "rrxe";
    /// `rdma link add NAME type LINK_TYPE netdev DEV` (module alias
    /// `rdma-link-LINK_TYPE`).
    pub(crate) const LINK_TYPE: &CStr = c"rrxe";
    /// The other driver that may already hold a netdev with an rxe-ABI
    /// device or UDP port 4791 in a namespace: C `rdma_rxe`, or for the
    /// drop-in the normal build (C `rdma_rxe` cannot be loaded next to a
    /// module of its own name).
    pub(crate) const OTHER: &str = "rdma_rxe";
    /// The module's directory in debugfs (`verbs::debugfs`).
    pub(crate) const DEBUGFS: &CStr = c"rrxe";
}

#[cfg(dropin)]
mod this {
    use kernel::prelude::*;

    /// See the normal build's.
    pub(crate) const MODULE: &str = "rdma_rxe";
    /// See the normal build's.
    pub(crate) const LINK_TYPE: &CStr = c"rxe";
    /// See the normal build's.
    pub(crate) const OTHER: &str = "rrxe";
    /// See the normal build's.
    pub(crate) const DEBUGFS: &CStr = c"rdma_rxe";
}

pub(crate) use this::*;
