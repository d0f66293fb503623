//! Every document a [`Matcher`] finds, each with the same score (1 times the
//! boosts around the query): the scorer of match-all, range and exists, whose
//! only difference is which documents they match.

use needle_core::{DocId, DocSet, TERMINATED};

use crate::Scorer;

/// Finds the documents a filter matches, in order.
pub trait Matcher: Send {
    /// The first match at or after `from`, or `TERMINATED`.
    fn next_match(&mut self, from: DocId) -> DocId;
    /// An upper bound on the matches.
    fn cost(&self) -> u64;
}

pub struct FilterScorer<M> {
    matcher: M,
    doc: DocId,
    score: f32,
}

impl<M: Matcher> FilterScorer<M> {
    /// Positioned on the first match.
    pub fn with(mut matcher: M, score: f32) -> Self {
        let doc = matcher.next_match(0);
        FilterScorer { matcher, doc, score }
    }
}

impl<M: Matcher> DocSet for FilterScorer<M> {
    fn doc(&self) -> DocId {
        self.doc
    }
    fn advance(&mut self) -> DocId {
        self.seek(self.doc.saturating_add(1))
    }
    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc != TERMINATED && target > self.doc {
            self.doc = self.matcher.next_match(target);
        }
        self.doc
    }
    fn cost(&self) -> u64 {
        self.matcher.cost()
    }
    fn fill_docs(&mut self, out: &mut Vec<DocId>, max: usize) {
        // The matcher is called directly: no call through the scorer's box per document.
        while self.doc != TERMINATED && out.len() < max {
            out.push(self.doc);
            self.doc = self.matcher.next_match(self.doc.saturating_add(1));
        }
    }
}

impl<M: Matcher> Scorer for FilterScorer<M> {
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
