//! The documents a positive scorer matches, with the score of those a
//! negative one also matches multiplied by a factor (Elasticsearch's
//! `boosting` query, Lucene's `FunctionScoreQuery.boostByQuery`): the
//! positive score (computed unboosted) times the factor or 1, times the
//! boosts around the query, in double precision, then rounded once.

use needle_core::{DocId, DocSet};

use super::BoxScorer;
use crate::Scorer;

pub struct Demote<'a> {
    positive: BoxScorer<'a>,
    negative: Option<BoxScorer<'a>>,
    factor: f64,
    boost: f64,
}

impl<'a> Demote<'a> {
    pub fn new(positive: BoxScorer<'a>, negative: Option<BoxScorer<'a>>, factor: f32, boost: f32) -> Self {
        Demote { positive, negative, factor: f64::from(factor), boost: f64::from(boost) }
    }

    /// A bound on the scores of documents whose positive score is at most `positive`.
    fn bound(&self, positive: f32) -> f32 {
        (f64::from(positive) * self.factor.max(1.0) * self.boost) as f32
    }
}

impl DocSet for Demote<'_> {
    fn doc(&self) -> DocId {
        self.positive.doc()
    }
    fn advance(&mut self) -> DocId {
        self.positive.advance()
    }
    fn seek(&mut self, target: DocId) -> DocId {
        self.positive.seek(target)
    }
    fn cost(&self) -> u64 {
        self.positive.cost()
    }
}

impl Scorer for Demote<'_> {
    fn score(&mut self) -> f32 {
        let doc = self.positive.doc();
        let demoted =
            self.negative.as_mut().is_some_and(|n| n.doc() == doc || (n.doc() < doc && n.seek(doc) == doc));
        let factor = if demoted { self.factor } else { 1.0 };
        (f64::from(self.positive.score()) * factor * self.boost) as f32
    }

    fn max_score(&self) -> f32 {
        self.bound(self.positive.max_score())
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        self.positive.block_end(target)
    }

    fn block_max_score(&mut self, from: DocId, to: DocId) -> f32 {
        let positive = self.positive.block_max_score(from, to);
        self.bound(positive)
    }
}
