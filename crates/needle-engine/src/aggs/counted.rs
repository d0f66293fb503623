//! Keyword `terms` counted from the term dictionary. When a search matches
//! every document of segments without deletions, the bucket of a value holds
//! the documents with that value, which is the number of documents the
//! value's postings list: known from the term's entry, no document read
//! (Elasticsearch counts such `terms` the same way). A request of such
//! aggregations alone (no sub-aggregations, no `missing` stand-in) is then
//! answered from one postings entry per value of each segment, not a value
//! id per document. A value without postings (a field kept as doc values
//! only), or a column with too many values for this to pay, sends the
//! request to the walk.

use std::collections::BTreeMap;
use std::sync::Arc;

use needle_core::Result;

use super::tally::Tally;
use super::{merge_into, AggKind, Aggregation, Bucket, Gathered, State};
use crate::schema::FieldKind;
use crate::search::View;

/// A column is counted this way when it has at most one value per this
/// many documents: a postings entry costs about what reading this many
/// value ids does.
const DOCS_PER_VALUE: usize = 64;

/// What `aggs` gather over every document of `views`, counted from their
/// term dictionaries, or `None` when they must be gathered by the walk.
pub(crate) fn every_document(aggs: &[Aggregation], views: &[View<'_>]) -> Result<Option<Gathered>> {
    if aggs.is_empty() || !aggs.iter().all(countable) || views.iter().any(|(_, deletes)| deletes.is_some()) {
        return Ok(None);
    }
    let docs: u64 = views.iter().map(|(s, _)| u64::from(s.meta().max_doc)).sum();
    let mut states = Vec::with_capacity(aggs.len());
    for agg in aggs {
        let AggKind::Terms { field, .. } = &agg.kind else { return Ok(None) };
        // A segment without the field's values has no bucket to add to.
        let columns: Vec<_> =
            views.iter().filter_map(|(s, _)| Some((*s, s.keyword_values(field.id)?))).collect();
        let values: usize = columns.iter().map(|(_, c)| c.term_count()).sum();
        if (values as u64).saturating_mul(DOCS_PER_VALUE as u64) > docs {
            return Ok(None);
        }
        let mut done = BTreeMap::new();
        for (segment, column) in columns {
            let values: Vec<Arc<[u8]>> = (0..column.term_count() as i64).map(|id| column.term(id)).collect();
            let asked: Vec<_> = values.iter().map(|v| (field.id, &v[..])).collect();
            for (value, postings) in values.iter().zip(segment.postings_all(&asked)?) {
                let Some(postings) = postings else { return Ok(None) };
                let bucket = Bucket { count: u64::from(postings.doc_freq()), subs: Vec::new() };
                merge_into(&mut done, value.clone(), bucket);
            }
        }
        states.push(State::Named { done, by_id: Vec::new(), tally: Tally::default() });
    }
    Ok(Some(Gathered { total: docs, states }))
}

/// A keyword `terms` with nothing below it and no stand-in for a missing value.
fn countable(agg: &Aggregation) -> bool {
    let keyword_terms = matches!(&agg.kind, AggKind::Terms { field, .. } if field.kind == FieldKind::Keyword);
    keyword_terms && agg.subs.is_empty() && agg.missing.is_none()
}
