//! Doc values: each numeric or keyword field's values by document,
//! column-stride, so sorting, range filters and aggregations read a field's
//! values without touching the stored documents. One file per segment,
//! present when the segment has such fields (its meta names it under `files`):
//!
//! ```text
//! DocValuesFile := (Block* Dictionary? Points?)* Directory DirectoryLen:u32 Footer(kind "DVAL", version 4)
//! Block       := CountBits:u8 ValueBits:u8 Gcd:vint Counts Values
//! Counts      := Packed(CountBits, documents of the block)   each document's value count;
//!                                                           absent when CountBits = 0 (one value each)
//! Values      := Packed(ValueBits, values of the block)      each (value - Min) / Gcd, in document order
//! Packed(w,n) := ceil(w * n / 8) bytes; value i is bits w*i .. w*(i+1), least significant first
//! Dictionary  := TermCount:vint (Len:vint Bytes)^TermCount   a keyword column's terms, ascending bytes
//! Directory   := ColumnCount:vint Column^ColumnCount
//! Column      := Field:vint Kind:u8 BlockCount:vint Entry^BlockCount [DictOffset:vint DictLen:vint] [Leaves]
//! Entry       := Offset:vint Len:vint Docs:vint [Min:zigzag-vint Max:zigzag-vint]   (when Docs > 0)
//! ```
//!
//! A numeric column (version 4 on) ends with `Leaves`, the directory of
//! its points (`points.rs`: its values sorted, each with its document, in
//! leaves after its blocks): what counts a range, or finds a narrow one's
//! documents, without reading every block.
//! `Kind` 0 is numeric; 1 is keyword, whose values are ordinals into its
//! dictionary (the segment's distinct values in byte order, so ordinals sort
//! as the values do; a document's values are a set) and whose entry ends
//! with the dictionary's place; 2 is binary, whose blocks are an offset
//! index and bytes instead (see `binary.rs`). Version 1 files have no `Kind`
//! (all numeric); version 2 files have no binary columns.
//! A block covers [`BLOCK_DOCS`] documents (the last one the rest), so a
//! column has `ceil(max_doc / 1024)` entries; `Docs` counts the block's
//! documents with at least one value, and a block without any has no bytes
//! (`Len` 0). The entries' `Min`/`Max` are the skip index a range filter uses
//! to pass over whole blocks without reading them. A document's values are
//! kept ascending (Lucene's sorted-numeric doc values). Every value is an
//! `i64`: longs and dates (epoch milliseconds) as they are, booleans as 0/1,
//! doubles as [`double_to_sortable`] (so the order of the `i64`s is the
//! order of the doubles). Example: one numeric block of documents with
//! values `[5] [] [7 9]` is `02 02 02 | 21 | 24` and the entry `(0, 5, 2, 5, 9)`:
//! counts 1, 0, 2 in 2 bits each, then values 5, 7, 9 as 0, 1, 2 (min 5, gcd 2)
//! in 2 bits each.

use std::sync::{Arc, OnceLock};

pub use binary::{mem_binary, BinaryBuf, BinaryValues};
pub use keywords::{mem_keywords, sorted_keywords, Dictionary, KeywordValues, MemTerms, SortedKeywords};
pub use points::Points;

use needle_core::{read_error, DocId, Error, FieldId, Result};
use needle_storage::counters::{self, DataKind};
use needle_storage::{FileSlice, ReadBytes};

use crate::bytes::{write_vint, ByteReader};
use crate::footer;

mod binary;
mod keywords;
mod points;

pub const KIND: &[u8; 4] = b"DVAL";
pub const VERSION: u32 = 4;
/// Documents per block.
pub const BLOCK_DOCS: usize = 1024;

/// A double as an `i64` whose order is the doubles' (Lucene's
/// `NumericUtils.doubleToSortableLong`: -0.0 sorts before 0.0, NaN last).
pub fn double_to_sortable(f: f64) -> i64 {
    let bits = f.to_bits() as i64;
    bits ^ ((bits >> 63) & i64::MAX)
}

/// The inverse of [`double_to_sortable`].
pub fn sortable_to_double(v: i64) -> f64 {
    f64::from_bits((v ^ ((v >> 63) & i64::MAX)) as u64)
}

/// The values of up to [`BLOCK_DOCS`] consecutive documents.
#[derive(Debug, Clone)]
pub struct ValuesBlock {
    /// The values of the block's document `i` are `values[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    values: Vec<i64>,
    bounds: Option<(i64, i64)>,
    with_values: u32,
}

impl Default for ValuesBlock {
    fn default() -> Self {
        ValuesBlock { starts: vec![0], values: Vec::new(), bounds: None, with_values: 0 }
    }
}

impl ValuesBlock {
    /// Documents in the block (those after the last with values may be left out).
    pub fn docs(&self) -> usize {
        self.starts.len() - 1
    }

