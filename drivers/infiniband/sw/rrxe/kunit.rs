// SPDX-License-Identifier: GPL-2.0

//! In-kernel tests (KUnit), run when the module loads into a kernel with
//! CONFIG_KUNIT. They cover the pieces that need the kernel itself: the C
//! helpers behind GUID generation, the attributes handed to the core,
//! data access to DMA and fast-registration MRs over kmalloc'ed buffers,
//! and the bound on a QP's socket buffers in the IP stack.

use kernel::prelude::*;

// The drop-in build names its suites apart (crate::names).
#[cfg_attr(not(dropin), kunit_tests(rrxe))]
#[cfg_attr(dropin, kunit_tests(rrxe_dropin))]
mod tests {
    use crate::{
        dev::params,
        ffi::ib::{self, KernelMemory},
        ffi::net::{Net, SkBuff, SkbAccount, SkbOwner},
        logic::flow::{skbs_may_resume, skbs_must_pause, INFLIGHT_SKBS_HIGH, INFLIGHT_SKBS_LOW},
        logic::keys::{Key, KeyKind},
        logic::mr::{LOCAL_WRITE, REMOTE_ATOMIC, REMOTE_READ, REMOTE_WRITE},
        mem::mr::{AtomicOp, MrSpec, MrTable},
        mem::mw::{MwState, MwTable},
        proto,
    };
    use core::sync::atomic::{AtomicU32, Ordering};
    use kernel::error::code::{EACCES, EFAULT, EINVAL, ENOMEM};
    use kernel::{
        page::PAGE_SIZE,
        prelude::*,
        sync::{Arc, ArcBorrow},
    };

    /// Access to kernel memory for the regions of these tests.
    #[allow(unsafe_code)] // A test's own contract, stated below.
    fn test_kmem() -> KernelMemory {
        // SAFETY: the regions built over it are only accessed at addresses
        // of buffers the tests allocate and free after removing the region,
        // or at addresses outside the linear map, which are refused before
        // any access.
        unsafe { KernelMemory::new() }
    }

    /// A zeroed kmalloc'ed buffer of `len` bytes.
    fn buffer(len: usize) -> KVec<u8> {
        let Ok(buf) = KVec::from_elem(0u8, len, GFP_KERNEL) else {
            panic!("no memory for the buffer");
        };
        buf
    }

    /// The kernel virtual address of `buf[at]`, as a kernel consumer puts
    /// it in an SGE of a software device.
    fn addr(buf: &KVec<u8>, at: usize) -> u64 {
        (buf.as_ptr() as u64) + at as u64
    }

