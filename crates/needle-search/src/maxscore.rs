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
//! pruning is allowed (see `TopCollector::threshold`) every clause is
//! essential, and every matching document is scored (a window at a time,
//! as after) and counted. Unlike block-max WAND (which this replaced), no
//! clause ordering is kept per document, and the weak clauses (a query's
//! common terms) are only sought to the few documents that need them.
//!
//! The clauses may come in groups whose sums are combined by a dis-max (a
//! `query_string` or `multi_match` over several fields: `title:(a b)` and
//! `body:(a b)`, the best field's sum winning). With a tie breaker of 0 a
//! document can only win through one group, so each group has its own weak
//! clauses (those whose bounds sum to no more than the threshold); otherwise
//! the weak clauses are chosen over all groups, as for a sum, which bounds
//! any dis-max. Each group sums into its own window; a candidate's groups are
//! then combined as Lucene's DisjunctionMaxScorer does.

use needle_core::{deadline, Deletes, DocId, DocSet, TERMINATED};

use crate::collect::{ScoredDoc, TopCollector};
use crate::iter::{BoxScorer, Combine};
use crate::{ScoreWindow, Scorer};

/// The fewest documents a window spans: shorter ones cost more in bounds and
/// sorting than they save (Lucene's inner window is 4,096 documents).
const MIN_WINDOW: DocId = 4096;

/// A top-level disjunction's clauses, in groups: `group[i]` is clause `i`'s;
/// a document scores its groups' sums combined by `combine`.
pub(crate) struct Clauses<'s> {
    pub scorers: Vec<BoxScorer<'s>>,
    pub group: Vec<usize>,
    pub combine: Combine,
}

impl<'s> Clauses<'s> {
    /// One group, summed: a plain disjunction.
    pub fn summed(scorers: Vec<BoxScorer<'s>>) -> Self {
        let group = vec![0; scorers.len()];
        Clauses { scorers, group, combine: Combine::Sum }
    }

    fn groups(&self) -> usize {
        self.group.iter().max().map_or(0, |g| g + 1)
    }
}

pub(crate) fn max_score(
    clauses: Clauses<'_>,
    excluded: Option<BoxScorer<'_>>,
    deletes: Option<&dyn Deletes>,
    segment: usize,
    base: u64,
    top: &mut TopCollector,
) {
    let groups = clauses.groups();
    let per_group = groups > 1 && clauses.combine == (Combine::Max { tie_breaker: 0.0 });
    let Clauses { scorers, group, combine } = clauses;
    let n = scorers.len();
    let mut run = Run {
        docs: scorers.iter().map(|c| c.doc()).collect(),
        bounds: vec![0.0; n],
        scorers,
        group,
        combine,
        sums: (0..groups).map(|_| ScoreWindow::default()).collect(),
        group_scores: vec![0.0; groups],
        excluded,
        deletes,
        segment,
        base,
    };
    let mut order: Vec<usize> = (0..n).collect();
    let mut essential: Vec<usize> = order.clone();
    let mut weak_sums = vec![0f64; groups];
    let mut closed = vec![false; groups];
    loop {
        let first = run.docs.iter().copied().min().unwrap_or(TERMINATED);
        if first == TERMINATED || deadline::passed() {
            return;
        }
        let threshold = top.threshold();
        let last = run.window(first, &essential, threshold.is_some());
        let mut non_essential = Vec::new();
        essential.clear();
        match threshold {
            // Every match counts until pruning is allowed: every clause is essential.
            None => essential.extend(0..n),
            Some(threshold) => {
                order.sort_by(|&a, &b| run.bounds[a].total_cmp(&run.bounds[b]));
                // Ascending by bound: a clause is weak while the weak bounds of its
                // group (or of all, when groups are not apart) stay within the threshold.
                weak_sums.iter_mut().for_each(|s| *s = 0.0);
                closed.iter_mut().for_each(|c| *c = false);
                for &i in &order {
                    let g = if per_group { run.group[i] } else { 0 };
                    let sum = weak_sums[g] + f64::from(run.bounds[i]);
                    if !closed[g] && sum as f32 <= threshold {
                        weak_sums[g] = sum;
                        non_essential.push(i);
                    } else {
                        closed[g] = true;
                        essential.push(i);
                    }
                }
            }
        }
        if !essential.is_empty() {
            run.score_window(&essential, &non_essential, last, top);
        }
        if last == TERMINATED {
            return;
        }
        run.skip_to(last + 1);
    }
}

