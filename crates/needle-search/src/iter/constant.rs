//! Every document another scorer matches, each with the same score (Lucene's
//! ConstantScoreQuery: the score is the boost around it).

use needle_core::DocId;

use super::filter::{FilterScorer, Matcher};
use super::BoxScorer;

/// Matches what the inner scorer matches, its scores unread.
pub struct Matches<'a>(BoxScorer<'a>);

impl Matcher for Matches<'_> {
    fn next_match(&mut self, from: DocId) -> DocId {
        self.0.seek(from)
    }
    fn cost(&self) -> u64 {
        self.0.cost()
    }
}

pub type ConstantScorer<'a> = FilterScorer<Matches<'a>>;

impl<'a> ConstantScorer<'a> {
    pub fn new(inner: BoxScorer<'a>, score: f32) -> Self {
        FilterScorer::with(Matches(inner), score)
    }
}
