//! The documents that match at least `min_match` of several scorers, scored
//! by the sum of the matching ones (in double, cast to float, as Lucene's
//! boolean scorers), or by the best of them plus a tie breaker times the
//! others (Lucene's DisjunctionMaxQuery).

use needle_core::{DocId, DocSet, TERMINATED};

use super::BoxScorer;
use crate::bm25::sum_scores;
use crate::Scorer;

/// How the matching children's scores make the document's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Combine {
    Sum,
    /// The best score, plus `tie_breaker` times the sum of the others.
    Max {
        tie_breaker: f32,
    },
}

impl Combine {
    /// The combined score of `scores` (bounds combine the same way, so a bound of bounds is a bound).
    pub(crate) fn apply(self, scores: impl Iterator<Item = f32>) -> f32 {
        match self {
            Combine::Sum => sum_scores(scores),
            Combine::Max { tie_breaker } => {
                let (mut best, mut others) = (0f32, 0f64);
                for s in scores {
                    if s >= best {
                        others += f64::from(best);
                        best = s;
                    } else {
                        others += f64::from(s);
                    }
                }
                (f64::from(best) + others * f64::from(tie_breaker)) as f32
            }
        }
    }
}

pub struct Disjunction<'a> {
    children: Vec<BoxScorer<'a>>,
    combine: Combine,
    /// Each child's current document, kept beside it: asking a child is a
    /// call through two vtables (scorer, then postings), and every step asks all of them.
    docs: Vec<DocId>,
    min_match: usize,
    doc: DocId,
}

impl<'a> Disjunction<'a> {
    pub fn new(children: Vec<BoxScorer<'a>>, min_match: usize) -> Self {
        Disjunction::combining(children, min_match, Combine::Sum)
    }

    pub fn combining(children: Vec<BoxScorer<'a>>, min_match: usize, combine: Combine) -> Self {
        let docs = children.iter().map(|c| c.doc()).collect();
        let mut d = Disjunction { children, combine, docs, min_match: min_match.max(1), doc: 0 };
        d.doc = d.min_doc();
        d.ensure_min_match();
        d
    }

    fn min_doc(&self) -> DocId {
        self.docs.iter().copied().min().unwrap_or(TERMINATED)
    }

    /// Moves every child on `doc` to its next document.
    fn advance_those_on(&mut self, doc: DocId) {
        for (c, d) in self.children.iter_mut().zip(self.docs.iter_mut()).filter(|(_, d)| **d == doc) {
            *d = c.advance();
        }
    }

    fn ensure_min_match(&mut self) {
        while self.doc != TERMINATED && self.min_match > 1 {
            let doc = self.doc;
            if self.docs.iter().filter(|&&d| d == doc).count() >= self.min_match {
                return;
            }
            self.advance_those_on(doc);
            self.doc = self.min_doc();
        }
    }
}

impl DocSet for Disjunction<'_> {
    fn doc(&self) -> DocId {
        self.doc
    }

    fn advance(&mut self) -> DocId {
        let doc = self.doc;
        if doc == TERMINATED {
            return doc;
        }
        self.advance_those_on(doc);
        self.doc = self.min_doc();
        self.ensure_min_match();
        self.doc
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if target <= self.doc {
            return self.doc;
        }
        for (c, d) in self.children.iter_mut().zip(self.docs.iter_mut()).filter(|(_, d)| **d < target) {
            *d = c.seek(target);
        }
        self.doc = self.min_doc();
        self.ensure_min_match();
        self.doc
    }

    fn cost(&self) -> u64 {
        self.children.iter().map(|c| c.cost()).sum()
    }
}

impl Scorer for Disjunction<'_> {
    fn score(&mut self) -> f32 {
        let doc = self.doc;
        let on_doc = self.children.iter_mut().zip(&self.docs).filter(|(_, &d)| d == doc);
        self.combine.apply(on_doc.map(|(c, _)| c.score()))
    }

    fn max_score(&self) -> f32 {
        self.combine.apply(self.children.iter().map(|c| c.max_score()))
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        self.children.iter_mut().map(|c| c.block_end(target)).min().unwrap_or(TERMINATED)
    }

    fn block_max_score(&mut self, from: DocId, to: DocId) -> f32 {
        let within = self.children.iter_mut().zip(&self.docs).filter(|(_, &d)| d <= to);
        self.combine.apply(within.map(|(c, _)| c.block_max_score(from, to)))
    }
}
