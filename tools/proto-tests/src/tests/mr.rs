// SPDX-License-Identifier: GPL-2.0

//! Tests of the MR access rules.

use crate::logic::mr::*;
use proptest::prelude::*;
use std::{vec, vec::Vec};

#[test]
fn registration_flags() {
    assert_eq!(check_reg_access(0), Ok(()));
    assert_eq!(
        check_reg_access(LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ),
        Ok(())
    );
    assert_eq!(check_reg_access(REMOTE_READ), Ok(()));
    assert_eq!(
        check_reg_access(REMOTE_WRITE),
        Err(MrError::RemoteWriteWithoutLocalWrite)
    );
    assert_eq!(
        check_reg_access(REMOTE_ATOMIC),
        Err(MrError::RemoteWriteWithoutLocalWrite)
    );
    // Kernel memory is never paged on demand; a process's may be.
    assert_eq!(
        check_reg_access(ON_DEMAND),
        Err(MrError::Unsupported(ON_DEMAND))
    );
    assert_eq!(check_user_reg_access(ON_DEMAND | LOCAL_WRITE), Ok(()));
    assert_eq!(
        check_user_reg_access(ON_DEMAND | REMOTE_WRITE),
        Err(MrError::RemoteWriteWithoutLocalWrite)
    );
    // IB_ACCESS_HUGETLB, as rxe.
    assert_eq!(
        check_user_reg_access(ON_DEMAND | 1 << 7),
        Err(MrError::Unsupported(1 << 7))
    );
    assert_eq!(
        check_reg_access(1 << 30),
        Err(MrError::Unsupported(1 << 30))
    );
    // Optional hints (relaxed ordering) are accepted and ignored.
    assert_eq!(check_reg_access(1 << 20), Ok(()));
}

#[test]
fn bounds() {
    let mr = MrRange {
        iova: 0x1000,
        length: 0x100,
        access: LOCAL_WRITE | REMOTE_READ,
    };
    assert_eq!(mr.check(0x1000, 0x100, 0), Ok(0));
    assert_eq!(mr.check(0x1080, 0x80, REMOTE_READ), Ok(0x80));
    assert_eq!(mr.check(0x1100, 0, 0), Ok(0x100));
    assert_eq!(mr.check(0x1080, 0x81, 0), Err(MrError::OutOfBounds));
    assert_eq!(mr.check(0xfff, 1, 0), Err(MrError::OutOfBounds));
    assert_eq!(mr.check(u64::MAX, 2, 0), Err(MrError::OutOfBounds));
    assert_eq!(
        mr.check(0x1000, 1, REMOTE_WRITE),
        Err(MrError::NotPermitted(REMOTE_WRITE))
    );
}

#[test]
fn whole_memory() {
    let dma = MrRange {
        iova: 0,
        length: u64::MAX,
        access: LOCAL_WRITE,
    };
    assert_eq!(dma.check(u64::MAX - 1, 1, LOCAL_WRITE), Ok(u64::MAX - 1));
    assert_eq!(dma.check(u64::MAX, 1, 0), Err(MrError::OutOfBounds));
}

proptest! {
    /// An accepted access always lies inside the region, whatever the inputs.
    #[test]
    fn accepted_means_inside(iova: u64, length: u64, va: u64, len: u64, access in 0u32..16, need in 0u32..16) {
        let mr = MrRange { iova, length, access };
        if let Ok(off) = mr.check(va, len, need) {
            prop_assert_eq!(need & !access, 0);
            prop_assert!(va >= iova);
            prop_assert_eq!(off, va - iova);
            prop_assert!(off.checked_add(len).is_some_and(|e| e <= length));
        }
    }
}

