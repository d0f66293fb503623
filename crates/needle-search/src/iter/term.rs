//! Scores one term's posting list with BM25.

use std::sync::Arc;

use needle_codecs::Postings;
use needle_core::{DocId, DocSet, TERMINATED};

use needle_storage::counters::{self, DataKind};

use crate::bm25::Bm25;
use crate::Scorer;

/// Norm byte of every document of a field without norms (keyword fields), as Lucene.
pub const NO_NORM: u8 = 1;

pub struct TermScorer<'a> {
    postings: Box<dyn Postings>,
    bm25: Arc<Bm25>,
    norms: Option<&'a [u8]>,
    /// The block last asked about: any target in `lo..=end` falls in it, and
    /// `bound` bounds its scores. Pruning asks about the same block for every
    /// candidate document; this answers without searching the skip list again.
    block: Option<(DocId, DocId, f32)>,
    /// Bound over the whole list.
    max_score: f32,
    impacts: Vec<(u32, u8)>,
}

impl<'a> TermScorer<'a> {
    pub fn new(postings: Box<dyn Postings>, bm25: Arc<Bm25>, norms: Option<&'a [u8]>) -> Self {
        let mut s = TermScorer { postings, bm25, norms, block: None, max_score: 0.0, impacts: Vec::new() };
        s.max_score = s.bound_over(0, TERMINATED - 1);
        s
    }

    /// The best score any competitive (frequency, norm) pair of the blocks over `from..=to` allows.
    fn bound_over(&mut self, from: DocId, to: DocId) -> f32 {
        self.impacts.clear();
        self.postings.impacts(from, to, &mut self.impacts);
        let has_norms = self.norms.is_some();
        self.impacts
            .iter()
            .map(|&(freq, norm)| self.bm25.score(freq as f32, if has_norms { norm } else { NO_NORM }))
            .fold(0.0, f32::max)
    }
}

impl DocSet for TermScorer<'_> {
    fn doc(&self) -> DocId {
        self.postings.doc()
    }
    fn advance(&mut self) -> DocId {
        self.postings.advance()
    }
    fn seek(&mut self, target: DocId) -> DocId {
        self.postings.seek(target)
    }
    fn cost(&self) -> u64 {
        self.postings.cost()
    }
}

impl Scorer for TermScorer<'_> {
    fn score(&mut self) -> f32 {
        let doc = self.postings.doc() as usize;
        counters::record_memory(DataKind::Norms, usize::from(self.norms.is_some()));
        let norm = self.norms.map_or(NO_NORM, |n| n[doc]);
        self.bm25.score(self.postings.freq() as f32, norm)
    }

    fn max_score(&self) -> f32 {
        self.max_score
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        match self.block {
            Some((lo, end, _)) if lo <= target && target <= end => end,
            _ => {
                let end = self.postings.block_end(target);
                let bound = self.bound_over(target, end);
                self.block = Some((target, end, bound));
                end
            }
        }
    }

    fn block_max_score(&mut self, from: DocId, to: DocId) -> f32 {
        match self.block {
            Some((lo, end, bound)) if lo <= from && to <= end => bound,
            _ => self.bound_over(from, to),
        }
    }
}
