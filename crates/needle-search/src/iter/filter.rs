//! Every document a [`Matcher`] finds, each with the same score (1 times the
//! boosts around the query): the scorer of match-all, range and exists, whose
//! only difference is which documents they match.

use needle_core::{DocId, DocSet, TERMINATED};

use crate::Scorer;

/// Finds the documents a filter matches, in order.
pub trait Matcher: Send {
    /// The first match at or after `from`, or `TERMINATED`.
    fn next_match(&mut self, from: DocId) -> DocId;
    /// Appends the matches from `from` (itself a match, or `TERMINATED`) on
    /// until `out` holds `max`; the first match not taken.
    fn fill_matches(&mut self, mut from: DocId, out: &mut Vec<DocId>, max: usize) -> DocId {
        while from != TERMINATED && out.len() < max {
            out.push(from);
            from = self.next_match(from.saturating_add(1));
        }
        from
    }
    /// An upper bound on the matches.
    fn cost(&self) -> u64;
    /// Whether `doc` matches, where the matcher can tell by looking at it
    /// alone (see [`DocSet::matches`]).
    fn matches(&mut self, _doc: DocId) -> Option<bool> {
        None
    }
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
    fn matches(&mut self, target: DocId) -> Option<bool> {
        if self.doc == TERMINATED || target <= self.doc {
            return Some(target == self.doc);
        }
        let found = self.matcher.matches(target);
        if found == Some(true) {
            self.doc = target;
        }
        found
    }
    fn fill_docs(&mut self, out: &mut Vec<DocId>, max: usize) {
        // The matcher is called directly: no call through the scorer's box per document.
        if self.doc != TERMINATED {
            self.doc = self.matcher.fill_matches(self.doc, out, max);
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
