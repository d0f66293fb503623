//! Reads one grouped record (format: see the module above).

use needle_core::{DocId, DocSet, Error, Result, TERMINATED};
use needle_storage::counters::{self, DataKind};
use needle_storage::{FileSlice, ReadBytes};

use super::skips::{Sections, Skip, SkipLayout, SkipList};
use super::{
    BlockImpact, Part, Postings, RecordSizes, Side, COMPACT, COMPACT_BLOCK, FLAG_BLOOM, FLAG_FILTERS_FIRST,
    FLAG_MIN_FREQ, FLAG_OFFSETS, FLAG_ONE_BLOCK, FLAG_PACKED_OFFSETS, FLAG_POSITIONS, FLAG_SKIP_INDEX,
    LONE_AFTER, LONE_BEFORE, LONE_FREQ_BITS, LONE_MAX_FREQ,
};
use crate::bitpack::{decode_block, decode_stream, full_block_end};
use crate::bloom::{self, FilterShape};
use crate::bytes::{read_vint_lenient, ByteReader};
use crate::page::PAGE;
use crate::BLOCK_LEN;

/// The current block's filters: each side's bitmap, and each posting's
/// filter offset on each side (`u32::MAX`: empty).
#[derive(Clone)]
struct BloomGroup {
    /// Where the group starts in the postings file.
    start: usize,
    /// The group's bytes, once read.
    bytes: Option<ReadBytes>,
    /// Each posting's filter, as an offset in `bytes`, `u32::MAX` when empty.
    at: [[u32; BLOCK_LEN]; 2],
}

impl Default for BloomGroup {
    fn default() -> Self {
        BloomGroup { start: 0, bytes: None, at: [[u32::MAX; BLOCK_LEN]; 2] }
    }
}

/// A posting list read from a postings file.
pub struct DiskPostings {
    data: FileSlice,
    doc_freq: u32,
    total_term_freq: u64,
    has_positions: bool,
    has_offsets: bool,
    /// Offsets bit-packed (format 4), not vint pairs.
    packed_offsets: bool,
    /// A one-document record (format 6): its doc and frequency are in the
    /// skip entry and header, with no doc block.
    lone_posting: bool,
    /// A compact one-document record's filters (format 8): whether its
    /// before and after filters are stored, which its flags say.
    compact: Option<[bool; 2]>,
    bloom: Option<FilterShape>,
    group: BloomGroup,
    skips: SkipList,
    /// The current block's skip entry.
    cur: Skip,
    /// The segment's document count: every doc id decoded must be below it.
    max_doc: DocId,
    block: usize,
    len: usize,
    idx: usize,
    doc: DocId,
    docs: [u32; BLOCK_LEN],
    freqs: [u32; BLOCK_LEN],
    /// The current block's position stream, once read (a view of a mapping
    /// is read lazily by the kernel: only the chunks decoded are touched).
    pos_bytes: Option<ReadBytes>,
    /// Position deltas of the current block, decoded on first use.
    pos_buf: Vec<u32>,
    /// Offset in `pos_bytes` of each 128-value chunk of the block's position
    /// stream found so far, and which chunks are decoded into `pos_buf`: a
    /// document's positions are decoded without the rest of the block's.
    pos_chunk_at: Vec<usize>,
    pos_chunk_done: Vec<bool>,
    off_loaded: bool,
    off_buf: Vec<(u32, u32)>,
    /// Index of each document's first occurrence in the block's position/offset buffers.
    occ_start: [u32; BLOCK_LEN + 1],
    /// The first page of the file past those read for positions and for
    /// filters (blocks are read in order): what a next read would add.
    unread_page: [u64; 2],
    /// Where the doc and frequency bytes asked of storage so far end (read
    /// ahead, or read with the record's first page): a block past it waits
    /// for the device.
    ahead_end: usize,
    /// How much the next read-ahead asks for.
    ahead_window: usize,
    /// A block in order that starts here or past it asks for the next
    /// window before it is needed, so the device reads it while this one is scored.
    ahead_mark: usize,
}

/// Read-ahead of a list read in order: the first window and the largest.
/// The first covers the whole zone of a list of some 20k documents, so a
/// query on a term of middling popularity waits for the device twice: for
/// the record's first page, with the query's other terms, then for the rest.
const AHEAD_FIRST: usize = 64 << 10;
const AHEAD_MAX: usize = 1 << 20;

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

impl RecordHeader {
    /// The record's sections, as the writer counted them.
    pub fn sizes(&self) -> RecordSizes {
        RecordSizes {
            header_and_skip: self.header_and_skip as u64,
            docs: self.docs as u64,
            positions: self.positions as u64,
            offsets: self.offsets as u64,
            bloom: self.bloom as u64,
        }
    }
}

