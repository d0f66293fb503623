//! Index-wide statistics for one query: BM25 needs document frequencies and
//! field lengths summed over every segment, so scores do not depend on how
//! documents are split into segments. Opening a term's posting list reads its
//! document frequency; the lists opened here are kept for the scorers.
//!
//! Searched beside other indexes or shards, a search may be given their
//! statistics summed with its own ([`CorpusStats`], gathered by a first
//! round over every part: Elasticsearch's `dfs_query_then_fetch`), so that
//! a document scores as it would in one index holding them all.

use std::collections::HashMap;
use std::sync::Arc;

use needle_codecs::{FieldStats, Postings, SegmentRead};
use needle_core::{FieldId, Result};

use crate::bm25::{avg_field_length, idf, Bm25};
use crate::Query;

type TermKey = (FieldId, Vec<u8>);

/// What BM25 reads of a corpus for one query: documents, each field's
/// statistics and each term's document frequency, summed over its parts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorpusStats {
    /// Documents, deleted ones included (Lucene's `maxDoc`).
    pub max_doc: u64,
    pub fields: HashMap<FieldId, FieldStats>,
    pub doc_freqs: HashMap<TermKey, u64>,
}

impl CorpusStats {
    /// These statistics of `segments` for the terms of `query` (a prepared one).
    pub fn of(segments: &[&dyn SegmentRead], query: &Query) -> Result<CorpusStats> {
        let stats = IndexStats::collect(segments, query, false, None)?;
        Ok(CorpusStats { max_doc: stats.max_doc, fields: stats.fields, doc_freqs: stats.doc_freq })
    }
}

pub(crate) struct IndexStats<'a> {
    segments: &'a [&'a dyn SegmentRead],
    fields: HashMap<FieldId, FieldStats>,
    doc_freq: HashMap<TermKey, u64>,
    /// Documents in every segment, deleted ones included (Lucene's `maxDoc`).
    max_doc: u64,
    opened: HashMap<(usize, TermKey), Box<dyn Postings>>,
    bloom: bool,
}

