//! Reads one grouped record (format: see the module above).

use needle_core::{DocId, DocSet, Result, TERMINATED};
use needle_storage::counters::{self, DataKind};
use needle_storage::FileSlice;

use super::{BlockImpact, Postings, Side, FLAG_BLOOM, FLAG_OFFSETS, FLAG_POSITIONS};
use crate::bitpack::decode_block;
use crate::bloom::{self, FilterShape};
use crate::bytes::{read_vint_lenient, ByteReader};
use crate::BLOCK_LEN;

#[derive(Debug, Clone, Copy)]
struct Skip {
    last_doc: DocId,
    doc_start: usize,
    pos_start: usize,
    off_start: usize,
    bloom_start: usize,
    impact: BlockImpact,
    /// This block's competitive pairs in `DiskPostings::impacts`.
    impacts: (u32, u32),
}

/// Where the current block's filters are: each side's bitmap, and each
/// posting's filter offset on each side (`u32::MAX`: empty).
#[derive(Debug, Clone)]
struct BloomGroup {
    /// Where the group starts in the postings file.
    start: usize,
    /// Each posting's filter, as an offset from `start` (a group is small; the
    /// file may be larger than 4 GiB), `u32::MAX` when empty.
    at: [[u32; BLOCK_LEN]; 2],
    loaded: bool,
}

impl Default for BloomGroup {
    fn default() -> Self {
        BloomGroup { start: 0, at: [[u32::MAX; BLOCK_LEN]; 2], loaded: false }
    }
}

/// A posting list read from a postings file.
pub struct DiskPostings {
    data: FileSlice,
    doc_freq: u32,
    total_term_freq: u64,
    has_positions: bool,
    has_offsets: bool,
    bloom: Option<FilterShape>,
    group: BloomGroup,
    skips: Vec<Skip>,
    impacts: Vec<(u32, u8)>,
    max_impact: BlockImpact,
    block: usize,
    len: usize,
    idx: usize,
    doc: DocId,
    docs: [u32; BLOCK_LEN],
    freqs: [u32; BLOCK_LEN],
    /// Position deltas of the current block, decoded on first use.
    pos_loaded: bool,
    pos_buf: Vec<u32>,
    /// Byte offset of each 128-value chunk of the block's position stream found
    /// so far, and which chunks are decoded into `pos_buf`: a document's
    /// positions are decoded without the rest of the block's.
    pos_chunk_at: Vec<usize>,
    pos_chunk_done: Vec<bool>,
    off_loaded: bool,
    off_buf: Vec<(u32, u32)>,
    /// Index of each document's first occurrence in the block's position/offset buffers.
    occ_start: [u32; BLOCK_LEN + 1],
}

/// The sizes a record's header declares: for statistics and checking.
#[derive(Debug, Clone, Copy)]
pub struct RecordHeader {
    pub doc_freq: u32,
    pub total_term_freq: u64,
    pub header_and_skip: usize,
    pub docs: usize,
    pub positions: usize,
    pub offsets: usize,
    pub bloom: usize,
}

impl DiskPostings {
    /// Opens the record at `offset` of `data` (the postings file's body). The
    /// header and skip list are checked against the file's bounds here, so
    /// iteration cannot leave the record.
    pub fn open(data: &FileSlice, offset: u64) -> Result<Self> {
        let RecordLayout { header, skips, impacts, bloom } = read_header_and_skips(data, offset)?;
        counters::record(DataKind::Skip, data, offset as usize, header.header_and_skip);
        let max_impact = skips.iter().fold(BlockImpact::NONE, |acc, s| acc.merge(s.impact));
        let flags_byte = data.bytes()[offset as usize];
        let mut p = DiskPostings {
            data: data.clone(),
            doc_freq: header.doc_freq,
            total_term_freq: header.total_term_freq,
            has_positions: flags_byte & FLAG_POSITIONS != 0,
            has_offsets: flags_byte & FLAG_OFFSETS != 0,
            bloom,
            group: BloomGroup::default(),
            skips,
            impacts,
            max_impact,
            block: 0,
            len: 0,
            idx: 0,
            doc: TERMINATED,
            docs: [0; BLOCK_LEN],
            freqs: [0; BLOCK_LEN],
            pos_loaded: false,
            pos_buf: Vec::new(),
            pos_chunk_at: Vec::new(),
            pos_chunk_done: Vec::new(),
            off_loaded: false,
            off_buf: Vec::new(),
            occ_start: [0; BLOCK_LEN + 1],
        };
        if !p.skips.is_empty() {
            p.load_block(0);
        }
        Ok(p)
    }

    pub fn total_term_freq(&self) -> u64 {
        self.total_term_freq
    }

