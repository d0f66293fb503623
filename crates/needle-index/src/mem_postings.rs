//! Posting lists of an in-memory segment, in chunks of [`BLOCK_LEN`] postings.
//!
//! A chunk is what the writer appends to and a reader may be holding at the
//! same time: the writer appends through `Arc::make_mut`, so a chunk a reader
//! holds is copied before it changes, never changed under it, and that copy
//! is at most one chunk (a whole list would be megabytes for a common term,
//! copied at every add while a query on it runs). Full chunks are never
//! copied. A chunk also keeps its block bound, so in-memory lists prune by
//! blocks as on-disk ones do. A reader sees a prefix: the documents below
//! the segment's size when its view was taken.

use std::sync::Arc;

use needle_codecs::bloom::{self, FilterShape, Side};
use needle_codecs::bytes::{read_vint_lenient, write_vint};

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

/// Up to [`BLOCK_LEN`] postings of one term: four vectors, so the many terms
/// seen once cost few allocations. A posting's occurrences and filters are
/// found by summing the frequencies and filter sizes of the postings before
/// it (a reader keeps its place, so reading in order sums each once).
#[derive(Clone)]
pub(crate) struct Chunk {
    pub docs: Vec<DocId>,
    pub freqs: Vec<u32>,
    /// Each posting's occurrences (`freq` of them, see [`encode_occurrences`]),
    /// one posting after another (empty for a field without positions).
    pub occurrences: Vec<u8>,
    /// Each posting's before filter then its after filter, each of the size
    /// its frequency calls for (most postings occur once: 2 bytes, not the 9
    /// of the largest), one posting after another (empty without filters).
    pub filters: Vec<u8>,
    pub impact: BlockImpact,
}

impl Chunk {
    /// A chunk for a term's next postings: room for a whole block when the
    /// term already filled one (it is a common term), else as small as can be.
    fn for_list(full_chunks: usize) -> Self {
        let room = if full_chunks > 0 { BLOCK_LEN } else { 0 };
        Chunk {
            docs: Vec::with_capacity(room),
            freqs: Vec::with_capacity(room),
            occurrences: Vec::new(),
            filters: Vec::new(),
            impact: BlockImpact::NONE,
        }
    }
}

/// One term's postings.
#[derive(Default)]
pub(crate) struct TermBuf {
    pub chunks: Vec<Arc<Chunk>>,
}

impl TermBuf {
    pub fn last_doc(&self) -> Option<DocId> {
        self.chunks.last().and_then(|c| c.docs.last().copied())
    }

    pub fn first_doc(&self) -> Option<DocId> {
        self.chunks.first().and_then(|c| c.docs.first().copied())
    }

    /// Starts a posting for `doc` (after every document already here):
    /// the chunk to write it in, copied first if a reader holds it.
    pub fn push(&mut self, doc: DocId, freq: u32, norm: u8) -> &mut Chunk {
        if self.chunks.last().is_none_or(|c| c.docs.len() >= BLOCK_LEN) {
            if self.chunks.capacity() == 0 {
                // Most terms never fill a chunk.
                self.chunks.reserve_exact(1);
            }
            self.chunks.push(Arc::new(Chunk::for_list(self.chunks.len())));
        }
        let chunk = Arc::make_mut(self.chunks.last_mut().expect("a chunk was pushed"));
        chunk.docs.push(doc);
        chunk.freqs.push(freq);
        chunk.impact = chunk.impact.merge(BlockImpact { max_freq: freq, min_norm: norm });
        chunk
    }

    /// One more occurrence in the last posting (a keyword value repeated in a document).
    pub fn bump_last(&mut self) {
        if let Some(chunk) = self.chunks.last_mut().map(Arc::make_mut) {
            if let Some(f) = chunk.freqs.last_mut() {
                *f += 1;
                chunk.impact.max_freq = chunk.impact.max_freq.max(*f);
            }
        }
    }

