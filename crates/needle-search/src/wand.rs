//! Block-max WAND (Ding and Suel, 2011) over the clauses of a disjunction.
//!
//! Clauses are kept sorted by current document. The pivot is the first clause
//! at which the sum of global maximum scores beats the threshold: no document
//! before the pivot's can enter the top k. The block maxima of the clauses up
//! to the pivot, for the pivot's document, then tighten the test; when even
//! they cannot beat the threshold, the strongest clause up to the pivot jumps
//! past the nearest block end (as tantivy's block WAND does). Until pruning is allowed (see `TopCollector::threshold`)
//! every matching document is scored and counted.

use needle_core::{Deletes, DocId, DocSet, TERMINATED};

use crate::bm25::sum_scores;
use crate::collect::{ScoredDoc, TopCollector};
use crate::iter::BoxScorer;
use crate::Scorer;

pub(crate) fn block_max_wand(
    scorers: Vec<BoxScorer<'_>>,
    mut excluded: Option<BoxScorer<'_>>,
    deletes: Option<&dyn Deletes>,
    segment: usize,
    base: u64,
    top: &mut TopCollector,
) {
    let mut excluded = Exclusions { query: excluded.take(), deletes };
    let max_scores: Vec<f64> = scorers.iter().map(|c| f64::from(c.max_score())).collect();
    let mut clauses = Clauses { docs: scorers.iter().map(|c| c.doc()).collect(), scorers };
    let mut order: Vec<usize> = (0..clauses.docs.len()).collect();
    loop {
        order.sort_by_key(|&i| clauses.docs[i]);
        let first = clauses.docs[order[0]];
        if first == TERMINATED {
            return;
        }
        let Some(threshold) = top.threshold() else {
            evaluate(&mut clauses, &mut excluded, first, segment, base, top);
            continue;
        };
        let Some(mut pivot) = find_pivot(&clauses.docs, &order, &max_scores, threshold) else { return };
        let pivot_doc = clauses.docs[order[pivot]];
        while pivot + 1 < order.len() && clauses.docs[order[pivot + 1]] == pivot_doc {
            pivot += 1;
        }
        // The range up to the nearest block end shares every block bound of
        // the pivot's document; bound the whole range, so it can be skipped whole.
        let scorers = &mut clauses.scorers;
        let up_to =
            order[..=pivot].iter().map(|&i| scorers[i].block_end(pivot_doc)).min().unwrap_or(TERMINATED);
        let bound = sum_scores(order[..=pivot].iter().map(|&i| scorers[i].block_max_score(pivot_doc, up_to)));
        if bound > threshold {
            if first == pivot_doc {
                evaluate(&mut clauses, &mut excluded, pivot_doc, segment, base, top);
            } else {
                for &i in &order[..pivot] {
                    clauses.seek(i, pivot_doc);
                }
            }
            continue;
        }
        let mut next = up_to.saturating_add(1);
        if let Some(&after) = order.get(pivot + 1) {
            next = next.min(clauses.docs[after]);
        }
        if next == TERMINATED {
            return;
        }
        // No document before `next` can enter the top k, so any clause may
        // jump there; moving only the one with the highest maximum score (the
        // one most likely to move the pivot) decodes one block, not one per clause.
        let strongest =
            order[..=pivot].iter().copied().max_by(|&a, &b| max_scores[a].total_cmp(&max_scores[b]));
        clauses.seek(strongest.expect("the pivot's clauses are not empty"), next);
    }
}

/// The clauses and their current documents, kept beside them so ordering the
/// clauses needs no call through a scorer.
struct Clauses<'a> {
    scorers: Vec<BoxScorer<'a>>,
    docs: Vec<DocId>,
}

impl Clauses<'_> {
    fn seek(&mut self, i: usize, target: DocId) {
        self.docs[i] = self.scorers[i].seek(target);
    }
}

/// What removes a matching document: a `must_not` clause, or a deletion.
struct Exclusions<'s, 'd> {
    query: Option<BoxScorer<'s>>,
    deletes: Option<&'d dyn Deletes>,
}

fn find_pivot(docs: &[DocId], order: &[usize], max_scores: &[f64], threshold: f32) -> Option<usize> {
    let mut acc = 0f64;
    for (p, &i) in order.iter().enumerate() {
        if docs[i] == TERMINATED {
            return None;
        }
        acc += max_scores[i];
        if acc as f32 > threshold {
            return Some(p);
        }
    }
    None
}

/// Scores `doc` with every clause on it, collects it unless excluded, and
/// moves those clauses on.
fn evaluate(
    clauses: &mut Clauses<'_>,
    excluded: &mut Exclusions<'_, '_>,
    doc: DocId,
    segment: usize,
    base: u64,
    top: &mut TopCollector,
) {
    let is_excluded = excluded.deletes.is_some_and(|d| d.is_deleted(doc))
        || excluded.query.as_mut().is_some_and(|e| e.seek(doc) == doc);
    let Clauses { scorers, docs } = clauses;
    if !is_excluded {
        let on_doc = scorers.iter_mut().zip(docs.iter()).filter(|(_, &d)| d == doc);
        let score = sum_scores(on_doc.map(|(c, _)| c.score()));
        top.collect(ScoredDoc { segment, doc, global: base + u64::from(doc), score });
    }
    for (c, d) in scorers.iter_mut().zip(docs.iter_mut()).filter(|(_, d)| **d == doc) {
        *d = c.advance();
    }
}