    fn load_block(&mut self, b: usize) {
        self.block = b;
        self.len = if b + 1 == self.skips.len() { self.doc_freq as usize - b * BLOCK_LEN } else { BLOCK_LEN };
        let bytes = self.data.bytes();
        let start = self.skips[b].doc_start;
        let mut pos = start;
        decode_block(bytes, &mut pos, &mut self.docs[..self.len]);
        let mid = pos;
        decode_block(bytes, &mut pos, &mut self.freqs[..self.len]);
        counters::record(DataKind::DocIds, &self.data, start, mid - start);
        counters::record(DataKind::Freqs, &self.data, mid, pos - mid);
        let mut prev: i64 = if b == 0 { -1 } else { i64::from(self.skips[b - 1].last_doc) };
        let mut occ = 0u32;
        for i in 0..self.len {
            prev += i64::from(self.docs[i]) + 1;
            self.docs[i] = prev as u32;
            self.freqs[i] += 1;
            self.occ_start[i] = occ;
            occ = occ.wrapping_add(self.freqs[i]);
        }
        self.occ_start[self.len] = occ;
        self.idx = 0;
        self.doc = self.docs[0];
        self.pos_loaded = false;
        self.off_loaded = false;
        self.group.loaded = false;
    }

    /// Locates the current block's filters, counting its bitmaps as read.
    fn load_group(&mut self, shape: FilterShape) {
        let start = self.skips[self.block].bloom_start;
        let bitmap_len = self.len.div_ceil(8);
        let bytes = self.data.bytes();
        let mut cursor = start + 2 * bitmap_len;
        for side in 0..2 {
            let bitmap = bytes.get(start + side * bitmap_len..start + (side + 1) * bitmap_len).unwrap_or(&[]);
            for i in 0..self.len {
                let set = bitmap.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0);
                self.group.at[side][i] = if set { (cursor - start) as u32 } else { u32::MAX };
                if set {
                    cursor += shape.bytes(self.freqs[i]);
                }
            }
        }
        self.group.start = start;
        self.group.loaded = true;
        counters::record(DataKind::Bloom, &self.data, start, 2 * bitmap_len);
    }

    /// The current document's `side` filter: `Some(empty slice)` when it is empty.
    fn filter(&mut self, side: Side) -> Option<&[u8]> {
        let shape = self.bloom?;
        if self.doc == TERMINATED {
            return None;
        }
        if !self.group.loaded {
            self.load_group(shape);
        }
        let at = self.group.at[side as usize][self.idx];
        if at == u32::MAX {
            return Some(&[]);
        }
        let (at, len) = (self.group.start + at as usize, shape.bytes(self.freqs[self.idx]));
        counters::record(DataKind::Bloom, &self.data, at, len);
        self.data.bytes().get(at..at + len)
    }

    /// Prepares the block's position stream for chunk-by-chunk decoding.
    fn load_positions(&mut self) {
        let total = self.occ_start[self.len] as usize;
        self.pos_buf.resize(total, 0);
        self.pos_chunk_at.clear();
        self.pos_chunk_at.push(self.skips[self.block].pos_start);
        self.pos_chunk_done.clear();
        self.pos_chunk_done.resize(total.div_ceil(BLOCK_LEN), false);
        self.pos_loaded = true;
    }

    /// Decodes chunk `c` of the block's positions (values `128c..128c+128`),
    /// finding its start by reading only the bit-width byte of each chunk before it.
    fn decode_position_chunk(&mut self, c: usize) {
        if self.pos_chunk_done[c] {
            return;
        }
        let bytes = self.data.bytes();
        while self.pos_chunk_at.len() <= c {
            let at = *self.pos_chunk_at.last().unwrap();
            let bits = usize::from(bytes.get(at).copied().unwrap_or(0).min(32));
            counters::record(DataKind::Positions, &self.data, at, 1);
            self.pos_chunk_at.push(at + 1 + 16 * bits);
        }
        let start = self.pos_chunk_at[c];
        let end = (BLOCK_LEN * (c + 1)).min(self.pos_buf.len());
        let mut pos = start;
        decode_block(bytes, &mut pos, &mut self.pos_buf[BLOCK_LEN * c..end]);
        counters::record(DataKind::Positions, &self.data, start, pos - start);
        self.pos_chunk_done[c] = true;
    }

    fn load_offsets(&mut self) {
        let bytes = self.data.bytes();
        let start = self.skips[self.block].off_start;
        let mut pos = start;
        self.off_buf.clear();
        for i in 0..self.len {
            let mut prev_start = 0u32;
            for _ in 0..self.freqs[i] {
                let start = prev_start.wrapping_add(read_vint_lenient(bytes, &mut pos) as u32);
                let end = start.wrapping_add(read_vint_lenient(bytes, &mut pos) as u32);
                self.off_buf.push((start, end));
                prev_start = start;
            }
        }
        counters::record(DataKind::Offsets, &self.data, start, pos - start);
        self.off_loaded = true;
    }

    /// Index of the first block at or after the current one whose last doc is `>= target`.
    fn block_for(&self, target: DocId) -> Option<usize> {
        let from = self.block;
        let b = from + self.skips[from..].partition_point(|s| s.last_doc < target);
        (b < self.skips.len()).then_some(b)
    }

    fn occurrences(&self) -> std::ops::Range<usize> {
        self.occ_start[self.idx] as usize..self.occ_start[self.idx + 1] as usize
    }
}

