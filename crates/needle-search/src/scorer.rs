//! The scoring iterator contract, with the bounds block-max pruning needs.

use needle_core::{DocId, DocSet};

/// A [`DocSet`] that scores its current document and can bound its scores.
///
/// Invariants (checked by the tests of every scorer): `score()` is never
/// above `max_score()`, nor above `block_max_score(from, to)` for a current
/// document in `from..=to`.
pub trait Scorer: DocSet {
    fn score(&mut self) -> f32;

    /// A bound on every score this scorer can produce.
    fn max_score(&self) -> f32;

    /// The last document of the block holding the first document `>= target`
    /// (the point up to which [`block_max_score`](Self::block_max_score) stays
    /// the same); `TERMINATED` when unknown or past the end. Does not move.
    fn block_end(&mut self, target: DocId) -> DocId;

    /// A bound on the scores of documents in `from..=to`.
    fn block_max_score(&mut self, from: DocId, to: DocId) -> f32;
}

impl<S: Scorer + ?Sized> Scorer for Box<S> {
    fn score(&mut self) -> f32 {
        (**self).score()
    }
    fn max_score(&self) -> f32 {
        (**self).max_score()
    }
    fn block_end(&mut self, target: DocId) -> DocId {
        (**self).block_end(target)
    }
    fn block_max_score(&mut self, from: DocId, to: DocId) -> f32 {
        (**self).block_max_score(from, to)
    }
}