impl<'a> IndexStats<'a> {
    /// The statistics of `segments` for `query`, those of `corpus` in their
    /// place where it has them.
    pub fn collect(
        segments: &'a [&'a dyn SegmentRead],
        query: &Query,
        bloom: bool,
        corpus: Option<&CorpusStats>,
    ) -> Result<Self> {
        let mut fields: HashMap<FieldId, FieldStats> = HashMap::new();
        for s in segments {
            for f in &s.meta().fields {
                fields.entry(f.field).or_default().add(&f.stats);
            }
        }
        let mut terms = Vec::new();
        query.terms(&mut terms);
        let mut seen = std::collections::HashSet::new();
        terms.retain(|t| seen.insert(t.clone()));
        let keys: Vec<(FieldId, &[u8])> = terms.iter().map(|(f, t)| (*f, t.as_slice())).collect();
        let max_doc = segments.iter().map(|s| u64::from(s.meta().max_doc)).sum();
        let mut stats =
            IndexStats { segments, fields, doc_freq: HashMap::new(), max_doc, opened: HashMap::new(), bloom };
        for (i, s) in segments.iter().enumerate() {
            for (key, p) in terms.iter().zip(s.postings_all(&keys)?) {
                let df = stats.doc_freq.entry(key.clone()).or_default();
                if let Some(p) = p {
                    *df += u64::from(p.doc_freq());
                    stats.opened.insert((i, key.clone()), p);
                }
            }
        }
        if let Some(corpus) = corpus {
            stats.max_doc = corpus.max_doc;
            stats.fields.extend(corpus.fields.iter().map(|(f, s)| (*f, *s)));
            for (key, df) in &mut stats.doc_freq {
                *df = corpus.doc_freqs.get(key).copied().unwrap_or(*df);
            }
        }
        Ok(stats)
    }

    /// A field's statistics summed over every segment.
    pub fn field_stats(&self, field: FieldId) -> FieldStats {
        self.fields.get(&field).copied().unwrap_or_default()
    }

    /// Whether phrases may use Bloom filters (off for ablation).
    pub fn use_bloom(&self) -> bool {
        self.bloom
    }

    pub fn doc_freq(&self, field: FieldId, term: &[u8]) -> u64 {
        self.doc_freq.get(&(field, term.to_vec())).copied().unwrap_or(0)
    }

    /// The posting list of a term in segment `seg`, opened once.
    pub fn postings(&mut self, seg: usize, field: FieldId, term: &[u8]) -> Result<Option<Box<dyn Postings>>> {
        match self.opened.remove(&(seg, (field, term.to_vec()))) {
            Some(p) => Ok(Some(p)),
            None => self.segments[seg].postings(field, term),
        }
    }

    /// BM25 for a term of a blended group: the group's largest document
    /// frequency stands in for the term's own.
    pub fn bm25_blended(&self, field: FieldId, terms: &[(Vec<u8>, f32)], boost: f32) -> Arc<Bm25> {
        let doc_freq = terms.iter().map(|(t, _)| self.doc_freq(field, t)).max().unwrap_or(0);
        self.bm25_with_doc_freq(field, doc_freq, boost)
    }

    /// BM25 for a term of `field` that `doc_freq` documents are taken to hold.
    pub fn bm25_with_doc_freq(&self, field: FieldId, doc_freq: u64, boost: f32) -> Arc<Bm25> {
        let f = self.field_stats(field);
        Arc::new(Bm25::new(
            boost * idf(doc_freq, f.doc_count),
            avg_field_length(f.sum_total_term_freq, f.doc_count),
        ))
    }

    /// The document frequencies of `term` in each of `fields` blended as
    /// Elasticsearch's `cross_fields` blends them (its BlendedTermQuery), so
    /// that a term rare in one field and common in another is not rewarded
    /// for its rarity there. Every field holding the term takes the largest
    /// frequency among them, plus one at each step down to a field where the
    /// term is rarer (a bias toward the fields where it is common), capped by
    /// the field's document count and by the smallest token count of those
    /// fields; a field without the term keeps 0. One field is left as it is.
    pub fn blended_doc_freqs(&self, fields: &[(FieldId, f32)], term: &[u8]) -> Vec<u64> {
        let own: Vec<u64> = fields.iter().map(|(f, _)| self.doc_freq(*f, term)).collect();
        let max = own.iter().copied().max().unwrap_or(0);
        if fields.len() <= 1 || max == 0 {
            return own;
        }
        let fewest_tokens = (fields.iter().zip(&own))
            .filter(|(_, &df)| df > 0)
            .map(|((f, _), _)| self.field_stats(*f).sum_total_term_freq)
            .min()
            .unwrap_or(u64::MAX);
        let max_doc = self.max_doc.min(fewest_tokens);
        // Most documents first; equal ones in the order given (a stable sort, as Lucene's).
        let mut order: Vec<usize> = (0..fields.len()).collect();
        order.sort_by(|&a, &b| own[b].cmp(&own[a]));
        let mut blended = vec![0; fields.len()];
        let (mut shared, mut previous) = (max.min(max_doc), own[order[0]]);
        for i in order.into_iter().take_while(|&i| own[i] > 0) {
            if previous > own[i] {
                shared += 1;
            }
            blended[i] = shared.min(max_doc.min(self.field_stats(fields[i].0).doc_count));
            previous = own[i];
        }
        blended
    }

    /// BM25 for a term, or for a phrase with the summed idf of its terms, boosted.
    pub fn bm25(&self, field: FieldId, terms: &[&[u8]], boost: f32) -> Arc<Bm25> {
        let f = self.fields.get(&field).copied().unwrap_or_default();
        let idf_sum: f64 = terms.iter().map(|t| f64::from(idf(self.doc_freq(field, t), f.doc_count))).sum();
        Arc::new(Bm25::new(boost * idf_sum as f32, avg_field_length(f.sum_total_term_freq, f.doc_count)))
    }
}
