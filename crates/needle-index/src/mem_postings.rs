//! Posting lists of an in-memory segment, as bytes in the segment's arena
//! (see `arena`), in blocks of [`BLOCK_LEN`] postings.
//!
//! A posting is written once and never changed: `vint(delta << 1 | freq == 1)`
//! (the document less the one before it in the list, 0 before the first),
//! then `vint(freq)` unless it is 1, then its occurrences (see
//! [`encode_occurrences`]) when the field has positions, then its before and
//! its after filter, each of the size its frequency calls for, when the field
//! has filters. A term's postings are one chain of the arena's slices; the
//! term keeps each block's place in it, last document, bound and frequency
//! sum, so in-memory lists skip and prune by blocks as on-disk ones do. A
//! reader copies the blocks' places under the segment's lock and decodes a
//! block at a time; it sees a prefix: the documents below the segment's size
//! when its view was taken.

use needle_codecs::bloom::{self, FilterShape, Side};
use needle_codecs::bytes::{read_vint_lenient, write_vint};

use crate::arena::{Arena, Cursor, Pages};
use crate::flat_postings::FlatPostings;
use needle_codecs::{BlockImpact, Postings, BLOCK_LEN};
use needle_core::{DocId, DocSet, TERMINATED};
/// One occurrence of a term in a document: its position and byte offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Occurrence {
    pub position: u32,
    pub start: u32,
    pub end: u32,
}

/// Appends one posting's occurrences as vints: each position and start as
/// the difference from the one before it in the posting (the first from 0),
/// and the length. About 4 bytes an occurrence where plain numbers took 12:
/// positions and offsets are most of an in-memory segment.
pub(crate) fn encode_occurrences(occurrences: &[Occurrence], out: &mut Vec<u8>) {
    let (mut position, mut start) = (0u32, 0u32);
    for o in occurrences {
        for v in [o.position.wrapping_sub(position), o.start.wrapping_sub(start), o.end.wrapping_sub(o.start)]
        {
            write_vint(out, u64::from(v));
        }
        (position, start) = (o.position, o.start);
    }
}

/// Decodes `n` occurrences from the front of `bytes` (see [`encode_occurrences`]).
fn decode_occurrences(bytes: &[u8], n: usize, mut emit: impl FnMut(Occurrence)) {
    let (mut at, mut position, mut start) = (0, 0u32, 0u32);
    for _ in 0..n {
        position = position.wrapping_add(read_vint_lenient(bytes, &mut at) as u32);
        start = start.wrapping_add(read_vint_lenient(bytes, &mut at) as u32);
        let end = start.wrapping_add(read_vint_lenient(bytes, &mut at) as u32);
        emit(Occurrence { position, start, end });
    }
}

/// The bytes `n` encoded occurrences take at the front of `bytes`: three
/// vints each, so as many bytes without the continuation bit.
fn occurrences_len(bytes: &[u8], n: usize) -> usize {
    let mut left = 3 * n;
    let mut len = 0;
    while left > 0 && len < bytes.len() {
        left -= usize::from(bytes[len] < 0x80);
        len += 1;
    }
    len
}

/// A block of a term's postings: where its bytes are, and what a reader
/// skips and prunes by.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Block {
    /// Where its bytes start in the term's chain, and how many.
    start: Cursor,
    len: u32,
    count: u32,
    last_doc: DocId,
    impact: BlockImpact,
    /// The sum of its postings' frequencies.
    freqs: u64,
}

impl Default for Block {
    fn default() -> Self {
        Block { start: Cursor::default(), len: 0, count: 0, last_doc: 0, impact: BlockImpact::NONE, freqs: 0 }
    }
}

/// One term's postings: its full blocks, and the one being filled.
#[derive(Default)]
pub(crate) struct TermBuf {
    full: Vec<Block>,
    open: Block,
    /// The end of the term's chain.
    end: Cursor,
    first_doc: DocId,
}

/// A posting to file: its occurrences encoded, and its filters (empty for
/// a field without them).
pub(crate) struct NewPosting<'a> {
    pub doc: DocId,
    pub freq: u32,
    pub norm: u8,
    pub occurrences: &'a [u8],
    pub before: &'a [u8],
    pub after: &'a [u8],
}