#[test]
fn page_layout_rejects_bad_geometry() {
    assert_eq!(PageLayout::new(0, 0, 1), Err(MrError::BadPageSize));
    assert_eq!(PageLayout::new(3000, 0, 1), Err(MrError::BadPageSize));
    assert_eq!(PageLayout::new(4096, 4096, 1), Err(MrError::BadPageSize));
    assert_eq!(
        PageLayout::for_iova(0, 0x1234, 1),
        Err(MrError::BadPageSize)
    );
    let l = PageLayout::for_iova(4096, 0x1234_5678, 2).unwrap();
    assert_eq!(l, PageLayout::new(4096, 0x678, 2).unwrap());
    assert_eq!(l.page_size(), 4096);
    assert_eq!(l.capacity(), 2 * 4096 - 0x678);
    // No pages hold nothing; a huge list saturates instead of wrapping.
    assert_eq!(PageLayout::new(4096, 100, 0).unwrap().capacity(), 0);
    assert_eq!(PageLayout::new(1 << 62, 0, 8).unwrap().capacity(), u64::MAX);
}

fn chunks_of(l: &PageLayout, offset: u64, len: usize) -> Result<Vec<Chunk>, MrError> {
    l.chunks(offset, len).map(|c| c.collect())
}

#[test]
fn chunks_split_at_page_ends() {
    let l = PageLayout::new(4096, 100, 3).unwrap();
    let c = |page, offset, len| Chunk { page, offset, len };
    assert_eq!(
        chunks_of(&l, 0, 4096),
        Ok(vec![c(0, 100, 3996), c(1, 0, 100)])
    );
    assert_eq!(chunks_of(&l, 3996, 1), Ok(vec![c(1, 0, 1)]));
    assert_eq!(
        chunks_of(&l, 10, 3 * 4096 - 110),
        Ok(vec![c(0, 110, 3986), c(1, 0, 4096), c(2, 0, 4096)])
    );
    // The last byte of the list, then one past it.
    assert_eq!(chunks_of(&l, 3 * 4096 - 101, 1), Ok(vec![c(2, 4095, 1)]));
    assert_eq!(chunks_of(&l, 3 * 4096 - 101, 2), Err(MrError::OutOfBounds));
    assert_eq!(chunks_of(&l, 3 * 4096 - 100, 1), Err(MrError::OutOfBounds));
    assert_eq!(chunks_of(&l, u64::MAX, 1), Err(MrError::OutOfBounds));
    // Zero-length: nothing to do, also at the very end.
    assert_eq!(chunks_of(&l, 3 * 4096 - 100, 0), Ok(vec![]));
    // Small MR pages (a fast MR with 512-byte pages).
    let small = PageLayout::for_iova(512, 0x10_0100, 4).unwrap();
    assert_eq!(
        chunks_of(&small, 0x80, 0x200),
        Ok(vec![c(0, 0x180, 0x80), c(1, 0, 0x180)])
    );
}

#[test]
fn atomic_words() {
    let l = PageLayout::new(4096, 8, 2).unwrap();
    let c = |page, offset| Chunk {
        page,
        offset,
        len: 8,
    };
    assert_eq!(l.atomic_word(0), Ok(c(0, 8)));
    assert_eq!(l.atomic_word(4080), Ok(c(0, 4088)));
    assert_eq!(l.atomic_word(4088), Ok(c(1, 0)));
    assert_eq!(l.atomic_word(4), Err(MrError::Misaligned));
    // The last word, then past the end.
    assert_eq!(l.atomic_word(8192 - 16), Ok(c(1, 4088)));
    assert_eq!(l.atomic_word(8192 - 8), Err(MrError::OutOfBounds));
    assert_eq!(l.atomic_word(u64::MAX - 3), Err(MrError::OutOfBounds));
    // Aligned in the region but not in memory.
    let odd = PageLayout::new(4096, 4, 1).unwrap();
    assert_eq!(odd.atomic_word(0), Err(MrError::Misaligned));
    assert_eq!(odd.atomic_word(4), Ok(c(0, 8)));
    // Pages smaller than a word can never hold one.
    let tiny = PageLayout::new(4, 0, 8).unwrap();
    assert_eq!(tiny.atomic_word(0), Err(MrError::Misaligned));
}

