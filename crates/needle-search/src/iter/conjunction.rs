//! Documents every child matches, found by leapfrogging from the cheapest
//! child; scored by the sum of the scoring children (filters score nothing).

use needle_core::{DocId, DocSet, TERMINATED};

use super::BoxScorer;
use crate::bm25::sum_scores;
use crate::Scorer;

pub struct Conjunction<'a> {
    /// Cheapest first; the first leads.
    children: Vec<(BoxScorer<'a>, bool)>,
    doc: DocId,
}

impl<'a> Conjunction<'a> {
    /// `children`: each scorer with whether it scores.
    pub fn new(mut children: Vec<(BoxScorer<'a>, bool)>) -> Self {
        children.sort_by_key(|(c, _)| c.cost());
        let start = children.iter().map(|(c, _)| c.doc()).max().unwrap_or(TERMINATED);
        let mut conj = Conjunction { children, doc: 0 };
        conj.doc = conj.align(start);
        conj
    }

    /// The first document `>= target` that every child has. The lead is
    /// walked; a child that can tell whether it holds a document by looking
    /// at it alone is asked that, not walked to its next match.
    fn align(&mut self, mut target: DocId) -> DocId {
        'outer: loop {
            if target == TERMINATED {
                return TERMINATED;
            }
            for (i, (c, _)) in self.children.iter_mut().enumerate() {
                if i > 0 && c.doc() < target {
                    match c.matches(target) {
                        Some(true) => continue,
                        Some(false) => {
                            target = target.saturating_add(1);
                            continue 'outer;
                        }
                        None => {}
                    }
                }
                let d = c.seek(target);
                if d > target {
                    target = d;
                    continue 'outer;
                }
            }
            return target;
        }
    }
}

impl DocSet for Conjunction<'_> {
    fn doc(&self) -> DocId {
        self.doc
    }

    fn advance(&mut self) -> DocId {
        if self.doc == TERMINATED {
            return TERMINATED;
        }
        let next = self.children[0].0.advance();
        self.doc = self.align(next);
        self.doc
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if target <= self.doc {
            return self.doc;
        }
        self.doc = self.align(target);
        self.doc
    }

    fn cost(&self) -> u64 {
        self.children.first().map_or(0, |(c, _)| c.cost())
    }
}

impl Scorer for Conjunction<'_> {
    fn score(&mut self) -> f32 {
        sum_scores(self.children.iter_mut().filter(|(_, s)| *s).map(|(c, _)| c.score()))
    }

    fn max_score(&self) -> f32 {
        sum_scores(self.children.iter().filter(|(_, s)| *s).map(|(c, _)| c.max_score()))
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        self.children.iter_mut().map(|(c, _)| c.block_end(target)).min().unwrap_or(TERMINATED)
    }

    fn block_max_score(&mut self, from: DocId, to: DocId) -> f32 {
        sum_scores(self.children.iter_mut().filter(|(_, s)| *s).map(|(c, _)| c.block_max_score(from, to)))
    }
}
