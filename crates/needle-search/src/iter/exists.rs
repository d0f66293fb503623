//! Documents with a value in a keyword or binary field's doc values, or
//! with at least one token in a text field (a norm byte other than 0); each
//! scores 1 (times the boosts around the query).

use needle_codecs::doc_values::{BinaryValues, KeywordValues};
use needle_core::{DocId, TERMINATED};

use super::filter::{FilterScorer, Matcher};

pub struct HasValue<'a> {
    has: Box<dyn FnMut(DocId) -> bool + Send + 'a>,
    max_doc: DocId,
}

impl Matcher for HasValue<'_> {
    fn next_match(&mut self, from: DocId) -> DocId {
        (from..self.max_doc).find(|&doc| (self.has)(doc)).unwrap_or(TERMINATED)
    }
    fn cost(&self) -> u64 {
        u64::from(self.max_doc)
    }
}

pub type ExistsScorer<'a> = FilterScorer<HasValue<'a>>;

impl<'a> ExistsScorer<'a> {
    pub fn keyword(mut values: Box<dyn KeywordValues + Send>, max_doc: DocId, score: f32) -> Self {
        let has = Box::new(move |doc| !values.ids(doc).is_empty());
        FilterScorer::with(HasValue { has, max_doc }, score)
    }

    pub fn binary(mut values: Box<dyn BinaryValues + Send>, max_doc: DocId, score: f32) -> Self {
        let has = Box::new(move |doc| values.value(doc).is_some());
        FilterScorer::with(HasValue { has, max_doc }, score)
    }

    /// A text field's documents with a token: a document without the field has norm byte 0.
    pub fn text(norms: &'a [u8], max_doc: DocId, score: f32) -> Self {
        let has = Box::new(move |doc: DocId| norms.get(doc as usize).is_some_and(|&n| n != 0));
        FilterScorer::with(HasValue { has, max_doc }, score)
    }
}