    /// The first `n` postings (every one of chunks before the last) in the
    /// layout the segment writer takes, into `out` (cleared first, so one
    /// buffer serves every term of a flush).
    pub fn flat_into(&self, n: usize, bloom: Option<FilterShape>, out: &mut FlatPostings) {
        out.clear();
        let mut left = n;
        for c in &self.chunks {
            let take = left.min(c.docs.len());
            if take == 0 {
                break;
            }
            left -= take;
            out.docs.extend_from_slice(&c.docs[..take]);
            out.freqs.extend_from_slice(&c.freqs[..take]);
            // A field without positions keeps no occurrences.
            let freqs = if c.occurrences.is_empty() { &[][..] } else { &c.freqs[..take] };
            let mut at = 0;
            for &f in freqs {
                let bytes = &c.occurrences[at..];
                decode_occurrences(bytes, f as usize, |o| {
                    out.positions.push(o.position);
                    out.offsets.push((o.start, o.end));
                });
                at += occurrences_len(bytes, f as usize);
            }
            if let Some(shape) = bloom {
                let mut at = 0;
                for &f in &c.freqs[..take] {
                    let len = shape.bytes(f);
                    out.before.extend_from_slice(&c.filters[at..at + len]);
                    out.after.extend_from_slice(&c.filters[at + len..at + 2 * len]);
                    at += 2 * len;
                }
            }
        }
    }
}

pub(crate) struct MemPostings {
    /// The chunks holding visible postings.
    chunks: Vec<Arc<Chunk>>,
    /// Postings visible in each chunk (a prefix of the list: full chunks, then a part).
    visible: Vec<usize>,
    chunk: usize,
    idx: usize,
    doc: DocId,
    doc_freq: u32,
    max_impact: BlockImpact,
    positions: bool,
    /// The filters' shape, when the field has them.
    bloom: Option<FilterShape>,
    /// The last posting whose occurrences and filters were found, and where.
    place: Place,
}

/// Where posting `idx` of chunk `chunk` has its occurrences and filters start.
#[derive(Clone, Copy, Default)]
struct Place {
    chunk: usize,
    idx: usize,
    occurrence: usize,
    filter: usize,
}

impl MemPostings {
    /// The postings of `term` for documents below `max_doc`.
    pub fn new(term: &TermBuf, max_doc: DocId, positions: bool, bloom: Option<FilterShape>) -> Self {
        let mut visible = Vec::with_capacity(term.chunks.len());
        for c in &term.chunks {
            let n = c.docs.partition_point(|&d| d < max_doc);
            if n == 0 {
                break;
            }
            visible.push(n);
        }
        let chunks = term.chunks[..visible.len()].to_vec();
        let doc_freq = visible.iter().sum::<usize>() as u32;
        let max_impact = chunks.iter().fold(BlockImpact::NONE, |a, c| a.merge(c.impact));
        let doc = if visible.is_empty() { TERMINATED } else { chunks[0].docs[0] };
        MemPostings {
            chunks,
            visible,
            chunk: 0,
            idx: 0,
            doc,
            doc_freq,
            max_impact,
            positions,
            bloom,
            place: Place::default(),
        }
    }

    fn current(&self) -> &Chunk {
        &self.chunks[self.chunk]
    }

    /// The last visible document of chunk `c`.
    fn last_of(&self, c: usize) -> DocId {
        self.chunks[c].docs[self.visible[c] - 1]
    }

    /// The first chunk at or after the current one holding a document `>= target`.
    fn chunk_for(&self, target: DocId) -> Option<usize> {
        (self.chunk..self.visible.len()).find(|&c| self.last_of(c) >= target)
    }

    fn enter(&mut self, c: usize, idx: usize) -> DocId {
        self.chunk = c;
        self.idx = idx;
        self.doc = self.chunks[c].docs[idx];
        self.doc
    }

    fn end(&mut self) -> DocId {
        self.doc = TERMINATED;
        TERMINATED
    }

    /// Where the current posting's occurrences and filters start: summed
    /// on from the last posting found when that was before it in this chunk.
    fn place(&mut self) -> Place {
        let p = self.place;
        let mut at = match p.chunk == self.chunk && p.idx <= self.idx {
            true => p,
            false => Place { chunk: self.chunk, ..Place::default() },
        };
        let chunk = &self.chunks[self.chunk];
        for &f in &chunk.freqs[at.idx..self.idx] {
            at.occurrence += occurrences_len(&chunk.occurrences[at.occurrence..], f as usize);
            at.filter += self.bloom.map_or(0, |shape| 2 * shape.bytes(f));
        }
        at.idx = self.idx;
        self.place = at;
        at
    }

    /// Calls `emit` with each of the current posting's occurrences.
    fn occurrences(&mut self, emit: impl FnMut(Occurrence)) {
        let start = self.place().occurrence;
        let bytes = &self.current().occurrences;
        if start < bytes.len() {
            decode_occurrences(&bytes[start..], self.freq() as usize, emit);
        }
    }

