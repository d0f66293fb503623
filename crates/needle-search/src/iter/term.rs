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
}

impl<'a> TermScorer<'a> {
    pub fn new(postings: Box<dyn Postings>, bm25: Arc<Bm25>, norms: Option<&'a [u8]>) -> Self {
        TermScorer { postings, bm25, norms }
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
        self.postings.block_end(target)
    }

    fn block_max_score(&mut self, from: DocId, to: DocId) -> f32 {
        let impact = self.postings.impact(from, to);
        self.bound(impact)
    }
}