impl DiskPostings {
    /// Opens the record at `offset` of `data` (the postings file's body) of a
    /// segment of `max_doc` documents. The header and skip list are checked
    /// against the file's bounds here, so iteration cannot leave the record;
    /// each block is checked as it is decoded (see [`DiskPostings::load_block`]).
    pub fn open(data: &FileSlice, offset: u64, max_doc: DocId) -> Result<Self> {
        let (header, bloom, layout) = read_layout(data, offset)?;
        counters::record(DataKind::Skip, data, offset as usize, layout.index.start - offset as usize);
        let flags = layout.sections.flags;
        let lone_posting = layout.sections.lone_freq.is_some();
        let compact = layout.sections.compact;
        let skips = SkipList::open(data, layout)?;
        let mut p = DiskPostings {
            data: data.clone(),
            doc_freq: header.doc_freq,
            total_term_freq: header.total_term_freq,
            has_positions: flags & FLAG_POSITIONS != 0,
            has_offsets: flags & FLAG_OFFSETS != 0,
            packed_offsets: flags & FLAG_PACKED_OFFSETS != 0,
            lone_posting,
            compact,
            bloom,
            group: BloomGroup::default(),
            skips,
            cur: NO_SKIP,
            max_doc,
            block: 0,
            len: 0,
            idx: 0,
            doc: TERMINATED,
            docs: [0; BLOCK_LEN],
            freqs: [0; BLOCK_LEN],
            pos_bytes: None,
            pos_buf: Vec::new(),
            pos_chunk_at: Vec::new(),
            pos_chunk_done: Vec::new(),
            off_loaded: false,
            off_buf: Vec::new(),
            occ_start: [0; BLOCK_LEN + 1],
            unread_page: [0; 2],
            ahead_end: page_end(data, offset as usize),
            ahead_window: AHEAD_FIRST,
            ahead_mark: usize::MAX,
        };
        if p.skips.blocks() > 0 {
            p.try_load_block(0)?;
        }
        Ok(p)
    }

    /// Ends the list on a failed read or corrupt bytes, recording the error
    /// for whoever drives the walk (see `needle_core::read_error`).
    fn fail(&mut self, e: Error) -> DocId {
        needle_core::read_error::record(e);
        self.doc = TERMINATED;
        TERMINATED
    }

    pub fn total_term_freq(&self) -> u64 {
        self.total_term_freq
    }

    /// The bytes of `range`; a failed read ends the list, keeping the error.
    fn read_or_fail(&mut self, range: std::ops::Range<usize>) -> Option<ReadBytes> {
        self.data.read(range).map_err(|e| self.fail(e)).ok()
    }

    /// Moves to block `b`; on a corrupt block or a failed read, ends the list.
    fn load_block(&mut self, b: usize) -> DocId {
        match self.try_load_block(b) {
            Ok(()) => self.doc,
            Err(e) => self.fail(e),
        }
    }

    /// Reads and decodes block `b`, checking what it decodes: doc ids
    /// ascending, below the segment's document count, the last one equal to
    /// the skip entry's; frequencies within the entry's bound (which pruning
    /// trusts); occurrences no more than its positions can hold. (An
    /// index opened with `Verify::Footers` has not had these bytes' checksum
    /// verified; corrupt bytes must be an error, never a panic or a wrong answer.)
    fn try_load_block(&mut self, b: usize) -> Result<()> {
        self.cur = self.skips.get(b)?;
        if self.cur.doc_end > self.ahead_end || self.cur.doc_start >= self.ahead_mark {
            self.read_ahead(b);
        }
        self.block = b;
        self.len =
            if b + 1 == self.skips.blocks() { self.doc_freq as usize - b * BLOCK_LEN } else { BLOCK_LEN };
        let start = self.cur.doc_start;
        if self.lone_posting {
            // Gaps as a block holds them: the doc counts from -1, the frequency from 1.
            self.docs[0] = self.cur.last_doc;
            self.freqs[0] = (self.total_term_freq - 1) as u32;
        } else {
            let bytes = self.data.read(start..self.cur.doc_end)?;
            let mut pos = 0;
            decode_block(&bytes, &mut pos, &mut self.docs[..self.len]);
            let mid = pos;
            decode_block(&bytes, &mut pos, &mut self.freqs[..self.len]);
            counters::record(DataKind::DocIds, &self.data, start, mid);
            counters::record(DataKind::Freqs, &self.data, start + mid, pos - mid);
        }
        let mut prev = self.cur.prev_last_doc;
        let mut occ = 0u64;
        for i in 0..self.len {
            prev += i64::from(self.docs[i]) + 1;
            if prev >= i64::from(self.max_doc) {
                return Err(self.corrupt_block(
                    start,
                    format!("doc id {prev} past the segment's {} documents", self.max_doc),
                ));
            }
            self.docs[i] = prev as u32;
            self.freqs[i] = self.freqs[i].wrapping_add(1);
            if self.freqs[i] == 0 || self.freqs[i] > self.cur.impact.max_freq {
                let what = format!("doc {prev} has frequency {}, past its block's bound", self.freqs[i]);
                return Err(self.corrupt_block(start, what));
            }
            self.occ_start[i] = occ as u32;
            occ += u64::from(self.freqs[i]);
        }
        if prev != i64::from(self.cur.last_doc) {
            return Err(self.corrupt_block(
                start,
                format!("last doc {prev}, the skip entry says {}", self.cur.last_doc),
            ));
        }
        if self.has_positions && occ > 128 * (self.cur.pos_end - self.cur.pos_start) as u64 + 128 {
            return Err(self.corrupt_block(start, format!("{occ} occurrences, more than its positions hold")));
        }
        self.occ_start[self.len] = occ as u32;
        self.idx = 0;
        self.doc = self.docs[0];
        self.pos_bytes = None;
        self.off_loaded = false;
        self.group.bytes = None;
        Ok(())
    }

