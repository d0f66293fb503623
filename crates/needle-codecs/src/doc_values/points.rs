//! Points: a numeric column's values sorted, each with its document (a
//! one-dimensional version of Lucene's points), so that a range is found
//! without reading every block of the column: counting a range reads the
//! (at most two) leaves it cuts, and the documents of a narrow range are
//! read from its leaves alone.
//!
//! ```text
//! Points := Leaf^LeafCount                           after the column's blocks, in the doc values file
//! Leaf   := ValueBits:u8 Packed(ValueBits, Count) Packed(DocBits, Count)
//! ```
//!
//! Every (value, document) pair of the column, ascending by value then
//! document, cut into leaves of [`LEAF`] pairs (the last one the rest). A
//! leaf packs its values over its smallest (`value - Min`) and its documents
//! in `DocBits` bits each, the bits `max_doc - 1` needs. The directory entry
//! of a numeric column (doc values version 4) lists its leaves, read at open
//! and kept in memory: `LeafCount:vint (Offset:vint Len:vint Count:vint
//! Min:zigzag-vint Max:zigzag-vint)^LeafCount`. Example: the values
//! `[5] [] [7 9]` of a 3-document column are one leaf of the pairs (5, 0),
//! (7, 2), (9, 2): `03 | 10 01 | 28`, and the entry `(offset, 4, 3, 5, 9)`:
//! 3 bits of values 0, 2, 4 over 5, then 2 bits of documents 0, 2, 2.

use std::sync::Arc;

use needle_core::{read_error, DocId, Error, Result};
use needle_storage::counters::{self, DataKind};
use needle_storage::FileSlice;

use super::{bits_for, pack, unpack, ColumnBuf};

/// Pairs a leaf holds (the last leaf of a column fewer).
pub const LEAF: usize = 512;

/// A leaf's place in the file and what it holds (the directory's entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LeafEntry {
    pub offset: usize,
    pub len: usize,
    pub count: u32,
    pub min: i64,
    pub max: i64,
}

/// The bits a document number of a segment of `max_doc` documents takes.
fn doc_bits(max_doc: DocId) -> u32 {
    bits_for(u64::from(max_doc.saturating_sub(1)))
}

/// Appends the points of `column`'s first `max_doc` documents to `out` (the
/// file being written); their leaves' entries.
pub(super) fn encode(column: &ColumnBuf, max_doc: DocId, out: &mut Vec<u8>) -> Vec<LeafEntry> {
    let mut pairs: Vec<(i64, DocId)> = Vec::new();
    for doc in 0..max_doc {
        pairs.extend(column.get(doc).iter().map(|&v| (v, doc)));
    }
    pairs.sort_unstable();
    let bits = doc_bits(max_doc);
    let mut leaves = Vec::with_capacity(pairs.len().div_ceil(LEAF));
    for leaf in pairs.chunks(LEAF) {
        let at = out.len();
        let (min, max) = (leaf[0].0, leaf[leaf.len() - 1].0);
        let width = bits_for(max.wrapping_sub(min) as u64);
        out.push(width as u8);
        pack(leaf.iter().map(|&(v, _)| v.wrapping_sub(min) as u64), width, out);
        pack(leaf.iter().map(|&(_, d)| u64::from(d)), bits, out);
        leaves.push(LeafEntry { offset: at, len: out.len() - at, count: leaf.len() as u32, min, max });
    }
    leaves
}

/// A leaf read: its packed values, values and documents (buffers reused from leaf to leaf).
#[derive(Default)]
struct Leaf {
    packed: Vec<u64>,
    values: Vec<i64>,
    docs: Vec<u64>,
}

/// A numeric column's points, read a leaf at a time.
#[derive(Clone)]
pub struct Points {
    file: FileSlice,
    leaves: Arc<[LeafEntry]>,
    max_doc: DocId,
    /// Every document has at most one value: a count of points is a count of documents.
    single_valued: bool,
}

impl Points {
    pub(super) fn new(
        file: FileSlice,
        leaves: Arc<[LeafEntry]>,
        max_doc: DocId,
        single_valued: bool,
    ) -> Self {
        Points { file, leaves, max_doc, single_valued }
    }

    /// Whether no document has two values (a count of points counts documents).
    pub fn single_valued(&self) -> bool {
        self.single_valued
    }

    /// The leaves holding values in `lower..=upper`: from the first whose
    /// largest is not below it to the last whose smallest is not above it.
    fn span(&self, lower: i64, upper: i64) -> std::ops::Range<usize> {
        let first = self.leaves.partition_point(|l| l.max < lower);
        let end = self.leaves.partition_point(|l| l.min <= upper);
        first..end.max(first)
    }

    /// An upper bound on the points in `lower..=upper`, from the directory alone.
    pub fn estimate(&self, lower: i64, upper: i64) -> u64 {
        self.leaves[self.span(lower, upper)].iter().map(|l| u64::from(l.count)).sum()
    }