impl TermBuf {
    pub fn last_doc(&self) -> Option<DocId> {
        match self.open.count {
            0 => self.full.last().map(|b| b.last_doc),
            _ => Some(self.open.last_doc),
        }
    }

    pub fn first_doc(&self) -> Option<DocId> {
        self.last_doc().map(|_| self.first_doc)
    }

    /// Appends a posting (for a document after every one already here).
    /// Asks for the arena's bytes where the next posting goes to be brought into the cache.
    #[inline]
    pub fn prefetch_end(&self, arena: &Arena) {
        if self.open.count > 0 || !self.full.is_empty() {
            arena.prefetch(self.end);
        }
    }

    pub fn push(&mut self, arena: &mut Arena, p: NewPosting<'_>) {
        let previous = self.last_doc();
        if self.open.count as usize == BLOCK_LEN {
            self.full.push(std::mem::take(&mut self.open));
            self.open.start = self.end;
        }
        let mut head = [0u8; 20];
        let len = {
            let mut h = &mut head[..];
            let delta = u64::from(p.doc - previous.unwrap_or(0));
            write_vint_into(&mut h, delta << 1 | u64::from(p.freq == 1));
            if p.freq != 1 {
                write_vint_into(&mut h, u64::from(p.freq));
            }
            20 - h.len()
        };
        let bytes = len + p.occurrences.len() + p.before.len() + p.after.len();
        if previous.is_none() {
            // Most terms are seen once: a chain's first slice holds its first posting exactly.
            self.end = arena.chain(bytes);
            self.open.start = self.end;
            self.first_doc = p.doc;
        }
        for part in [&head[..len], p.occurrences, p.before, p.after] {
            arena.append(&mut self.end, part);
        }
        let open = &mut self.open;
        open.len += bytes as u32;
        open.count += 1;
        open.last_doc = p.doc;
        open.freqs += u64::from(p.freq);
        open.impact = open.impact.merge(BlockImpact { max_freq: p.freq, min_norm: p.norm });
    }

    /// Every block, the one being filled last (when it has postings).
    fn blocks(&self) -> impl Iterator<Item = Block> + '_ {
        self.full.iter().copied().chain(Some(self.open).filter(|b| b.count > 0))
    }

    /// The postings below `max_doc` in the layout the segment writer takes,
    /// into `out` (cleared first, so one buffer serves every term of a
    /// flush; `bytes` likewise).
    pub fn flat_into(
        &self,
        pages: &Pages,
        max_doc: DocId,
        field: FieldShape,
        out: &mut FlatPostings,
        bytes: &mut Vec<u8>,
    ) {
        out.clear();
        let mut base = 0;
        for block in self.blocks() {
            pages.read(block.start, block.len, bytes);
            let bytes = &bytes[..];
            let ended = walk(bytes, base, max_doc, field, |p| {
                out.docs.push(p.doc);
                out.freqs.push(p.freq);
                if field.positions {
                    decode_occurrences(&bytes[p.occurrences..], p.freq as usize, |o| {
                        out.positions.push(o.position);
                        out.offsets.push((o.start, o.end));
                    });
                }
                if let Some(shape) = field.bloom {
                    let len = shape.bytes(p.freq);
                    out.before.extend_from_slice(&bytes[p.filters..p.filters + len]);
                    out.after.extend_from_slice(&bytes[p.filters + len..p.filters + 2 * len]);
                }
            });
            if ended {
                break;
            }
            base = block.last_doc;
        }
    }
}

/// `write_vint` into a fixed buffer, moving it past what was written.
fn write_vint_into(out: &mut &mut [u8], mut v: u64) {
    let mut i = 0;
    while v >= 0x80 {
        out[i] = (v as u8) | 0x80;
        v >>= 7;
        i += 1;
    }
    out[i] = v as u8;
    *out = &mut std::mem::take(out)[i + 1..];
}

