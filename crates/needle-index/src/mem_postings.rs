//! Posting lists of an in-memory segment: plain vectors, shared with the
//! segment by `Arc`. The whole list is one block for block-max pruning, its
//! bound computed when the list is opened.

use std::sync::Arc;

use needle_codecs::bloom::{self, FilterShape, Side};
use needle_codecs::{BlockImpact, Postings};
use needle_core::{DocId, DocSet, TERMINATED};

/// One term's postings in memory. `occ_start[i]` is where document `i`'s
/// positions and offsets start.
#[derive(Default, Clone)]
pub(crate) struct TermBuf {
    pub docs: Vec<DocId>,
    pub freqs: Vec<u32>,
    pub occ_start: Vec<u32>,
    pub positions: Vec<u32>,
    pub offsets: Vec<(u32, u32)>,
    /// Each posting's Bloom filters, `bytes` apiece (empty without filters).
    pub before: Vec<u8>,
    pub after: Vec<u8>,
}

pub(crate) struct MemPostings {
    buf: Arc<TermBuf>,
    len: usize,
    idx: usize,
    positions: bool,
    impact: BlockImpact,
    /// The filters' shape, when the field has them.
    bloom: Option<FilterShape>,
}

impl MemPostings {
    pub fn new(buf: Arc<TermBuf>, positions: bool, norms: Option<&[u8]>, bloom: Option<FilterShape>) -> Self {
        let len = buf.docs.len();
        let max_freq = buf.freqs.iter().copied().max().unwrap_or(0);
        let min_norm = norms.map_or(0, |n| {
            buf.docs.iter().map(|&d| n.get(d as usize).copied().unwrap_or(0)).min().unwrap_or(0)
        });
        MemPostings { buf, len, idx: 0, positions, impact: BlockImpact { max_freq, min_norm }, bloom }
    }

    fn occurrences(&self) -> std::ops::Range<usize> {
        let start = self.buf.occ_start[self.idx] as usize;
        let end = self.buf.occ_start.get(self.idx + 1).map_or(self.buf.positions.len(), |&e| e as usize);
        start..end
    }
}

impl DocSet for MemPostings {
    fn doc(&self) -> DocId {
        if self.idx < self.len {
            self.buf.docs[self.idx]
        } else {
            TERMINATED
        }
    }

    fn advance(&mut self) -> DocId {
        self.idx = (self.idx + 1).min(self.len);
        self.doc()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc() < target {
            self.idx += self.buf.docs[self.idx..self.len].partition_point(|&d| d < target);
        }
        self.doc()
    }

    fn cost(&self) -> u64 {
        self.len as u64
    }
}

impl Postings for MemPostings {
    fn doc_freq(&self) -> u32 {
        self.len as u32
    }

    fn freq(&self) -> u32 {
        self.buf.freqs.get(self.idx).copied().unwrap_or(0)
    }

    fn positions(&mut self, out: &mut Vec<u32>) {
        out.clear();
        if self.positions && self.idx < self.len {
            out.extend_from_slice(&self.buf.positions[self.occurrences()]);
        }
    }

    fn offsets(&mut self, out: &mut Vec<(u32, u32)>) {
        out.clear();
        if self.positions && self.idx < self.len {
            out.extend_from_slice(&self.buf.offsets[self.occurrences()]);
        }
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        match self.buf.docs[..self.len].last() {
            Some(&last) if last >= target => last,
            _ => TERMINATED,
        }
    }

    fn impact(&mut self, _from: DocId, _to: DocId) -> BlockImpact {
        self.impact
    }

    fn max_impact(&self) -> BlockImpact {
        self.impact
    }

    fn total_term_freq(&self) -> u64 {
        self.buf.freqs[..self.len].iter().map(|&f| u64::from(f)).sum()
    }

    fn block_rest(&self) -> (&[DocId], &[u32]) {
        let at = self.idx.min(self.len);
        (&self.buf.docs[at..self.len], &self.buf.freqs[at..self.len])
    }

    fn advance_by(&mut self, n: usize) -> DocId {
        self.idx = (self.idx + n).min(self.len);
        self.doc()
    }

    fn bloom_test(&mut self, side: Side, hash: u64) -> Option<bool> {
        let shape = self.bloom?;
        let freq = self.freq();
        let filter = self.filter(side, shape)?;
        Some(filter.iter().any(|&b| b != 0) && bloom::may_contain(filter, hash, shape.hashes(freq)))
    }

    fn filters_into(&mut self, before: &mut Vec<u8>, after: &mut Vec<u8>) -> Option<FilterShape> {
        let shape = self.bloom?;
        let stride = shape.max_bytes();
        for (side, out) in [(Side::Before, before), (Side::After, after)] {
            let start = out.len();
            out.extend_from_slice(self.filter(side, shape)?);
            out.resize(start + stride, 0);
        }
        Some(shape)
    }
}

impl MemPostings {
    /// The current document's filter on `side` (its slot, cut to its size).
    fn filter(&self, side: Side, shape: FilterShape) -> Option<&[u8]> {
        let all = match side {
            Side::Before => &self.buf.before,
            Side::After => &self.buf.after,
        };
        let at = self.idx * shape.max_bytes();
        all.get(at..at + shape.bytes(self.freq()))
    }
}