impl DocSet for DiskPostings {
    fn doc(&self) -> DocId {
        self.doc
    }

    fn advance(&mut self) -> DocId {
        if self.doc == TERMINATED {
            return TERMINATED;
        }
        self.idx += 1;
        if self.idx < self.len {
            self.doc = self.docs[self.idx];
        } else if self.block + 1 < self.skips.len() {
            self.load_block(self.block + 1);
        } else {
            self.doc = TERMINATED;
        }
        self.doc
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if target <= self.doc {
            return self.doc;
        }
        if target > self.skips[self.block].last_doc {
            match self.block_for(target) {
                Some(b) => self.load_block(b),
                None => {
                    self.doc = TERMINATED;
                    return TERMINATED;
                }
            }
        }
        while self.docs[self.idx] < target {
            self.idx += 1;
        }
        self.doc = self.docs[self.idx];
        self.doc
    }

    fn cost(&self) -> u64 {
        u64::from(self.doc_freq)
    }
}

impl Postings for DiskPostings {
    fn doc_freq(&self) -> u32 {
        self.doc_freq
    }

    fn freq(&self) -> u32 {
        self.freqs[self.idx]
    }

    fn positions(&mut self, out: &mut Vec<u32>) {
        out.clear();
        if !self.has_positions || self.doc == TERMINATED {
            return;
        }
        if !self.pos_loaded {
            self.load_positions();
        }
        let range = self.occurrences();
        if range.is_empty() {
            return;
        }
        for c in range.start / BLOCK_LEN..=(range.end - 1) / BLOCK_LEN {
            self.decode_position_chunk(c);
        }
        let mut p = 0u32;
        for &delta in &self.pos_buf[range] {
            p = p.wrapping_add(delta);
            out.push(p);
        }
    }

    fn offsets(&mut self, out: &mut Vec<(u32, u32)>) {
        out.clear();
        if !self.has_offsets || self.doc == TERMINATED {
            return;
        }
        if !self.off_loaded {
            self.load_offsets();
        }
        out.extend_from_slice(&self.off_buf[self.occurrences()]);
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        match self.block_for(target) {
            Some(b) => self.skips[b].last_doc,
            None => TERMINATED,
        }
    }

    fn impact(&mut self, from: DocId, to: DocId) -> BlockImpact {
        let Some(first) = self.block_for(from) else { return BlockImpact::NONE };
        let mut acc = BlockImpact::NONE;
        for s in &self.skips[first..] {
            acc = acc.merge(s.impact);
            if s.last_doc >= to {
                break;
            }
        }
        acc
    }

    fn max_impact(&self) -> BlockImpact {
        self.max_impact
    }

    fn impacts(&mut self, from: DocId, to: DocId, out: &mut Vec<(u32, u8)>) {
        let Some(first) = self.block_for(from) else { return };
        for s in &self.skips[first..] {
            out.extend_from_slice(&self.impacts[s.impacts.0 as usize..s.impacts.1 as usize]);
            if s.last_doc >= to {
                break;
            }
        }
    }

    fn total_term_freq(&self) -> u64 {
        self.total_term_freq
    }

    fn bloom_test(&mut self, side: Side, hash: u64) -> Option<bool> {
        let hashes = self.bloom?.hashes(self.freq());
        let filter = self.filter(side)?;
        Some(bloom::may_contain(filter, hash, hashes))
    }

    fn filters_into(&mut self, before: &mut Vec<u8>, after: &mut Vec<u8>) -> Option<FilterShape> {
        let shape = self.bloom?;
        for (side, out) in [(Side::Before, before), (Side::After, after)] {
            let f = self.filter(side).unwrap_or(&[]);
            let start = out.len();
            out.extend_from_slice(f);
            out.resize(start + shape.max_bytes(), 0);
        }
        Some(shape)
    }
}

/// A record's header and skip list, decoded.
struct RecordLayout {
    header: RecordHeader,
    skips: Vec<Skip>,
    impacts: Vec<(u32, u8)>,
    bloom: Option<FilterShape>,
}

