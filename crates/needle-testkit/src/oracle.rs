//! The reference: every document kept as token lists, every query answered
//! by looking at every document. Slow and obviously right.
//!
//! BM25 is written out here again (Lucene's formula, in float as Lucene
//! computes it) rather than borrowed from the engine; only the length
//! quantization (checked against Lucene's own values in its unit tests) is shared.

use std::cell::RefCell;
use std::collections::HashMap;

use needle_analysis::Analyzer;
use needle_codecs::norms::{decode_length, encode_length};
use needle_core::FieldId;
use needle_search::{BoolQuery, Query};

/// How the oracle indexes a field: analyzed text, or whole-value keyword.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OracleField {
    Text,
    Keyword,
}

struct Doc {
    /// field -> (term, position) in order.
    tokens: HashMap<FieldId, Vec<(String, u32)>>,
}

pub struct Oracle {
    fields: HashMap<FieldId, OracleField>,
    analyzer: Analyzer,
    docs: Vec<Doc>,
    /// Memoized document frequencies and (doc count, total length) per field.
    doc_freqs: RefCell<HashMap<(FieldId, String), f64>>,
    field_stats: RefCell<HashMap<FieldId, (f64, usize)>>,
}

impl Oracle {
    pub fn new(fields: &[(FieldId, OracleField)]) -> Self {
        Oracle {
            fields: fields.iter().copied().collect(),
            analyzer: Analyzer::standard(),
            docs: Vec::new(),
            doc_freqs: RefCell::default(),
            field_stats: RefCell::default(),
        }
    }

