//! A document analyzed into tokens before it enters a segment, so the
//! expensive part of indexing (tokenizing, stemming) runs outside any lock
//! and the segment only files the tokens.

use needle_analysis::Analyzer;
use needle_codecs::bloom::{BloomParams, FilterShape};
use needle_core::FieldId;

use crate::grouped::{group, GroupedText};
use crate::POSITION_GAP;

/// One token: where its term lies in the document's term text, its position and byte offsets.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TokenRef {
    pub term: (u32, u32),
    pub position: u32,
    pub start: u32,
    pub end: u32,
}

pub(crate) enum FieldTokens {
    /// Tokens in order, and the field's length (token count) for its norm.
    Text { tokens: Vec<TokenRef>, length: u32 },
    /// Whole values, each one term.
    Keyword(Vec<String>),
}

/// A document ready to be added to a [`crate::MemSegment`].
pub struct AnalyzedDoc {
    pub(crate) stored: Vec<u8>,
    pub(crate) fields: Vec<(FieldId, FieldTokens)>,
    /// Every term of the document, concatenated; tokens point into it.
    pub(crate) terms: String,
    /// The text fields' tokens grouped by term ([`AnalyzedDoc::prepare`]), in field order,
    /// and the filter shape they were grouped for.
    pub(crate) grouped: Option<(Option<FilterShape>, Vec<GroupedText>)>,
    /// Numeric fields' values for their doc values columns.
    pub(crate) numbers: Vec<(FieldId, Vec<i64>)>,
    /// Keyword fields' values for their doc values columns.
    pub(crate) keywords: Vec<(FieldId, Vec<String>)>,
    /// Binary fields' values (kept only as doc values).
    pub(crate) binaries: Vec<(FieldId, Vec<u8>)>,
}

impl AnalyzedDoc {
    /// `stored`: the record the document store keeps for this document.
    pub fn new(stored: Vec<u8>) -> Self {
        AnalyzedDoc {
            stored,
            fields: Vec::new(),
            terms: String::new(),
            grouped: None,
            numbers: Vec::new(),
            keywords: Vec::new(),
            binaries: Vec::new(),
        }
    }

    /// Analyzes the values of a text field. Values after the first continue
    /// its positions after a gap of [`POSITION_GAP`] and its offsets one byte
    /// after the previous value's end (as if joined by a space).
    pub fn text(&mut self, field: FieldId, analyzer: &Analyzer, values: &[&str]) {
        let mut tokens = Vec::new();
        let (mut position, mut offset_base) = (0u32, 0u32);
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                position += POSITION_GAP;
            }
            position = analyzer.analyze(value, position, |t| {
                let at = self.terms.len() as u32;
                self.terms.push_str(&t.term);
                tokens.push(TokenRef {
                    term: (at, t.term.len() as u32),
                    position: t.position,
                    start: t.start + offset_base,
                    end: t.end + offset_base,
                });
            });
            offset_base += value.len() as u32 + 1;
        }
        // Lucene's length for the norm: a token at its predecessor's position
        // (a filter's second term there) overlaps it and is not counted.
        let overlaps = tokens.windows(2).filter(|w| w[0].position == w[1].position).count();
        let length = (tokens.len() - overlaps) as u32;
        self.fields.push((field, FieldTokens::Text { tokens, length }));
    }

    /// A keyword field: each value is one term.
    pub fn keyword(&mut self, field: FieldId, values: &[&str]) {
        self.fields.push((field, FieldTokens::Keyword(values.iter().map(|v| (*v).to_string()).collect())));
    }

    /// A numeric field's values (as doc values: see `needle_codecs::doc_values`).
    pub fn numeric(&mut self, field: FieldId, values: Vec<i64>) {
        self.numbers.push((field, values));
    }

    /// A keyword field's values as doc values (for sorts and terms aggregations).
    pub fn keyword_values(&mut self, field: FieldId, values: Vec<String>) {
        self.keywords.push((field, values));
    }

    /// A binary field's value as doc values.
    pub fn binary(&mut self, field: FieldId, value: Vec<u8>) {
        self.binaries.push((field, value));
    }

    /// The record the document store will keep.
    pub fn stored(&self) -> &[u8] {
        &self.stored
    }

    /// Replaces the record the document store will keep (a writer adds what
    /// it knows only at the moment of the write: the document's version).
    pub fn set_stored(&mut self, stored: Vec<u8>) {
        self.stored = stored;
    }

    /// Approximate bytes this document adds to a segment.
    pub fn size(&self) -> usize {
        self.stored.len() + self.terms.len() * 3
    }

    pub(crate) fn term(&self, t: &TokenRef) -> &[u8] {
        self.term_at(t.term)
    }

    /// The term text at (start, length) of the document's term text.
    pub(crate) fn term_at(&self, (start, len): (u32, u32)) -> &[u8] {
        &self.terms.as_bytes()[start as usize..(start + len) as usize]
    }

    /// Groups the text fields' tokens by term and fills their phrase filters
    /// (`bloom`: the parameters of the segment it will join), the part of
    /// adding a document that needs no segment; a live index calls this before
    /// taking its lock. [`crate::MemSegment::add`] does it when it was not done
    /// with the segment's parameters.
    pub fn prepare(&mut self, bloom: Option<&BloomParams>) {
        let shape = bloom.map(|b| b.shape);
        if self.grouped.as_ref().is_some_and(|(s, _)| *s == shape) {
            return;
        }
        let grouped = self
            .fields
            .iter()
            .filter_map(|(_, f)| match f {
                FieldTokens::Text { tokens, .. } => Some(group(self, tokens, bloom)),
                FieldTokens::Keyword(_) => None,
            })
            .collect();
        self.grouped = Some((shape, grouped));
    }
}
