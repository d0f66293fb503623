//! Required clauses plus optional ones: matches what `req` matches, adding
//! `opt`'s score where it matches too (a float addition, as Lucene's ReqOptSumScorer).

use needle_core::{DocId, DocSet};

use super::BoxScorer;
use crate::Scorer;

pub struct ReqOpt<'a> {
    req: BoxScorer<'a>,
    opt: BoxScorer<'a>,
}

impl<'a> ReqOpt<'a> {
    pub fn new(req: BoxScorer<'a>, opt: BoxScorer<'a>) -> Self {
        ReqOpt { req, opt }
    }
}

impl DocSet for ReqOpt<'_> {
    fn doc(&self) -> DocId {
        self.req.doc()
    }
    fn advance(&mut self) -> DocId {
        self.req.advance()
    }
    fn seek(&mut self, target: DocId) -> DocId {
        self.req.seek(target)
    }
    fn cost(&self) -> u64 {
        self.req.cost()
    }
}

impl Scorer for ReqOpt<'_> {
    fn score(&mut self) -> f32 {
        let doc = self.req.doc();
        let mut score = self.req.score();
        if self.opt.doc() < doc {
            self.opt.seek(doc);
        }
        if self.opt.doc() == doc {
            score += self.opt.score();
        }
        score
    }

    fn max_score(&self) -> f32 {
        self.req.max_score() + self.opt.max_score()
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        self.req.block_end(target).min(self.opt.block_end(target))
    }

    fn block_max_score(&mut self, from: DocId, to: DocId) -> f32 {
        let opt = if self.opt.doc() <= to { self.opt.block_max_score(from, to) } else { 0.0 };
        self.req.block_max_score(from, to) + opt
    }
}
