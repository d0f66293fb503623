//! A document store's index held in memory: where each document's frame is,
//! bit-packed in blocks of 128 documents (about five bytes a document, a
//! third of the 16 the file spends: 14.7 MB for the 3.1M documents of the
//! 3 GB scaled corpus). With it, showing a hit costs one device
//! read (its frame) rather than two in a row (its index entry, then its frame).
//!
//! Built when the store is opened, from the file's index (see the module
//! above), which is read once for that and checked: every frame lies before
//! the index.

use std::ops::Range;

use needle_core::{DocId, Error, Result};
use needle_storage::FileSlice;

use super::INDEX_ENTRY_LEN;
use crate::bitpack::{decode_block, encode_block};
use crate::bytes::ByteReader;
use crate::BLOCK_LEN;

/// Index entries read at a time while building (a multiple of the entry size).
const CHUNK: usize = 4096 * INDEX_ENTRY_LEN;

pub(super) struct DocIndex {
    /// Per block of 128 documents: the first frame's start and where the
    /// block's packed starts (relative to it), lengths and raw lengths begin.
    blocks: Vec<(u64, usize)>,
    packed: Vec<u8>,
    count: u32,
}

impl DocIndex {
    /// Reads and checks the `count` entries at `index_start` of `body`.
    pub fn build(body: &FileSlice, index_start: usize, count: u32) -> Result<DocIndex> {
        let name = body.name();
        let mut index = DocIndex { blocks: Vec::new(), packed: Vec::new(), count };
        let mut block: Vec<(u64, u32, u32)> = Vec::with_capacity(BLOCK_LEN);
        let total = count as usize * INDEX_ENTRY_LEN;
        for at in (0..total).step_by(CHUNK) {
            let bytes = body.read_once(index_start + at..index_start + (at + CHUNK).min(total))?;
            let mut r = ByteReader::new(name, &bytes);
            while r.remaining() > 0 {
                let (start, len, raw) = (r.u64()?, r.u32()?, r.u32()?);
                if start.checked_add(u64::from(len)).is_none_or(|end| end > index_start as u64) {
                    let doc = index.blocks.len() * BLOCK_LEN + block.len();
                    return Err(Error::corrupt(name, format!("document {doc} lies outside the store")));
                }
                block.push((start, len, raw));
                if block.len() == BLOCK_LEN {
                    index.push_block(name, &block)?;
                    block.clear();
                }
            }
        }
        if !block.is_empty() {
            index.push_block(name, &block)?;
        }
        index.packed.shrink_to_fit();
        Ok(index)
    }

    fn push_block(&mut self, name: &str, block: &[(u64, u32, u32)]) -> Result<()> {
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
        let mut values = [[0u32; BLOCK_LEN]; 3];
        let mut pos = at;
        for v in &mut values {
            decode_block(&self.packed, &mut pos, &mut v[..n]);
        }
        let start = base as usize + values[0][i] as usize;
        Some((start..start + values[1][i] as usize, values[2][i] as usize))
    }
}
