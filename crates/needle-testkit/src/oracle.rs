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
use needle_search::{BoolQuery, MultiTermQuery, PhraseQuery, Query, TermPattern, TermQuery};

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
        let query = &self.expand_all(query);
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
                assert_eq!(p.slop, 0, "the oracle knows exact phrases only");
                let word = |t: &[u8]| String::from_utf8_lossy(t).into_owned();
                let places: Vec<(u32, Vec<String>)> = p
                    .places()
                    .into_iter()
                    .map(|(o, terms)| (o, terms.into_iter().map(word).collect()))
                    .collect();
                let freq = self.phrase_freq(doc, p.field, &places);
                // The idfs of every term the index holds (Lucene's MultiPhraseQuery leaves out the others).
                let terms: Vec<String> = p.terms.iter().map(|(_, t)| word(t)).collect();
                let refs: Vec<&str> =
                    terms.iter().map(String::as_str).filter(|t| self.doc_freq(p.field, t) > 0.0).collect();
                (freq > 0).then(|| self.bm25(p.field, &refs, freq as f32, doc, boost))
            }
            Query::Bool(b) => self.score_bool(b, doc, boost),
            Query::MatchAll => Some(boost),
            Query::MatchNone => None,
            Query::MultiTerm(m) => self.boosted_score(&self.expand(m), doc, boost),
            Query::TermSet { field, terms } => {
                terms.iter().any(|t| self.freq(doc, *field, &String::from_utf8_lossy(t)) > 0).then_some(boost)
            }
            Query::Blended { field, terms } => {
                let df = terms
                    .iter()
                    .map(|(t, _)| self.doc_freq(*field, &String::from_utf8_lossy(t)))
                    .fold(0.0, f64::max);
                let scores: Vec<f64> = terms
                    .iter()
                    .filter_map(|(t, b)| {
                        let freq = self.freq(doc, *field, &String::from_utf8_lossy(t));
                        (freq > 0)
                            .then(|| f64::from(self.bm25_with_df(*field, df, freq as f32, doc, boost * b)))
                    })
                    .collect();
                (!scores.is_empty()).then(|| scores.iter().sum::<f64>() as f32)
            }
            Query::Synonym { field, terms } => {
                let words: Vec<String> =
                    terms.iter().map(|t| String::from_utf8_lossy(t).into_owned()).collect();
                let df = words.iter().map(|w| self.doc_freq(*field, w)).fold(0.0, f64::max);
                let freq: usize = words.iter().map(|w| self.freq(doc, *field, w)).sum();
                (freq > 0).then(|| self.bm25_with_df(*field, df, freq as f32, doc, boost))
            }
            Query::Range(_) | Query::Exists(_) => {
                panic!("the oracle keeps no numeric values: ranges are checked against a scan of the sources")
            }
            Query::Span { .. } => {
                panic!("the oracle knows no span queries: they are checked against OpenSearch's recorded answers")
            }
            Query::Boost(q, b) => self.boosted_score(q, doc, boost * b),
            Query::Boosting { positive, negative, factor } => {
                let score = f64::from(self.score(positive, doc)?);
                let factor = if self.score(negative, doc).is_some() { f64::from(*factor) } else { 1.0 };
                Some((score * factor * f64::from(boost)) as f32)
            }
            Query::Constant(q) => self.score(q, doc).map(|_| boost),
            Query::CrossFields { fields, term, tie_breaker } => {
                let word = String::from_utf8_lossy(term);
                let doc_freqs = self.cross_field_doc_freqs(fields, &word);
                let scores: Vec<f32> = (fields.iter().zip(doc_freqs))
                    .filter_map(|(&(field, field_boost), df)| {
                        let freq = self.freq(doc, field, &word);
                        (freq > 0)
                            .then(|| self.bm25_with_df(field, df, freq as f32, doc, boost * field_boost))
                    })
                    .collect();
                dis_max(&scores, *tie_breaker)
            }
            Query::DisMax { clauses, tie_breaker } => {
                let scores: Vec<f32> =
                    clauses.iter().filter_map(|c| self.boosted_score(c, doc, boost)).collect();
                dis_max(&scores, *tie_breaker)
            }
        }
    }

    /// Elasticsearch's blended document frequencies of a cross-fields term,
    /// stated plainly: a field holding the term takes the largest frequency
    /// of the fields, plus one for each distinct larger frequency than its
    /// own, at most its document count and the fewest tokens of those fields
    /// (and the number of documents).
    fn cross_field_doc_freqs(&self, fields: &[(FieldId, f32)], term: &str) -> Vec<f64> {
        let own: Vec<f64> = fields.iter().map(|&(f, _)| self.doc_freq(f, term)).collect();
        let max = own.iter().copied().fold(0.0, f64::max);
        let holding: Vec<usize> = (0..fields.len()).filter(|&i| own[i] > 0.0).collect();
        let fewest_tokens =
            holding.iter().map(|&i| self.field_stats(fields[i].0).1 as f64).fold(f64::MAX, f64::min);
        let cap = fewest_tokens.min(self.docs.len() as f64);
        let mut larger: Vec<f64> = own.clone();
        larger.sort_by(f64::total_cmp);
        larger.dedup();
        (0..fields.len())
            .map(|i| match own[i] > 0.0 {
                false => 0.0,
                true => {
                    let steps = larger.iter().filter(|&&d| d > own[i]).count() as f64;
                    (max + steps).min(cap).min(self.field_stats(fields[i].0).0)
                }
            })
            .collect()
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

    /// Exact matches of a phrase's places (relative position, the terms that
    /// may stand there): one for each occurrence of a first place's term
    /// that starts a match, as Lucene's ExactPhraseMatcher counts them.
    fn phrase_freq(&self, doc: usize, field: FieldId, places: &[(u32, Vec<String>)]) -> usize {
        let tokens = self.tokens(doc, field);
        let at = |pos: i64, terms: &[String]| {
            tokens.iter().any(|(t, p)| i64::from(*p) == pos && terms.contains(t))
        };
        let (first_offset, first_terms) = &places[0];
        tokens
            .iter()
            .filter(|(t, p)| {
                first_terms.contains(t) && {
                    let start = i64::from(*p) - i64::from(*first_offset);
                    places.iter().all(|(off, terms)| at(start + i64::from(*off), terms))
                }
            })
            .count()
    }

    /// `query` with each prefix, wildcard and fuzzy query expanded (once, not for every document).
    fn expand_all(&self, query: &Query) -> Query {
        let expanded = query.clone().try_map_leaves(&mut |leaf| match leaf {
            Query::MultiTerm(m) => Ok::<_, std::convert::Infallible>(self.expand(&m)),
            other => Ok(other),
        });
        expanded.unwrap_or_else(|never| match never {})
    }

    /// What a prefix, wildcard or fuzzy query expands to, found the slow
    /// way: every term of the field in any document, tested by a direct
    /// reading of Lucene's rules (a table for edit distances).
    fn expand(&self, m: &MultiTermQuery) -> Query {
        let mut vocabulary: Vec<String> = self
            .docs
            .iter()
            .flat_map(|d| d.tokens.get(&m.field).into_iter().flatten().map(|(t, _)| t.clone()))
            .collect();
        vocabulary.sort();
        vocabulary.dedup();
        let fold = |t: &str, ci: bool| if ci { t.to_lowercase() } else { t.to_string() };
        let set = |terms: Vec<String>| match terms.is_empty() {
            true => Query::MatchNone,
            false => {
                Query::TermSet { field: m.field, terms: terms.into_iter().map(String::into_bytes).collect() }
            }
        };
        match &m.pattern {
            TermPattern::Prefix { prefix, case_insensitive: ci } => {
                set(vocabulary.into_iter().filter(|t| fold(t, *ci).starts_with(&fold(prefix, *ci))).collect())
            }
            TermPattern::Range(r) => set(vocabulary
                .into_iter()
                .filter(|t| {
                    let above = r.lower.as_ref().is_none_or(|l| t > l || (r.include_lower && t == l));
                    let below = r.upper.as_ref().is_none_or(|u| t < u || (r.include_upper && t == u));
                    above && below
                })
                .collect()),
            TermPattern::Wildcard { pattern, case_insensitive: ci } => set(vocabulary
                .into_iter()
                .filter(|t| wildcard_matches(&fold(pattern, *ci), &fold(t, *ci)))
                .collect()),
            // The matcher itself, over every term: what is checked is the walk of
            // the term maps that skips branches, against reading them all.
            TermPattern::Regexp { pattern, flags, case_insensitive } => {
                let m = needle_search::regexp::RegexpMatcher::new(pattern, *flags, *case_insensitive)
                    .expect("the random patterns are valid");
                set(vocabulary
                    .into_iter()
                    .filter(|t| needle_codecs::TermMatcher::matches(&m, t.as_bytes()))
                    .collect())
            }
            TermPattern::Fuzzy(f) => {
                let word: Vec<char> = f.term.chars().collect();
                let split = (f.prefix_length as usize).min(word.len());
                let mut near: Vec<(f32, String)> = vocabulary
                    .into_iter()
                    .filter_map(|t| {
                        let chars: Vec<char> = t.chars().collect();
                        if chars.len() < split || chars[..split] != word[..split] {
                            return None;
                        }
                        let edits = osa_distance(&chars[split..], &word[split..], f.transpositions);
                        let similarity = match edits {
                            0 => 1.0,
                            e => 1.0 - e as f32 / chars.len().min(word.len()) as f32,
                        };
                        (edits <= f.max_edits.min(2)).then_some((similarity, t))
                    })
                    .collect();
                near.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
                near.truncate(f.max_expansions as usize);
                near.sort_by(|a, b| a.1.cmp(&b.1));
                match near.is_empty() {
                    true => Query::MatchNone,
                    false => Query::Blended {
                        field: m.field,
                        terms: near.into_iter().map(|(s, t)| (t.into_bytes(), s.max(0.0))).collect(),
                    },
                }
            }
            // The first terms in order any prefix begins; a lone prefix is a disjunction of them.
            TermPattern::PhrasePrefix(p) => {
                let mut expansions: Vec<String> =
                    vocabulary.into_iter().filter(|t| p.prefixes.iter().any(|x| t.starts_with(x))).collect();
                expansions.truncate(p.max_expansions as usize);
                let field = m.field;
                match (expansions.is_empty(), p.terms.is_empty()) {
                    (true, _) => Query::MatchNone,
                    (false, true) => Query::or(
                        expansions
                            .into_iter()
                            .map(|t| Query::Term(TermQuery { field, term: t.into_bytes() }))
                            .collect(),
                    ),
                    (false, false) => {
                        let mut terms = p.terms.clone();
                        terms.extend(expansions.into_iter().map(|t| (p.position, t.into_bytes())));
                        Query::Phrase(PhraseQuery { field, terms, slop: p.slop })
                    }
                }
            }
        }
    }

    fn doc_freq(&self, field: FieldId, term: &str) -> f64 {
        *self
            .doc_freqs
            .borrow_mut()
            .entry((field, term.to_string()))
            .or_insert_with(|| (0..self.docs.len()).filter(|&d| self.freq(d, field, term) > 0).count() as f64)
    }

    /// (documents with the field, their summed length).
    fn field_stats(&self, field: FieldId) -> (f64, usize) {
        *self.field_stats.borrow_mut().entry(field).or_insert_with(|| {
            let with_field: Vec<usize> =
                (0..self.docs.len()).filter(|&d| !self.tokens(d, field).is_empty()).collect();
            (with_field.len() as f64, with_field.iter().map(|&d| self.tokens(d, field).len()).sum())
        })
    }

    fn idf(&self, field: FieldId, df: f64) -> f64 {
        let doc_count = self.field_stats(field).0;
        f64::from((1.0 + (doc_count - df + 0.5) / (df + 0.5)).ln() as f32)
    }

    /// Lucene's BM25 with statistics over all documents.
    fn bm25(&self, field: FieldId, terms: &[&str], freq: f32, doc: usize, boost: f32) -> f32 {
        let idf: f64 = terms.iter().map(|t| self.idf(field, self.doc_freq(field, t))).sum();
        self.bm25_weighted(field, boost * idf as f32, freq, doc)
    }

    /// BM25 of a term scored with document frequency `df`, not its own.
    fn bm25_with_df(&self, field: FieldId, df: f64, freq: f32, doc: usize, boost: f32) -> f32 {
        self.bm25_weighted(field, boost * self.idf(field, df) as f32, freq, doc)
    }

    fn bm25_weighted(&self, field: FieldId, weight: f32, freq: f32, doc: usize) -> f32 {
        let (doc_count, sum_len) = self.field_stats(field);
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

/// Whether `text` matches the wildcard `pattern`, by backtracking.
pub fn wildcard_matches(pattern: &str, text: &str) -> bool {
    glob(&glob_parts(pattern), &text.chars().collect::<Vec<_>>())
}

/// A wildcard pattern's parts: (`'*'`, true) any characters, (`'?'`, true)
/// one character, (c, false) the character c (`\` escapes the next one).
fn glob_parts(pattern: &str) -> Vec<(char, bool)> {
    let mut out = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        out.push(match c {
            '*' | '?' => (c, true),
            '\\' => (chars.next().unwrap_or('\\'), false),
            c => (c, false),
        });
    }
    out
}

fn glob(parts: &[(char, bool)], text: &[char]) -> bool {
    match parts.split_first() {
        None => text.is_empty(),
        Some((('*', true), rest)) => (0..=text.len()).any(|i| glob(rest, &text[i..])),
        Some((('?', true), rest)) => !text.is_empty() && glob(rest, &text[1..]),
        Some(((c, _), rest)) => text.first() == Some(c) && glob(rest, &text[1..]),
    }
}

/// The optimal string alignment distance: insertions, deletions,
/// substitutions and (when asked) swaps of adjacent characters.
pub fn osa_distance(a: &[char], b: &[char], transpositions: bool) -> u32 {
    let mut d = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i as u32;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j as u32;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = u32::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if transpositions && i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// The best of `scores` plus `tie_breaker` times the others; `None` when there are none.
fn dis_max(scores: &[f32], tie_breaker: f32) -> Option<f32> {
    let best = scores.iter().copied().fold(None, |m: Option<f32>, s| Some(m.map_or(s, |m| m.max(s))))?;
    let others: f64 = scores.iter().map(|&s| f64::from(s)).sum::<f64>() - f64::from(best);
    Some((f64::from(best) + others * f64::from(tie_breaker)) as f32)
}
