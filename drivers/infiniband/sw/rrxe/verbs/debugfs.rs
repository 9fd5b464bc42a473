// SPDX-License-Identifier: GPL-2.0

//! What rrxe shows in debugfs: `/sys/kernel/debug/MODULE/DEVICE/qpN`, one
//! read-only file per QP with its live state ([`QpInner::report`]), for bug
//! reports and for watching a QP that stalls.
//!
//! Best effort, as debugfs is: a directory or file that cannot be created
//! (no memory, debugfs off, a device name still taken by a device being
//! freed) is simply missing; nothing fails because of it. The device's
//! directory is named after the device as it was created (a later rename
//! does not follow).

use crate::{
    names,
    transport::qp::{QpFile, QpInner},
};
use kernel::{debugfs::Dir, prelude::*, str::CString, sync::Arc};

/// The module's directory: each device's is made in it.
pub(crate) fn root() -> Dir {
    Dir::new(names::DEBUGFS)
}

/// The file of `qp` in its device's directory `dir`; `None` if it cannot be
/// made.
pub(crate) fn qp_file(dir: &Dir, qp: &Arc<QpInner>) -> Option<QpFile> {
    let name = CString::try_from_fmt(fmt!("qp{}", qp.qpn())).ok()?;
    KBox::pin_init(
        dir.read_callback_file(&name, qp.clone(), &|qp: &Arc<QpInner>, f| {
            write!(f, "{}", qp.report())
        }),
        GFP_KERNEL,
    )
    .ok()
}