/// What a field's postings hold besides documents and frequencies.
#[derive(Clone, Copy)]
pub(crate) struct FieldShape {
    pub positions: bool,
    /// The filters' shape, when the field has them.
    pub bloom: Option<FilterShape>,
}

/// A posting decoded from a block: where its occurrences and filters start.
struct Decoded {
    doc: DocId,
    freq: u32,
    occurrences: usize,
    filters: usize,
}

/// Calls `each` with the postings of a block's `bytes` below `max_doc`
/// (`base`: the document before the block's first); returns whether it
/// stopped at `max_doc`.
fn walk(bytes: &[u8], base: DocId, max_doc: DocId, shape: FieldShape, mut each: impl FnMut(Decoded)) -> bool {
    let (mut at, mut doc) = (0, base);
    while at < bytes.len() {
        let code = read_vint_lenient(bytes, &mut at);
        doc += (code >> 1) as DocId;
        if doc >= max_doc {
            return true;
        }
        let freq = if code & 1 == 1 { 1 } else { read_vint_lenient(bytes, &mut at) as u32 };
        let occurrences = at;
        if shape.positions {
            at += occurrences_len(&bytes[at..], freq as usize);
        }
        let filters = at;
        at += shape.bloom.map_or(0, |s| 2 * s.bytes(freq));
        each(Decoded { doc, freq, occurrences, filters });
    }
    false
}

pub(crate) struct MemPostings {
    pages: Pages,
    /// The blocks holding visible postings (the last cut to what is visible).
    blocks: Vec<Block>,
    shape: FieldShape,
    /// The current block, decoded: its bytes, and each posting's document,
    /// frequency, and where its occurrences and filters start.
    chunk: usize,
    loaded: Option<usize>,
    bytes: Vec<u8>,
    docs: Vec<DocId>,
    freqs: Vec<u32>,
    starts: Vec<(u32, u32)>,
    idx: usize,
    doc: DocId,
    doc_freq: u32,
    max_impact: BlockImpact,
}

impl MemPostings {
    /// The postings of `term` for documents below `max_doc`.
    pub fn new(term: &TermBuf, pages: Pages, max_doc: DocId, shape: FieldShape) -> Self {
        let mut blocks: Vec<Block> = Vec::with_capacity(term.full.len() + 1);
        for b in term.blocks() {
            let past = b.last_doc >= max_doc;
            blocks.push(b);
            if past {
                break;
            }
        }
        let mut p = MemPostings {
            pages,
            blocks,
            shape,
            chunk: 0,
            loaded: None,
            bytes: Vec::new(),
            docs: Vec::new(),
            freqs: Vec::new(),
            starts: Vec::new(),
            idx: 0,
            doc: TERMINATED,
            doc_freq: 0,
            max_impact: BlockImpact::NONE,
        };
        p.cut_to(max_doc);
        p.doc_freq = p.blocks.iter().map(|b| b.count).sum();
        p.max_impact = p.blocks.iter().fold(BlockImpact::NONE, |a, b| a.merge(b.impact));
        if !p.blocks.is_empty() {
            p.enter(0, 0);
        }
        p
    }

    /// Cuts the last block to its postings below `max_doc` (dropped when none are).
    fn cut_to(&mut self, max_doc: DocId) {
        let Some(last) = self.blocks.len().checked_sub(1) else { return };
        if self.blocks[last].last_doc < max_doc {
            return;
        }
        self.load(last, max_doc);
        let block = &mut self.blocks[last];
        block.count = self.docs.len() as u32;
        block.freqs = self.freqs.iter().map(|&f| u64::from(f)).sum();
        match self.docs.last() {
            Some(&d) => block.last_doc = d,
            None => {
                self.blocks.pop();
                self.loaded = None;
            }
        }
    }