    /// The current document's filter on `side`.
    fn filter(&mut self, side: Side, shape: FilterShape) -> Option<&[u8]> {
        let len = shape.bytes(self.freq());
        let at = self.place().filter + if side == Side::After { len } else { 0 };
        self.current().filters.get(at..at + len)
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
        if self.idx + 1 < self.visible[self.chunk] {
            return self.enter(self.chunk, self.idx + 1);
        }
        if self.chunk + 1 < self.visible.len() {
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
        let docs = &self.chunks[c].docs[from..self.visible[c]];
        let idx = from + docs.partition_point(|&d| d < target);
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
            _ => self.current().freqs[self.idx],
        }
    }

    fn positions(&mut self, out: &mut Vec<u32>) {
        out.clear();
        if self.positions && self.doc != TERMINATED {
            self.occurrences(|o| out.push(o.position));
        }
    }

    fn offsets(&mut self, out: &mut Vec<(u32, u32)>) {
        out.clear();
        if self.positions && self.doc != TERMINATED {
            self.occurrences(|o| out.push((o.start, o.end)));
        }
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        self.chunk_for(target).map_or(TERMINATED, |c| self.last_of(c))
    }

    fn impact(&mut self, from: DocId, to: DocId) -> BlockImpact {
        let Some(first) = self.chunk_for(from) else { return BlockImpact::NONE };
        let mut bound = BlockImpact::NONE;
        for c in first..self.visible.len() {
            bound = bound.merge(self.chunks[c].impact);
            if self.last_of(c) >= to {
                break;
            }
        }
        bound
    }

    fn max_impact(&self) -> BlockImpact {
        self.max_impact
    }

    fn total_term_freq(&self) -> u64 {
        self.chunks
            .iter()
            .zip(&self.visible)
            .map(|(c, &n)| c.freqs[..n].iter().map(|&f| u64::from(f)).sum::<u64>())
            .sum()
    }

    fn block_ahead(&self) -> &[DocId] {
        match self.doc {
            TERMINATED => &[],
            _ => &self.current().docs[self.idx + 1..self.visible[self.chunk]],
        }
    }

    fn block_rest(&self) -> (&[DocId], &[u32]) {
        if self.doc == TERMINATED {
            return (&[], &[]);
        }
        let (chunk, end) = (self.current(), self.visible[self.chunk]);
        (&chunk.docs[self.idx..end], &chunk.freqs[self.idx..end])
    }

    fn advance_by(&mut self, n: usize) -> DocId {
        if n == 0 || self.doc == TERMINATED {
            return self.doc;
        }
        self.idx += n - 1;
        self.advance()
    }

    fn bloom_test(&mut self, side: Side, hash: u64) -> Option<bool> {
        let shape = self.bloom?;
        let freq = self.freq();
        if !shape.stores(freq) {
            return None;
        }
        let filter = self.filter(side, shape)?;
        Some(filter.iter().any(|&b| b != 0) && bloom::may_contain(filter, hash, shape.hashes(freq)))
    }

