//! Documents with a value in a keyword or binary field's doc values; each
//! scores 1 (times the boosts around the query).

use needle_codecs::doc_values::{BinaryValues, KeywordValues};
use needle_core::{DocId, TERMINATED};

use super::filter::{FilterScorer, Matcher};

pub struct HasValue {
    has: Box<dyn FnMut(DocId) -> bool + Send>,
    max_doc: DocId,
}

impl Matcher for HasValue {
    fn next_match(&mut self, from: DocId) -> DocId {
        (from..self.max_doc).find(|&doc| (self.has)(doc)).unwrap_or(TERMINATED)
    }
    fn cost(&self) -> u64 {
        u64::from(self.max_doc)
    }
}

pub type ExistsScorer = FilterScorer<HasValue>;

impl ExistsScorer {
    pub fn keyword(mut values: Box<dyn KeywordValues + Send>, max_doc: DocId, score: f32) -> Self {
        let has = Box::new(move |doc| !values.ids(doc).is_empty());
        FilterScorer::with(HasValue { has, max_doc }, score)
    }

    pub fn binary(mut values: Box<dyn BinaryValues + Send>, max_doc: DocId, score: f32) -> Self {
        let has = Box::new(move |doc| values.value(doc).is_some());
        FilterScorer::with(HasValue { has, max_doc }, score)
    }
}