#[test]
fn fast_registration() {
    let rw = LOCAL_WRITE | REMOTE_WRITE;
    assert_eq!(
        fast_reg_range(4096, 2, 0x1000_0800, 0x1800, rw),
        Ok(MrRange {
            iova: 0x1000_0800,
            length: 0x1800,
            access: rw
        })
    );
    // One byte more than the two pages hold.
    assert_eq!(
        fast_reg_range(4096, 2, 0x1000_0800, 0x1801, rw),
        Err(MrError::OutOfBounds)
    );
    // Remote write needs local write; unknown flags are refused.
    assert_eq!(
        fast_reg_range(4096, 2, 0, 16, REMOTE_WRITE),
        Err(MrError::RemoteWriteWithoutLocalWrite)
    );
    assert_eq!(
        fast_reg_range(4096, 2, 0, 16, ON_DEMAND),
        Err(MrError::Unsupported(ON_DEMAND))
    );
    // No page list yet (page size 0), or a region that wraps.
    assert_eq!(fast_reg_range(0, 0, 0, 0, 0), Err(MrError::BadPageSize));
    assert_eq!(
        fast_reg_range(4096, 2, u64::MAX - 8, 16, 0),
        Err(MrError::OutOfBounds)
    );
    // An empty region needs no pages.
    assert!(fast_reg_range(4096, 0, 0x1234, 0, 0).is_ok());
}

/// Small geometries, so that accesses often hit the edges: page size,
/// offset of the region in the first page, number of pages.
fn arb_geometry() -> impl Strategy<Value = (u64, u64, usize)> {
    (0u32..14, any::<u64>(), 0usize..8).prop_map(|(shift, first, pages)| {
        let size = 1u64 << shift;
        (size, first % size, pages)
    })
}

proptest! {
    /// The pieces of an accepted access are exactly its bytes, in order,
    /// each piece in one page of the list, where plain arithmetic puts it;
    /// an access is refused only if it does not fit the list.
    #[test]
    fn chunks_cover_exactly_the_access((size, first, pages) in arb_geometry(), offset in 0u64..70000, len in 0usize..20000) {
        let l = PageLayout::new(size, first, pages).unwrap();
        let capacity = (pages as u64 * size).saturating_sub(first);
        prop_assert_eq!(l.capacity(), capacity);
        match l.chunks(offset, len) {
            Ok(chunks) => {
                prop_assert!(offset + len as u64 <= capacity);
                let mut pos = first + offset;
                for c in chunks {
                    prop_assert!(c.len >= 1);
                    prop_assert_eq!(c.page as u64, pos / size);
                    prop_assert_eq!(c.offset as u64, pos % size);
                    prop_assert!(c.offset as u64 + c.len as u64 <= size);
                    prop_assert!(c.page < pages);
                    pos += c.len as u64;
                }
                prop_assert_eq!(pos, first + offset + len as u64);
            }
            Err(e) => {
                prop_assert_eq!(e, MrError::OutOfBounds);
                prop_assert!(offset + len as u64 > capacity);
            }
        }
    }

    /// An accepted atomic operand is 8 aligned bytes inside one page of the
    /// list, where plain arithmetic puts it; an aligned operand that fits is
    /// accepted.
    #[test]
    fn atomic_word_is_inside_and_aligned((size, first, pages) in arb_geometry(), offset in 0u64..70000) {
        let l = PageLayout::new(size, first, pages).unwrap();
        let pos = first + offset;
        match l.atomic_word(offset) {
            Ok(w) => {
                prop_assert!(offset + 8 <= l.capacity());
                prop_assert_eq!(w.len, 8);
                prop_assert_eq!(w.page as u64, pos / size);
                prop_assert_eq!(w.offset as u64, pos % size);
                prop_assert_eq!(w.offset % 8, 0);
                prop_assert!(w.offset as u64 + 8 <= size);
                prop_assert!(w.page < pages);
            }
            Err(_) => {
                let fits = offset + 8 <= l.capacity();
                prop_assert!(!fits || size < 8 || pos % 8 != 0);
            }
        }
    }

    /// An accepted fast registration always fits its page list.
    #[test]
    fn fast_reg_fits_page_list(shift in 0u32..22, pages in 0usize..16, iova: u64, length in 0u64..100000, access in 0u32..16) {
        let size = 1u64 << shift;
        if let Ok(range) = fast_reg_range(size, pages, iova, length, access) {
            prop_assert_eq!(range, MrRange { iova, length, access });
            prop_assert!((iova & (size - 1)) + length <= pages as u64 * size);
            prop_assert!(iova.checked_add(length).is_some());
        }
    }
}
