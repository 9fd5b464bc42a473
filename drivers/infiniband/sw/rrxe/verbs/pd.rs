// SPDX-License-Identifier: GPL-2.0

//! Protection domains and the address handles made in them. A PD has no
//! state of its own in rxe: it only scopes which MRs, QPs and AHs may be
//! used together, which the core tracks. An AH is an entry of the device's
//! AH table ([`crate::dev::ah`]).

use super::device::RrxeDevice;
use crate::{
    dev::{ah::RrxeAh, params},
    ffi::ib::{self, Ah, AhAttr, IbDevice, Pd, Udata},
};
use kernel::prelude::*;

/// The driver data of a PD.
pub(crate) struct RrxePd;

// The verbs of PDs and AHs, which `RrxeDevice`'s `Operations` calls.
/// `Operations::alloc_pd`: a PD, only counted against `MAX_PD`.
pub(super) fn alloc_pd(dev: &IbDevice<RrxeDevice>, _udata: Option<&Udata>) -> Result<RrxePd> {
    dev.pds.take(params::MAX_PD)?;
    Ok(RrxePd)
}

/// `Operations::dealloc_pd`: the PD's count given back.
pub(super) fn dealloc_pd(pd: &Pd<RrxeDevice>) -> Result {
    pd.device::<RrxeDevice>().pds.give();
    Ok(())
}

/// `Operations::create_ah`: an AH in the device's AH table.
pub(super) fn create_ah(
    dev: &IbDevice<RrxeDevice>,
    pd: &Pd<RrxeDevice>,
    attr: &AhAttr,
    sleepable: bool,
    udata: Option<&Udata>,
) -> Result<RrxeAh> {
    dev.shared
        .ahs
        .create(pd.as_raw() as usize, attr, sleepable, udata)
}

/// `Operations::destroy_ah`: the AH out of the table.
pub(super) fn destroy_ah(ah: &Ah<RrxeDevice>) -> Result {
    ah.device::<RrxeDevice>().shared.ahs.remove(&ah.inner);
    Ok(())
}

/// `Operations::query_ah`: the AH's attributes as the core passed them.
pub(super) fn query_ah(ah: &Ah<RrxeDevice>, attr: &mut ib::AhAttrRaw) -> Result {
    *attr = *ah.inner.attr().get();
    Ok(())
}

/// `Operations::modify_ah`: new attributes for the AH.
pub(super) fn modify_ah(ah: &Ah<RrxeDevice>, attr: &AhAttr) -> Result {
    ah.inner.modify(attr)
}
