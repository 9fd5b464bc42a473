// SPDX-License-Identifier: GPL-2.0

//! Address handles: a validated RoCEv2 address vector, numbered so that the
//! rxe provider can name it in UD work requests (`ah_num`).

use crate::{
    dev::irq_table::IrqTable,
    dev::params,
    dev::path::Path,
    ffi::{
        ib::{AhAttr, AhFlags, GidType, StoredAhAttr, Udata},
        rxe_abi::CreateAhResp,
    },
    logic::ids::{leaf_words, summary_words, Ids},
};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    alloc::Flags,
    new_spinlock_irq,
    prelude::*,
    sync::{Arc, SpinLockIrq},
    xarray::AllocKind,
};

/// `struct rxe_create_ah_resp` is this long; an older provider that leaves
/// less room gets no `ah_num` (and passes the address in each WQE).
const RESP_LEN: usize = size_of::<CreateAhResp>();

/// An address handle's state, shared with the device's AH table.
#[pin_data]
pub(crate) struct AhInner {
    /// Set once, when the handle enters the table (the number is only
    /// known under the table's lock, where nothing may be allocated).
    num: AtomicU32,
    /// Identity of the PD the handle was created in: a UD work request
    /// may only name a handle of its QP's PD.
    pd: usize,
    /// The address vector; `modify_ah` replaces it.
    #[pin]
    attr: SpinLockIrq<StoredAhAttr>,
    /// Where UD packets to it go, resolved with the address vector.
    #[pin]
    path: SpinLockIrq<Option<Path>>,
}

/// The driver data of an AH.
pub(crate) struct RrxeAh {
    pub(crate) inner: Arc<AhInner>,
}

/// rxe's `rxe_ah_chk_attr`: our one port, a GRH (RoCE needs one) and a
/// RoCEv2 source GID.
fn check(attr: &AhAttr) -> Result {
    let a = attr.get();
    if a.port_num != params::PORT || !attr.flags().contains(AhFlags::GRH) {
        return Err(EINVAL);
    }
    match attr.sgid_type() {
        Some(GidType::ROCE_UDP_ENCAP) => Ok(()),
        _ => Err(EINVAL),
    }
}

/// How many AH numbers there are: `1..=MAX_AH`, as id `n` is number
/// `n + 1`.
const AH_IDS: usize = params::MAX_AH as usize;

/// Which AH numbers are taken ([`Ids`]' two-level bitmap), so that the
/// lowest free one is found in a bounded number of steps with interrupts
/// off.
pub(crate) struct AhNumbers {
    summary: KVec<u64>,
    leaves: KVec<u64>,
}

impl AhNumbers {
    /// Every number free (4 KiB for rxe's 32,767).
    pub(crate) fn new() -> Result<Self> {
        Ok(Self {
            summary: KVec::from_elem(0, summary_words(AH_IDS), GFP_KERNEL)?,
            leaves: KVec::from_elem(0, leaf_words(AH_IDS), GFP_KERNEL)?,
        })
    }

    fn ids(&mut self) -> Ids<'_> {
        Ids::new(&mut self.summary, &mut self.leaves, AH_IDS)
    }
}

/// A device's address handles by number (1 and up).
#[pin_data]
pub(crate) struct AhTable {
    /// Filled and emptied only under `numbers`, so the two agree.
    #[pin]
    ahs: IrqTable<AhInner>,
    /// The numbers in use. Held, with interrupts off, around choosing a
    /// number and filling it in `ahs`, and around emptying it.
    #[pin]
    numbers: SpinLockIrq<AhNumbers>,
}

impl AhTable {
    /// An empty table, its numbers kept in `numbers`.
    pub(crate) fn new(numbers: AhNumbers) -> impl PinInit<Self> {
        pin_init!(Self {
            ahs <- IrqTable::new(AllocKind::Alloc1),
            numbers <- new_spinlock_irq!(numbers),
        })
    }

    /// Validates `attr`, numbers the handle (of the PD `pd`) and answers
    /// the provider.
    pub(crate) fn create(
        &self,
        pd: usize,
        attr: &AhAttr,
        sleepable: bool,
        udata: Option<&Udata>,
    ) -> Result<RrxeAh> {
        check(attr)?;
        // Kernel consumers may create AHs in atomic context.
        let gfp: Flags = if sleepable { GFP_KERNEL } else { GFP_ATOMIC };
        let path = Path::from_ah(attr);
        let inner = Arc::pin_init(
            pin_init!(AhInner {
                num: AtomicU32::new(0),
                pd,
                attr <- new_spinlock_irq!(attr.to_stored()),
                path <- new_spinlock_irq!(path),
            }),
            gfp,
        )?;
        // The lowest free number: AH numbers are small and dense. Kernel
        // consumers create AHs in atomic context, so the number is chosen
        // and filled without sleeping: a few words of the bitmap, then one
        // store, with interrupts off.
        let num = {
            let mut numbers = self.numbers.lock();
            let mut ids = numbers.ids();
            let id = ids.take_lowest().ok_or(ENOMEM)?;
            let num = id + 1;
            if let Err(e) = self.ahs.store(num, inner.clone()) {
                ids.free(id);
                return Err(e);
            }
            num as u32
        };
        inner.num.store(num, Ordering::Release);
        if let Some(udata) = udata {
            if udata.outlen() >= RESP_LEN {
                if let Err(e) = udata.respond(&CreateAhResp {
                    ah_num: num,
                    reserved: 0,
                }) {
                    self.remove(&inner);
                    return Err(e);
                }
            }
        }
        Ok(RrxeAh { inner })
    }

    /// The handle numbered `num`, for a UD work request.
    pub(crate) fn get(&self, num: u32) -> Option<Arc<AhInner>> {
        self.ahs.get(num as usize)
    }

    /// Takes `ah` out of the table.
    pub(crate) fn remove(&self, ah: &AhInner) {
        let num = ah.num.load(Ordering::Relaxed) as usize;
        let removed = {
            let mut numbers = self.numbers.lock();
            let removed = self.ahs.remove(num);
            if removed.is_some() {
                numbers.ids().free(num.wrapping_sub(1));
            }
            removed
        };
        // Dropped outside the lock.
        drop(removed);
    }
}

impl AhInner {
    /// Whether the handle belongs to the PD `pd` (rxe's `rxe_get_av`
    /// refuses a handle of another PD than the QP's).
    pub(crate) fn in_pd(&self, pd: usize) -> bool {
        self.pd == pd
    }

    /// The number UD work requests name the handle by.
    pub(crate) fn num(&self) -> u32 {
        self.num.load(Ordering::Acquire)
    }

    /// Where packets to this handle go.
    pub(crate) fn path(&self) -> Option<Path> {
        *self.path.lock()
    }

    /// The current address vector.
    pub(crate) fn attr(&self) -> StoredAhAttr {
        *self.attr.lock()
    }

    /// `modify_ah`: a new address vector, checked as at creation.
    pub(crate) fn modify(&self, attr: &AhAttr) -> Result {
        check(attr)?;
        *self.attr.lock() = attr.to_stored();
        *self.path.lock() = Path::from_ah(attr);
        Ok(())
    }
}