struct Run<'s, 'd> {
    scorers: Vec<BoxScorer<'s>>,
    /// Each clause's group.
    group: Vec<usize>,
    combine: Combine,
    /// Each group's sums over the current stretch.
    sums: Vec<ScoreWindow>,
    /// A candidate's sum in each group.
    group_scores: Vec<f64>,
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
    /// window in `bounds` when `bounded` (before pruning, none is used).
    fn window(&mut self, first: DocId, essential: &[usize], bounded: bool) -> DocId {
        let block_end = essential
            .iter()
            .map(|&i| self.scorers[i].block_end(self.docs[i].max(first)))
            .min()
            .unwrap_or(TERMINATED);
        let last = block_end.max(first.saturating_add(MIN_WINDOW - 1)).min(TERMINATED - 1);
        if !bounded {
            return last;
        }
        for ((c, &doc), bound) in self.scorers.iter_mut().zip(&self.docs).zip(&mut self.bounds) {
            *bound = if doc > last { 0.0 } else { c.block_max_score(first, last) };
        }
        last
    }

    /// Scores the window's candidates: the documents of the `essential`
    /// clauses up to `last`, completed by the `non_essential` ones (ascending
    /// by bound) while they can still lift the score past the threshold.
    /// The essential clauses are summed [`ScoreWindow::LEN`] documents at a
    /// time, each clause over the stretch in one pass, into its group's window.
    fn score_window(
        &mut self,
        essential: &[usize],
        non_essential: &[usize],
        last: DocId,
        top: &mut TopCollector,
    ) {
        let mut weak_totals = vec![0f64; self.sums.len()];
        for &i in non_essential {
            weak_totals[self.group[i]] += f64::from(self.bounds[i]);
        }
        let mut candidates = Vec::new();
        loop {
            let first = essential.iter().map(|&i| self.docs[i]).min().unwrap_or(TERMINATED);
            if first > last {
                return;
            }
            self.sums.iter_mut().for_each(|w| w.reset(first));
            let stretch_last = self.sums[0].last().min(last);
            for &i in essential {
                self.docs[i] = self.scorers[i].score_into(stretch_last, &mut self.sums[self.group[i]]);
            }
            candidates.clear();
            ScoreWindow::union(&self.sums, &mut candidates);
            for &(doc, at) in &candidates {
                for (g, w) in self.sums.iter().enumerate() {
                    self.group_scores[g] = w.score_at(at);
                }
                self.complete(doc, non_essential, &weak_totals, top);
            }
        }
    }

    /// The groups' sums in `group_scores` combined, each group's sum cast to
    /// float first as a boolean scorer's score is.
    fn combined(&self, extra: Option<&[f64]>) -> f32 {
        let sum = |g: usize| self.group_scores[g] + extra.map_or(0.0, |e| e[g]);
        self.combine.apply((0..self.group_scores.len()).map(|g| sum(g) as f32))
    }

    /// Adds the `non_essential` clauses (ascending by bound, taken strongest
    /// first) to the candidate's group sums from the essential ones while
    /// they can still lift its score past the threshold, and collects it if
    /// they do.
    fn complete(&mut self, doc: DocId, non_essential: &[usize], weak_totals: &[f64], top: &mut TopCollector) {
        let threshold = top.threshold().unwrap_or(f32::NEG_INFINITY);
        let mut remaining = weak_totals.to_vec();
        for &i in non_essential.iter().rev() {
            if self.combined(Some(&remaining)) <= threshold {
                return;
            }
            if self.docs[i] < doc {
                self.docs[i] = self.scorers[i].seek(doc);
            }
            let g = self.group[i];
            if self.docs[i] == doc {
                self.group_scores[g] += f64::from(self.scorers[i].score());
            }
            remaining[g] -= f64::from(self.bounds[i]);
        }
        if !self.is_excluded(doc) {
            let score = self.combined(None);
            top.collect(self.hit(doc, score));
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