    fn filters_into(&mut self, before: &mut Vec<u8>, after: &mut Vec<u8>) -> Option<FilterShape> {
        let shape = self.bloom?;
        for (side, out) in [(Side::Before, before), (Side::After, after)] {
            out.extend_from_slice(self.filter(side, shape)?);
        }
        Some(shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Doc `d`'s occurrences in [`list`]: positions `10 d + i`, offsets `(p, p + 1)`.
    fn occurrences_of(d: u32) -> Vec<Occurrence> {
        (0..1 + d % 3).map(|i| 10 * d + i).map(|p| Occurrence { position: p, start: p, end: p + 1 }).collect()
    }

    /// Docs 0, 2, 4, ... (n of them), doc d with frequency 1 + d % 3 and norm d % 7.
    fn list(n: u32) -> TermBuf {
        let mut t = TermBuf::default();
        for i in 0..n {
            let d = 2 * i;
            let chunk = t.push(d, 1 + d % 3, (d % 7) as u8);
            encode_occurrences(&occurrences_of(d), &mut chunk.occurrences);
        }
        t
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
    }

    #[test]
    fn occurrences_are_found_in_order_and_after_seeks() {
        let term = list(300);
        let mut p = MemPostings::new(&term, 600, true, None);
        while p.doc() != TERMINATED {
            assert_eq!(read_occurrences(&mut p), occurrences_of(p.doc()), "doc {} in order", p.doc());
            p.advance();
        }
        let mut p = MemPostings::new(&term, 600, true, None);
        for target in [4, 6, 100, 254, 256, 258, 500] {
            assert_eq!(p.seek(target), target);
            assert_eq!(read_occurrences(&mut p), occurrences_of(target), "doc {target} after a seek");
        }
        let mut flat = FlatPostings::default();
        term.flat_into(200, None, &mut flat);
        let want: Vec<Occurrence> = (0..200).flat_map(|i| occurrences_of(2 * i)).collect();
        assert_eq!(flat.docs, (0..200).map(|i| 2 * i).collect::<Vec<_>>());
        assert_eq!(flat.positions, want.iter().map(|o| o.position).collect::<Vec<_>>());
        assert_eq!(flat.offsets, want.iter().map(|o| (o.start, o.end)).collect::<Vec<_>>());
    }

    #[test]
    fn walks_seeks_and_bounds_across_chunks_and_sees_only_its_prefix() {
        let term = list(300);
        let mut p = MemPostings::new(&term, 401, true, None);
        assert_eq!(p.doc_freq(), 201, "docs 0..=400");
        let mut all = vec![p.doc()];
        while p.advance() != TERMINATED {
            all.push(p.doc());
        }
        assert_eq!(all, (0..=200).map(|i| 2 * i).collect::<Vec<_>>());
        let mut p = MemPostings::new(&term, 401, true, None);
        assert_eq!(p.seek(255), 256);
        assert_eq!(p.block_end(257), 400, "the second chunk, as far as the view sees it");
        let mut pos = Vec::new();
        p.positions(&mut pos);
        assert_eq!(pos.len() as u32, 1 + 256 % 3);
        assert_eq!(p.impact(0, 10), BlockImpact { max_freq: 3, min_norm: 0 });
        assert_eq!(p.seek(1000), TERMINATED);
        assert_eq!(MemPostings::new(&term, 0, true, None).doc(), TERMINATED);
    }

    #[test]
    fn packed_filters_are_found_in_order_and_after_seeks() {
        let shape = needle_codecs::bloom::BloomParams::for_rate(5, 0.0009, vec![]).shape;
        let filter = |d: u32, side: u8| vec![(d as u8) ^ side; shape.bytes(1 + d % 7)];
        let mut t = TermBuf::default();
        for d in 0..300 {
            let chunk = t.push(d, 1 + d % 7, 0);
            chunk.filters.extend(filter(d, 0));
            chunk.filters.extend(filter(d, 0xff));
        }
        let term = t;
        let read = |p: &mut MemPostings| {
            let (mut before, mut after) = (Vec::new(), Vec::new());
            assert_eq!(p.filters_into(&mut before, &mut after), Some(shape));
            (before, after)
        };
        let mut p = MemPostings::new(&term, 300, true, Some(shape));
        for d in 0..300 {
            assert_eq!(p.doc(), d);
            assert_eq!(read(&mut p), (filter(d, 0), filter(d, 0xff)), "doc {d} in order");
            p.advance();
        }
        let mut p = MemPostings::new(&term, 300, true, Some(shape));
        for target in [5, 6, 90, 127, 128, 200, 299] {
            assert_eq!(p.seek(target), target);
            assert_eq!(read(&mut p), (filter(target, 0), filter(target, 0xff)), "doc {target} after a seek");
        }
        let mut flat = FlatPostings::default();
        term.flat_into(250, Some(shape), &mut flat);
        assert_eq!(flat.before, (0..250).flat_map(|d| filter(d, 0)).collect::<Vec<_>>());
        assert_eq!(flat.after, (0..250).flat_map(|d| filter(d, 0xff)).collect::<Vec<_>>());
    }

    #[test]
    fn a_chunk_a_reader_holds_is_copied_before_it_changes() {
        let mut t = list(130);
        let (full, held) = (t.chunks[0].clone(), t.chunks[1].clone());
        t.push(1000, 1, 0);
        assert_eq!(held.docs.len(), 2, "the reader's chunk did not grow");
        assert_eq!(t.chunks[1].docs.len(), 3);
        assert!(Arc::ptr_eq(&full, &t.chunks[0]), "a full chunk is shared, not copied");
    }
}