    /// The points with a value in `lower..=upper`: leaves wholly inside
    /// counted from the directory, the others read. A failed read is
    /// recorded (`read_error`) and counts nothing.
    pub fn count(&self, lower: i64, upper: i64) -> u64 {
        let mut count = 0;
        for i in self.span(lower, upper) {
            let leaf = self.leaves[i];
            if lower <= leaf.min && leaf.max <= upper {
                count += u64::from(leaf.count);
                continue;
            }
            match self.leaf(i) {
                Ok((values, _)) => {
                    count += values.iter().filter(|&&v| lower <= v && v <= upper).count() as u64
                }
                Err(e) => read_error::record(e),
            }
        }
        count
    }

    /// Sets in `bits` (a bit per document of the segment) the documents
    /// with a value in `lower..=upper`. A failed read is recorded.
    pub fn docs(&self, lower: i64, upper: i64, bits: &mut [u64]) {
        let mut leaf = Leaf::default();
        for i in self.span(lower, upper) {
            let entry = self.leaves[i];
            // A leaf wholly inside: its documents alone are read.
            let whole = lower <= entry.min && entry.max <= upper;
            if let Err(e) = self.read_leaf(i, &mut leaf, !whole) {
                read_error::record(e);
                continue;
            }
            if whole {
                leaf.docs.iter().for_each(|&d| bits[d as usize / 64] |= 1 << (d % 64));
                continue;
            }
            for (&v, &d) in leaf.values.iter().zip(&leaf.docs) {
                if lower <= v && v <= upper {
                    bits[d as usize / 64] |= 1 << (d % 64);
                }
            }
        }
    }

    /// The pairs in all (one per document with a value, when single-valued).
    pub fn len(&self) -> u64 {
        self.leaves.iter().map(|l| u64::from(l.count)).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.leaves.is_empty()
    }

    /// The leaves, ascending by value.
    pub fn leaf_count(&self) -> usize {
        self.leaves.len()
    }

    /// The smallest and largest value of leaf `i` (from the directory).
    pub fn leaf_bounds(&self, i: usize) -> (i64, i64) {
        (self.leaves[i].min, self.leaves[i].max)
    }

    /// Leaf `i`'s (value, document) pairs, ascending, into `out` (cleared first).
    pub fn read_pairs(&self, i: usize, out: &mut Vec<(i64, DocId)>) -> Result<()> {
        let (values, docs) = self.leaf(i)?;
        out.clear();
        out.extend(values.into_iter().zip(docs).map(|(v, d)| (v, d as DocId)));
        Ok(())
    }

    /// Leaf `i`'s values and documents.
    fn leaf(&self, i: usize) -> Result<(Vec<i64>, Vec<u64>)> {
        let mut leaf = Leaf::default();
        self.read_leaf(i, &mut leaf, true)?;
        Ok((leaf.values, leaf.docs))
    }

    /// Reads leaf `i`'s documents into `leaf` (its buffers reused), and its
    /// values `with_values`, checked against its entry: values ascending
    /// from its min to its max, documents in the segment.
    fn read_leaf(&self, i: usize, leaf: &mut Leaf, with_values: bool) -> Result<()> {
        let e = self.leaves[i];
        let bytes = self.file.read(e.offset..e.offset + e.len)?;
        counters::record(DataKind::DocValues, &self.file, e.offset, e.len);
        let corrupt = |what: &str| Error::corrupt(self.file.name(), format!("points leaf {i}: {what}"));
        let (&width, rest) = bytes.split_first().ok_or_else(|| corrupt("empty"))?;
        let (width, n) = (u32::from(width), e.count as usize);
        if width > 64 {
            return Err(corrupt("value width out of range"));
        }
        let Leaf { packed, values, docs } = leaf;
        let used = (width as usize * n).div_ceil(8);
        if with_values {
            packed.clear();
            unpack(rest, width, n, packed).ok_or_else(|| corrupt("cut short"))?;
            values.clear();
            values.extend(packed.iter().map(|&p| e.min.wrapping_add(p as i64)));
            let ordered = values.windows(2).all(|w| w[0] <= w[1]);
            if !ordered || values.first() != Some(&e.min) || values.last() != Some(&e.max) {
                return Err(corrupt("values out of order or outside the leaf's bounds"));
            }
        }
        docs.clear();
        let doc_bytes = rest.get(used..).ok_or_else(|| corrupt("cut short"))?;
        unpack(doc_bytes, doc_bits(self.max_doc), n, docs).ok_or_else(|| corrupt("cut short"))?;
        if docs.iter().any(|&d| d >= u64::from(self.max_doc)) {
            return Err(corrupt("a document past the segment's end"));
        }
        Ok(())
    }

    /// Reads every leaf (what `check` does): an error names the damage.
    pub fn verify(&self) -> Result<u64> {
        let mut pairs = 0;
        for i in 0..self.leaves.len() {
            pairs += self.leaf(i)?.0.len() as u64;
        }
        Ok(pairs)
    }
}
