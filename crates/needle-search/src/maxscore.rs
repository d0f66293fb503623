//! MaxScore (Turtle and Flood, 1995) over the clauses of a disjunction, a
//! window of documents at a time, as Lucene's MaxScoreBulkScorer does.
//!
//! A window runs from the first document any clause is on to the nearest end
//! of a block among the essential clauses of the last window (as Lucene: the
//! weak ones are not asked), but at least [`MIN_WINDOW`] documents; every
//! clause has one bound for the window (its blocks' best score there). Sorted by that bound, the weakest
//! clauses whose bounds sum to no more than the threshold are non-essential:
//! a document only they match cannot enter the top k. Candidates come from
//! the essential clauses alone; each is scored by them, then the
//! non-essential clauses, strongest first, are moved to it only while the
//! score so far plus their remaining bounds can still beat the threshold.
//! When every clause is non-essential the window is skipped whole. Until
//! pruning is allowed (see `TopCollector::threshold`) every matching document
//! is scored and counted. Unlike block-max WAND (which this replaced), no
//! clause ordering is kept per document, and the weak clauses (a query's
//! common terms) are only sought to the few documents that need them.

use needle_core::{Deletes, DocId, DocSet, TERMINATED};

use crate::collect::{ScoredDoc, TopCollector};
use crate::iter::BoxScorer;
use crate::{ScoreWindow, Scorer};

/// The fewest documents a window spans: shorter ones cost more in bounds and
/// sorting than they save (Lucene's inner window is 4,096 documents).
const MIN_WINDOW: DocId = 4096;

pub(crate) fn max_score(
    scorers: Vec<BoxScorer<'_>>,
    excluded: Option<BoxScorer<'_>>,
    deletes: Option<&dyn Deletes>,
    segment: usize,
    base: u64,
    top: &mut TopCollector,
) {
    let mut run = Run {
        docs: scorers.iter().map(|c| c.doc()).collect(),
        bounds: vec![0.0; scorers.len()],
        scorers,
        excluded,
        deletes,
        segment,
        base,
    };
    let mut order: Vec<usize> = (0..run.scorers.len()).collect();
    let mut sums = ScoreWindow::default();
    let mut weak = 0;
    loop {
        let first = run.docs.iter().copied().min().unwrap_or(TERMINATED);
        if first == TERMINATED {
            return;
        }
        let Some(threshold) = top.threshold() else {
            run.collect_every_clause_on(first, top);
            continue;
        };
        let last = run.window(first, &order[weak..]);
        order.sort_by(|&a, &b| run.bounds[a].total_cmp(&run.bounds[b]));
        let mut weak_sum = 0f64;
        weak = order
            .iter()
            .take_while(|&&i| {
                weak_sum += f64::from(run.bounds[i]);
                weak_sum as f32 <= threshold
            })
            .count();
        if weak < order.len() {
            let (non_essential, essential) = order.split_at(weak);
            run.score_window(essential, non_essential, last, &mut sums, top);
        }
        if last == TERMINATED {
            return;
        }
        run.skip_to(last + 1);
    }
}

struct Run<'s, 'd> {
    scorers: Vec<BoxScorer<'s>>,
    /// Each clause's current document, kept beside it.
    docs: Vec<DocId>,
    /// Each clause's bound over the current window.
    bounds: Vec<f32>,
    excluded: Option<BoxScorer<'s>>,
    deletes: Option<&'d dyn Deletes>,
    segment: usize,
    base: u64,
}

impl Run<'_, '_> {
    /// The last document of the window starting at `first`, ended by the
    /// blocks of the `essential` clauses, with every clause's bound over the
    /// window in `bounds`.
    fn window(&mut self, first: DocId, essential: &[usize]) -> DocId {
        let block_end = essential
            .iter()
            .map(|&i| self.scorers[i].block_end(self.docs[i].max(first)))
            .min()
            .unwrap_or(TERMINATED);
        let last = block_end.max(first.saturating_add(MIN_WINDOW - 1)).min(TERMINATED - 1);
        for ((c, &doc), bound) in self.scorers.iter_mut().zip(&self.docs).zip(&mut self.bounds) {
            *bound = if doc > last { 0.0 } else { c.block_max_score(first, last) };
        }
        last
    }

    /// Scores the window's candidates: the documents of the `essential`
    /// clauses up to `last`, completed by the `non_essential` ones (ascending
    /// by bound) while they can still lift the score past the threshold.
    /// The essential clauses are summed [`ScoreWindow::LEN`] documents at a
    /// time, each clause over the stretch in one pass.
    fn score_window(
        &mut self,
        essential: &[usize],
        non_essential: &[usize],
        last: DocId,
        sums: &mut ScoreWindow,
        top: &mut TopCollector,
    ) {
        let weak_total: f64 = non_essential.iter().map(|&i| f64::from(self.bounds[i])).sum();
        loop {
            let first = essential.iter().map(|&i| self.docs[i]).min().unwrap_or(TERMINATED);
            if first > last {
                return;
            }
            sums.reset(first);
            let stretch_last = sums.last().min(last);
            for &i in essential {
                self.docs[i] = self.scorers[i].score_into(stretch_last, sums);
            }
            for (doc, score) in sums.matches() {
                self.complete(doc, score, non_essential, weak_total, top);
            }
        }
    }

    /// Adds the `non_essential` clauses (ascending by bound, taken strongest
    /// first) to `doc`'s `score` from the essential ones while they can still
    /// lift it past the threshold, and collects it if they do.
    fn complete(
        &mut self,
        doc: DocId,
        mut score: f64,
        non_essential: &[usize],
        weak_total: f64,
        top: &mut TopCollector,
    ) {
        let threshold = top.threshold().unwrap_or(f32::NEG_INFINITY);
        let mut remaining = weak_total;
        for &i in non_essential.iter().rev() {
            if ((score + remaining) as f32) <= threshold {
                return;
            }
            if self.docs[i] < doc {
                self.docs[i] = self.scorers[i].seek(doc);
            }
            if self.docs[i] == doc {
                score += f64::from(self.scorers[i].score());
            }
            remaining -= f64::from(self.bounds[i]);
        }
        if !self.is_excluded(doc) {
            top.collect(self.hit(doc, score as f32));
        }
    }

    /// Scores `doc` with every clause on it, collects it unless excluded, and
    /// moves those clauses on.
    fn collect_every_clause_on(&mut self, doc: DocId, top: &mut TopCollector) {
        if !self.is_excluded(doc) {
            let on_doc = self.scorers.iter_mut().zip(&self.docs).filter(|(_, &d)| d == doc);
            let score: f64 = on_doc.map(|(c, _)| f64::from(c.score())).sum();
            top.collect(self.hit(doc, score as f32));
        }
        for (c, d) in self.scorers.iter_mut().zip(self.docs.iter_mut()).filter(|(_, d)| **d == doc) {
            *d = c.advance();
        }
    }

    /// Moves every clause still before `target` to it.
    fn skip_to(&mut self, target: DocId) {
        for (c, d) in self.scorers.iter_mut().zip(self.docs.iter_mut()) {
            if *d < target {
                *d = c.seek(target);
            }
        }
    }

    fn is_excluded(&mut self, doc: DocId) -> bool {
        self.deletes.is_some_and(|d| d.is_deleted(doc))
            || self.excluded.as_mut().is_some_and(|e| e.seek(doc) == doc)
    }

    fn hit(&self, doc: DocId, score: f32) -> ScoredDoc {
        ScoredDoc { segment: self.segment, doc, global: self.base + u64::from(doc), score }
    }
}