    fn corrupt_block(&self, start: usize, what: String) -> Error {
        Error::corrupt_at(
            self.data.name(),
            self.data.position(start).1,
            format!("block {}: {what}", self.block),
        )
    }

    /// Before block `b` (the current skip entry) is read, when it lies past
    /// what was asked of storage or past the mark: a list read in order
    /// (moving on from a block to one that starts at most a page past what
    /// was asked) asks for its next blocks and their skip entries in one
    /// batch, a window that doubles each time, so a long list waits for the
    /// device a few times instead of once a page. The window that holds
    /// block `b` is waited for; from its middle on, the next window is asked
    /// for, and each later one as soon as the reader enters the one before
    /// it (the kernel's asynchronous readahead, by the same marks): where
    /// reads can be sent ahead (`direct`, or a mapping), the device reads
    /// one window while the reader scores the last. The first block, and a
    /// block after a jump (a seek far ahead), is read alone: a list only
    /// sought to a few documents reads only their pages.
    fn read_ahead(&mut self, b: usize) {
        let start = self.cur.doc_start;
        let moving_on = self.len > 0;
        if !moving_on || start > self.ahead_end + PAGE as usize {
            self.ahead_end = page_end(&self.data, self.cur.doc_end.saturating_sub(1));
            self.ahead_window = AHEAD_FIRST;
            self.ahead_mark = usize::MAX;
            return;
        }
        let waited_for = self.cur.doc_end > self.ahead_end;
        let from = self.ahead_end.max(start);
        let mut ranges = Vec::new();
        let end = self.skips.ahead(b, from, self.ahead_window, &mut ranges);
        self.data.read_ahead_all(&ranges);
        self.ahead_mark = match waited_for {
            true => from + (end.saturating_sub(from)) / 2,
            false => from,
        };
        self.ahead_end = end.max(self.cur.doc_end);
        self.ahead_window = (self.ahead_window * 2).min(AHEAD_MAX);
    }