    /// Decodes block `c`'s postings below `max_doc`.
    fn load(&mut self, c: usize, max_doc: DocId) {
        let block = self.blocks[c];
        self.pages.read(block.start, block.len, &mut self.bytes);
        let base = c.checked_sub(1).map_or(0, |p| self.blocks[p].last_doc);
        (self.docs.clear(), self.freqs.clear(), self.starts.clear());
        let (docs, freqs, starts) = (&mut self.docs, &mut self.freqs, &mut self.starts);
        walk(&self.bytes, base, max_doc, self.shape, |p| {
            docs.push(p.doc);
            freqs.push(p.freq);
            starts.push((p.occurrences as u32, p.filters as u32));
        });
        self.loaded = Some(c);
    }

    /// The first block at or after the current one holding a document `>= target`.
    fn chunk_for(&self, target: DocId) -> Option<usize> {
        (self.chunk..self.blocks.len()).find(|&c| self.blocks[c].last_doc >= target)
    }

    /// Block `c`'s postings, decoded if they are not already.
    fn decoded(&mut self, c: usize) -> &[DocId] {
        if self.loaded != Some(c) {
            self.load(c, self.blocks[c].last_doc + 1);
        }
        &self.docs
    }

    fn enter(&mut self, c: usize, idx: usize) -> DocId {
        self.decoded(c);
        self.chunk = c;
        self.idx = idx;
        self.doc = self.docs[idx];
        self.doc
    }

    fn end(&mut self) -> DocId {
        self.doc = TERMINATED;
        TERMINATED
    }

    /// Calls `emit` with each of the current posting's occurrences.
    fn occurrences(&mut self, emit: impl FnMut(Occurrence)) {
        let start = self.starts[self.idx].0 as usize;
        decode_occurrences(&self.bytes[start..], self.freq() as usize, emit);
    }

    /// The current document's filter on `side`.
    fn filter(&self, side: Side, shape: FilterShape) -> Option<&[u8]> {
        let len = shape.bytes(self.freq());
        let at = self.starts[self.idx].1 as usize + if side == Side::After { len } else { 0 };
        self.bytes.get(at..at + len)
    }
}

impl DocSet for MemPostings {
    fn doc(&self) -> DocId {
        self.doc
    }

    fn advance(&mut self) -> DocId {
        if self.doc == TERMINATED {
            return TERMINATED;
        }
        if self.idx + 1 < self.docs.len() {
            self.idx += 1;
            self.doc = self.docs[self.idx];
            return self.doc;
        }
        if self.chunk + 1 < self.blocks.len() {
            return self.enter(self.chunk + 1, 0);
        }
        self.end()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if target <= self.doc {
            return self.doc;
        }
        let Some(c) = self.chunk_for(target) else { return self.end() };
        let from = if c == self.chunk { self.idx } else { 0 };
        let idx = from + self.decoded(c)[from..].partition_point(|&d| d < target);
        self.enter(c, idx)
    }

    fn cost(&self) -> u64 {
        u64::from(self.doc_freq)
    }
}

impl Postings for MemPostings {
    fn doc_freq(&self) -> u32 {
        self.doc_freq
    }

    fn freq(&self) -> u32 {
        match self.doc {
            TERMINATED => 0,
            _ => self.freqs[self.idx],
        }
    }

    fn positions(&mut self, out: &mut Vec<u32>) {
        out.clear();
        if self.shape.positions && self.doc != TERMINATED {
            self.occurrences(|o| out.push(o.position));
        }
    }

    fn offsets(&mut self, out: &mut Vec<(u32, u32)>) {
        out.clear();
        if self.shape.positions && self.doc != TERMINATED {
            self.occurrences(|o| out.push((o.start, o.end)));
        }
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        self.chunk_for(target).map_or(TERMINATED, |c| self.blocks[c].last_doc)
    }

    fn impact(&mut self, from: DocId, to: DocId) -> BlockImpact {
        let Some(first) = self.chunk_for(from) else { return BlockImpact::NONE };
        let mut bound = BlockImpact::NONE;
        for b in &self.blocks[first..] {
            bound = bound.merge(b.impact);
            if b.last_doc >= to {
                break;
            }
        }
        bound
    }

    fn max_impact(&self) -> BlockImpact {
        self.max_impact
    }

    fn total_term_freq(&self) -> u64 {
        self.blocks.iter().map(|b| b.freqs).sum()
    }