/// Reads and checks a record's header and skip list.
fn read_header_and_skips(data: &FileSlice, offset: u64) -> Result<RecordLayout> {
    let bytes = data.bytes();
    let name = data.name();
    let start = usize::try_from(offset).ok().filter(|&o| o < bytes.len());
    let Some(start) = start else {
        return Err(needle_core::Error::corrupt(name, format!("term record offset {offset} out of bounds")));
    };
    let mut r = ByteReader::new(name, &bytes[start..]);
    let flags = r.u8()?;
    if flags & !(FLAG_POSITIONS | FLAG_OFFSETS | FLAG_BLOOM) != 0 {
        return Err(r.corrupt("unknown record flags"));
    }
    let doc_freq = r.vint_u32()?;
    let total_term_freq = r.vint()? + u64::from(doc_freq);
    let skip_len = r.vint()? as usize;
    let docs_len = r.vint()? as usize;
    let pos_len = r.vint()? as usize;
    let off_len = r.vint()? as usize;
    let (bloom_len, bloom) = if flags & FLAG_BLOOM != 0 {
        let len = r.vint()? as usize;
        let max_insertions = r.vint_u32()?;
        let fp_millionths = r.vint_u32()?;
        if !(1..=64).contains(&max_insertions) || !(1..=500_000).contains(&fp_millionths) {
            return Err(r.corrupt("bad Bloom filter shape"));
        }
        (len, Some(FilterShape { max_insertions, fp_millionths }))
    } else {
        (0, None)
    };
    let skip_bytes = r.take(skip_len)?;
    let header_and_skip = r.position();
    let doc_base = start + header_and_skip;
    let (pos_base, off_base) = (doc_base + docs_len, doc_base + docs_len + pos_len);
    let bloom_base = off_base + off_len;
    if r.remaining() < docs_len + pos_len + off_len + bloom_len {
        return Err(r.corrupt("record longer than the postings file"));
    }
    let mut skips = Vec::with_capacity((doc_freq as usize).div_ceil(BLOCK_LEN));
    let mut sr = ByteReader::new(name, skip_bytes);
    let (mut last, mut d, mut p, mut o, mut bl) = (0u64, 0usize, 0usize, 0usize, 0usize);
    let mut impacts = Vec::new();
    for b in 0..(doc_freq as usize).div_ceil(BLOCK_LEN) {
        let delta = sr.vint()?;
        if b > 0 && delta == 0 {
            return Err(sr.corrupt("skip entries out of order"));
        }
        last += delta;
        let last_doc = u32::try_from(last)
            .ok()
            .filter(|&l| l != TERMINATED)
            .ok_or_else(|| sr.corrupt("doc id out of range"))?;
        let entry = Skip {
            last_doc,
            doc_start: doc_base + d,
            pos_start: pos_base + p,
            off_start: off_base + o,
            bloom_start: bloom_base + bl,
            impact: BlockImpact::NONE,
            impacts: (0, 0),
        };
        d += sr.vint()? as usize;
        if flags & FLAG_POSITIONS != 0 {
            p += sr.vint()? as usize;
        }
        if flags & FLAG_OFFSETS != 0 {
            o += sr.vint()? as usize;
        }
        if flags & FLAG_BLOOM != 0 {
            bl += sr.vint()? as usize;
        }
        let count = sr.vint()? as usize;
        if count == 0 || count > 256 {
            return Err(sr.corrupt("bad impact count"));
        }
        let first_impact = impacts.len() as u32;
        let mut freq = 0u32;
        for _ in 0..count {
            freq =
                freq.checked_add(sr.vint_u32()?).ok_or_else(|| sr.corrupt("impact frequency overflows"))?;
            impacts.push((freq, sr.u8()?));
        }
        let (max_freq, min_norm) = (freq, impacts[first_impact as usize].1);
        let range = (first_impact, impacts.len() as u32);
        skips.push(Skip { impact: BlockImpact { max_freq, min_norm }, impacts: range, ..entry });
    }
    if (d, p, o, bl) != (docs_len, pos_len, off_len, bloom_len) || sr.remaining() != 0 {
        return Err(r.corrupt("skip list does not add up to the record's sections"));
    }
    let header = RecordHeader {
        doc_freq,
        total_term_freq,
        header_and_skip,
        docs: docs_len,
        positions: pos_len,
        offsets: off_len,
        bloom: bloom_len,
    };
    Ok(RecordLayout { header, skips, impacts, bloom })
}

/// The header of the record at `offset`, checked.
pub fn read_header(data: &FileSlice, offset: u64) -> Result<RecordHeader> {
    read_header_and_skips(data, offset).map(|layout| layout.header)
}
