//! Scores one term's posting list with BM25.

use std::sync::Arc;

use needle_codecs::{BlockImpact, Postings};
use needle_core::{DocId, DocSet};

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
}

impl<'a> TermScorer<'a> {
    pub fn new(postings: Box<dyn Postings>, bm25: Arc<Bm25>, norms: Option<&'a [u8]>) -> Self {
        TermScorer { postings, bm25, norms, block: None }
    }

    fn bound(&self, impact: BlockImpact) -> f32 {
        if impact.max_freq == 0 {
            return 0.0;
        }
        let norm = if self.norms.is_some() { impact.min_norm } else { NO_NORM };
        self.bm25.score(impact.max_freq as f32, norm)
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
        self.bound(self.postings.max_impact())
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        match self.block {
            Some((lo, end, _)) if lo <= target && target <= end => end,
            _ => {
                let end = self.postings.block_end(target);
                let impact = self.postings.impact(target, end);
                let bound = self.bound(impact);
                self.block = Some((target, end, bound));
                end
            }
        }
    }

    fn block_max_score(&mut self, from: DocId, to: DocId) -> f32 {
        match self.block {
            Some((lo, end, bound)) if lo <= from && to <= end => bound,
            _ => {
                let impact = self.postings.impact(from, to);
                self.bound(impact)
            }
        }
    }
}