    fn block_ahead(&self) -> &[DocId] {
        match self.doc {
            TERMINATED => &[],
            _ => &self.docs[self.idx + 1..],
        }
    }

    fn block_rest(&self) -> (&[DocId], &[u32]) {
        match self.doc {
            TERMINATED => (&[], &[]),
            _ => (&self.docs[self.idx..], &self.freqs[self.idx..]),
        }
    }

    fn advance_by(&mut self, n: usize) -> DocId {
        if n == 0 || self.doc == TERMINATED {
            return self.doc;
        }
        self.idx += n - 1;
        self.advance()
    }

    fn bloom_test(&mut self, side: Side, hash: u64) -> Option<bool> {
        let shape = self.shape.bloom?;
        let freq = self.freq();
        if !shape.stores(freq) {
            return None;
        }
        let filter = self.filter(side, shape)?;
        Some(filter.iter().any(|&b| b != 0) && bloom::may_contain(filter, hash, shape.hashes(freq)))
    }

    fn filters_into(&mut self, before: &mut Vec<u8>, after: &mut Vec<u8>) -> Option<FilterShape> {
        let shape = self.shape.bloom?;
        for (side, out) in [(Side::Before, before), (Side::After, after)] {
            out.extend_from_slice(self.filter(side, shape)?);
        }
        Some(shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: FieldShape = FieldShape { positions: true, bloom: None };

    /// `freq` occurrences for doc `d`: positions `10 d + i`, offsets `(p, p + 1)`.
    fn occurrences(d: u32, freq: u32) -> Vec<Occurrence> {
        (0..freq).map(|i| 10 * d + i).map(|p| Occurrence { position: p, start: p, end: p + 1 }).collect()
    }

    /// Doc `d`'s occurrences in [`list`].
    fn occurrences_of(d: u32) -> Vec<Occurrence> {
        occurrences(d, 1 + d % 3)
    }

    fn push(
        arena: &mut Arena,
        t: &mut TermBuf,
        doc: DocId,
        norm: u8,
        occ: &[Occurrence],
        filters: [&[u8]; 2],
    ) {
        let mut encoded = Vec::new();
        encode_occurrences(occ, &mut encoded);
        let [before, after] = filters;
        let freq = occ.len() as u32;
        t.push(arena, NewPosting { doc, freq, norm, occurrences: &encoded, before, after });
    }

    /// Docs 0, 2, 4, ... (n of them), doc d with frequency 1 + d % 3 and norm d % 7.
    fn list(n: u32) -> (Arena, TermBuf) {
        let (mut arena, mut t) = (Arena::default(), TermBuf::default());
        for d in (0..n).map(|i| 2 * i) {
            push(&mut arena, &mut t, d, (d % 7) as u8, &occurrences_of(d), [&[], &[]]);
        }
        (arena, t)
    }

    /// The current posting's positions and offsets, as occurrences.
    fn read_occurrences(p: &mut MemPostings) -> Vec<Occurrence> {
        let (mut positions, mut offsets) = (Vec::new(), Vec::new());
        p.positions(&mut positions);
        p.offsets(&mut offsets);
        positions
            .iter()
            .zip(offsets)
            .map(|(&position, (start, end))| Occurrence { position, start, end })
            .collect()
    }

    fn all_docs(p: &mut MemPostings) -> Vec<DocId> {
        let mut all = Vec::new();
        while p.doc() != TERMINATED {
            all.push(p.doc());
            p.advance();
        }
        all
    }

    proptest::proptest! {
        #[test]
        fn encoded_occurrences_round_trip(
            postings in proptest::collection::vec(
                proptest::collection::vec((0u32.., 0u32.., 0u32..), 0..20), 0..10),
        ) {
            let postings: Vec<Vec<Occurrence>> = postings
                .iter()
                .map(|p| p.iter().map(|&(position, start, end)| Occurrence { position, start, end }).collect())
                .collect();
            let mut bytes = Vec::new();
            for p in &postings {
                encode_occurrences(p, &mut bytes);
            }
            let mut at = 0;
            for p in &postings {
                let mut back = Vec::new();
                decode_occurrences(&bytes[at..], p.len(), |o| back.push(o));
                proptest::prop_assert_eq!(&back, p);
                at += occurrences_len(&bytes[at..], p.len());
            }
            proptest::prop_assert_eq!(at, bytes.len());
        }

        /// Random gaps and frequencies, a keyword field's postings (no
        /// occurrences), read whole and through a view cut at a random document.
        #[test]
        fn postings_without_occurrences_read_back(
            postings in proptest::collection::vec((1u32..5000, 1u32..400), 1..600),
            cut in 0u32..2_000_000,
        ) {
            let (mut arena, mut t) = (Arena::default(), TermBuf::default());
            let mut docs = Vec::new();
            let mut doc = 0;
            for &(gap, freq) in &postings {
                doc += gap;
                docs.push((doc, freq));
                t.push(&mut arena, NewPosting { doc, freq, norm: 0, occurrences: &[], before: &[], after: &[] });
            }
            let keyword = FieldShape { positions: false, bloom: None };
            let want: Vec<(DocId, u32)> = docs.iter().copied().filter(|&(d, _)| d < cut).collect();
            let (mut flat, mut bytes) = (FlatPostings::default(), Vec::new());
            t.flat_into(&arena.pages(), cut, keyword, &mut flat, &mut bytes);
            let got: Vec<(DocId, u32)> = flat.docs.iter().copied().zip(flat.freqs.iter().copied()).collect();
            proptest::prop_assert_eq!(&got, &want);
            let mut p = MemPostings::new(&t, arena.pages(), cut, keyword);
            proptest::prop_assert_eq!(p.doc_freq() as usize, want.len());
            proptest::prop_assert_eq!(p.total_term_freq(), want.iter().map(|&(_, f)| u64::from(f)).sum::<u64>());
            let mut read = Vec::new();
            while p.doc() != TERMINATED {
                read.push((p.doc(), p.freq()));
                p.advance();
            }
            proptest::prop_assert_eq!(read, want);
        }
    }

    #[test]
    fn occurrences_are_found_in_order_and_after_seeks() {
        let (arena, term) = list(300);
        let mut p = MemPostings::new(&term, arena.pages(), 600, TEXT);
        while p.doc() != TERMINATED {
            assert_eq!(read_occurrences(&mut p), occurrences_of(p.doc()), "doc {} in order", p.doc());
            p.advance();
        }
        let mut p = MemPostings::new(&term, arena.pages(), 600, TEXT);
        for target in [4, 6, 100, 254, 256, 258, 500] {
            assert_eq!(p.seek(target), target);
            assert_eq!(read_occurrences(&mut p), occurrences_of(target), "doc {target} after a seek");
        }
        let (mut flat, mut bytes) = (FlatPostings::default(), Vec::new());
        term.flat_into(&arena.pages(), 400, TEXT, &mut flat, &mut bytes);
        let want: Vec<Occurrence> = (0..200).flat_map(|i| occurrences_of(2 * i)).collect();
        assert_eq!(flat.docs, (0..200).map(|i| 2 * i).collect::<Vec<_>>());
        assert_eq!(flat.freqs, (0..200).map(|i| 1 + 2 * i % 3).collect::<Vec<_>>());
        assert_eq!(flat.positions, want.iter().map(|o| o.position).collect::<Vec<_>>());
        assert_eq!(flat.offsets, want.iter().map(|o| (o.start, o.end)).collect::<Vec<_>>());
    }

    #[test]
    fn walks_seeks_and_bounds_across_blocks_and_sees_only_its_prefix() {
        let (arena, term) = list(300);
        let mut p = MemPostings::new(&term, arena.pages(), 401, TEXT);
        assert_eq!(p.doc_freq(), 201, "docs 0..=400");
        let ttf: u64 = (0..=200u32).map(|i| u64::from(1 + 2 * i % 3)).sum();
        assert_eq!(p.total_term_freq(), ttf);
        assert_eq!(all_docs(&mut p), (0..=200).map(|i| 2 * i).collect::<Vec<_>>());
        let mut p = MemPostings::new(&term, arena.pages(), 401, TEXT);
        assert_eq!(p.seek(255), 256);
        assert_eq!(p.block_end(257), 400, "the second block, as far as the view sees it");
        assert_eq!(p.block_ahead().len(), 72, "docs 258..=400");
        let mut pos = Vec::new();
        p.positions(&mut pos);
        assert_eq!(pos.len() as u32, 1 + 256 % 3);
        assert_eq!(p.impact(0, 10), BlockImpact { max_freq: 3, min_norm: 0 });
        assert_eq!(p.seek(1000), TERMINATED);
        assert_eq!(MemPostings::new(&term, arena.pages(), 0, TEXT).doc(), TERMINATED);
        // A view ending right after a full block, and one inside the first.
        let mut p = MemPostings::new(&term, arena.pages(), 256, TEXT);
        assert_eq!((p.doc_freq(), p.block_end(0)), (128, 254));
        assert_eq!(all_docs(&mut p).len(), 128);
        assert_eq!(MemPostings::new(&term, arena.pages(), 7, TEXT).doc_freq(), 4);
    }

    #[test]
    fn packed_filters_are_found_in_order_and_after_seeks() {
        let bloom = needle_codecs::bloom::BloomParams::for_rate(5, 0.0009, vec![]).shape;
        let shape = FieldShape { positions: true, bloom: Some(bloom) };
        let filter = |d: u32, side: u8| vec![(d as u8) ^ side; bloom.bytes(1 + d % 7)];
        let (mut arena, mut t) = (Arena::default(), TermBuf::default());
        for d in 0..300 {
            let occ = occurrences(d, 1 + d % 7);
            push(&mut arena, &mut t, d, 0, &occ, [&filter(d, 0), &filter(d, 0xff)]);
        }
        let term = t;
        let read = |p: &mut MemPostings| {
            let (mut before, mut after) = (Vec::new(), Vec::new());
            assert_eq!(p.filters_into(&mut before, &mut after), Some(bloom));
            (before, after)
        };
        let mut p = MemPostings::new(&term, arena.pages(), 300, shape);
        for d in 0..300 {
            assert_eq!(p.doc(), d);
            assert_eq!(read(&mut p), (filter(d, 0), filter(d, 0xff)), "doc {d} in order");
            assert_eq!(read_occurrences(&mut p), occurrences(d, 1 + d % 7));
            p.advance();
        }
        let mut p = MemPostings::new(&term, arena.pages(), 300, shape);
        for target in [5, 6, 90, 127, 128, 200, 299] {
            assert_eq!(p.seek(target), target);
            assert_eq!(read(&mut p), (filter(target, 0), filter(target, 0xff)), "doc {target} after a seek");
        }
        let (mut flat, mut bytes) = (FlatPostings::default(), Vec::new());
        term.flat_into(&arena.pages(), 250, shape, &mut flat, &mut bytes);
        assert_eq!(flat.before, (0..250).flat_map(|d| filter(d, 0)).collect::<Vec<_>>());
        assert_eq!(flat.after, (0..250).flat_map(|d| filter(d, 0xff)).collect::<Vec<_>>());
    }

    #[test]
    fn a_reader_sees_what_was_there_when_it_looked() {
        let (mut arena, mut t) = list(130);
        let mut held = MemPostings::new(&t, arena.pages(), DocId::MAX - 1, TEXT);
        // Fill the open block past its slices, and more blocks.
        for d in (130..2000).map(|i| 2 * i) {
            push(&mut arena, &mut t, d, 0, &occurrences(d, 40), [&[], &[]]);
        }
        assert_eq!(held.doc_freq(), 130);
        assert_eq!(all_docs(&mut held), (0..130).map(|i| 2 * i).collect::<Vec<_>>());
        let mut now = MemPostings::new(&t, arena.pages(), DocId::MAX - 1, TEXT);
        assert_eq!(now.doc_freq(), 2000);
        assert_eq!(now.seek(3998), 3998);
        assert_eq!(read_occurrences(&mut now), occurrences(3998, 40));
    }
}
