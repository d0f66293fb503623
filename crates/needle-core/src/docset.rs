//! The iteration contract of every posting list and query iterator.
//!
//! A `DocSet` walks document ids in strictly increasing order. It starts
//! positioned on its first document (or [`TERMINATED`] when empty), like
//! tantivy's DocSet and unlike Lucene's unpositioned iterators, so a caller
//! can always read `doc()` first.
//!
//! Contract, checked by the conformance tests of every implementation:
//! - `advance()` moves to the next document and returns it;
//! - `seek(target)` moves to the first document `>= target` and returns it; a
//!   target at or before the current document leaves the set where it is;
//! - once `TERMINATED` is reached, `advance` and `seek` return `TERMINATED`;
//! - a set whose read fails records the error in [`crate::read_error`] and
//!   ends (returns `TERMINATED`): its driver checks the slot, so the failure
//!   fails the query instead of shortening its answer.

use crate::DocId;

/// The document id a finished iterator reports. No real document has it.
pub const TERMINATED: DocId = DocId::MAX;

pub trait DocSet {
    /// The current document, or [`TERMINATED`].
    fn doc(&self) -> DocId;

    /// Moves to the next document and returns it.
    fn advance(&mut self) -> DocId;

    /// Moves to the first document `>= target`. The default walks; skipping
    /// iterators override it.
    fn seek(&mut self, target: DocId) -> DocId {
        let mut doc = self.doc();
        while doc < target {
            doc = self.advance();
        }
        doc
    }

    /// An estimate of how many documents the set holds, used to order
    /// iterators cheapest first.
    fn cost(&self) -> u64;

    /// Whether `target` (at or after the current document) is in the set,
    /// told by looking at that document alone, where the set can: it then
    /// moves to `target` when it is there, and stays where it was when not.
    /// `None`: the set can only be walked (`seek`). Filters over column
    /// values answer it, so that a conjunction led by a selective clause
    /// checks that clause's documents one by one instead of walking the
    /// filter to its next match at each (Lucene's two-phase iteration).
    fn matches(&mut self, _target: DocId) -> Option<bool> {
        None
    }

    /// Appends the current document and those after it to `out`, until it
    /// holds `max`; the set is left on the first document not taken.
    fn fill_docs(&mut self, out: &mut Vec<DocId>, max: usize) {
        let mut doc = self.doc();
        while doc != TERMINATED && out.len() < max {
            out.push(doc);
            doc = self.advance();
        }
    }
}

impl<S: DocSet + ?Sized> DocSet for Box<S> {
    fn doc(&self) -> DocId {
        (**self).doc()
    }
    fn advance(&mut self) -> DocId {
        (**self).advance()
    }
    fn seek(&mut self, target: DocId) -> DocId {
        (**self).seek(target)
    }
    fn cost(&self) -> u64 {
        (**self).cost()
    }
    fn matches(&mut self, target: DocId) -> Option<bool> {
        (**self).matches(target)
    }
    fn fill_docs(&mut self, out: &mut Vec<DocId>, max: usize) {
        (**self).fill_docs(out, max)
    }
}
