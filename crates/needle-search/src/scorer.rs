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

    /// Adds the score of every document from the current one to `last`
    /// into `window` and moves past `last`; returns the document it is then
    /// on. Scorers over blocks of postings score a block in one pass.
    fn score_into(&mut self, last: DocId, window: &mut ScoreWindow) -> DocId {
        let mut doc = self.doc();
        while doc <= last {
            window.add(doc, self.score());
            doc = self.advance();
        }
        doc
    }
}

/// Scores summed per document over a window of at most [`ScoreWindow::LEN`]
/// documents from `base`, clause by clause (Lucene's MaxScoreBulkScorer
/// keeps the same): each clause runs through its documents of the window on
/// its own, instead of every clause being asked at every document.
pub struct ScoreWindow {
    base: DocId,
    /// Sums in double, as Lucene's boolean scorers sum.
    scores: Box<[f64]>,
    /// A bit per document of the window that some clause matched.
    matched: Box<[u64]>,
}

impl Default for ScoreWindow {
    fn default() -> Self {
        ScoreWindow {
            base: 0,
            scores: vec![0.0; Self::LEN].into_boxed_slice(),
            matched: vec![0; Self::LEN / 64].into_boxed_slice(),
        }
    }
}

impl ScoreWindow {
    pub const LEN: usize = 4096;

    /// Empties the window and moves it to start at `base`.
    pub fn reset(&mut self, base: DocId) {
        for (w, word) in self.matched.iter_mut().enumerate() {
            while *word != 0 {
                self.scores[w * 64 + word.trailing_zeros() as usize] = 0.0;
                *word &= *word - 1;
            }
        }
        self.base = base;
    }

    /// The first document the window holds.
    pub fn base(&self) -> DocId {
        self.base
    }

    /// The last document the window holds.
    pub fn last(&self) -> DocId {
        self.base.saturating_add(Self::LEN as DocId - 1)
    }

    /// Adds `score` to `doc`'s sum (`doc` within the window).
    #[inline]
    pub fn add(&mut self, doc: DocId, score: f32) {
        let i = (doc - self.base) as usize;
        self.scores[i] += f64::from(score);
        self.matched[i / 64] |= 1 << (i % 64);
    }

    /// The sum at offset `at` from the window's base (0 when nothing matched there).
    #[inline]
    pub fn score_at(&self, at: usize) -> f64 {
        self.scores[at]
    }

    /// Every document that some window of `windows` (all at one base)
    /// matched, with its offset from the base, in document order.
    pub fn union(windows: &[ScoreWindow], out: &mut Vec<(DocId, usize)>) {
        let Some(first) = windows.first() else { return };
        for w in 0..Self::LEN / 64 {
            let mut bits = windows.iter().fold(0u64, |acc, win| acc | win.matched[w]);
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                out.push((first.base + i as DocId, i));
            }
        }
    }

    /// Each matched document with its sum, in document order.
    pub fn matches(&self) -> impl Iterator<Item = (DocId, f64)> + '_ {
        self.matched.iter().enumerate().flat_map(move |(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let i = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    (self.base + i as DocId, self.scores[i])
                })
            })
        })
    }
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
    fn score_into(&mut self, last: DocId, window: &mut ScoreWindow) -> DocId {
        (**self).score_into(last, window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_sums_per_document_and_lists_matches_in_order() {
        let mut w = ScoreWindow::default();
        w.reset(1000);
        assert_eq!(w.last(), 1000 + ScoreWindow::LEN as DocId - 1);
        for (doc, score) in [(1070, 1.5f32), (1003, 0.25), (1070, 2.0), (5095, 1.0)] {
            w.add(doc, score);
        }
        let got: Vec<(DocId, f64)> = w.matches().collect();
        assert_eq!(got, vec![(1003, 0.25), (1070, 3.5), (5095, 1.0)]);
        w.reset(9000);
        w.add(9000, 4.0);
        assert_eq!(w.matches().collect::<Vec<_>>(), vec![(9000, 4.0)], "sums of the last stretch are gone");
        w.reset(1000);
        w.add(1070, 1.0);
        assert_eq!(w.matches().collect::<Vec<_>>(), vec![(1070, 1.0)], "a sum starts from zero again");
    }
}
