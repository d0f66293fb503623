//! Every document another scorer matches, each with the same score (Lucene's
//! ConstantScoreQuery: the score is the boost around it).

use needle_core::{DocId, DocSet, TERMINATED};

use super::BoxScorer;
use crate::Scorer;

pub struct ConstantScorer<'a> {
    inner: BoxScorer<'a>,
    score: f32,
}

impl<'a> ConstantScorer<'a> {
    pub fn new(inner: BoxScorer<'a>, score: f32) -> Self {
        ConstantScorer { inner, score }
    }
}

impl DocSet for ConstantScorer<'_> {
    fn doc(&self) -> DocId {
        self.inner.doc()
    }
    fn advance(&mut self) -> DocId {
        self.inner.advance()
    }
    fn seek(&mut self, target: DocId) -> DocId {
        self.inner.seek(target)
    }
    fn cost(&self) -> u64 {
        self.inner.cost()
    }
}

impl Scorer for ConstantScorer<'_> {
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