    /// Adds a document: values per field (several values = a multi-valued field).
    pub fn add(&mut self, values: &[(FieldId, Vec<String>)]) {
        let mut tokens = HashMap::new();
        for (field, vals) in values {
            let list: &mut Vec<(String, u32)> = tokens.entry(*field).or_default();
            let mut next_pos = 0;
            for (i, v) in vals.iter().enumerate() {
                match self.fields[field] {
                    OracleField::Keyword => list.push((v.clone(), 0)),
                    OracleField::Text => {
                        let base = if i == 0 { 0 } else { next_pos + 100 };
                        for (j, t) in self.analyzer.tokens(v).into_iter().enumerate() {
                            list.push((t.term, base + j as u32));
                        }
                        next_pos = base + self.analyzer.tokens(v).len() as u32;
                    }
                }
            }
        }
        self.docs.push(Doc { tokens });
        self.doc_freqs.borrow_mut().clear();
        self.field_stats.borrow_mut().clear();
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Every matching document with its score, best first (ties: lower id first).
    pub fn search(&self, query: &Query) -> Vec<(u64, f32)> {
        let mut hits: Vec<(u64, f32)> =
            (0..self.docs.len()).filter_map(|d| self.score(query, d).map(|s| (d as u64, s))).collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits
    }

    /// The score of `doc` for `query`, or `None` when it does not match.
    pub fn score(&self, query: &Query, doc: usize) -> Option<f32> {
        self.boosted_score(query, doc, 1.0)
    }

    /// [`Oracle::score`] under boosts whose product is `boost` (Lucene puts it in each term's weight).
    fn boosted_score(&self, query: &Query, doc: usize, boost: f32) -> Option<f32> {
        match query {
            Query::Term(t) => {
                let term = String::from_utf8_lossy(&t.term);
                let freq = self.freq(doc, t.field, &term);
                (freq > 0).then(|| self.bm25(t.field, &[term.as_ref()], freq as f32, doc, boost))
            }
            Query::Phrase(p) => {
                let terms: Vec<String> =
                    p.terms.iter().map(|(_, t)| String::from_utf8_lossy(t).into_owned()).collect();
                assert_eq!(p.slop, 0, "the oracle knows exact phrases only");
                let freq = self.phrase_freq(
                    doc,
                    p.field,
                    &p.terms.iter().map(|(o, _)| *o).collect::<Vec<_>>(),
                    &terms,
                );
                let refs: Vec<&str> = terms.iter().map(String::as_str).collect();
                (freq > 0).then(|| self.bm25(p.field, &refs, freq as f32, doc, boost))
            }
            Query::Bool(b) => self.score_bool(b, doc, boost),
            Query::MatchAll => Some(boost),
            Query::MatchNone => None,
            Query::Range(_) | Query::Exists(_) => {
                panic!("the oracle keeps no numeric values: ranges are checked against a scan of the sources")
            }
            Query::Boost(q, b) => self.boosted_score(q, doc, boost * b),
            Query::Constant(q) => self.score(q, doc).map(|_| boost),
            Query::DisMax { clauses, tie_breaker } => {
                let scores: Vec<f32> =
                    clauses.iter().filter_map(|c| self.boosted_score(c, doc, boost)).collect();
                let best =
                    scores.iter().copied().fold(None, |m: Option<f32>, s| Some(m.map_or(s, |m| m.max(s))))?;
                let others: f64 = scores.iter().map(|&s| f64::from(s)).sum::<f64>() - f64::from(best);
                Some((f64::from(best) + others * f64::from(*tie_breaker)) as f32)
            }
        }
    }

    fn score_bool(&self, b: &BoolQuery, doc: usize, boost: f32) -> Option<f32> {
        if b.must_not.iter().any(|q| self.score(q, doc).is_some()) {
            return None;
        }
        let mut sum = 0f64;
        for q in &b.must {
            sum += f64::from(self.boosted_score(q, doc, boost)?);
        }
        for q in &b.filter {
            self.score(q, doc)?;
        }
        let should: Vec<f32> = b.should.iter().filter_map(|q| self.boosted_score(q, doc, boost)).collect();
        let positive = b.must.len() + b.should.len() + b.filter.len();
        if positive == 0 {
            return Some(boost);
        }
        let min = if b.must.is_empty() && b.filter.is_empty() {
            b.minimum_should_match.max(1)
        } else {
            b.minimum_should_match
        };
        if (should.len() as u32) < min {
            return None;
        }
        sum += should.iter().map(|&s| f64::from(s)).sum::<f64>();
        Some(sum as f32)
    }

    fn tokens(&self, doc: usize, field: FieldId) -> &[(String, u32)] {
        self.docs[doc].tokens.get(&field).map_or(&[], Vec::as_slice)
    }

    fn freq(&self, doc: usize, field: FieldId, term: &str) -> usize {
        self.tokens(doc, field).iter().filter(|(t, _)| t == term).count()
    }

    fn phrase_freq(&self, doc: usize, field: FieldId, offsets: &[u32], terms: &[String]) -> usize {
        let tokens = self.tokens(doc, field);
        let at = |pos: i64, term: &str| tokens.iter().any(|(t, p)| i64::from(*p) == pos && t == term);
        tokens
            .iter()
            .filter(|(t, p)| {
                *t == terms[0] && {
                    let start = i64::from(*p) - i64::from(offsets[0]);
                    terms.iter().zip(offsets).all(|(term, off)| at(start + i64::from(*off), term))
                }
            })
            .count()
    }

    /// Lucene's BM25 with statistics over all documents.
    fn bm25(&self, field: FieldId, terms: &[&str], freq: f32, doc: usize, boost: f32) -> f32 {
        let (doc_count, sum_len) = *self.field_stats.borrow_mut().entry(field).or_insert_with(|| {
            let with_field: Vec<usize> =
                (0..self.docs.len()).filter(|&d| !self.tokens(d, field).is_empty()).collect();
            (with_field.len() as f64, with_field.iter().map(|&d| self.tokens(d, field).len()).sum())
        });
        let mut idf = 0f64;
        for t in terms {
            let df = *self.doc_freqs.borrow_mut().entry((field, t.to_string())).or_insert_with(|| {
                (0..self.docs.len()).filter(|&d| self.freq(d, field, t) > 0).count() as f64
            });
            idf += f64::from((1.0 + (doc_count - df + 0.5) / (df + 0.5)).ln() as f32);
        }
        let weight = boost * idf as f32;
        let avgdl = (sum_len as f64 / doc_count) as f32;
        let norm = match self.fields[&field] {
            OracleField::Text => encode_length(self.tokens(doc, field).len() as u32),
            OracleField::Keyword => 1,
        };
        let len = decode_length(norm) as f32;
        let norm_inverse = 1.0 / (1.2f32 * ((1.0 - 0.75f32) + 0.75f32 * len / avgdl));
        weight - weight / (1.0 + freq * norm_inverse)
    }
}