    /// The 8 bytes of `buf` at `at`, as the CPU reads a u64.
    fn word(buf: &KVec<u8>, at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&buf[at..at + 8]);
        u64::from_ne_bytes(w)
    }

    #[test]
    fn kernel_crc32_matches_the_reference_table() {
        let mut data = [0u8; 1500];
        for (i, b) in data.iter_mut().enumerate() {
            *b = (i * 7 + 3) as u8;
        }
        for len in [0usize, 1, 7, 64, 1024, 1500] {
            let bytes = &data[..len];
            assert_eq!(
                crate::proto::icrc::crc32_le(0xdebb_20e3, bytes),
                crate::proto::icrc::crc32_le_table(0xdebb_20e3, bytes)
            );
        }
    }

    #[test]
    fn guid_is_eui64_of_mac() {
        let guid = ib::guid_from_mac(&[0x02, 0x11, 0x22, 0x33, 0x44, 0x55]);
        // ff:fe in the middle, universal/local bit flipped.
        assert_eq!(guid, [0x00, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55]);
    }

    #[test]
    fn random_guid_when_no_mac() {
        // Two devices without MACs must not share a GUID.
        assert_ne!(params::guid_for(None), params::guid_for(None));
    }

    #[test]
    fn device_attr_allows_user_unregistration() {
        let mut attr = ib::DeviceAttr::default();
        params::fill_device_attr(&mut attr, 0);
        assert_ne!(
            attr.kernel_cap_flags & u64::from(ib::consts::IBK_ALLOW_USER_UNREG),
            0
        );
        assert_eq!(attr.vendor_id, params::VENDOR_ID);
        assert_eq!(attr.max_qp_rd_atom, 128);
    }

    #[test]
    fn active_mtu_follows_netdev_mtu() {
        assert_eq!(proto::mtu::ib_mtu_for_netdev(1500), 3); // 1024
        assert_eq!(proto::mtu::ib_mtu_for_netdev(9000), ib::consts::IB_MTU_4096);
        assert_eq!(proto::mtu::ib_mtu_for_netdev(68), 1); // never below 256
    }

    #[test]
    fn mr_lookup_checks_key_bounds_and_access() {
        let Ok(table) = KBox::pin_init(MrTable::new_mrs(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let spec = MrSpec::test_region(0x10000, 0x2000, LOCAL_WRITE | REMOTE_READ);
        let Ok(mr) = table.insert_spec(spec) else {
            panic!("insert failed");
        };
        let key = mr.keys().lkey;
        assert_eq!(
            table
                .lookup(key, 0, 0x10800, 0x100, REMOTE_READ)
                .map(|r| r.1),
            Ok(0x800)
        );
        assert_eq!(
            table.lookup(key, 0, 0x11f00, 0x100, 0).map(|r| r.1),
            Ok(0x1f00)
        );
        // Past the end, before the start, wrapping around.
        assert_eq!(table.lookup(key, 0, 0x11f00, 0x101, 0).err(), Some(EACCES));
        assert_eq!(table.lookup(key, 0, 0xffff, 1, 0).err(), Some(EACCES));
        assert_eq!(table.lookup(key, 0, u64::MAX, 2, 0).err(), Some(EACCES));
        // A permission the region does not grant.
        assert_eq!(
            table.lookup(key, 0, 0x10000, 8, REMOTE_WRITE).err(),
            Some(EACCES)
        );
        // Another PD's request.
        assert_eq!(table.lookup(key, 1, 0x10000, 8, 0).err(), Some(EACCES));
        // Same index, another variant: a stale key.
        assert_eq!(table.lookup(key ^ 1, 0, 0x10000, 8, 0).err(), Some(EINVAL));
        table.remove(&mr);
        assert_eq!(table.lookup(key, 0, 0x10000, 8, 0).err(), Some(EINVAL));
        // The index comes back with a different key.
        // A key of the right index but stale variant does not match either.
        assert!(table.get(key).is_none());
        let spec = MrSpec::test_region(0, 0x1000, 0);
        if let Ok(again) = table.insert_spec(spec) {
            assert_ne!(again.keys().lkey, key);
            table.remove(&again);
        }
    }

    /// The keys of `n` regions entered into a fresh MR table, in order.
    fn first_keys(n: usize) -> KVec<u32> {
        let Ok(table) = KBox::pin_init(MrTable::new_mrs(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let mut keys = KVec::new();
        let mut mrs = KVec::new();
        for _ in 0..n {
            let Ok(mr) = table.insert_spec(MrSpec::test_region(0, 0x1000, 0)) else {
                panic!("insert failed");
            };
            assert!(keys.push(mr.keys().lkey, GFP_KERNEL).is_ok());
            assert!(mrs.push(mr, GFP_KERNEL).is_ok());
        }
        for mr in &mrs {
            table.remove(mr);
        }
        keys
    }

    #[test]
    fn fresh_tables_hand_out_unpredictable_keys() {
        // Two devices (or one created again) must not hand out the same
        // keys: with the allocation count as the variant both gave 0x100,
        // 0x201, 0x302, ... (a chance of 2^-128 here).
        let (a, b) = (first_keys(16), first_keys(16));
        assert!(a[..] != b[..]);
        for (i, key) in a.iter().enumerate() {
            assert_eq!(key >> 8, KeyKind::Mr.min_index() + i as u32);
        }
    }

    #[test]
    fn reused_index_never_gets_its_previous_key() {
        // 256 indices, one region at a time: each index comes back every
        // 256 allocations, which gave it the same key every time when the
        // variant was the allocation count's low byte.
        const SPAN: usize = 256;
        let Ok(table) = KBox::pin_init(MrTable::with_span(KeyKind::Mr, SPAN as u32), GFP_KERNEL)
        else {
            panic!("no memory for the table");
        };
        let mut last = buffer(SPAN * 4);
        let mut changed = 0;
        for n in 0..SPAN * 4 {
            let Ok(mr) = table.insert_spec(MrSpec::test_region(0, 0x1000, 0)) else {
                panic!("insert failed");
            };
            let key = mr.keys().lkey;
            let i = (key >> 8) as usize - KeyKind::Mr.min_index() as usize;
            assert_eq!(i, n % SPAN);
            let mut prev = [0u8; 4];
            prev.copy_from_slice(&last[i * 4..i * 4 + 4]);
            let prev = u32::from_ne_bytes(prev);
            if n >= SPAN {
                assert_ne!(key, prev);
                changed += 1;
            }
            last[i * 4..i * 4 + 4].copy_from_slice(&key.to_ne_bytes());
            table.remove(&mr);
        }
        assert_eq!(changed, SPAN * 3);
    }

    #[test]
    fn mw_alloc_gives_fresh_rkeys_in_the_mw_range() {
        let Ok(table) = KBox::pin_init(MwTable::new_mws(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let (Ok(one), Ok(two)) = (
            table.alloc(7, ib::consts::IB_MW_TYPE_1),
            table.alloc(7, ib::consts::IB_MW_TYPE_2),
        ) else {
            panic!("alloc failed");
        };
        assert_eq!(
            one.describe(),
            (ib::consts::IB_MW_TYPE_1, 7, MwState::Valid)
        );
        assert_eq!(two.describe(), (ib::consts::IB_MW_TYPE_2, 7, MwState::Free));
        for mw in [&one, &two] {
            assert!(KeyKind::Mw.contains_index(mw.rkey() >> 8));
        }
        assert_ne!(one.rkey(), two.rkey());
        assert!(table.alloc(7, 3).is_err());
        let stale = one.rkey();
        table.remove(&one);
        assert!(table.get(stale).is_none());
        assert!(table.get(two.rkey()).is_some());
        table.remove(&two);
    }

    #[test]
    fn fast_mr_page_list_is_bounded() {
        let Ok(table) = KBox::pin_init(MrTable::new_mrs(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let fast = |ty, n| MrSpec::fast(0, test_kmem(), ty, n);
        assert!(fast(ib::consts::IB_MR_TYPE_MEM_REG + 1, 4).is_err());
        assert!(fast(ib::consts::IB_MR_TYPE_MEM_REG, 0).is_err());
        let Ok(spec) = fast(ib::consts::IB_MR_TYPE_MEM_REG, 3) else {
            panic!("fast MR refused");
        };
        let Ok(mr) = table.insert_spec(spec) else {
            panic!("insert failed");
        };
        // Not registered yet: the key names no memory.
        assert!(table.lookup(mr.keys().lkey, 0, 0, 1, 0).is_err());
        assert_eq!(mr.start_pages(3000).err(), Some(EINVAL));
        assert_eq!(mr.start_pages(4096), Ok(()));
        for i in 0..3 {
            assert_eq!(mr.add_page(0x1000 * i), Ok(()));
        }
        assert_eq!(mr.add_page(0x9000).err(), Some(ENOMEM));
        assert_eq!(mr.fast_pages(), Some((3, 4096)));
        // A new mapping starts over.
        assert_eq!(mr.start_pages(1 << 21), Ok(()));
        assert_eq!(mr.fast_pages(), Some((0, 1 << 21)));
        table.remove(&mr);
    }

    const ALL: u32 = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;

    #[test]
    fn dma_mr_copies_and_atomics_by_address() {
        let Ok(table) = KBox::pin_init(MrTable::new_mrs(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let Ok(spec) = MrSpec::dma(0, test_kmem(), ALL) else {
            panic!("DMA MR refused");
        };
        let Ok(mr) = table.insert_spec(spec) else {
            panic!("insert failed");
        };
        let key = mr.keys().lkey;
        let len = 3 * PAGE_SIZE;
        let mut buf = buffer(len);
        // An access across two page boundaries: the offset is the address.
        let (at, n) = (100, 2 * PAGE_SIZE + 50);
        let Ok((_, offset)) = table.lookup(key, 0, addr(&buf, at), n as u64, REMOTE_WRITE) else {
            panic!("lookup failed");
        };
        assert_eq!(offset, addr(&buf, at));
        let mut data = KVec::new();
        for i in 0..n {
            assert!(data.push((i % 251) as u8, GFP_KERNEL).is_ok());
        }
        assert_eq!(mr.write_at(offset, &data), Ok(()));
        assert!(buf[at..at + n] == data[..]);
        assert!(buf[..at].iter().all(|&b| b == 0));
        assert!(buf[at + n..].iter().all(|&b| b == 0));
        let mut back = buffer(n);
        assert_eq!(mr.read_at(offset, &mut back), Ok(()));
        assert!(back[..] == data[..]);
        assert_eq!(mr.write_at(offset, &[]), Ok(()));

        // Atomics on an aligned word, in CPU byte order.
        buf[8..16].copy_from_slice(&5u64.to_ne_bytes());
        let w = addr(&buf, 8);
        let cas = |compare, swap| AtomicOp::CmpSwap { compare, swap };
        assert_eq!(mr.atomic_at(w, cas(4, 9)), Ok(5));
        assert_eq!(word(&buf, 8), 5);
        assert_eq!(mr.atomic_at(w, cas(5, 9)), Ok(5));
        assert_eq!(word(&buf, 8), 9);
        assert_eq!(mr.atomic_at(w, AtomicOp::FetchAdd(u64::MAX)), Ok(9));
        assert_eq!(word(&buf, 8), 8);
        assert_eq!(mr.atomic_at(w, AtomicOp::Write(0x1234)), Ok(8));
        assert_eq!(word(&buf, 8), 0x1234);
        assert_eq!(
            mr.atomic_at(w + 4, AtomicOp::FetchAdd(1)).err(),
            Some(EINVAL)
        );

        // Addresses outside the linear map are refused, not dereferenced.
        assert_eq!(mr.write_at(0x10, &[1]).err(), Some(EFAULT));
        assert_eq!(
            mr.atomic_at(0x10, AtomicOp::FetchAdd(1)).err(),
            Some(EFAULT)
        );
        assert_eq!(mr.read_at(u64::MAX - 15, &mut [0; 8]).err(), Some(EFAULT));
        assert_eq!(mr.read_at(u64::MAX, &mut [0; 8]).err(), Some(EINVAL));
        // Only fast MRs are registered and invalidated by work requests.
        assert_eq!(mr.fast_register(key, ALL, 0, 8).err(), Some(EINVAL));
        assert_eq!(mr.invalidate(key).err(), Some(EINVAL));
        table.remove(&mr);
        drop(mr);
        drop(buf);
    }

    #[test]
    fn fast_mr_registers_copies_and_invalidates() {
        let Ok(table) = KBox::pin_init(MrTable::new_mrs(), GFP_KERNEL) else {
            panic!("no memory for the table");
        };
        let Ok(spec) = MrSpec::fast(0, test_kmem(), ib::consts::IB_MR_TYPE_MEM_REG, 4) else {
            panic!("fast MR refused");
        };
        let Ok(mr) = table.insert_spec(spec) else {
            panic!("insert failed");
        };
        let key = mr.keys().lkey;
        // Two page-aligned pages inside a buffer, mapped in reverse order.
        let mut buf = buffer(3 * PAGE_SIZE);
        let base = (PAGE_SIZE - (addr(&buf, 0) as usize % PAGE_SIZE)) % PAGE_SIZE;
        let (p0, p1) = (base, base + PAGE_SIZE);
        assert_eq!(mr.start_pages(PAGE_SIZE as u32), Ok(()));
        assert_eq!(mr.add_page(addr(&buf, p1)), Ok(()));
        assert_eq!(mr.add_page(addr(&buf, p0)), Ok(()));

        // Not registered: the key names nothing, data access is refused.
        assert_eq!(table.lookup(key, 0, 0, 1, 0).err(), Some(EINVAL));
        assert_eq!(mr.write_at(0, &[1]).err(), Some(EINVAL));

        // REG_MR with a new key byte; the region starts 0x100 into page 1.
        let new_key = Key::from_raw(key).next_variant().raw();
        let iova = 0x7_0000_0100u64;
        let len = 2 * PAGE_SIZE as u64 - 0x100;
        let other_index = key.wrapping_add(0x100);
        assert_eq!(
            mr.fast_register(other_index, ALL, iova, len).err(),
            Some(EINVAL)
        );
        assert_eq!(
            mr.fast_register(new_key, ALL, iova, len + 1).err(),
            Some(EINVAL)
        );
        assert_eq!(
            mr.fast_register(new_key, REMOTE_WRITE, iova, len).err(),
            Some(EINVAL)
        );
        assert_eq!(mr.fast_register(new_key, ALL, iova, len), Ok(()));
        // Registered already: it must be invalidated first.
        assert_eq!(
            mr.fast_register(new_key, ALL, iova, len).err(),
            Some(EINVAL)
        );
        assert_eq!(table.lookup(key, 0, iova, 8, 0).err(), Some(EINVAL));
        assert_eq!(
            table
                .lookup(new_key, 0, iova + 0x10, 0x20, REMOTE_WRITE)
                .map(|r| r.1),
            Ok(0x10)
        );
        assert_eq!(
            table.lookup(new_key, 0, iova + len - 1, 2, 0).err(),
            Some(EACCES)
        );
        // Through a memory window: no key, same bounds.
        assert_eq!(mr.offset_of(iova + 0x10, 0x20), Ok(0x10));
        assert_eq!(mr.offset_of(iova - 1, 1).err(), Some(EACCES));

        // A copy across the end of the first listed page lands in p1, then p0.
        let first = PAGE_SIZE - 0x100;
        let mut data = KVec::new();
        for i in 0..first + 0x80 {
            assert!(data.push((i % 253) as u8 + 1, GFP_KERNEL).is_ok());
        }
        assert_eq!(mr.write_at(0, &data), Ok(()));
        assert!(buf[p1 + 0x100..p1 + PAGE_SIZE] == data[..first]);
        assert!(buf[p0..p0 + 0x80] == data[first..]);
        assert!(buf[p1..p1 + 0x100].iter().all(|&b| b == 0));
        let mut back = buffer(data.len());
        assert_eq!(mr.read_at(0, &mut back), Ok(()));
        assert!(back[..] == data[..]);
        // The last byte, and one past the region.
        assert_eq!(mr.write_at(len - 1, &[0xee]), Ok(()));
        assert_eq!(buf[p0 + PAGE_SIZE - 1], 0xee);
        assert_eq!(mr.write_at(len - 1, &[1, 2]).err(), Some(EINVAL));
        assert_eq!(mr.read_at(u64::MAX, &mut [0]).err(), Some(EINVAL));

        // Atomics: region offset 8 is p1 + 0x108.
        buf[p1 + 0x108..p1 + 0x110].copy_from_slice(&40u64.to_ne_bytes());
        assert_eq!(mr.atomic_at(8, AtomicOp::FetchAdd(2)), Ok(40));
        assert_eq!(word(&buf, p1 + 0x108), 42);
        let cas = AtomicOp::CmpSwap {
            compare: 42,
            swap: 7,
        };
        assert_eq!(mr.atomic_at(8, cas), Ok(42));
        assert_eq!(word(&buf, p1 + 0x108), 7);
        assert_eq!(mr.atomic_at(12, AtomicOp::Write(1)).err(), Some(EINVAL));
        let last = word(&buf, p0 + PAGE_SIZE - 8);
        assert_eq!(mr.atomic_at(len - 8, AtomicOp::Write(3)), Ok(last));
        assert_eq!(word(&buf, p0 + PAGE_SIZE - 8), 3);
        assert_eq!(mr.atomic_at(len, AtomicOp::Write(3)).err(), Some(EINVAL));

        // Invalidation needs the current key; then nothing is reachable.
        assert_eq!(mr.invalidate(key).err(), Some(EINVAL));
        assert_eq!(mr.invalidate(new_key), Ok(()));
        assert_eq!(table.lookup(new_key, 0, iova, 8, 0).err(), Some(EINVAL));
        assert_eq!(mr.write_at(0, &[1]).err(), Some(EINVAL));
        assert_eq!(mr.atomic_at(8, AtomicOp::FetchAdd(1)).err(), Some(EINVAL));
        assert_eq!(mr.offset_of(iova, 1).err(), Some(EINVAL));

        // Remapped with small pages: 512-byte pages 1 KiB apart.
        assert_eq!(mr.start_pages(512), Ok(()));
        assert_eq!(mr.add_page(addr(&buf, p0)), Ok(()));
        assert_eq!(mr.add_page(addr(&buf, p0 + 1024)), Ok(()));
        let key3 = Key::from_raw(new_key).next_variant().raw();
        assert_eq!(mr.fast_register(key3, ALL, 0x200, 1024), Ok(()));
        assert_eq!(mr.write_at(500, &[9; 24]), Ok(()));
        assert!(buf[p0 + 500..p0 + 512].iter().all(|&b| b == 9));
        assert!(buf[p0 + 1024..p0 + 1036].iter().all(|&b| b == 9));
        assert_eq!(buf[p0 + 512], 0);
        table.remove(&mr);
        drop(mr);
        drop(buf);
    }

    /// An owner of transmitted buffers with a QP's marks, which counts how
    /// often it is woken instead of scheduling work.
    struct Sender {
        tx: SkbAccount<Sender>,
        resumed: AtomicU32,
    }

    impl SkbOwner for Sender {
        fn skb_account(&self) -> &SkbAccount<Self> {
            &self.tx
        }

        fn must_pause(in_flight: u32) -> bool {
            skbs_must_pause(in_flight)
        }

        fn may_resume(in_flight: u32) -> bool {
            skbs_may_resume(in_flight)
        }

        fn resume(this: ArcBorrow<'_, Self>) {
            this.resumed.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn sender() -> Arc<Sender> {
        let Ok(tx) = SkbAccount::new() else {
            panic!("no socket for the account");
        };
        let sender = Sender {
            tx,
            resumed: AtomicU32::new(0),
        };
        let Ok(sender) = Arc::new(sender, GFP_KERNEL) else {
            panic!("no memory for the sender");
        };
        sender
    }

    /// Charges a new buffer to `s` and keeps it in `held` (unsent: freeing
    /// it runs the same destructor as the IP stack's freeing it).
    fn charge_one(s: &Arc<Sender>, held: &mut KVec<SkBuff>) {
        let Ok(mut skb) = SkBuff::alloc_udp(Net::init().loopback(), false, 8) else {
            panic!("no memory for a buffer");
        };
        s.tx.charge(s, &mut skb);
        if held.push(skb, GFP_KERNEL).is_err() {
            panic!("no memory to hold a buffer");
        }
    }

    /// Charges buffers to `s` until it pauses, checking that it goes on
    /// sending up to the high mark in flight and pauses one past it.
    fn charge_until_paused(s: &Arc<Sender>, held: &mut KVec<SkBuff>) {
        for n in 1..=INFLIGHT_SKBS_HIGH {
            charge_one(s, held);
            assert_eq!(s.tx.in_flight(), n);
            assert!(!s.tx.must_pause());
        }
        charge_one(s, held);
        assert_eq!(s.tx.in_flight(), INFLIGHT_SKBS_HIGH + 1);
        assert!(s.tx.must_pause());
    }

    #[test]
    fn skb_account_pauses_above_high_mark_and_resumes_below_low_mark() {
        let s = sender();
        let mut held = KVec::new();
        charge_until_paused(&s, &mut held);
        // Freeing down to the low mark does not wake it...
        while s.tx.in_flight() > INFLIGHT_SKBS_LOW {
            drop(held.pop());
        }
        assert_eq!(s.resumed.load(Ordering::SeqCst), 0);
        // ...one below it does, once.
        drop(held.pop());
        assert_eq!(s.tx.in_flight(), INFLIGHT_SKBS_LOW - 1);
        assert_eq!(s.resumed.load(Ordering::SeqCst), 1);
        assert!(!s.tx.must_pause());
        // An owner that did not pause again is not woken again.
        held.clear();
        assert_eq!(s.tx.in_flight(), 0);
        assert_eq!(s.resumed.load(Ordering::SeqCst), 1);
        // Gives back the reference the socket held on the owner.
        s.tx.close();
    }

    #[test]
    fn skb_account_charges_nothing_after_close() {
        let s = sender();
        let mut held = KVec::new();
        charge_until_paused(&s, &mut held);
        held.clear();
        assert_eq!(s.resumed.load(Ordering::SeqCst), 1);
        // Closed (as `destroy_qp` does), a buffer goes out uncharged: it
        // is not counted and its freeing wakes nobody.
        s.tx.close();
        charge_one(&s, &mut held);
        assert_eq!(s.tx.in_flight(), 0);
        held.clear();
        assert_eq!(s.resumed.load(Ordering::SeqCst), 1);
    }
}
