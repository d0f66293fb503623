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

use std::collections::BTreeMap;
use std::sync::Arc;

use needle_codecs::FieldStats;
use needle_search::CorpusStats;

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
