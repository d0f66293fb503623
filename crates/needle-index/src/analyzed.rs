//! A document analyzed into tokens before it enters a segment, so the
//! expensive part of indexing (tokenizing, stemming) runs outside any lock
//! and the segment only files the tokens.

use needle_analysis::Analyzer;
use needle_core::FieldId;

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
}

impl AnalyzedDoc {
    /// `stored`: the record the document store keeps for this document.
    pub fn new(stored: Vec<u8>) -> Self {
        AnalyzedDoc { stored, fields: Vec::new(), terms: String::new() }
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
        let length = tokens.len() as u32;
        self.fields.push((field, FieldTokens::Text { tokens, length }));
    }

    /// A keyword field: each value is one term.
    pub fn keyword(&mut self, field: FieldId, values: &[&str]) {
        self.fields.push((field, FieldTokens::Keyword(values.iter().map(|v| (*v).to_string()).collect())));
    }

    /// Approximate bytes this document adds to a segment.
    pub fn size(&self) -> usize {
        self.stored.len() + self.terms.len() * 3
    }

    pub(crate) fn term(&self, t: &TokenRef) -> &[u8] {
        &self.terms.as_bytes()[t.term.0 as usize..(t.term.0 + t.term.1) as usize]
    }
}
