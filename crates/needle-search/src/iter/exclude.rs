//! A scorer's documents minus those an exclusion set matches (`must_not`).

use needle_core::{DocId, DocSet, TERMINATED};

use super::BoxScorer;
use crate::Scorer;

pub struct Exclude<'a> {
    positive: BoxScorer<'a>,
    excluded: BoxScorer<'a>,
}

impl<'a> Exclude<'a> {
    pub fn new(positive: BoxScorer<'a>, excluded: BoxScorer<'a>) -> Self {
        let mut e = Exclude { positive, excluded };
        let doc = e.positive.doc();
        e.skip_excluded(doc);
        e
    }

    fn skip_excluded(&mut self, mut doc: DocId) -> DocId {
        while doc != TERMINATED && self.excluded.seek(doc) == doc {
            doc = self.positive.advance();
        }
        doc
    }
}

impl DocSet for Exclude<'_> {
    fn doc(&self) -> DocId {
        self.positive.doc()
    }
    fn advance(&mut self) -> DocId {
        let doc = self.positive.advance();
        self.skip_excluded(doc)
    }
    fn seek(&mut self, target: DocId) -> DocId {
        let doc = self.positive.seek(target);
        self.skip_excluded(doc)
    }
    fn cost(&self) -> u64 {
        self.positive.cost()
    }
}

impl Scorer for Exclude<'_> {
    fn score(&mut self) -> f32 {
        self.positive.score()
    }
    fn max_score(&self) -> f32 {
        self.positive.max_score()
    }
    fn block_end(&mut self, target: DocId) -> DocId {
        self.positive.block_end(target)
    }
    fn block_max_score(&mut self, from: DocId, to: DocId) -> f32 {
        self.positive.block_max_score(from, to)
    }
}
