// SPDX-License-Identifier: GPL-2.0

//! Bounds-checked big-endian cursors over byte slices.
//!
//! The header codecs are written in terms of [`Reader`] and [`Writer`] so
//! that no field access can index out of bounds: each step consumes a fixed
//! number of bytes from the front of the slice and reports `None` if there
//! are not enough.

/// Consumes big-endian fields from the front of a byte slice.
#[derive(Clone, Debug)]
pub(crate) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Starts reading at the beginning of `buf`.
    pub(crate) const fn new(buf: &'a [u8]) -> Self {
        Reader { rest: buf }
    }

    /// Bytes not consumed yet.
    pub(crate) const fn remaining(&self) -> &'a [u8] {
        self.rest
    }

    /// Takes the next `N` bytes as an array.
    pub(crate) fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, tail) = self.rest.split_first_chunk::<N>()?;
        self.rest = tail;
        Some(*head)
    }

    /// Takes one byte.
    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.array::<1>().map(u8::from_be_bytes)
    }

    /// Takes a big-endian `u16`.
    pub(crate) fn be16(&mut self) -> Option<u16> {
        self.array().map(u16::from_be_bytes)
    }

    /// Takes a big-endian `u32`.
    pub(crate) fn be32(&mut self) -> Option<u32> {
        self.array().map(u32::from_be_bytes)
    }

    /// Takes a big-endian `u64`.
    pub(crate) fn be64(&mut self) -> Option<u64> {
        self.array().map(u64::from_be_bytes)
    }
}

/// Fills big-endian fields into the front of a mutable byte slice.
#[derive(Debug)]
pub(crate) struct Writer<'a> {
    rest: &'a mut [u8],
}

impl<'a> Writer<'a> {
    /// Starts writing at the beginning of `buf`.
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Writer { rest: buf }
    }

    /// Number of bytes that can still be written.
    pub(crate) fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// Writes `bytes` and advances past them. On `None` nothing is written.
    pub(crate) fn array<const N: usize>(&mut self, bytes: [u8; N]) -> Option<()> {
        // Move the slice out so the split halves can outlive this borrow of
        // `self`; on failure put it back unchanged.
        let buf = core::mem::take(&mut self.rest);
        if buf.len() < N {
            self.rest = buf;
            return None;
        }
        let (head, tail) = buf.split_first_chunk_mut::<N>()?;
        *head = bytes;
        self.rest = tail;
        Some(())
    }

    /// Writes one byte.
    pub(crate) fn u8(&mut self, v: u8) -> Option<()> {
        self.array(v.to_be_bytes())
    }

    /// Writes a big-endian `u16`.
    pub(crate) fn be16(&mut self, v: u16) -> Option<()> {
        self.array(v.to_be_bytes())
    }

    /// Writes a big-endian `u32`.
    pub(crate) fn be32(&mut self, v: u32) -> Option<()> {
        self.array(v.to_be_bytes())
    }

    /// Writes a big-endian `u64`.
    pub(crate) fn be64(&mut self, v: u64) -> Option<()> {
        self.array(v.to_be_bytes())
    }
}
