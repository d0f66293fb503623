//! A scorer that checks another's contract at every call, as Lucene's
//! `AssertingScorer` does: documents only move forward (`advance` past the
//! current one, `seek` to at least its target and never back), `doc()` says
//! where the last move went, asking for bounds does not move, a score is a
//! finite non-negative number and never above `max_score()` nor above the
//! bound of the block it is in, which block-max pruning and MaxScore rely on.
//!
//! `weight.rs` wraps every scorer it builds (term, phrase, match-all,
//! conjunction, disjunction, exclusion, req-opt; MaxScore's clauses) in one
//! when the `asserting-scorers` feature is on, as it is for every test build
//! of the engine: the oracle and parity tests then check the contracts of
//! every iterator on every query they run.

use needle_core::{DocId, DocSet, TERMINATED};

use super::BoxScorer;
use crate::{ScoreWindow, Scorer};

pub struct AssertingScorer<'a> {
    inner: BoxScorer<'a>,
    /// Which iterator, for messages.
    what: &'static str,
    doc: DocId,
    /// For checking what `score_into` adds (its own, not the caller's window).
    window: Option<Box<ScoreWindow>>,
}

impl<'a> AssertingScorer<'a> {
    pub fn wrap(inner: BoxScorer<'a>, what: &'static str) -> BoxScorer<'a> {
        let doc = inner.doc();
        Box::new(AssertingScorer { inner, what, doc, window: None })
    }

    fn moved(&mut self, from: DocId, to: DocId, how: &str) -> DocId {
        assert_eq!(
            self.inner.doc(),
            to,
            "{}: {how} returned {to} but doc() says {}",
            self.what,
            self.inner.doc()
        );
        if from == TERMINATED {
            assert_eq!(to, TERMINATED, "{}: {how} after the end went to {to}", self.what);
        }
        self.doc = to;
        to
    }

    fn unmoved(&self, call: &str) {
        assert_eq!(self.inner.doc(), self.doc, "{}: {call} moved the iterator", self.what);
    }
}

impl DocSet for AssertingScorer<'_> {
    fn doc(&self) -> DocId {
        self.unmoved("doc()");
        self.doc
    }

    fn advance(&mut self) -> DocId {
        let from = self.doc;
        let to = self.inner.advance();
        assert!(from == TERMINATED || to > from, "{}: advance went from {from} to {to}", self.what);
        self.moved(from, to, "advance")
    }

    fn seek(&mut self, target: DocId) -> DocId {
        let from = self.doc;
        let to = self.inner.seek(target);
        if target <= from {
            assert_eq!(to, from, "{}: seek({target}) from {from} moved to {to}", self.what);
        } else {
            assert!(to >= target, "{}: seek({target}) from {from} stopped at {to}", self.what);
        }
        self.moved(from, to, "seek")
    }

    fn cost(&self) -> u64 {
        self.inner.cost()
    }

    fn matches(&mut self, target: DocId) -> Option<bool> {
        let from = self.doc;
        assert!(from == TERMINATED || target >= from, "{}: matches({target}) behind {from}", self.what);
        let found = self.inner.matches(target);
        match found {
            Some(true) => {
                self.moved(from, target, "matches");
            }
            _ => self.unmoved("matches (not there)"),
        }
        found
    }
}

impl Scorer for AssertingScorer<'_> {
    fn score(&mut self) -> f32 {
        let doc = self.doc;
        assert_ne!(doc, TERMINATED, "{}: scored after the end", self.what);
        // The bounds first (asking does not move): a scorer may check its
        // score against them, as a term's does to catch damaged bytes.
        let end = self.inner.block_end(doc);
        assert!(end >= doc, "{}: block_end({doc}) = {end}", self.what);
        let bound = self.inner.block_max_score(doc, end);
        let score = self.inner.score();
        assert!(score.is_finite() && score >= 0.0, "{}: doc {doc} scored {score}", self.what);
        let max = self.inner.max_score();
        assert!(score <= max, "{}: doc {doc} scored {score} above max_score {max}", self.what);
        assert!(
            score <= bound,
            "{}: doc {doc} scored {score} above its block's bound {bound} (to {end})",
            self.what
        );
        self.unmoved("a bound");
        score
    }

    fn max_score(&self) -> f32 {
        self.inner.max_score()
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        let end = self.inner.block_end(target);
        assert!(end >= target, "{}: block_end({target}) = {end}", self.what);
        self.unmoved("block_end");
        end
    }

    fn block_max_score(&mut self, from: DocId, to: DocId) -> f32 {
        let bound = self.inner.block_max_score(from, to);
        assert!(bound >= 0.0 && !bound.is_nan(), "{}: block_max_score({from}, {to}) = {bound}", self.what);
        self.unmoved("block_max_score");
        bound
    }

    fn score_into(&mut self, last: DocId, window: &mut ScoreWindow) -> DocId {
        let from = self.doc;
        let mine = self.window.get_or_insert_with(Box::default);
        mine.reset(window.base());
        let max = self.inner.max_score();
        let to = self.inner.score_into(last, mine);
        assert!(to > last, "{}: score_into({last}) from {from} stopped at {to}", self.what);
        for (doc, score) in mine.matches() {
            assert!(
                (from..=last).contains(&doc),
                "{}: score_into({last}) from {from} scored doc {doc}",
                self.what
            );
            assert!(score as f32 <= max, "{}: doc {doc} scored {score} above max_score {max}", self.what);
            window.add(doc, score as f32);
        }
        self.moved(from, to, "score_into")
    }
}