    /// Appends the next document's values (sorted here).
    pub fn push(&mut self, values: &[i64]) {
        let at = self.values.len();
        self.values.extend_from_slice(values);
        self.values[at..].sort_unstable();
        self.starts.push(self.values.len() as u32);
        if let (Some(&lo), Some(&hi)) = (self.values[at..].first(), self.values[at..].last()) {
            self.with_values += 1;
            self.bounds = Some(self.bounds.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        }
    }

    /// The values of the block's document `i`, ascending (none past its documents).
    pub fn doc(&self, i: usize) -> &[i64] {
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.values[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The smallest and largest value in the block.
    pub fn bounds(&self) -> Option<(i64, i64)> {
        self.bounds
    }

    /// The block's first `docs` documents, when it holds more.
    fn first(&self, docs: usize) -> Option<ValuesBlock> {
        (self.docs() > docs).then(|| {
            let mut block = ValuesBlock::default();
            (0..docs).for_each(|i| block.push(self.doc(i)));
            block
        })
    }

    fn encode(&self, docs: usize, out: &mut Vec<u8>) {
        let Some((min, _)) = self.bounds else { return };
        let counts: Vec<u64> = (0..docs).map(|i| self.doc(i).len() as u64).collect();
        let count_bits = match counts.iter().all(|&c| c == 1) {
            true => 0,
            false => bits_for(counts.iter().copied().max().unwrap_or(0)),
        };
        let diffs = || self.values.iter().map(|&v| v.wrapping_sub(min) as u64);
        let gcd = diffs().fold(0, gcd).max(1);
        let value_bits = bits_for(diffs().max().unwrap_or(0) / gcd);
        out.push(count_bits as u8);
        out.push(value_bits as u8);
        write_vint(out, gcd);
        pack(counts.into_iter(), count_bits, out);
        pack(diffs().map(|d| d / gcd), value_bits, out);
    }

    /// Decodes a block of `docs` documents of which `entry.docs` have values.
    fn decode(bytes: &[u8], docs: usize, entry: &BlockEntry, file: &str) -> Result<Self> {
        let mut block = ValuesBlock::default();
        let Some((min, max)) = entry.bounds else { return Ok(block) };
        let mut r = ByteReader::new(file, bytes);
        let (count_bits, value_bits) = (u32::from(r.u8()?), u32::from(r.u8()?));
        let gcd = r.vint()?;
        if count_bits > 32 || value_bits > 64 || gcd == 0 {
            return Err(r.corrupt("doc values block header out of range"));
        }
        let mut counts = Vec::with_capacity(docs);
        match count_bits {
            0 => counts.resize(docs, 1),
            w => {
                let used = unpack(&bytes[r.position()..], w, docs, &mut counts).ok_or_else(short(file))?;
                r.take(used)?;
            }
        }
        let total: u64 = counts.iter().sum();
        // Packed values take bytes, except all-equal ones: a bound keeps a damaged count from sizing memory.
        let fit = match value_bits {
            0 => (BLOCK_DOCS as u64) << 10,
            w => (r.remaining() as u64 * 8) / u64::from(w),
        };
        if total > fit || counts.iter().filter(|&&c| c > 0).count() != entry.docs as usize {
            return Err(r.corrupt("doc values block counts do not match its entry"));
        }
        let mut packed = Vec::with_capacity(total as usize);
        unpack(&bytes[r.position()..], value_bits, total as usize, &mut packed).ok_or_else(short(file))?;
        // Built in one pass (each document's values were written ascending).
        block.values = packed.into_iter().map(|d| min.wrapping_add(d.wrapping_mul(gcd) as i64)).collect();
        block.starts.reserve(docs);
        let mut at = 0u32;
        for &c in &counts {
            at += c as u32;
            block.starts.push(at);
        }
        block.with_values = entry.docs;
        let lo = block.values.iter().copied().min();
        block.bounds = lo.zip(block.values.iter().copied().max());
        if block.bounds != Some((min, max)) {
            return Err(Error::corrupt(file, "doc values block does not hold its entry's min and max"));
        }
        Ok(block)
    }
}

fn short(file: &str) -> impl Fn() -> Error + '_ {
    move || Error::corrupt(file, "doc values block cut short")
}

fn bits_for(v: u64) -> u32 {
    64 - v.leading_zeros()
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn pack(values: impl Iterator<Item = u64>, width: u32, out: &mut Vec<u8>) {
    if width == 0 {
        return;
    }
    let (mut acc, mut filled) = (0u128, 0u32);
    for v in values {
        acc |= u128::from(v) << filled;
        filled += width;
        while filled >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            filled -= 8;
        }
    }
    if filled > 0 {
        out.push(acc as u8);
    }
}

/// Appends `n` values of `width` bits from `bytes`; the bytes used, or
/// `None` when `bytes` is too short.
fn unpack(bytes: &[u8], width: u32, n: usize, out: &mut Vec<u64>) -> Option<usize> {
    if width == 0 {
        out.resize(out.len() + n, 0);
        return Some(0);
    }
    let need = (width as usize * n).div_ceil(8);
    let bytes = bytes.get(..need)?;
    let (w, mask) = (width as usize, if width == 64 { u64::MAX } else { (1u64 << width) - 1 });
    // A value is one unaligned 8-byte load while 8 bytes remain from its
    // first (widths up to 56); the last few are gathered byte by byte.
    let loads = match width <= 56 && need >= 8 {
        true => ((need - 8) * 8 / w + 1).min(n),
        false => 0,
    };
    out.reserve(n);
    out.extend((0..loads).map(|i| {
        let bit = i * w;
        let word = u64::from_le_bytes(*bytes[bit / 8..].first_chunk::<8>().expect("8 bytes remain"));
        (word >> (bit % 8)) & mask
    }));
    out.extend((loads..n).map(|i| {
        let bit = i * w;
        let span = (bit % 8 + w).div_ceil(8);
        let acc = bytes[bit / 8..bit / 8 + span].iter().rev().fold(0u128, |acc, &b| acc << 8 | u128::from(b));
        (acc >> (bit % 8)) as u64 & mask
    }));
    Some(need)
}

/// A numeric column being built or held in memory: its documents' values in
/// blocks, shared by `Arc` so a reader's copy of the column is a copy of
/// pointers and a writer copies only the block it changes.
#[derive(Debug, Clone, Default)]
pub struct ColumnBuf {
    blocks: Vec<Arc<ValuesBlock>>,
}

impl ColumnBuf {
    /// Sets the values of `doc`, which must come after every document set so
    /// far; the documents between have none.
    pub fn set(&mut self, doc: DocId, values: &[i64]) {
        let (b, i) = (doc as usize / BLOCK_DOCS, doc as usize % BLOCK_DOCS);
        if self.blocks.len() <= b {
            self.blocks.resize_with(b + 1, Arc::default);
        }
        let block = Arc::make_mut(&mut self.blocks[b]);
        while block.docs() < i {
            block.push(&[]);
        }
        block.push(values);
    }

    /// The values of `doc`, ascending.
    pub fn get(&self, doc: DocId) -> &[i64] {
        let (b, i) = (doc as usize / BLOCK_DOCS, doc as usize % BLOCK_DOCS);
        self.blocks.get(b).map_or(&[], |block| block.doc(i))
    }

    /// Approximate bytes held.
    pub fn memory(&self) -> usize {
        self.blocks.iter().map(|b| b.values.len() * 8 + b.starts.len() * 4).sum()
    }
}

/// The values of a run of documents read at once ([`NumericValues::fill`]):
/// what an aggregation reads a field through, a batch of matches at a time.
#[derive(Debug, Default)]
pub struct ValueBatch {
    /// Document `i`'s values are `values[starts[i]..starts[i + 1]]`; empty
    /// while every document has exactly one (then value `i` is document `i`'s).
    starts: Vec<u32>,
    values: Vec<i64>,
    docs: usize,
}

impl ValueBatch {
    pub fn clear(&mut self) {
        self.starts.clear();
        self.values.clear();
        self.docs = 0;
    }

    /// Appends the next documents' values, one each.
    #[inline]
    pub fn extend_ones(&mut self, values: impl ExactSizeIterator<Item = i64>) {
        match self.starts.is_empty() {
            true => {
                self.docs += values.len();
                self.values.extend(values);
            }
            false => values.for_each(|v| self.push(&[v])),
        }
    }

    /// Appends the next document's values.
    #[inline]
    pub fn push(&mut self, values: &[i64]) {
        if let ([v], true) = (values, self.starts.is_empty()) {
            self.values.push(*v);
        } else {
            if self.starts.is_empty() {
                // Every document so far had one value: document i's starts at i.
                self.starts.extend(0..self.docs as u32 + 1);
            }
            self.values.extend_from_slice(values);
            self.starts.push(self.values.len() as u32);
        }
        self.docs += 1;
    }

    /// Documents in the batch.
    pub fn len(&self) -> usize {
        self.docs
    }

    pub fn is_empty(&self) -> bool {
        self.docs == 0
    }

    /// Each document's value, when every document has exactly one.
    pub fn singles(&self) -> Option<&[i64]> {
        self.starts.is_empty().then_some(&self.values)
    }

    /// The values of the batch's document `i`.
    #[inline]
    pub fn doc(&self, i: usize) -> &[i64] {
        match self.starts.is_empty() {
            true => &self.values[i..i + 1],
            false => &self.values[self.starts[i] as usize..self.starts[i + 1] as usize],
        }
    }

    /// Every value of the batch, document after document.
    pub fn all(&self) -> &[i64] {
        &self.values
    }

    /// Gives each document without a value the one value `v`.
    pub fn fill_empty(&mut self, v: i64) {
        if self.starts.is_empty() || self.starts.windows(2).all(|w| w[0] < w[1]) {
            return; // every document has a value
        }
        let (starts, values) = (std::mem::take(&mut self.starts), std::mem::take(&mut self.values));
        self.docs = 0;
        for w in starts.windows(2) {
            match &values[w[0] as usize..w[1] as usize] {
                [] => self.push(&[v]),
                own => self.push(own),
            }
        }
    }
}

/// A bit per document of a block.
pub type BlockBits = [u64; BLOCK_DOCS / 64];

/// What a search reads a numeric column through, in memory or on disk.
/// A failed read records its error (see `needle_core::read_error`) and gives no values.
pub trait NumericValues {
    /// The values of `doc`, ascending; empty when it has none.
    fn values(&mut self, doc: DocId) -> &[i64];
    /// The values of each of `docs` (ascending), into `out` (cleared first).
    fn fill(&mut self, docs: &[DocId], out: &mut ValueBatch) {
        out.clear();
        for &doc in docs {
            out.push(self.values(doc));
        }
    }
    /// Sets `bits` to the documents of the block holding `doc` (a bit each,
    /// from the block's first document) with a value in `lower..=upper`.
    fn block_in_range(&mut self, doc: DocId, lower: i64, upper: i64, bits: &mut BlockBits) {
        let first = doc - doc % BLOCK_DOCS as DocId;
        let (last, _) = self.block_bounds(doc);
        *bits = [0; BLOCK_DOCS / 64];
        for (i, d) in (first..=last).enumerate() {
            let inside = self.values(d).iter().any(|&v| lower <= v && v <= upper);
            bits[i / 64] |= u64::from(inside) << (i % 64);
        }
    }
    /// The last document of the block holding `doc`, and the smallest and
    /// largest value in that block (`None`: no document there has one).
    fn block_bounds(&self, doc: DocId) -> (DocId, Option<(i64, i64)>);
    /// Whether every document of the block holding `doc` has a value.
    fn block_is_dense(&self, doc: DocId) -> bool;
}

/// Where a [`Cursor`] gets its blocks.
trait BlockSource {
    fn block(&self, b: usize) -> Result<CursorBlock>;
    fn bounds(&self, b: usize) -> Option<(i64, i64)>;
    /// Documents of block `b` with a value.
    fn with_values(&self, b: usize) -> usize;
    fn max_doc(&self) -> DocId;
}

/// A block as a [`Cursor`] holds it: decoded, or, when every document has
/// one value, its packed bytes, each value read in place when asked for (a
/// search that needs a few values of a block does not decode all 1,024).
enum CursorBlock {
    Decoded(Arc<ValuesBlock>),
    Packed(PackedBlock),
}

/// A block of one value a document: value `i` is `Min + Gcd * bits w*i .. w*(i+1)`.
struct PackedBlock {
    bytes: ReadBytes,
    /// Where the packed values start in `bytes`.
    start: usize,
    width: u32,
    min: i64,
    gcd: u64,
}

impl PackedBlock {
    /// Widths up to this are read with one unaligned 8-byte load; wider
    /// ones (doubles spanning exponents) with a 16-byte one.
    const LOAD8_WIDTH: u32 = 56;

    /// The packed block in `bytes` when its documents have one value each
    /// (`None`: decode it whole).
    fn of(bytes: ReadBytes, docs: usize, entry: &BlockEntry, file: &str) -> Result<Option<PackedBlock>> {
        let Some((min, _)) = entry.bounds else { return Ok(None) };
        let mut r = ByteReader::new(file, &bytes);
        let (count_bits, width) = (u32::from(r.u8()?), u32::from(r.u8()?));
        let gcd = r.vint()?;
        let start = r.position();
        let fits = (width as usize * docs).div_ceil(8) <= r.remaining();
        let dense = count_bits == 0 && entry.docs as usize == docs;
        Ok((dense && fits && width <= 64 && gcd > 0).then_some(PackedBlock { bytes, start, width, min, gcd }))
    }

    fn value(&self, i: usize) -> i64 {
        self.value_in(&self.bytes, i)
    }

    /// Appends the values of `docs` (ascending, all in this block) to `out`.
    fn read_run(&self, docs: &[DocId], out: &mut ValueBatch) {
        if self.width == 0 {
            // Every document has the block's smallest value (a column of one value).
            return out.extend_ones(docs.iter().map(|_| self.min));
        }
        let bytes: &[u8] = &self.bytes;
        let width = self.width as usize;
        // The documents whose value is one load within the bytes (all but
        // the last few of a block), read without testing anything else per
        // value: 8 bytes, or 16 for a value wider than 56 bits (a double).
        let wide = self.width > Self::LOAD8_WIDTH;
        let load = if wide { 16 } else { 8 };
        let loads = docs
            .partition_point(|&d| self.start + (d as usize % BLOCK_DOCS) * width / 8 + load <= bytes.len());
        let (fast, rest) = docs.split_at(loads);
        let (mask, start, min, gcd) = (self.mask(), self.start, self.min, self.gcd);
        // Value `i` of the block. `move`: the block's figures captured by
        // reference would be reloaded for each value.
        let value = move |i: usize| {
            let bit = i * width;
            let at = start + bit / 8;
            let word = match wide {
                false => u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes")) >> (bit % 8),
                true => {
                    (u128::from_le_bytes(bytes[at..at + 16].try_into().expect("16 bytes")) >> (bit % 8))
                        as u64
                }
            };
            scale(min, gcd, word & mask)
        };
        match (fast.first(), fast.last()) {
            // A run of consecutive documents (a query matching all of them): no document read.
            (Some(&first), Some(&last)) if (last - first) as usize + 1 == fast.len() => {
                let first = first as usize % BLOCK_DOCS;
                out.extend_ones((first..first + fast.len()).map(value));
            }
            _ => out.extend_ones(fast.iter().map(|&d| value(d as usize % BLOCK_DOCS))),
        }
        out.extend_ones(rest.iter().map(|&d| self.value_in(bytes, d as usize % BLOCK_DOCS)));
    }

    /// Sets in `bits` the first `n` documents whose value is in
    /// `lower..=upper`, compared in the packed domain (`Min + Gcd * p` is in
    /// the range exactly when `p` is in the range mapped back), without
    /// scaling a value.
    fn in_range(&self, n: usize, lower: i64, upper: i64, bits: &mut BlockBits) {
        let (min, gcd) = (i128::from(self.min), i128::from(self.gcd));
        let hi = i128::from(upper) - min;
        if hi < 0 {
            return;
        }
        let hi = (hi / gcd).min(i128::from(self.mask()));
        let lo = ((i128::from(lower) - min).max(0) + gcd - 1) / gcd;
        if lo > hi {
            return;
        }
        let (lo, span) = (lo as u64, (hi - lo) as u64);
        let inside = |p: u64| u64::from(p.wrapping_sub(lo) <= span);
        let bytes: &[u8] = &self.bytes;
        let width = self.width as usize;
        let loads = match (self.width, self.width <= Self::LOAD8_WIDTH) {
            (0, _) | (_, false) => 0,
            _ if bytes.len() < self.start + 8 => 0,
            _ => ((bytes.len() - self.start - 8) * 8 / width + 1).min(n),
        };
        let (mask, packed) = (self.mask(), &bytes[self.start..]);
        // 64 documents at a time into a word of bits, stored once.
        for (w, out) in bits.iter_mut().enumerate().take(loads.div_ceil(64)) {
            let mut word = 0u64;
            for i in w * 64..(w * 64 + 64).min(loads) {
                let bit = i * width;
                let load = u64::from_le_bytes(*packed[bit / 8..].first_chunk::<8>().expect("8 bytes"));
                word |= inside((load >> (bit % 8)) & mask) << (i % 64);
            }
            *out |= word;
        }
        for i in loads..n {
            let p = match self.width {
                0 => 0,
                _ => (self.value_in(bytes, i).wrapping_sub(self.min) as u64) / self.gcd,
            };
            bits[i / 64] |= inside(p) << (i % 64);
        }
    }

    /// Value `i`, from the block's bytes already at hand (`bytes` is `self.bytes`).
    #[inline]
    fn value_in(&self, bytes: &[u8], i: usize) -> i64 {
        let bit = i * self.width as usize;
        let at = &bytes[self.start + bit / 8..];
        let word = match (at.first_chunk::<8>(), at.first_chunk::<16>()) {
            (Some(word), _) if self.width <= Self::LOAD8_WIDTH => u64::from_le_bytes(*word) >> (bit % 8),
            (_, Some(word)) => (u128::from_le_bytes(*word) >> (bit % 8)) as u64,
            // The block's last bytes.
            _ => {
                let mut word = [0u8; 16];
                let n = at.len().min(16);
                word[..n].copy_from_slice(&at[..n]);
                (u128::from_le_bytes(word) >> (bit % 8)) as u64
            }
        };
        self.scaled(word & self.mask())
    }

    /// The low `width` bits.
    #[inline]
    fn mask(&self) -> u64 {
        u64::MAX.checked_shr(64 - self.width).unwrap_or(0)
    }

    #[inline]
    fn scaled(&self, packed: u64) -> i64 {
        scale(self.min, self.gcd, packed)
    }
}

/// The value a packed number stands for: `Min + Gcd * packed`.
#[inline(always)]
fn scale(min: i64, gcd: u64, packed: u64) -> i64 {
    min.wrapping_add(packed.wrapping_mul(gcd) as i64)
}

/// A column read in (mostly) ascending document order: the block last used is kept.
struct Cursor<S> {
    source: S,
    at: Option<(usize, CursorBlock)>,
    /// The value last read from a packed block.
    one: [i64; 1],
}

impl<S> Cursor<S> {
    fn new(source: S) -> Self {
        Cursor { source, at: None, one: [0] }
    }
}

impl<S: BlockSource> Cursor<S> {
    /// Block `b`, read unless it is the one kept; `None` when it fails to
    /// read (the error recorded).
    fn load(&mut self, b: usize) -> Option<&CursorBlock> {
        if self.at.as_ref().is_none_or(|(at, _)| *at != b) {
            match self.source.block(b) {
                Ok(block) => self.at = Some((b, block)),
                Err(e) => {
                    read_error::record(e);
                    self.at = None;
                }
            }
        }
        self.at.as_ref().map(|(_, block)| block)
    }
}

impl<S: BlockSource> NumericValues for Cursor<S> {
    fn values(&mut self, doc: DocId) -> &[i64] {
        let (b, i) = (doc as usize / BLOCK_DOCS, doc as usize % BLOCK_DOCS);
        if doc >= self.source.max_doc() {
            return &[];
        }
        let one = match self.load(b) {
            Some(CursorBlock::Packed(block)) => block.value(i),
            _ => {
                return match &self.at {
                    Some((_, CursorBlock::Decoded(block))) => block.doc(i),
                    _ => &[],
                }
            }
        };
        self.one = [one];
        &self.one
    }

    fn fill(&mut self, docs: &[DocId], out: &mut ValueBatch) {
        out.clear();
        let max_doc = self.source.max_doc();
        let mut rest = docs;
        while let Some(&doc) = rest.first() {
            if doc >= max_doc {
                rest.iter().for_each(|_| out.push(&[]));
                return;
            }
            // The run of documents in `doc`'s block, read from it without looking it up again.
            let b = doc as usize / BLOCK_DOCS;
            let end = ((b + 1) * BLOCK_DOCS).min(max_doc as usize);
            let (run, after) = rest.split_at(rest.partition_point(|&d| (d as usize) < end));
            rest = after;
            match self.load(b) {
                Some(CursorBlock::Packed(block)) => block.read_run(run, out),
                Some(CursorBlock::Decoded(block)) => {
                    run.iter().for_each(|&d| out.push(block.doc(d as usize % BLOCK_DOCS)))
                }
                None => run.iter().for_each(|_| out.push(&[])),
            }
        }
    }

    fn block_in_range(&mut self, doc: DocId, lower: i64, upper: i64, bits: &mut BlockBits) {
        *bits = [0; BLOCK_DOCS / 64];
        let b = doc as usize / BLOCK_DOCS;
        let n = (self.source.max_doc() as usize).saturating_sub(b * BLOCK_DOCS).min(BLOCK_DOCS);
        match self.load(b) {
            Some(CursorBlock::Packed(block)) => block.in_range(n, lower, upper, bits),
            Some(CursorBlock::Decoded(block)) => (0..n).for_each(|i| {
                let inside = block.doc(i).iter().any(|&v| lower <= v && v <= upper);
                bits[i / 64] |= u64::from(inside) << (i % 64);
            }),
            None => {}
        }
    }

    fn block_bounds(&self, doc: DocId) -> (DocId, Option<(i64, i64)>) {
        let b = doc as usize / BLOCK_DOCS;
        let end = ((b + 1) * BLOCK_DOCS).min(self.source.max_doc() as usize) as DocId;
        (end.saturating_sub(1).max(doc), self.source.bounds(b))
    }

    fn block_is_dense(&self, doc: DocId) -> bool {
        let b = doc as usize / BLOCK_DOCS;
        let docs = (self.source.max_doc() as usize).saturating_sub(b * BLOCK_DOCS).min(BLOCK_DOCS);
        docs > 0 && self.source.with_values(b) == docs
    }
}

/// An in-memory column as of a reader's view.
struct MemSource {
    column: ColumnBuf,
    max_doc: DocId,
}

impl BlockSource for MemSource {
    fn block(&self, b: usize) -> Result<CursorBlock> {
        Ok(CursorBlock::Decoded(self.column.blocks.get(b).cloned().unwrap_or_default()))
    }
    fn bounds(&self, b: usize) -> Option<(i64, i64)> {
        self.column.blocks.get(b)?.bounds()
    }
    fn with_values(&self, b: usize) -> usize {
        // Documents past the view's end are not counted (the writer may have added them since).
        let end = (self.max_doc as usize).saturating_sub(b * BLOCK_DOCS).min(BLOCK_DOCS);
        self.column.blocks.get(b).map_or(0, |block| match block.docs() <= end {
            true => block.with_values as usize,
            false => (0..end).filter(|&i| !block.doc(i).is_empty()).count(),
        })
    }
    fn max_doc(&self) -> DocId {
        self.max_doc
    }
}

/// Reads `column` (a view's copy) as the first `max_doc` documents.
pub fn mem_values(column: ColumnBuf, max_doc: DocId) -> Box<dyn NumericValues + Send> {
    Box::new(Cursor::new(MemSource { column, max_doc }))
}

/// A column to write: numbers, keywords (ordinals into their sorted dictionary), or byte strings.
pub enum ColumnRef<'a> {
    Numeric(&'a ColumnBuf),
    Keyword { ords: &'a ColumnBuf, terms: &'a [Arc<[u8]>] },
    Binary(&'a BinaryBuf),
}

/// Writes the doc values file: `columns` in field order, for `max_doc` documents.
pub fn encode_file(columns: &[(FieldId, ColumnRef<'_>)], max_doc: DocId) -> Vec<u8> {
    let mut out = Vec::new();
    let mut directory = Vec::new();
    write_vint(&mut directory, columns.len() as u64);
    for (field, column) in columns {
        write_vint(&mut directory, u64::from(*field));
        let kind = match column {
            ColumnRef::Numeric(_) => NUMERIC,
            ColumnRef::Keyword { .. } => KEYWORD,
            ColumnRef::Binary(_) => BINARY,
        };
        directory.push(kind);
        let blocks = (max_doc as usize).div_ceil(BLOCK_DOCS);
        write_vint(&mut directory, blocks as u64);
        for b in 0..blocks {
            let docs = (max_doc as usize - b * BLOCK_DOCS).min(BLOCK_DOCS);
            let at = out.len();
            let (with_values, bounds) = match column {
                ColumnRef::Numeric(c) | ColumnRef::Keyword { ords: c, .. } => {
                    encode_block(c, b, docs, &mut out)
                }
                ColumnRef::Binary(c) => match c.blocks.get(b) {
                    Some(block) => {
                        block.encode(docs, &mut out);
                        (block.with_values(docs), block.bounds(docs))
                    }
                    None => (0, None),
                },
            };
            write_vint(&mut directory, at as u64);
            write_vint(&mut directory, (out.len() - at) as u64);
            write_vint(&mut directory, u64::from(with_values));
            if let Some((min, max)) = bounds {
                write_vint(&mut directory, zigzag(min));
                write_vint(&mut directory, zigzag(max));
            }
        }
        if let ColumnRef::Keyword { terms, .. } = column {
            let at = out.len();
            keywords::encode_dictionary(terms, &mut out);
            write_vint(&mut directory, at as u64);
            write_vint(&mut directory, (out.len() - at) as u64);
        }
        if let ColumnRef::Numeric(c) = column {
            let leaves = points::encode(c, max_doc, &mut out);
            write_vint(&mut directory, leaves.len() as u64);
            for l in leaves {
                for n in [l.offset as u64, l.len as u64, u64::from(l.count), zigzag(l.min), zigzag(l.max)] {
                    write_vint(&mut directory, n);
                }
            }
        }
    }
    let len = directory.len() as u32;
    out.extend_from_slice(&directory);
    out.extend_from_slice(&len.to_le_bytes());
    footer::append(&mut out, KIND, VERSION);
    out
}

/// Appends block `b` of a numeric column (its first `docs` documents); the
/// documents with values and their bounds.
fn encode_block(column: &ColumnBuf, b: usize, docs: usize, out: &mut Vec<u8>) -> (u32, Option<(i64, i64)>) {
    let empty = ValuesBlock::default();
    let block = column.blocks.get(b).map_or(&empty, |b| b);
    // A column may hold documents past `max_doc` (added after a view was taken): left out.
    let first = block.first(docs);
    let block = first.as_ref().unwrap_or(block);
    block.encode(docs, out);
    (block.with_values, block.bounds)
}

const NUMERIC: u8 = 0;
const KEYWORD: u8 = 1;
const BINARY: u8 = 2;

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[derive(Debug, Clone, Copy)]
struct BlockEntry {
    offset: usize,
    len: usize,
    docs: u32,
    bounds: Option<(i64, i64)>,
}

/// A column's place in the file: its blocks, and a keyword column's dictionary.
struct Column {
    field: FieldId,
    kind: u8,
    entries: Arc<[BlockEntry]>,
    dictionary: Option<(usize, usize)>,
    loaded: OnceLock<Arc<Dictionary>>,
    /// A numeric column's points' leaves, and whether no document has two values.
    points: Option<(Arc<[points::LeafEntry]>, bool)>,
}

/// An opened doc values file: its directory in memory, blocks read when used,
/// a keyword column's dictionary read when first used.
pub struct DocValuesReader {
    file: FileSlice,
    columns: Vec<Column>,
    max_doc: DocId,
}

impl DocValuesReader {
    /// Opens the body of a doc values file of `version` (its footer checked by the caller).
    pub fn open(file: FileSlice, max_doc: DocId, version: u32) -> Result<Self> {
        let name = file.name().to_string();
        let corrupt = |what: &str| Error::corrupt(&name, what.to_string());
        let len = file.len();
        if len < 4 {
            return Err(corrupt("doc values file too short for its directory"));
        }
        let dir_len = u32::from_le_bytes(file.read(len - 4..len)?[..].try_into().expect("4 bytes")) as usize;
        let dir_start =
            (len - 4).checked_sub(dir_len).ok_or_else(|| corrupt("directory longer than the file"))?;
        let bytes = file.read(dir_start..len - 4)?;
        let mut r = ByteReader::at(&name, &bytes, dir_start as u64);
        let blocks = (max_doc as usize).div_ceil(BLOCK_DOCS);
        let mut columns: Vec<Column> = Vec::new();
        let within = |offset: usize, len: usize| offset.checked_add(len).is_some_and(|end| end <= dir_start);
        for _ in 0..r.vint()? {
            let field = FieldId::try_from(r.vint()?).map_err(|_| corrupt("field number out of range"))?;
            let kind = if version >= 2 { r.u8()? } else { NUMERIC };
            let known = if version >= 3 { BINARY } else { KEYWORD };
            if columns.iter().any(|c| c.field == field) || kind > known || r.vint()? != blocks as u64 {
                return Err(corrupt(
                    "a column is listed twice, of an unknown kind, or has the wrong number of blocks",
                ));
            }
            let mut entries = Vec::with_capacity(blocks);
            for _ in 0..blocks {
                let (offset, len, docs) = (r.vint()? as usize, r.vint()? as usize, r.vint_u32()?);
                let bounds = match docs {
                    0 => None,
                    _ => Some((unzigzag(r.vint()?), unzigzag(r.vint()?))),
                };
                if !within(offset, len) || docs as usize > BLOCK_DOCS || bounds.is_some_and(|(a, b)| a > b) {
                    return Err(corrupt("a block entry lies past the blocks or is out of range"));
                }
                entries.push(BlockEntry { offset, len, docs, bounds });
            }
            let dictionary = match kind {
                KEYWORD => {
                    let (offset, len) = (r.vint()? as usize, r.vint()? as usize);
                    if !within(offset, len) {
                        return Err(corrupt("a keyword dictionary lies past the blocks"));
                    }
                    Some((offset, len))
                }
                _ => None,
            };
            let points = match (kind, version >= 4) {
                (NUMERIC, true) => {
                    let with_values: u64 = entries.iter().map(|e| u64::from(e.docs)).sum();
                    Some(read_leaves(&mut r, dir_start, with_values, &name)?)
                }
                _ => None,
            };
            columns.push(Column {
                field,
                kind,
                entries: entries.into(),
                dictionary,
                loaded: OnceLock::new(),
                points,
            });
        }
        if r.remaining() > 0 {
            return Err(corrupt("bytes after the directory's last column"));
        }
        Ok(DocValuesReader { file, columns, max_doc })
    }

    /// The file's body size in bytes.
    pub fn byte_len(&self) -> usize {
        self.file.len()
    }

    /// The fields with a column.
    pub fn fields(&self) -> impl Iterator<Item = FieldId> + '_ {
        self.columns.iter().map(|c| c.field)
    }

    /// Whether `field`'s column holds keywords.
    pub fn is_keyword(&self, field: FieldId) -> bool {
        self.column_of(field).is_some_and(|c| c.kind == KEYWORD)
    }

    /// Whether `field`'s column holds byte strings.
    pub fn is_binary(&self, field: FieldId) -> bool {
        self.column_of(field).is_some_and(|c| c.kind == BINARY)
    }

    fn column_of(&self, field: FieldId) -> Option<&Column> {
        self.columns.iter().find(|c| c.field == field)
    }

    fn source(&self, column: &Column) -> DiskSource {
        DiskSource { file: self.file.clone(), entries: column.entries.clone(), max_doc: self.max_doc }
    }

    /// The numeric column of `field`, read as needed.
    pub fn values(&self, field: FieldId) -> Option<Box<dyn NumericValues + Send>> {
        let column = self.column_of(field).filter(|c| c.kind == NUMERIC)?;
        Some(Box::new(Cursor::new(self.source(column))))
    }

    /// The points of `field`'s numeric column (files of version 4 on).
    pub fn points(&self, field: FieldId) -> Option<Points> {
        let (leaves, single_valued) = self.column_of(field)?.points.clone()?;
        Some(Points::new(self.file.clone(), leaves, self.max_doc, single_valued))
    }

    /// The binary column of `field`, read as needed.
    pub fn binary(&self, field: FieldId) -> Option<Box<dyn BinaryValues + Send>> {
        self.binary_source(field).map(|s| Box::new(s) as Box<dyn BinaryValues + Send>)
    }

    fn binary_source(&self, field: FieldId) -> Option<binary::DiskBinary> {
        let column = self.column_of(field).filter(|c| c.kind == BINARY)?;
        let (file, entries, max_doc) = (self.file.clone(), column.entries.clone(), self.max_doc);
        Some(binary::DiskBinary { file, entries, max_doc, at: None })
    }

    /// The keyword column of `field`, its dictionary read whole the first time.
    pub fn keywords(&self, field: FieldId) -> Result<Option<Box<dyn KeywordValues + Send>>> {
        let Some(column) = self.column_of(field) else { return Ok(None) };
        let Some((offset, len)) = column.dictionary else { return Ok(None) };
        let dictionary = match column.loaded.get() {
            Some(d) => d.clone(),
            None => {
                let bytes = self.file.read(offset..offset + len)?;
                counters::record(DataKind::DocValues, &self.file, offset, len);
                let d = Arc::new(keywords::decode_dictionary(&bytes, self.file.name())?);
                column.loaded.get_or_init(|| d).clone()
            }
        };
        let ords = Cursor::new(self.source(column));
        Ok(Some(Box::new(keywords::DiskKeywords { ords, dictionary })))
    }

    /// Decodes every block of `field`'s column (and a keyword column's
    /// dictionary): an error names what is damaged.
    pub fn verify(&self, field: FieldId) -> Result<()> {
        match self.binary_source(field) {
            Some(source) => (0..source.entries.len()).try_for_each(|b| source.block(b).map(drop)),
            None => {
                self.keywords(field)?;
                let column = self.column(field)?;
                if let Some(points) = self.points(field) {
                    let values: usize = (0..self.max_doc).map(|d| column.get(d).len()).sum();
                    if points.verify()? != values as u64 {
                        let what = format!("the points of field {field} are not its values");
                        return Err(Error::corrupt(self.file.name(), what));
                    }
                }
                Ok(())
            }
        }
    }

    /// The whole numeric column (or a keyword column's ordinals) of `field`, decoded (for merges).
    pub fn column(&self, field: FieldId) -> Result<ColumnBuf> {
        let Some(column) = self.column_of(field).filter(|c| c.kind != BINARY) else {
            return Ok(ColumnBuf::default());
        };
        let source = self.source(column);
        let blocks = (0..column.entries.len()).map(|b| source.decoded(b)).collect::<Result<_>>()?;
        Ok(ColumnBuf { blocks })
    }
}

/// A numeric column's points directory (see `points.rs`), checked: leaves
/// within the blocks' bytes, of at most `LEAF` pairs, in ascending order,
/// at least as many pairs as documents with a value (`with_values`, equal
/// when no document has two).
fn read_leaves(
    r: &mut ByteReader<'_>,
    dir_start: usize,
    with_values: u64,
    name: &str,
) -> Result<(Arc<[points::LeafEntry]>, bool)> {
    let corrupt = |what: &str| Error::corrupt(name, format!("points directory: {what}"));
    let n = r.vint()?;
    let mut leaves: Vec<points::LeafEntry> = Vec::new();
    let mut pairs = 0u64;
    for _ in 0..n {
        let (offset, len, count) = (r.vint()? as usize, r.vint()? as usize, r.vint_u32()?);
        let (min, max) = (unzigzag(r.vint()?), unzigzag(r.vint()?));
        let within = offset.checked_add(len).is_some_and(|end| end <= dir_start);
        let after = leaves.last().is_none_or(|l| l.max <= min);
        if !within || count == 0 || count as usize > points::LEAF || min > max || !after {
            return Err(corrupt("a leaf out of range or out of order"));
        }
        pairs += u64::from(count);
        leaves.push(points::LeafEntry { offset, len, count, min, max });
    }
    if pairs < with_values {
        return Err(corrupt("fewer points than documents with a value"));
    }
    Ok((leaves.into(), pairs == with_values))
}

struct DiskSource {
    file: FileSlice,
    entries: Arc<[BlockEntry]>,
    max_doc: DocId,
}

impl DiskSource {
    /// Block `b`'s bytes and documents (`None`: no document there has a value).
    fn read(&self, b: usize) -> Result<Option<(ReadBytes, usize, &BlockEntry)>> {
        let Some(e) = self.entries.get(b).filter(|e| e.docs > 0) else { return Ok(None) };
        let bytes = self.file.read(e.offset..e.offset + e.len)?;
        counters::record(DataKind::DocValues, &self.file, e.offset, e.len);
        let docs = (self.max_doc as usize - b * BLOCK_DOCS).min(BLOCK_DOCS);
        Ok(Some((bytes, docs, e)))
    }

    /// Block `b` decoded whole (its counts and bounds checked against its entry).
    fn decoded(&self, b: usize) -> Result<Arc<ValuesBlock>> {
        match self.read(b)? {
            Some((bytes, docs, e)) => ValuesBlock::decode(&bytes, docs, e, self.file.name()).map(Arc::new),
            None => Ok(Arc::default()),
        }
    }
}

impl BlockSource for DiskSource {
    fn block(&self, b: usize) -> Result<CursorBlock> {
        let Some((bytes, docs, e)) = self.read(b)? else { return Ok(CursorBlock::Decoded(Arc::default())) };
        match PackedBlock::of(bytes.clone(), docs, e, self.file.name())? {
            Some(packed) => Ok(CursorBlock::Packed(packed)),
            None => ValuesBlock::decode(&bytes, docs, e, self.file.name())
                .map(|d| CursorBlock::Decoded(Arc::new(d))),
        }
    }
    fn bounds(&self, b: usize) -> Option<(i64, i64)> {
        self.entries.get(b)?.bounds
    }
    fn with_values(&self, b: usize) -> usize {
        self.entries.get(b).map_or(0, |e| e.docs as usize)
    }
    fn max_doc(&self) -> DocId {
        self.max_doc
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn column(docs: &[Vec<i64>]) -> ColumnBuf {
        let mut c = ColumnBuf::default();
        for (d, values) in docs.iter().enumerate() {
            if !values.is_empty() {
                c.set(d as DocId, values);
            }
        }
        c
    }

    fn reopened(docs: &[Vec<i64>]) -> DocValuesReader {
        let bytes = encode_file(&[(3, ColumnRef::Numeric(&column(docs)))], docs.len() as DocId);
        let (len, _) = footer::verify("f.dv", &bytes, KIND, VERSION).unwrap();
        DocValuesReader::open(
            FileSlice::from_vec("f.dv", bytes[..len].to_vec()),
            docs.len() as DocId,
            VERSION,
        )
        .unwrap()
    }

    fn values_strategy() -> impl Strategy<Value = Vec<Vec<i64>>> {
        let value = prop_oneof![any::<i64>(), -5i64..5, (0i64..100).prop_map(|v| v * 1000)];
        proptest::collection::vec(proptest::collection::vec(value, 0..4), 0..3000)
    }

    proptest! {
        /// Unpacking gives back what was packed at every width, and refuses
        /// bytes cut short.
        #[test]
        fn packed_values_round_trip(
            width in 0u32..=64,
            raw in proptest::collection::vec(any::<u64>(), 0..300),
            lead in proptest::collection::vec(any::<u64>(), 0..3),
        ) {
            let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
            let values: Vec<u64> = raw.iter().map(|v| v & mask).collect();
            let mut bytes = Vec::new();
            pack(values.iter().copied(), width, &mut bytes);
            let mut out = lead.clone();
            prop_assert_eq!(unpack(&bytes, width, values.len(), &mut out), Some(bytes.len()));
            prop_assert_eq!(&out[..lead.len()], &lead[..]);
            prop_assert_eq!(&out[lead.len()..], &values[..]);
            if let Some(short) = bytes.len().checked_sub(1) {
                prop_assert_eq!(unpack(&bytes[..short], width, values.len(), &mut Vec::new()), None);
            }
        }

        #[test]
        fn columns_round_trip(docs in values_strategy()) {
            let reader = reopened(&docs);
            let mut values = reader.values(3).unwrap();
            for (d, want) in docs.iter().enumerate() {
                let mut want = want.clone();
                want.sort_unstable();
                prop_assert_eq!(values.values(d as DocId), &want[..]);
                let (end, bounds) = values.block_bounds(d as DocId);
                prop_assert_eq!(end as usize, ((d / BLOCK_DOCS + 1) * BLOCK_DOCS).min(docs.len()) - 1);
                let block = &docs[d / BLOCK_DOCS * BLOCK_DOCS..=end as usize];
                let all = block.iter().flatten();
                prop_assert_eq!(bounds, all.clone().min().copied().zip(all.max().copied()));
            }
            prop_assert!(reader.values(4).is_none());
        }

        /// A batch read gives each document the values a read of that document
        /// gives: packed and decoded blocks, documents skipped, past the end.
        #[test]
        fn batches_read_what_documents_read(
            docs in values_strategy(),
            single in any::<bool>(),
            picks in proptest::collection::vec(any::<bool>(), 0..3100),
            cuts in proptest::collection::vec(1usize..2000, 1..4),
        ) {
            let docs: Vec<Vec<i64>> = match single {
                true => docs.into_iter().enumerate().map(|(d, v)| vec![v.first().copied().unwrap_or(d as i64)]).collect(),
                false => docs,
            };
            let reader = reopened(&docs);
            let mut batched = reader.values(3).unwrap();
            let mut one_by_one = reader.values(3).unwrap();
            let chosen: Vec<DocId> = (0..picks.len()).filter(|&d| picks[d]).map(|d| d as DocId).collect();
            let mut out = ValueBatch::default();
            let mut rest = &chosen[..];
            for cut in cuts.iter().cycle().take(64) {
                let (batch, after) = rest.split_at((*cut).min(rest.len()));
                batched.fill(batch, &mut out);
                prop_assert_eq!(out.len(), batch.len());
                let mut all = Vec::new();
                for (i, &d) in batch.iter().enumerate() {
                    prop_assert_eq!(out.doc(i), one_by_one.values(d), "document {}", d);
                    all.extend_from_slice(one_by_one.values(d));
                }
                prop_assert_eq!(out.all(), &all[..]);
                prop_assert_eq!(out.singles().is_some(), batch.iter().all(|&d| one_by_one.values(d).len() == 1));
                rest = after;
            }
        }

        /// One value a document (the packed blocks read in place), of every
        /// width up to 64 bits, read ascending and then in a random order.
        #[test]
        fn single_values_round_trip(
            bits in 0u32..=64,
            seeds in proptest::collection::vec(any::<u64>(), 1..2600),
            base in any::<i64>(),
            gcd in prop_oneof![Just(1i64), 1i64..1000],
            order in proptest::collection::vec(any::<prop::sample::Index>(), 0..300),
        ) {
            let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            let docs: Vec<Vec<i64>> =
                seeds.iter().map(|&r| vec![base.wrapping_add(((r & mask) as i64).wrapping_mul(gcd))]).collect();
            let reader = reopened(&docs);
            let mut values = reader.values(3).unwrap();
            for (d, want) in docs.iter().enumerate() {
                prop_assert_eq!(values.values(d as DocId), &want[..], "document {}", d);
            }
            // In batches: runs of consecutive documents, and every other one.
            let mut batch = ValueBatch::default();
            for step in [1, 2] {
                let chosen: Vec<DocId> = (0..docs.len() as DocId).step_by(step).collect();
                for chunk in chosen.chunks(700) {
                    values.fill(chunk, &mut batch);
                    let want: Vec<i64> = chunk.iter().map(|&d| docs[d as usize][0]).collect();
                    prop_assert_eq!(batch.all(), &want[..]);
                }
            }
            for i in order {
                let d = i.index(docs.len());
                prop_assert_eq!(values.values(d as DocId), &docs[d][..], "document {}", d);
            }
        }

        /// A block's documents in a range, compared packed, are those a scan
        /// of their values finds: every width, gcd and bound (below, inside,
        /// between two multiples of the gcd, above), one or several values a document.
        #[test]
        fn ranges_of_a_block_match_a_scan(
            bits in 0u32..=64,
            seeds in proptest::collection::vec(any::<u64>(), 1..2600),
            base in prop_oneof![any::<i64>(), -100i64..100],
            gcd in prop_oneof![Just(1i64), 1i64..1000],
            several in any::<bool>(),
            bounds in proptest::collection::vec((any::<prop::sample::Index>(), -2i64..3, any::<prop::sample::Index>(), -2i64..3), 1..8),
            extreme in any::<bool>(),
        ) {
            let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            let value = |r: u64| base.wrapping_add(((r & mask) as i64).wrapping_mul(gcd));
            let docs: Vec<Vec<i64>> = seeds
                .iter()
                .map(|&r| match several && r % 3 == 0 {
                    true => vec![value(r), value(r.rotate_left(17))],
                    false => vec![value(r)],
                })
                .collect();
            let reader = reopened(&docs);
            let mut values = reader.values(3).unwrap();
            let all: Vec<i64> = docs.iter().flatten().copied().collect();
            for (a, da, b, db) in bounds {
                let (mut lower, mut upper) = (all[a.index(all.len())].saturating_add(da), all[b.index(all.len())].saturating_add(db));
                if extreme {
                    (lower, upper) = (i64::MIN, upper.max(lower));
                }
                for first in (0..docs.len()).step_by(BLOCK_DOCS) {
                    let mut got = [0u64; BLOCK_DOCS / 64];
                    values.block_in_range(first as DocId, lower, upper, &mut got);
                    let mut want = [0u64; BLOCK_DOCS / 64];
                    for (i, d) in docs[first..(first + BLOCK_DOCS).min(docs.len())].iter().enumerate() {
                        let inside = d.iter().any(|&v| lower <= v && v <= upper);
                        want[i / 64] |= u64::from(inside) << (i % 64);
                    }
                    prop_assert_eq!(got, want, "block at {} in {}..={}", first, lower, upper);
                }
            }
        }

        /// Points count and find what a scan of the values does, at any
        /// bounds, with one or several values a document, and say whether
        /// any document has two.
        #[test]
        fn points_find_what_a_scan_finds(
            docs in values_strategy(),
            bounds in proptest::collection::vec((any::<prop::sample::Index>(), -2i64..3, any::<prop::sample::Index>(), -2i64..3), 1..6),
        ) {
            let reader = reopened(&docs);
            let all: Vec<i64> = docs.iter().flatten().copied().collect();
            let Some(points) = reader.points(3) else {
                prop_assert!(all.is_empty() && docs.is_empty());
                return Ok(());
            };
            prop_assert_eq!(points.single_valued(), docs.iter().all(|d| d.len() <= 1));
            prop_assert_eq!(points.verify().unwrap(), all.len() as u64);
            for (a, da, b, db) in bounds {
                if all.is_empty() {
                    break;
                }
                let lower = all[a.index(all.len())].saturating_add(da);
                let upper = all[b.index(all.len())].saturating_add(db);
                let inside = |v: &i64| lower <= *v && *v <= upper;
                let want = all.iter().filter(|v| inside(v)).count() as u64;
                prop_assert_eq!(points.count(lower, upper), want, "{}..={}", lower, upper);
                prop_assert!(points.estimate(lower, upper) >= want);
                let mut bits = vec![0u64; docs.len().div_ceil(64)];
                points.docs(lower, upper, &mut bits);
                for (d, values) in docs.iter().enumerate() {
                    let got = bits[d / 64] & (1 << (d % 64)) != 0;
                    prop_assert_eq!(got, values.iter().any(inside), "document {}", d);
                }
            }
            read_error::check().unwrap();
        }

        #[test]
        fn doubles_keep_their_order(a in any::<f64>(), b in any::<f64>()) {
            prop_assume!(!a.is_nan() && !b.is_nan());
            let (sa, sb) = (double_to_sortable(a), double_to_sortable(b));
            prop_assert_eq!(sortable_to_double(sa).to_bits(), a.to_bits());
            if a < b { prop_assert!(sa < sb) }
        }
    }

    #[test]
    fn documents_past_max_doc_are_left_out() {
        let docs: Vec<Vec<i64>> = (0..10).map(|i| vec![i * 100]).collect();
        let bytes = encode_file(&[(1, ColumnRef::Numeric(&column(&docs)))], 6);
        let (len, _) = footer::verify("f.dv", &bytes, KIND, VERSION).unwrap();
        let reader =
            DocValuesReader::open(FileSlice::from_vec("f.dv", bytes[..len].to_vec()), 6, VERSION).unwrap();
        let mut values = reader.values(1).unwrap();
        assert_eq!(values.block_bounds(0), (5, Some((0, 500))));
        assert_eq!(values.values(5), [500]);
        read_error::check().unwrap();
    }

    #[test]
    fn keyword_ordinals_past_their_dictionary_read_as_no_value_and_an_error() {
        // Ordinals 0..150 over a dictionary of 100 terms: the second block of
        // a batch and a document alone both meet ordinals past it.
        let ords = column(&(0..150).map(|i| vec![i]).collect::<Vec<_>>());
        let terms: Vec<Arc<[u8]>> = (0..100).map(|i| format!("t{i:03}").into_bytes().into()).collect();
        let bytes = encode_file(&[(2, ColumnRef::Keyword { ords: &ords, terms: &terms })], 150);
        let (len, _) = footer::verify("f.dv", &bytes, KIND, VERSION).unwrap();
        let reader =
            DocValuesReader::open(FileSlice::from_vec("f.dv", bytes[..len].to_vec()), 150, VERSION).unwrap();
        let mut keywords = reader.keywords(2).unwrap().unwrap();
        read_error::clear();
        let mut out = ValueBatch::default();
        keywords.fill_ids(&(0..99).collect::<Vec<DocId>>(), &mut out);
        assert_eq!(
            out.singles().map(<[i64]>::len),
            Some(99),
            "ordinals within the dictionary read as they are"
        );
        read_error::check().unwrap();
        keywords.fill_ids(&(90..150).collect::<Vec<DocId>>(), &mut out);
        assert!((0..60).all(|i| out.doc(i).is_empty()), "a batch with ordinals past it reads as no values");
        assert!(read_error::check().unwrap_err().to_string().contains("keyword ordinal past its dictionary"));
        assert!(keywords.ids(120).is_empty());
        assert!(read_error::check().is_err());
        assert_eq!(keywords.ids(7), [7]);
    }

    #[test]
    fn example_from_the_docs() {
        let bytes = encode_file(&[(0, ColumnRef::Numeric(&column(&[vec![5], vec![], vec![9, 7]])))], 3);
        assert_eq!(&bytes[..5], [0x02, 0x02, 0x02, 0x21, 0x24]);
        // The points (points.rs): 3-bit values 0, 2, 4 over 5, then 2-bit documents 0, 2, 2.
        assert_eq!(&bytes[5..9], [0x03, 0x10, 0x01, 0x28]);
        assert_eq!(&bytes[9..18], [0x01, 0x00, 0x00, 0x01, 0x00, 0x05, 0x02, 10, 18]);
        // The points directory: one leaf at 5 of 4 bytes and 3 pairs, from 5 to 9.
        assert_eq!(&bytes[18..24], [0x01, 0x05, 0x04, 0x03, 10, 18]);
        assert!(double_to_sortable(-0.0) < double_to_sortable(0.0));
    }

    /// Any byte of a file with points damaged: opening refuses it, or its
    /// points are read (counted, their documents found, verified) as errors, never a panic.
    #[test]
    fn damaged_points_are_errors_not_panics() {
        let docs: Vec<Vec<i64>> =
            (0..1_500).map(|i| if i % 3 == 0 { vec![i * 7, -i] } else { vec![i] }).collect();
        let bytes = encode_file(&[(1, ColumnRef::Numeric(&column(&docs)))], 1_500);
        let (len, _) = footer::verify("f.dv", &bytes, KIND, VERSION).unwrap();
        for at in 0..len {
            let mut damaged = bytes[..len].to_vec();
            damaged[at] ^= 0x5a;
            let Ok(reader) = DocValuesReader::open(FileSlice::from_vec("f.dv", damaged), 1_500, VERSION)
            else {
                continue;
            };
            if let Some(points) = reader.points(1) {
                read_error::clear();
                let _ = (points.count(-100, 100), points.estimate(0, 1_000), points.verify());
                let mut bits = vec![0u64; 1_500usize.div_ceil(64)];
                points.docs(i64::MIN, i64::MAX, &mut bits);
                read_error::clear();
            }
        }
    }

    #[test]
    fn a_damaged_block_is_an_error_not_a_panic() {
        let docs: Vec<Vec<i64>> = (0..2000).map(|i| vec![i * 7, i]).collect();
        let bytes = encode_file(&[(1, ColumnRef::Numeric(&column(&docs)))], 2000);
        let (len, _) = footer::verify("f.dv", &bytes, KIND, VERSION).unwrap();
        for at in 0..40 {
            let mut damaged = bytes[..len].to_vec();
            damaged[at] ^= 0x5a;
            let reader = DocValuesReader::open(FileSlice::from_vec("f.dv", damaged), 2000, VERSION).unwrap();
            read_error::clear();
            let mut values = reader.values(1).unwrap();
            let _ = values.values(5);
            if let Err(e) = read_error::check() {
                assert!(e.to_string().contains("f.dv"), "{e}");
            }
        }
    }
}
