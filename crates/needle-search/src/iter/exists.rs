//! Documents with at least one value in a keyword field's doc values; each
//! scores 1 (times the boosts around the query).

use needle_codecs::doc_values::KeywordValues;
use needle_core::{DocId, DocSet, TERMINATED};

use crate::Scorer;

pub struct ExistsScorer {
    values: Box<dyn KeywordValues + Send>,
    max_doc: DocId,
    doc: DocId,
    score: f32,
}

impl ExistsScorer {
    pub fn new(values: Box<dyn KeywordValues + Send>, max_doc: DocId, score: f32) -> Self {
        let mut s = ExistsScorer { values, max_doc, doc: 0, score };
        s.doc = s.next_match(0);
        s
    }

    fn next_match(&mut self, from: DocId) -> DocId {
        (from..self.max_doc).find(|&doc| !self.values.ids(doc).is_empty()).unwrap_or(TERMINATED)
    }
}

impl DocSet for ExistsScorer {
    fn doc(&self) -> DocId {
        self.doc
    }
    fn advance(&mut self) -> DocId {
        self.seek(self.doc.saturating_add(1))
    }
    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc != TERMINATED && target > self.doc {
            self.doc = self.next_match(target);
        }
        self.doc
    }
    fn cost(&self) -> u64 {
        u64::from(self.max_doc)
    }
}

impl Scorer for ExistsScorer {
    fn score(&mut self) -> f32 {
        self.score
    }
    fn max_score(&self) -> f32 {
        self.score
    }
    fn block_end(&mut self, _target: DocId) -> DocId {
        TERMINATED
    }
    fn block_max_score(&mut self, _from: DocId, _to: DocId) -> f32 {
        self.score
    }
}
