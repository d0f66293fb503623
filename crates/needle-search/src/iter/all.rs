//! Every document of a segment, each scoring 1.

use needle_core::{DocId, DocSet, TERMINATED};

use crate::Scorer;

pub struct AllScorer {
    doc: DocId,
    max_doc: DocId,
    /// Every document's score: 1, times the boosts around the query.
    score: f32,
}

impl AllScorer {
    pub fn new(max_doc: DocId, score: f32) -> Self {
        AllScorer { doc: if max_doc == 0 { TERMINATED } else { 0 }, max_doc, score }
    }
}

impl DocSet for AllScorer {
    fn doc(&self) -> DocId {
        self.doc
    }
    fn advance(&mut self) -> DocId {
        self.seek(self.doc.saturating_add(1))
    }
    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc != TERMINATED && target > self.doc {
            self.doc = if target < self.max_doc { target } else { TERMINATED };
        }
        self.doc
    }
    fn cost(&self) -> u64 {
        u64::from(self.max_doc)
    }
}

impl Scorer for AllScorer {
    fn score(&mut self) -> f32 {
        self.score
    }
    fn max_score(&self) -> f32 {
        self.score
    }
    fn block_end(&mut self, _target: DocId) -> DocId {
        TERMINATED
    }
    fn block_max_score(&mut self, _from: DocId, _to: DocId) -> f32 {
        self.score
    }
}
