//! Statistics of several indexes (or shards of one) searched as one corpus.
//!
//! BM25 reads a term's document frequency and its field's document count and
//! length; searched apart, each index scores with its own, so the same
//! document scores differently depending on where it lives. Elasticsearch's
//! `dfs_query_then_fetch` first asks every part for these statistics of the
//! query's terms ([`crate::Searcher::corpus_stats`]), sums them
//! ([`CorpusStatistics::merge`]) and hands the sum to each part's search
//! (`SearchRequest::corpus`): every document then scores as it would in one
//! index holding them all. Fields are named here, not numbered: each index
//! numbers its fields its own way.
//!
//! Between nodes the statistics travel as JSON ([`CorpusStatistics::to_json`]):
//!
//! ```text
//! {"max_doc": 233,
//!  "fields": {"body": {"doc_count": 233, "sum_total_term_freq": 1774034, "sum_doc_freq": 577125}},
//!  "terms": [["body", "d2Fy", 223]]}        field, the term's bytes in base64, documents
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use needle_codecs::FieldStats;
use needle_core::{Error, Result};
use needle_search::CorpusStats;
use serde_json::{json, Value};

use crate::schema::Schema;

/// A field's statistics summed over a corpus: documents with the field,
/// their terms, and the document frequencies of its distinct terms.
pub type FieldStatistics = FieldStats;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorpusStatistics {
    /// Documents, deleted ones included (Lucene's `maxDoc`).
    pub max_doc: u64,
    pub fields: BTreeMap<String, FieldStatistics>,
    /// (field, term) -> documents holding the term in the field.
    pub doc_freqs: BTreeMap<(String, Vec<u8>), u64>,
}

impl CorpusStatistics {
    /// Adds another part's statistics.
    pub fn merge(&mut self, other: &CorpusStatistics) {
        self.max_doc += other.max_doc;
        for (name, stats) in &other.fields {
            self.fields.entry(name.clone()).or_default().add(stats);
        }
        for (key, df) in &other.doc_freqs {
            *self.doc_freqs.entry(key.clone()).or_default() += df;
        }
    }

    /// As JSON (see the module's documentation).
    pub fn to_json(&self) -> Value {
        let terms: Vec<Value> = (self.doc_freqs.iter())
            .map(|((field, term), df)| json!([field, crate::values::base64_text(term), df]))
            .collect();
        json!({"max_doc": self.max_doc, "fields": self.fields, "terms": terms})
    }

    /// Reads [`CorpusStatistics::to_json`]'s JSON; anything else is an error naming what is wrong.
    pub fn from_json(v: &Value) -> Result<CorpusStatistics> {
        let bad = |what: &str| Error::invalid(format!("corpus statistics: {what}"));
        let max_doc = v["max_doc"].as_u64().ok_or_else(|| bad("[max_doc] must be a count"))?;
        let fields = serde_json::from_value(v["fields"].clone())
            .map_err(|e| bad(&format!("[fields] must map names to field statistics: {e}")))?;
        let mut doc_freqs = BTreeMap::new();
        for entry in v["terms"].as_array().ok_or_else(|| bad("[terms] must be a list"))? {
            let parsed = match entry.as_array().map(Vec::as_slice) {
                Some([field, term, df]) => {
                    field.as_str().zip(term.as_str().and_then(crate::values::base64_bytes)).zip(df.as_u64())
                }
                _ => None,
            };
            let ((field, term), df) = parsed.ok_or_else(|| {
                bad(&format!("each of [terms] must be [field, base64 term, documents], not {entry}"))
            })?;
            doc_freqs.insert((field.to_string(), term), df);
        }
        Ok(CorpusStatistics { max_doc, fields, doc_freqs })
    }

    /// One index's statistics, its fields named by `schema`.
    pub(crate) fn named(stats: CorpusStats, schema: &Schema) -> CorpusStatistics {
        let name = |f| schema.field(f).name.clone();
        CorpusStatistics {
            max_doc: stats.max_doc,
            fields: stats.fields.into_iter().map(|(f, s)| (name(f), s)).collect(),
            doc_freqs: stats.doc_freqs.into_iter().map(|((f, term), df)| ((name(f), term), df)).collect(),
        }
    }

    /// These statistics as an index with `schema` reads them (fields it does not have left out).
    pub(crate) fn numbered(&self, schema: &Schema) -> CorpusStats {
        let id = |name: &str| schema.field_id(name);
        CorpusStats {
            max_doc: self.max_doc,
            fields: self.fields.iter().filter_map(|(name, s)| Some((id(name)?, *s))).collect(),
            doc_freqs: (self.doc_freqs.iter())
                .filter_map(|((name, term), df)| Some(((id(name)?, term.clone()), *df)))
                .collect(),
        }
    }
}

/// Statistics a search request carries, compared by identity. A request
/// with them skips the result cache (`search.rs`): its answer depends on
/// other indexes, whose changes the cache does not see.
#[derive(Debug, Clone)]
pub struct SharedCorpus(pub Arc<CorpusStatistics>);

impl PartialEq for SharedCorpus {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SharedCorpus {}

impl std::hash::Hash for SharedCorpus {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        Arc::as_ptr(&self.0).hash(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(max_doc: u64, df: u64) -> CorpusStatistics {
        let stats =
            FieldStatistics { doc_count: max_doc, sum_total_term_freq: 10 * max_doc, sum_doc_freq: 3 };
        CorpusStatistics {
            max_doc,
            fields: BTreeMap::from([("body".to_string(), stats)]),
            doc_freqs: BTreeMap::from([
                (("body".to_string(), b"war".to_vec()), df),
                (("n".to_string(), vec![0x80, 0, 0xff]), 1),
            ]),
        }
    }

    #[test]
    fn sums_parts_and_travels_as_json() {
        let mut sum = part(5, 2);
        sum.merge(&part(7, 3));
        assert_eq!(sum.max_doc, 12);
        assert_eq!(sum.fields["body"].doc_count, 12);
        assert_eq!(sum.fields["body"].sum_total_term_freq, 120);
        assert_eq!(sum.doc_freqs[&("body".to_string(), b"war".to_vec())], 5);
        assert_eq!(sum.doc_freqs[&("n".to_string(), vec![0x80, 0, 0xff])], 2);
        let json = sum.to_json();
        assert_eq!(json["terms"][0], json!(["body", "d2Fy", 5]));
        assert_eq!(CorpusStatistics::from_json(&json).unwrap(), sum);
    }

    #[test]
    fn bad_json_is_an_error_naming_the_part() {
        let good = part(1, 1).to_json();
        for (key, value, named) in [
            ("max_doc", json!(-1), "[max_doc]"),
            ("fields", json!({"body": 3}), "[fields]"),
            ("terms", json!({}), "[terms]"),
            ("terms", json!([["body", "not base64!", 1]]), "[field, base64 term, documents]"),
            ("terms", json!([["body", "d2Fy"]]), "[field, base64 term, documents]"),
        ] {
            let mut bad = good.clone();
            bad[key] = value;
            let err = CorpusStatistics::from_json(&bad).unwrap_err().to_string();
            assert!(err.contains(named), "{key}: {err}");
        }
    }
}
