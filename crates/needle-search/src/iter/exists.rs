//! Documents with at least one value in a keyword field's doc values; each
//! scores 1 (times the boosts around the query).

use needle_codecs::doc_values::KeywordValues;
use needle_core::{DocId, TERMINATED};

use super::filter::{FilterScorer, Matcher};

pub struct HasKeyword {
    values: Box<dyn KeywordValues + Send>,
    max_doc: DocId,
}

impl Matcher for HasKeyword {
    fn next_match(&mut self, from: DocId) -> DocId {
        (from..self.max_doc).find(|&doc| !self.values.ids(doc).is_empty()).unwrap_or(TERMINATED)
    }
    fn cost(&self) -> u64 {
        u64::from(self.max_doc)
    }
}

pub type ExistsScorer = FilterScorer<HasKeyword>;

impl ExistsScorer {
    pub fn new(values: Box<dyn KeywordValues + Send>, max_doc: DocId, score: f32) -> Self {
        FilterScorer::with(HasKeyword { values, max_doc }, score)
    }
}
