//! A document store's index: where each document's frame is, bit-packed in
//! blocks of 128 documents, held in memory. With it, showing a hit costs one
//! device read (its frame) rather than two in a row (its index entry, then
//! its frame).
//!
//! Format 4 stores it as it is held (see the module above):
//!
//! ```text
//! Index      := IndexBlock^ceil(DocCount / 128)
//! IndexBlock := Base:vint Block(Start - Base)^n Block(Len)^n Block(RawLen)^n
//! ```
//!
//! `Base` is the smallest start of the block's frames, `n` 128 or, for the last
//! block, the rest, and blocks are [`crate::bitpack`]'s: about four bytes a
//! document where the fixed entries of formats 1 to 3 (`Start:u64 Len:u32
//! RawLen:u32`) spend 16 (2.2 MB of the shared corpus's 138k documents).
//! Either is read once when the store opens and checked: every frame lies
//! before the index.

use std::ops::Range;

use needle_core::{DocId, Error, Result};
use needle_storage::FileSlice;

use super::INDEX_ENTRY_LEN;
use crate::bitpack::{block_value, decode_block, encode_block, full_block_end};
use crate::bytes::{read_vint_lenient, write_vint, ByteReader};
use crate::BLOCK_LEN;

/// Index entries read at a time while building (a multiple of the entry size).
const CHUNK: usize = 4096 * INDEX_ENTRY_LEN;

/// One document's entry: where its frame starts, its length, its record's length.
pub(super) type Entry = (u64, u32, u32);

#[derive(Default)]
pub(super) struct DocIndex {
    /// Per block of 128 documents: the first frame's start and where the
    /// block's packed starts (relative to it), lengths and raw lengths begin.
    blocks: Vec<(u64, usize)>,
    packed: Vec<u8>,
    count: u32,
    /// The entries of the block being filled.
    pending: Vec<Entry>,
}

impl DocIndex {
    /// Reads and checks the `count` fixed entries at `index_start` of `body` (formats 1 to 3).
    pub fn build(body: &FileSlice, index_start: usize, count: u32) -> Result<DocIndex> {
        let name = body.name();
        let mut index = DocIndex::default();
        let total = count as usize * INDEX_ENTRY_LEN;
        for at in (0..total).step_by(CHUNK) {
            let bytes = body.read_once(index_start + at..index_start + (at + CHUNK).min(total))?;
            let mut r = ByteReader::new(name, &bytes);
            while r.remaining() > 0 {
                let (start, len, raw) = (r.u64()?, r.u32()?, r.u32()?);
                if start.checked_add(u64::from(len)).is_none_or(|end| end > index_start as u64) {
                    let doc = index.count;
                    return Err(Error::corrupt(name, format!("document {doc} lies outside the store")));
                }
                index.push(name, (start, len, raw))?;
            }
        }
        index.flush_pending(name)?;
        index.packed.shrink_to_fit();
        Ok(index)
    }

    /// Reads and checks the packed index of `count` documents at `range` of
    /// `body` (format 4), the frames lying before `range.start`.
    pub fn read_packed(body: &FileSlice, range: Range<usize>, count: u32) -> Result<DocIndex> {
        let name = body.name();
        let packed = body.read_once(range.clone())?.to_vec();
        let mut index = DocIndex { count, ..DocIndex::default() };
        let mut pos = 0;
        let mut values = [[0u32; BLOCK_LEN]; 3];
        for b in 0..(count as usize).div_ceil(BLOCK_LEN) {
            let base = read_vint_lenient(&packed, &mut pos);
            index.blocks.push((base, pos));
            let n = (count as usize - b * BLOCK_LEN).min(BLOCK_LEN);
            for v in &mut values {
                decode_block(&packed, &mut pos, &mut v[..n]);
            }
            let mut ends =
                (0..n).map(|i| base.checked_add(u64::from(values[0][i]) + u64::from(values[1][i])));
            if pos > packed.len() || ends.any(|end| end.is_none_or(|e| e > range.start as u64)) {
                let what =
                    format!("document index block {b} is cut short or places a frame outside the store");
                return Err(Error::corrupt_at(name, body.position(range.start).1, what));
            }
        }
        if pos != packed.len() {
            return Err(Error::corrupt(name, "document index is longer than its documents need"));
        }
        index.packed = packed;
        Ok(index)
    }

    /// Adds the next document's entry (of store `name`, for errors).
    pub fn push(&mut self, name: &str, entry: Entry) -> Result<()> {
        self.pending.push(entry);
        self.count += 1;
        if self.pending.len() == BLOCK_LEN {
            self.flush_pending(name)?;
        }
        Ok(())
    }

    /// The index as format 4 stores it, once every entry of store `name` is pushed.
    pub fn encoded(mut self, name: &str) -> Result<Vec<u8>> {
        self.flush_pending(name)?;
        let mut out = Vec::with_capacity(self.packed.len() + self.blocks.len() * 5);
        for (b, &(base, at)) in self.blocks.iter().enumerate() {
            write_vint(&mut out, base);
            let end = self.blocks.get(b + 1).map_or(self.packed.len(), |next| next.1);
            out.extend_from_slice(&self.packed[at..end]);
        }
        Ok(out)
    }

    fn flush_pending(&mut self, name: &str) -> Result<()> {
        if !self.pending.is_empty() {
            let block = std::mem::take(&mut self.pending);
            self.push_block(name, &block)?;
        }
        Ok(())
    }

    fn push_block(&mut self, name: &str, block: &[Entry]) -> Result<()> {
        let base = block.iter().map(|e| e.0).min().unwrap_or(0);
        let starts: Option<Vec<u32>> = block.iter().map(|e| u32::try_from(e.0 - base).ok()).collect();
        let starts =
            starts.ok_or_else(|| Error::corrupt(name, "document frames of one block span over 4 GiB"))?;
        self.blocks.push((base, self.packed.len()));
        encode_block(&starts, &mut self.packed);
        encode_block(&block.iter().map(|e| e.1).collect::<Vec<_>>(), &mut self.packed);
        encode_block(&block.iter().map(|e| e.2).collect::<Vec<_>>(), &mut self.packed);
        Ok(())
    }

    /// Where `doc`'s frame is in the store, and its length decompressed.
    pub fn frame(&self, doc: DocId) -> Option<(Range<usize>, usize)> {
        if doc >= self.count {
            return None;
        }
        let (b, i) = (doc as usize / BLOCK_LEN, doc as usize % BLOCK_LEN);
        let (base, at) = self.blocks[b];
        let n = (self.count as usize - b * BLOCK_LEN).min(BLOCK_LEN);
        let [start, len, raw_len] = match n {
            BLOCK_LEN => self.full_block_entry(at, i),
            _ => self.tail_block_entry(at, n, i),
        };
        let start = base as usize + start as usize;
        Some((start..start + len as usize, raw_len as usize))
    }

    /// Entry `i` of the full block at `at`: its three values read alone.
    fn full_block_entry(&self, mut at: usize, i: usize) -> [u32; 3] {
        [0; 3].map(|_| {
            let value = block_value(&self.packed, at, i);
            at = full_block_end(&self.packed, at).1;
            value
        })
    }

    /// Entry `i` of the last block (of `n` documents, vints).
    fn tail_block_entry(&self, mut at: usize, n: usize, i: usize) -> [u32; 3] {
        let mut values = [[0u32; BLOCK_LEN]; 3];
        for v in &mut values {
            decode_block(&self.packed, &mut at, &mut v[..n]);
        }
        values.map(|v| v[i])
    }
}
