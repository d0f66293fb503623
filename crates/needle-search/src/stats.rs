//! Index-wide statistics for one query: BM25 needs document frequencies and
//! field lengths summed over every segment, so scores do not depend on how
//! documents are split into segments. Opening a term's posting list reads its
//! document frequency; the lists opened here are kept for the scorers.

use std::collections::HashMap;
use std::sync::Arc;

use needle_codecs::{FieldStats, Postings, SegmentRead};
use needle_core::{FieldId, Result};

use crate::bm25::{avg_field_length, idf, Bm25};
use crate::Query;

type TermKey = (FieldId, Vec<u8>);

pub(crate) struct IndexStats<'a> {
    segments: &'a [&'a dyn SegmentRead],
    fields: HashMap<FieldId, FieldStats>,
    doc_freq: HashMap<TermKey, u64>,
    opened: HashMap<(usize, TermKey), Box<dyn Postings>>,
    bloom: bool,
}

impl<'a> IndexStats<'a> {
    pub fn collect(segments: &'a [&'a dyn SegmentRead], query: &Query, bloom: bool) -> Result<Self> {
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
        let mut stats =
            IndexStats { segments, fields, doc_freq: HashMap::new(), opened: HashMap::new(), bloom };
        for (i, s) in segments.iter().enumerate() {
            for (key, p) in terms.iter().zip(s.postings_all(&keys)?) {
                let df = stats.doc_freq.entry(key.clone()).or_default();
                if let Some(p) = p {
                    *df += u64::from(p.doc_freq());
                    stats.opened.insert((i, key.clone()), p);
                }
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
        let f = self.fields.get(&field).copied().unwrap_or_default();
        let doc_freq = terms.iter().map(|(t, _)| self.doc_freq(field, t)).max().unwrap_or(0);
        Arc::new(Bm25::new(
            boost * idf(doc_freq, f.doc_count),
            avg_field_length(f.sum_total_term_freq, f.doc_count),
        ))
    }

    /// BM25 for a term, or for a phrase with the summed idf of its terms, boosted.
    pub fn bm25(&self, field: FieldId, terms: &[&[u8]], boost: f32) -> Arc<Bm25> {
        let f = self.fields.get(&field).copied().unwrap_or_default();
        let idf_sum: f64 = terms.iter().map(|t| f64::from(idf(self.doc_freq(field, t), f.doc_count))).sum();
        Arc::new(Bm25::new(boost * idf_sum as f32, avg_field_length(f.sum_total_term_freq, f.doc_count)))
    }
}
