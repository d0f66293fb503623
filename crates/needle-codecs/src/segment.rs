//! The read contract between segments and search.

use needle_core::{DocId, FieldId, Result};

use crate::doc_values::{BinaryValues, KeywordValues, NumericValues};
use crate::meta::SegmentMeta;
use crate::postings::Postings;
use crate::term_matcher::TermMatcher;

/// What search needs of a segment, on disk or in memory.
pub trait SegmentRead: Send + Sync {
    /// The segment's name, used in messages.
    fn name(&self) -> &str;

    /// Document count and per-field options and statistics.
    fn meta(&self) -> &SegmentMeta;

    /// The filters' matches this segment keeps (see `filter_cache.rs`):
    /// none but in a segment whose documents and values cannot change.
    fn filter_cache(&self) -> Option<&crate::filter_cache::FilterCache> {
        None
    }

    /// The posting list of `term` in `field`, positioned on its first document.
    fn postings(&self, field: FieldId, term: &[u8]) -> Result<Option<Box<dyn Postings>>>;

    /// The documents holding `term` in `field`, ascending: what finding a
    /// document by its `_id` reads (mostly one, which a segment on storage
    /// reads from its record's first bytes without opening its postings).
    fn term_docs(&self, field: FieldId, term: &[u8]) -> Result<Vec<DocId>> {
        match self.postings(field, term)? {
            Some(mut p) => all_docs(&mut *p),
            None => Ok(Vec::new()),
        }
    }

    /// The field's norm bytes by document, when the field has norms.
    fn norms(&self, field: FieldId) -> Option<&[u8]>;

    /// The stored source of `doc`.
    fn stored(&self, doc: DocId) -> Result<Vec<u8>>;

    /// The head of `doc`'s stored record (its `_id` and version; see
    /// `docstore::record`) as the segment was written, before any in-place
    /// update layered over it: what a segment on storage reads without
    /// decompressing the source. Any prefix of the record that holds the head
    /// will do; by default, the whole record.
    fn stored_head(&self, doc: DocId) -> Result<Vec<u8>> {
        self.stored(doc)
    }

    /// `doc`'s frame as the segment's document store keeps it, for a merge
    /// that keeps that store's dictionary to copy it without recompressing;
    /// `None` when the record [`Self::stored`] reads differs from it (an
    /// in-place update layered over it) or the segment keeps no such frames.
    fn stored_frame(&self, _doc: DocId) -> Result<Option<crate::docstore::Frame>> {
        Ok(None)
    }

    /// The posting lists of `terms`, in order. A segment on storage asks for
    /// the records' first pages (all of their prefetch zones when adaptive
    /// prefetch says so) in one batch before opening any.
    fn postings_all(&self, terms: &[(FieldId, &[u8])]) -> Result<Vec<Option<Box<dyn Postings>>>> {
        terms.iter().map(|&(field, term)| self.postings(field, term)).collect()
    }

    /// The terms of `field` that `matcher` accepts, ascending: what a
    /// prefix, wildcard or fuzzy query expands to in this segment.
    fn matching_terms(&self, field: FieldId, matcher: &dyn TermMatcher) -> Result<Vec<Vec<u8>>>;

    /// A hint that the stored sources of `docs` are about to be read.
    fn prefetch_stored(&self, _docs: &[DocId]) {}

    /// The numeric doc values of `field`, when the segment has a column of it.
    fn numeric_values(&self, _field: FieldId) -> Option<Box<dyn NumericValues + Send>> {
        None
    }

    /// The points of `field`'s numeric column (its values sorted, each with
    /// its document), when the segment has them and they are current (no
    /// in-place update of the field over them).
    fn numeric_points(&self, _field: FieldId) -> Option<crate::doc_values::Points> {
        None
    }

    /// The fields with a numeric column, ascending.
    fn numeric_fields(&self) -> Vec<FieldId>;

    /// The keyword doc values of `field`, when the segment has a column of
    /// it (a failed read of its dictionary is recorded as the query's error).
    fn keyword_values(&self, _field: FieldId) -> Option<Box<dyn KeywordValues + Send>> {
        None
    }

    /// The binary doc values of `field`, when the segment has a column of it.
    fn binary_values(&self, _field: FieldId) -> Option<Box<dyn BinaryValues + Send>> {
        None
    }

    /// The fields with a binary column, ascending.
    fn binary_fields(&self) -> Vec<FieldId>;
}

/// Every document of `postings` from where it stands, ascending; a read
/// error met on the way is the answer's.
pub(crate) fn all_docs(postings: &mut dyn Postings) -> Result<Vec<DocId>> {
    needle_core::read_error::clear();
    let mut docs = Vec::new();
    let mut doc = postings.doc();
    while doc != needle_core::TERMINATED {
        docs.push(doc);
        doc = postings.advance();
    }
    needle_core::read_error::check()?;
    Ok(docs)
}