    /// Reads the current block's filters and locates each posting's, counting
    /// the bitmaps as needed; false (the list ended) when the read fails.
    fn load_group(&mut self, shape: FilterShape) -> bool {
        let start = self.cur.bloom_start;
        let range = self.part_range(Part::Filters);
        let Some(bytes) = self.read_or_fail(range.clone()) else { return false };
        self.note_read(Part::Filters, range);
        // A compact one-document record's flags hold its bitmaps.
        let bitmap_len = if self.compact.is_some() { 0 } else { self.len.div_ceil(8) };
        let mut cursor = 2 * bitmap_len;
        for side in 0..2 {
            let bitmap = bytes.get(side * bitmap_len..(side + 1) * bitmap_len).unwrap_or(&[]);
            for i in 0..self.len {
                let set = match self.compact {
                    Some(sides) => sides[side],
                    None => bitmap.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0),
                };
                self.group.at[side][i] = if set { cursor as u32 } else { u32::MAX };
                if set {
                    cursor += shape.bytes(self.freqs[i]);
                }
            }
        }
        self.group.start = start;
        self.group.bytes = Some(bytes);
        counters::record(DataKind::Bloom, &self.data, start, 2 * bitmap_len);
        true
    }

    /// The current document's `side` filter: `Some(empty slice)` when it is empty.
    /// `None` when it has no filters (see [`FilterShape::stores`]).
    fn filter(&mut self, side: Side) -> Option<&[u8]> {
        let shape = self.bloom?;
        if self.doc == TERMINATED || !shape.stores(self.freqs[self.idx]) {
            return None;
        }
        if self.group.bytes.is_none() && !self.load_group(shape) {
            return None;
        }
        let at = self.group.at[side as usize][self.idx];
        if at == u32::MAX {
            return Some(&[]);
        }
        let (at, len) = (at as usize, shape.bytes(self.freqs[self.idx]));
        counters::record(DataKind::Bloom, &self.data, self.group.start + at, len);
        self.group.bytes.as_ref()?.get(at..at + len)
    }

    /// The file pages `range` of the record lies on, first and last.
    fn pages(&self, range: &std::ops::Range<usize>) -> (u64, u64) {
        let (_, start) = self.data.position(range.start);
        (start / PAGE, (start + range.len() as u64).saturating_sub(1) / PAGE)
    }

    /// Where the current block's `part` is in the file.
    fn part_range(&self, part: Part) -> std::ops::Range<usize> {
        match part {
            Part::Positions => self.cur.pos_start..self.cur.pos_end,
            Part::Filters => self.cur.bloom_start..self.cur.bloom_end,
        }
    }

    /// Remembers that `part` was read up to the end of `range`.
    fn note_read(&mut self, part: Part, range: std::ops::Range<usize>) {
        if !range.is_empty() {
            self.unread_page[part as usize] = self.pages(&range).1 + 1;
        }
    }

    /// Reads the block's position stream for chunk-by-chunk decoding; false
    /// (the list ended) when the read fails.
    fn load_positions(&mut self) -> bool {
        let range = self.part_range(Part::Positions);
        self.pos_bytes = self.read_or_fail(range.clone());
        if self.pos_bytes.is_none() {
            return false;
        }
        self.note_read(Part::Positions, range);
        let total = self.occ_start[self.len] as usize;
        self.pos_buf.resize(total, 0);
        self.pos_chunk_at.clear();
        self.pos_chunk_at.push(0);
        self.pos_chunk_done.clear();
        self.pos_chunk_done.resize(total.div_ceil(BLOCK_LEN), false);
        true
    }

    /// Decodes chunk `c` of the block's positions (values `128c..128c+128`),
    /// finding its start by reading only the bit-width byte (and the
    /// exceptions, when patched) of each chunk before it.
    fn decode_position_chunk(&mut self, c: usize) {
        let Some(bytes) = self.pos_bytes.as_ref().filter(|_| !self.pos_chunk_done[c]) else { return };
        let base = self.cur.pos_start;
        while self.pos_chunk_at.len() <= c {
            let at = *self.pos_chunk_at.last().unwrap();
            let (packed_end, end) = full_block_end(bytes, at);
            counters::record(DataKind::Positions, &self.data, base + at, 1);
            counters::record(DataKind::Positions, &self.data, base + packed_end, end - packed_end);
            self.pos_chunk_at.push(end);
        }
        let start = self.pos_chunk_at[c];
        let end = (BLOCK_LEN * (c + 1)).min(self.pos_buf.len());
        let mut pos = start;
        decode_block(bytes, &mut pos, &mut self.pos_buf[BLOCK_LEN * c..end]);
        counters::record(DataKind::Positions, &self.data, base + start, pos - start);
        self.pos_chunk_done[c] = true;
    }

    /// Reads and decodes the block's offsets; false (the list ended) when the read fails.
    fn load_offsets(&mut self) -> bool {
        let start = self.cur.off_start;
        let (occurrences, bytes_held) = (self.occ_start[self.len] as usize, self.cur.off_end - start);
        // Packed, the starts take a byte per 128 at least (their bit width);
        // as varints, an offset takes two bytes at least.
        let most = if self.packed_offsets { 128 * bytes_held } else { bytes_held / 2 };
        if occurrences > most {
            let e = self.corrupt_block(start, "more occurrences than its offsets hold".into());
            self.fail(e);
            return false;
        }
        let Some(bytes) = self.read_or_fail(start..self.cur.off_end) else { return false };
        let mut pos = 0;
        let (mut deltas, mut lengths) = (vec![0u32; occurrences], vec![0u32; occurrences]);
        if self.packed_offsets {
            decode_stream(&bytes, &mut pos, &mut deltas);
            match read_vint_lenient(&bytes, &mut pos) {
                0 => decode_stream(&bytes, &mut pos, &mut lengths),
                common => lengths.fill(common.wrapping_sub(1) as u32),
            }
        } else {
            for (d, l) in deltas.iter_mut().zip(&mut lengths) {
                *d = read_vint_lenient(&bytes, &mut pos) as u32;
                *l = read_vint_lenient(&bytes, &mut pos) as u32;
            }
        }
        self.off_buf.clear();
        let mut at = 0;
        for &freq in &self.freqs[..self.len] {
            let mut prev_start = 0u32;
            for _ in 0..freq {
                let start = prev_start.wrapping_add(deltas[at]);
                self.off_buf.push((start, start.wrapping_add(lengths[at])));
                prev_start = start;
                at += 1;
            }
        }
        counters::record(DataKind::Offsets, &self.data, start, pos);
        self.off_loaded = true;
        true
    }

    /// Index of the first block at or after the current one whose last doc
    /// is `>= target`; `None` past the end or on a corrupt skip page (which ends the list).
    fn block_for(&mut self, target: DocId) -> Option<usize> {
        match self.skips.block_for(self.block, target) {
            Ok(b) => b,
            Err(e) => {
                self.fail(e);
                None
            }
        }
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
        } else if self.block + 1 < self.skips.blocks() {
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
        if target > self.cur.last_doc {
            let Some(b) = self.block_for(target) else {
                self.doc = TERMINATED;
                return TERMINATED;
            };
            if self.load_block(b) == TERMINATED {
                return TERMINATED;
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
        if self.pos_bytes.is_none() && !self.load_positions() {
            return;
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
        if !self.off_loaded && !self.load_offsets() {
            return;
        }
        out.extend_from_slice(&self.off_buf[self.occurrences()]);
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        match self.block_for(target).map(|b| self.skips.get(b)) {
            Some(Ok(skip)) => skip.last_doc,
            Some(Err(e)) => self.fail(e),
            None => TERMINATED,
        }
    }

    fn impact(&mut self, from: DocId, to: DocId) -> BlockImpact {
        match self.skips.impact(self.block, from, to) {
            Ok(bound) => bound,
            Err(e) => {
                self.fail(e);
                BlockImpact::NONE
            }
        }
    }

    fn max_impact(&self) -> BlockImpact {
        self.skips.max_impact()
    }

    fn impacts(&mut self, from: DocId, to: DocId, out: &mut Vec<(u32, u8)>) {
        if let Err(e) = self.skips.impacts(self.block, from, to, out) {
            self.fail(e);
        }
    }

    fn total_term_freq(&self) -> u64 {
        self.total_term_freq
    }

    fn record_damage(&self, what: String) {
        needle_core::read_error::record(self.corrupt_block(self.cur.doc_start, what));
    }

    fn block_ahead(&self) -> &[DocId] {
        self.docs[..self.len].get(self.idx + 1..).unwrap_or(&[])
    }

    fn block_rest(&self) -> (&[DocId], &[u32]) {
        match self.doc {
            TERMINATED => (&[], &[]),
            _ => (&self.docs[self.idx..self.len], &self.freqs[self.idx..self.len]),
        }
    }

    fn advance_by(&mut self, n: usize) -> DocId {
        if n == 0 || self.doc == TERMINATED {
            return self.doc;
        }
        self.idx += n - 1;
        self.advance()
    }

    fn read_cost(&self, part: Part) -> u32 {
        let range = self.part_range(part);
        let in_memory = match part {
            Part::Positions => self.pos_bytes.is_some(),
            Part::Filters => self.group.bytes.is_some(),
        };
        if in_memory || range.is_empty() || self.doc == TERMINATED {
            return 0;
        }
        let (first, last) = self.pages(&range);
        let first = first.max(self.unread_page[part as usize]);
        let (doc_first, doc_last) = self.pages(&(self.cur.doc_start..self.cur.doc_end));
        let on_doc_pages = last.min(doc_last).saturating_add(1).saturating_sub(first.max(doc_first));
        (last + 1).saturating_sub(first).saturating_sub(on_doc_pages) as u32
    }

    fn block_bytes(&self, part: Part) -> usize {
        self.part_range(part).len()
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
            out.resize(start + shape.bytes(self.freq()), 0);
        }
        Some(shape)
    }
}

const NO_SKIP: Skip = Skip {
    prev_last_doc: -1,
    last_doc: TERMINATED,
    doc_start: 0,
    pos_start: 0,
    off_start: 0,
    bloom_start: 0,
    doc_end: 0,
    pos_end: 0,
    off_end: 0,
    bloom_end: 0,
    impact: BlockImpact::NONE,
    impacts: (0, 0),
};

/// The most bytes a record's sizes take to work out: a full header is flags
/// and at most eleven vints; a compact record's sizes come from its skip
/// entry and doc block (of up to 128 documents, at most 3 KB with the
/// header) or, of one document, from all of it. A read of the page a record
/// starts on holds them but when the record crosses into the next page.
const MAX_HEADER: usize = 4096;
const _: () = assert!(MAX_HEADER >= 1 + 6 * 10 + (20 + 128 * 11) + 2 * (1 + 16 * 32 + 1 + 2 * 7));

/// The end (in `data`) of the file page that byte `at` of `data` lies on.
fn page_end(data: &FileSlice, at: usize) -> usize {
    let (_, absolute) = data.position(at);
    at + (PAGE - absolute % PAGE) as usize
}

/// The document of the record at `offset` when it is a compact
/// one-document record, read from its flags and skip entry alone (a few
/// bytes; no skip list, no blocks): how a document is found by its `_id`.
/// `None` for any other record, which [`DiskPostings::open`] reads.
pub fn lone_doc(data: &FileSlice, offset: u64, max_doc: DocId) -> Result<Option<DocId>> {
    let name = data.name();
    let start = usize::try_from(offset).ok().filter(|&o| o < data.len());
    let Some(start) = start else {
        return Err(needle_core::Error::corrupt(name, format!("term record offset {offset} out of bounds")));
    };
    // Flags and a vint of at most ten bytes; on the record's page but when it ends there.
    let longest = (start + 11).min(data.len());
    let on_page = longest.min(page_end(data, start));
    let entry = match read_lone_entry(data, start, on_page) {
        Err(_) if on_page < longest => read_lone_entry(data, start, longest)?,
        read => read?,
    };
    let Some((entry, len)) = entry else { return Ok(None) };
    counters::record(DataKind::Skip, data, start, len);
    match u32::try_from(entry >> LONE_FREQ_BITS).ok().filter(|&doc| doc < max_doc) {
        Some(doc) => Ok(Some(doc)),
        None => Err(needle_core::Error::corrupt(name, "doc id out of range")),
    }
}

/// A lone record's skip entry and the bytes up to its end, from `data[start..end]`.
fn read_lone_entry(data: &FileSlice, start: usize, end: usize) -> Result<Option<(u64, usize)>> {
    let bytes = data.read(start..end)?;
    let mut r = ByteReader::at(data.name(), &bytes, data.position(start).1);
    let flags = r.u8()?;
    if flags & COMPACT != COMPACT || flags & COMPACT_BLOCK != 0 {
        return Ok(None);
    }
    let entry = r.vint()?;
    Ok(Some((entry, r.position())))
}

type Layout = (RecordHeader, Option<FilterShape>, SkipLayout);

/// Reads and checks a record's header: its sizes, filter shape and where its skip list is.
fn read_layout(data: &FileSlice, offset: u64) -> Result<Layout> {
    let name = data.name();
    let start = usize::try_from(offset).ok().filter(|&o| o < data.len());
    let Some(start) = start else {
        return Err(needle_core::Error::corrupt(name, format!("term record offset {offset} out of bounds")));
    };
    // Reading the header's longest size past the page the record starts on
    // would ask for a second page (the next record's) whenever a small record
    // ends near a page's end: read to the page's end first, further only when
    // the header does not end there.
    let longest = (start + MAX_HEADER).min(data.len());
    let on_page = longest.min(page_end(data, start));
    match parse_layout(data, start, &data.read(start..on_page)?) {
        Err(_) if on_page < longest => parse_layout(data, start, &data.read(start..longest)?),
        parsed => parsed,
    }
}

/// What a record's header declares.
struct Declared {
    flags: u8,
    doc_freq: u32,
    total_term_freq: u64,
    /// Bytes of the header before the skip index (or the skip entries).
    header_len: usize,
    index_len: usize,
    skip_len: usize,
    /// Bytes of the docs, positions, offsets and filters sections.
    lens: [usize; 4],
    bloom: Option<FilterShape>,
    compact: Option<[bool; 2]>,
}

/// [`read_layout`] over `bytes`, the file's from `start` on.
fn parse_layout(data: &FileSlice, start: usize, bytes: &[u8]) -> Result<Layout> {
    let name = data.name();
    let mut r = ByteReader::at(name, bytes, data.position(start).1);
    let flags = r.u8()?;
    let known = FLAG_POSITIONS
        | FLAG_OFFSETS
        | FLAG_BLOOM
        | FLAG_SKIP_INDEX
        | FLAG_FILTERS_FIRST
        | FLAG_PACKED_OFFSETS
        | FLAG_MIN_FREQ
        | FLAG_ONE_BLOCK;
    if flags & !known != 0 {
        return Err(r.corrupt("unknown record flags"));
    }
    let d = match flags & COMPACT == COMPACT {
        true if flags & COMPACT_BLOCK != 0 => read_compact_block(&mut r, flags)?,
        true => read_lone(&mut r, flags)?,
        false => read_sizes(&mut r, flags)?,
    };
    let blocks = (d.doc_freq as usize).div_ceil(BLOCK_LEN);
    let index_start = start + d.header_len;
    let header_and_skip = [d.index_len, d.skip_len].into_iter().try_fold(d.header_len, usize::checked_add);
    let record_end = d
        .lens
        .into_iter()
        .try_fold(start, usize::checked_add)
        .zip(header_and_skip)
        .and_then(|(end, header)| end.checked_add(header));
    let (Some(header_and_skip), Some(end)) = (header_and_skip, record_end) else {
        return Err(r.corrupt("record sizes overflow"));
    };
    if end > data.len() {
        return Err(r.corrupt("record longer than the postings file"));
    }
    let doc_base = start + header_and_skip;
    // Sections in file order, named by their index in `lens`.
    let order = if d.flags & FLAG_FILTERS_FIRST != 0 { [0, 3, 1, 2] } else { [0, 1, 2, 3] };
    let mut starts = [doc_base; 4];
    let mut at = doc_base;
    for s in order {
        starts[s] = at;
        at += d.lens[s];
    }
    let lone = d.flags & FLAG_ONE_BLOCK != 0 && d.doc_freq == 1;
    let layout = SkipLayout {
        sections: Sections {
            flags: d.flags,
            lone_freq: lone.then_some(d.total_term_freq as u32),
            compact: d.compact,
        },
        blocks,
        index: index_start..index_start + d.index_len,
        entries: index_start + d.index_len..doc_base,
        starts,
        lens: d.lens,
    };
    let [docs, positions, offsets, bloom] = d.lens;
    let header = RecordHeader {
        doc_freq: d.doc_freq,
        total_term_freq: d.total_term_freq,
        header_and_skip,
        docs,
        positions,
        offsets,
        bloom,
    };
    Ok((header, d.bloom, layout))
}

/// The sizes a full header declares (`r` past its flags).
fn read_sizes(r: &mut ByteReader, flags: u8) -> Result<Declared> {
    let doc_freq = r.vint_u32()?;
    let total_term_freq = r.vint()? + u64::from(doc_freq);
    // A one-document record (format 6) has no doc block, nor its size.
    let lone = flags & FLAG_ONE_BLOCK != 0 && doc_freq == 1;
    let skip_len = r.vint()? as usize;
    let docs_len = if lone { 0 } else { r.vint()? as usize };
    let pos_len = r.vint()? as usize;
    let off_len = r.vint()? as usize;
    let (bloom_len, bloom) = if flags & FLAG_BLOOM != 0 {
        let len = r.vint()? as usize;
        let shape = match r.vint_u32()? {
            0 => FilterShape::wiser(),
            max_insertions => {
                let fp_millionths = r.vint_u32()?;
                if !(1..=64).contains(&max_insertions) || !(1..=500_000).contains(&fp_millionths) {
                    return Err(r.corrupt("bad Bloom filter shape"));
                }
                FilterShape::new(max_insertions, fp_millionths)
            }
        };
        let min_freq = if flags & FLAG_MIN_FREQ != 0 { r.vint_u32()? } else { 1 };
        if min_freq == 0 {
            return Err(r.corrupt("bad Bloom filter shape"));
        }
        (len, Some(shape.with_min_freq(min_freq)))
    } else {
        (0, None)
    };
    let index_len = if flags & FLAG_SKIP_INDEX != 0 { r.vint()? as usize } else { 0 };
    let blocks = (doc_freq as usize).div_ceil(BLOCK_LEN);
    // A long list without an index is a version 1 record: its skip list is read whole.
    if index_len > 0 && blocks <= super::PAGE_BLOCKS {
        return Err(r.corrupt("skip index on a list of one page"));
    }
    if flags & FLAG_ONE_BLOCK != 0 {
        if blocks != 1 {
            return Err(r.corrupt("a one-block record of more than a block of documents"));
        }
        if lone && total_term_freq > u64::from(u32::MAX) {
            return Err(r.corrupt("a one-document record's frequency out of range"));
        }
    }
    Ok(Declared {
        flags,
        doc_freq,
        total_term_freq,
        header_len: r.position(),
        index_len,
        skip_len,
        lens: [docs_len, pos_len, off_len, bloom_len],
        bloom,
        compact: None,
    })
}

/// The sizes of a compact one-document record (format 8, `r` past its
/// flags), worked out from its flags, skip entry, positions and offsets.
fn read_lone(r: &mut ByteReader, flags: u8) -> Result<Declared> {
    let sides = [flags & LONE_BEFORE != 0, flags & LONE_AFTER != 0];
    let bloom = (flags & FLAG_BLOOM != 0).then(FilterShape::wiser);
    if bloom.is_none() && sides.contains(&true) {
        return Err(r.corrupt("a compact one-document record flags filters it does not store"));
    }
    // The skip entry: the doc and the frequency in one vint.
    let header_len = r.position();
    let freq = (r.vint()? & u64::from(LONE_MAX_FREQ - 1)) as u32 + 1;
    let skip_len = r.position() - header_len;
    let bloom_len = bloom.map_or(0, |shape| sides.iter().filter(|&&s| s).count() * shape.bytes(freq));
    r.take(bloom_len)?;
    let pos_len = if flags & FLAG_POSITIONS != 0 { skip_vints(r, freq)? } else { 0 };
    // The start deltas, then one length for all (plus 1), or 0 and each length.
    let off_len = if flags & FLAG_OFFSETS != 0 {
        let before = r.position();
        skip_vints(r, freq)?;
        if r.vint()? == 0 {
            skip_vints(r, freq)?;
        }
        r.position() - before
    } else {
        0
    };
    Ok(Declared {
        flags: as_one_block(flags & !(LONE_BEFORE | LONE_AFTER)),
        doc_freq: 1,
        total_term_freq: u64::from(freq),
        header_len,
        index_len: 0,
        skip_len,
        lens: [0, pos_len, off_len, bloom_len],
        bloom,
        compact: Some(sides),
    })
}

/// The sizes of a compact record of 2 to 128 documents (format 8, `r` past
/// its flags): those of its skip entry and doc block worked out from them.
fn read_compact_block(r: &mut ByteReader, flags: u8) -> Result<Declared> {
    if flags & (FLAG_FILTERS_FIRST | FLAG_MIN_FREQ) != 0 {
        return Err(r.corrupt("a compact record with flags it cannot have"));
    }
    let doc_freq = r.vint_u32()?;
    if !(2..=BLOCK_LEN as u32).contains(&doc_freq) {
        return Err(r.corrupt("a compact record of more than a block, or of one document"));
    }
    let total_term_freq = r.vint()? + u64::from(doc_freq);
    let mut stored_len = |flag: u8| if flags & flag != 0 { r.vint().map(|v| v as usize) } else { Ok(0) };
    let (pos_len, off_len, bloom_len) =
        (stored_len(FLAG_POSITIONS)?, stored_len(FLAG_OFFSETS)?, stored_len(FLAG_BLOOM)?);
    let header_len = r.position();
    r.vint()?; // the skip entry: its last doc, then its impacts
    for _ in 0..r.vint()? {
        r.vint()?;
        r.u8()?;
    }
    let skip_len = r.position() - header_len;
    let docs_start = r.position();
    if doc_freq < BLOCK_LEN as u32 {
        skip_vints(r, 2 * doc_freq)?; // doc gaps, then frequencies
    } else {
        for _ in 0..2 {
            let (_, end) = full_block_end(r.rest(), 0);
            r.take(end)?;
        }
    }
    Ok(Declared {
        flags: as_one_block(flags & !COMPACT_BLOCK),
        doc_freq,
        total_term_freq,
        header_len,
        index_len: 0,
        skip_len,
        lens: [r.position() - docs_start, pos_len, off_len, bloom_len],
        bloom: (flags & FLAG_BLOOM != 0).then(FilterShape::wiser),
        compact: None,
    })
}

/// A compact record's flags (bits 4-6 cleared) as those of the one-block
/// record it is read as: offsets packed, filters first.
fn as_one_block(flags: u8) -> u8 {
    let implied = [(FLAG_OFFSETS, FLAG_PACKED_OFFSETS), (FLAG_BLOOM, FLAG_FILTERS_FIRST)];
    implied
        .iter()
        .fold(flags & !FLAG_SKIP_INDEX, |f, &(has, implies)| if f & has != 0 { f | implies } else { f })
}

/// Reads past `n` vints; returns the bytes they took.
fn skip_vints(r: &mut ByteReader, n: u32) -> Result<usize> {
    let before = r.position();
    for _ in 0..n {
        r.vint()?;
    }
    Ok(r.position() - before)
}

/// The header of the record at `offset`, checked.
pub fn read_header(data: &FileSlice, offset: u64) -> Result<RecordHeader> {
    read_layout(data, offset).map(|(header, _, _)| header)
}
