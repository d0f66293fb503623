//! Why a document scored what it did (Elasticsearch's `explain`): the
//! query's tree evaluated for one document, worded as Lucene words its
//! explanations. A BM25 leaf is `weight(field:term in doc)`, its score
//! `boost * idf * tf`, the idf from `n` and `N`, the tf from `freq`, `k1`,
//! `b`, `dl` (the length the norm byte keeps) and `avgdl`.

use needle_codecs::norms::decode_length;
use needle_codecs::SegmentRead;
use needle_core::{DocId, DocSet, FieldId, Result};

use crate::bm25::{avg_field_length, idf, Bm25, B, K1};
use crate::iter::{PhraseScorer, SpanScorer};
use crate::stats::IndexStats;
use crate::{BoolQuery, PhraseQuery, Query, Span};

#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    pub value: f32,
    pub description: String,
    pub details: Vec<Explanation>,
}

impl Explanation {
    fn new(value: f32, description: impl Into<String>, details: Vec<Explanation>) -> Self {
        Explanation { value, description: description.into(), details }
    }

    fn leaf(value: f32, description: impl Into<String>) -> Self {
        Explanation::new(value, description, Vec::new())
    }
}

/// What the explanation reads of the search: statistics, the document, field names.
pub(crate) struct Context<'s, 'a> {
    pub stats: &'s mut IndexStats<'a>,
    pub seg: usize,
    pub segment: &'a dyn SegmentRead,
    pub doc: DocId,
    /// The document's number across segments (shown as Lucene shows its doc id).
    pub global: u64,
    pub names: &'s dyn Fn(FieldId) -> String,
}

/// The explanation of `query` for the document, `None` when it does not match.
pub(crate) fn explain(query: &Query, cx: &mut Context<'_, '_>, boost: f32) -> Result<Option<Explanation>> {
    Ok(match query {
        Query::Term(t) => term(cx, t.field, &t.term, boost, None)?,
        Query::Phrase(p) => phrase(cx, p, boost)?,
        Query::Span { field, span } => span_query(cx, *field, span, boost)?,
        Query::Bool(b) => boolean(cx, b, boost)?,
        Query::MatchAll => Some(Explanation::leaf(boost, "*:*")),
        Query::MatchNone | Query::MultiTerm(_) => None,
        Query::Boost(q, b) => explain(q, cx, boost * b)?,
        Query::Constant(q) => explain(q, cx, 1.0)?
            .map(|_| Explanation::leaf(boost, format!("ConstantScore({})", describe(q, cx.names)))),
        Query::Range(_) | Query::Exists(_) | Query::TermSet { .. } => {
            let matched = crate::weight::scorer(query, cx.stats, cx.seg, cx.segment, boost)?
                .is_some_and(|mut s| s.seek(cx.doc) == cx.doc);
            matched.then(|| Explanation::leaf(boost, describe(query, cx.names)))
        }
        Query::Blended { field, terms } => {
            let doc_freq = terms.iter().map(|(t, _)| cx.stats.doc_freq(*field, t)).max().unwrap_or(0);
            let mut details = Vec::new();
            for (t, term_boost) in terms {
                details.extend(term(cx, *field, t, boost * term_boost, Some(doc_freq))?);
            }
            sum(details)
        }
        Query::Synonym { field, terms } => synonym(cx, *field, terms, boost)?,
        Query::CrossFields { fields, term: t, tie_breaker } => {
            let doc_freqs = cx.stats.blended_doc_freqs(fields, t);
            let mut details = Vec::new();
            for (&(field, field_boost), doc_freq) in fields.iter().zip(doc_freqs) {
                details.extend(term(cx, field, t, boost * field_boost, Some(doc_freq))?);
            }
            dis_max(details, *tie_breaker)
        }
        Query::DisMax { clauses, tie_breaker } => {
            let mut details = Vec::new();
            for c in clauses {
                details.extend(explain(c, cx, boost)?);
            }
            dis_max(details, *tie_breaker)
        }
        Query::Boosting { positive, negative, factor } => match explain(positive, cx, 1.0)? {
            None => None,
            Some(p) => {
                let demoted = explain(negative, cx, 1.0)?.is_some();
                let factor = if demoted { *factor } else { 1.0 };
                let value = (f64::from(p.value) * f64::from(factor) * f64::from(boost)) as f32;
                let details =
                    vec![p, Explanation::leaf(factor, "negative_boost, when the negative query matches")];
                Some(Explanation::new(value, "product of:", details))
            }
        },
    })
}

/// The best of `details` plus `tie_breaker` times the others (Lucene's DisjunctionMaxQuery).
fn dis_max(details: Vec<Explanation>, tie_breaker: f32) -> Option<Explanation> {
    let max = details.iter().map(|d| d.value).fold(f32::NEG_INFINITY, f32::max);
    let others: f64 = details.iter().map(|d| f64::from(d.value)).sum::<f64>() - f64::from(max);
    let value = (f64::from(max) + others * f64::from(tie_breaker)) as f32;
    let description = match tie_breaker {
        t if t == 0.0 => "max of:".to_string(),
        t => format!("max plus {t} times others of:"),
    };
    (!details.is_empty()).then(|| Explanation::new(value, description, details))
}

fn sum(details: Vec<Explanation>) -> Option<Explanation> {
    let value = details.iter().map(|d| f64::from(d.value)).sum::<f64>() as f32;
    (!details.is_empty()).then(|| Explanation::new(value, "sum of:", details))
}

fn boolean(cx: &mut Context<'_, '_>, b: &BoolQuery, boost: f32) -> Result<Option<Explanation>> {
    for q in &b.must_not {
        if explain(q, cx, boost)?.is_some() {
            return Ok(None);
        }
    }
    let mut details = Vec::new();
    for q in &b.must {
        match explain(q, cx, boost)? {
            Some(e) => details.push(e),
            None => return Ok(None),
        }
    }
    // Clauses in Elasticsearch's order: must, should, then filter.
    let mut matched = 0;
    for q in &b.should {
        if let Some(e) = explain(q, cx, boost)? {
            matched += 1;
            details.push(e);
        }
    }
    for q in &b.filter {
        if explain(q, cx, 1.0)?.is_none() {
            return Ok(None);
        }
        let clause = vec![Explanation::leaf(0.0, "# clause"), Explanation::leaf(1.0, describe(q, cx.names))];
        details.push(Explanation::new(0.0, "match on required clause, product of:", clause));
    }
    let required = match b.must.is_empty() && b.filter.is_empty() {
        true => b.minimum_should_match.max(1),
        false => b.minimum_should_match,
    };
    if matched < required {
        return Ok(None);
    }
    Ok(sum(details))
}

/// A term's BM25 explanation; `doc_freq` stands for the term's own when given (a blended group's).
fn term(
    cx: &mut Context<'_, '_>,
    field: FieldId,
    term: &[u8],
    boost: f32,
    doc_freq: Option<u64>,
) -> Result<Option<Explanation>> {
    let Some(mut postings) = cx.stats.postings(cx.seg, field, term)? else { return Ok(None) };
    if postings.seek(cx.doc) != cx.doc {
        return Ok(None);
    }
    let freq = postings.freq() as f32;
    let n = doc_freq.unwrap_or_else(|| cx.stats.doc_freq(field, term));
    let idf_expl = idf_explanation(cx, field, n);
    let weight = boost * idf_expl.value;
    let text = format!("{}:{}", (cx.names)(field), String::from_utf8_lossy(term));
    let freq_words = "freq, occurrences of term within document".to_string();
    Ok(Some(bm25_explanation(cx, field, text, freq, freq_words, weight, boost, idf_expl)))
}

/// A synonym query's one BM25 term: the frequencies of its terms in the
/// document summed, the idf of their largest document frequency.
fn synonym(
    cx: &mut Context<'_, '_>,
    field: FieldId,
    terms: &[Vec<u8>],
    boost: f32,
) -> Result<Option<Explanation>> {
    let mut freq = 0;
    for t in terms {
        if let Some(mut postings) = cx.stats.postings(cx.seg, field, t)? {
            if postings.seek(cx.doc) == cx.doc {
                freq += postings.freq();
            }
        }
    }
    if freq == 0 {
        return Ok(None);
    }
    let n = terms.iter().map(|t| cx.stats.doc_freq(field, t)).max().unwrap_or(0);
    let idf_expl = idf_explanation(cx, field, n);
    let weight = boost * idf_expl.value;
    let text = describe(&Query::Synonym { field, terms: terms.to_vec() }, cx.names);
    let freq_words = format!("termFreq={freq}");
    Ok(Some(bm25_explanation(cx, field, text, freq as f32, freq_words, weight, boost, idf_expl)))
}

fn phrase(cx: &mut Context<'_, '_>, p: &PhraseQuery, boost: f32) -> Result<Option<Explanation>> {
    let Some(terms) = crate::weight::phrase_places(p, cx.stats, cx.seg)? else { return Ok(None) };
    let counted = crate::weight::phrase_idf_terms(p, cx.stats);
    let bm25 = cx.stats.bm25(p.field, &counted, boost);
    let mut scorer = PhraseScorer::new(terms, None, bm25, cx.segment.norms(p.field), p.slop);
    if scorer.seek(cx.doc) != cx.doc {
        return Ok(None);
    }
    let freq = scorer.freq();
    let idf_expl = idf_sum(cx, p.field, &counted);
    let idf_sum = idf_expl.value;
    let slop = if p.slop > 0 { format!("~{}", p.slop) } else { String::new() };
    let text = format!("{}:\"{}\"{slop}", (cx.names)(p.field), phrase_words(p));
    let weight = boost * idf_sum;
    Ok(Some(bm25_explanation(
        cx,
        p.field,
        text,
        freq,
        format!("phraseFreq={freq:?}"),
        weight,
        boost,
        idf_expl,
    )))
}

fn span_query(
    cx: &mut Context<'_, '_>,
    field: FieldId,
    span: &Span,
    boost: f32,
) -> Result<Option<Explanation>> {
    let Some(root) = crate::weight::span_node(field, span, cx.stats, cx.seg)? else { return Ok(None) };
    let counted = crate::weight::span_idf_terms(field, span, cx.stats);
    let bm25 = cx.stats.bm25(field, &counted, boost);
    let mut scorer = SpanScorer::new(root, bm25, cx.segment.norms(field));
    if scorer.seek(cx.doc) != cx.doc {
        return Ok(None);
    }
    let freq = scorer.freq();
    let idf_expl = idf_sum(cx, field, &counted);
    let idf_sum = idf_expl.value;
    let text = span_words((cx.names)(field).as_str(), span);
    let words = format!("phraseFreq={freq:?}");
    Ok(Some(bm25_explanation(cx, field, text, freq, words, boost * idf_sum, boost, idf_expl)))
}

/// A span query as Lucene writes it: `spanNear([f:a, spanOr([f:b, f:c])], 0, true)`.
fn span_words(field: &str, span: &Span) -> String {
    let list = |parts: &[Span]| parts.iter().map(|p| span_words(field, p)).collect::<Vec<_>>().join(", ");
    match span {
        Span::Term(t) => format!("{field}:{}", String::from_utf8_lossy(t)),
        Span::Or(parts) => format!("spanOr([{}])", list(parts)),
        Span::Near(parts) => format!("spanNear([{}], 0, true)", list(parts)),
    }
}

/// A phrase's words as Lucene writes them: `a (b c) d` for a place of several terms.
fn phrase_words(p: &PhraseQuery) -> String {
    let word = |t: &[u8]| String::from_utf8_lossy(t).into_owned();
    let places: Vec<String> = p
        .places()
        .into_iter()
        .map(|(_, terms)| match terms.as_slice() {
            [one] => word(one),
            several => format!("({})", several.iter().map(|t| word(t)).collect::<Vec<_>>().join(" ")),
        })
        .collect();
    places.join(" ")
}

/// The idfs of `terms` summed (in double, as Lucene sums a phrase's or span's).
fn idf_sum(cx: &Context<'_, '_>, field: FieldId, terms: &[&[u8]]) -> Explanation {
    let idfs: Vec<Explanation> =
        terms.iter().map(|t| idf_explanation(cx, field, cx.stats.doc_freq(field, t))).collect();
    let sum = idfs.iter().map(|e| f64::from(e.value)).sum::<f64>() as f32;
    Explanation::new(sum, "idf, sum of:", idfs)
}

fn idf_explanation(cx: &Context<'_, '_>, field: FieldId, n: u64) -> Explanation {
    let docs = cx.stats.field_stats(field).doc_count;
    Explanation::new(
        idf(n, docs),
        "idf, computed as log(1 + (N - n + 0.5) / (n + 0.5)) from:",
        vec![
            Explanation::leaf(n as f32, "n, number of documents containing term"),
            Explanation::leaf(docs as f32, "N, total number of documents with field"),
        ],
    )
}

#[allow(clippy::too_many_arguments)]
fn bm25_explanation(
    cx: &Context<'_, '_>,
    field: FieldId,
    text: String,
    freq: f32,
    freq_words: String,
    weight: f32,
    boost: f32,
    idf_expl: Explanation,
) -> Explanation {
    let f = cx.stats.field_stats(field);
    let avgdl = avg_field_length(f.sum_total_term_freq, f.doc_count);
    let norm = cx.segment.norms(field).and_then(|n| n.get(cx.doc as usize).copied()).unwrap_or(1);
    let dl = decode_length(norm) as f32;
    let score = Bm25::new(weight, avgdl).score(freq, norm);
    let norm_value = K1 * ((1.0 - B) + B * dl / avgdl);
    let tf = (f64::from(freq) / (f64::from(freq) + f64::from(norm_value))) as f32;
    let tf_expl = Explanation::new(
        tf,
        "tf, computed as freq / (freq + k1 * (1 - b + b * dl / avgdl)) from:",
        vec![
            Explanation::leaf(freq, freq_words),
            Explanation::leaf(K1, "k1, term saturation parameter"),
            Explanation::leaf(B, "b, length normalization parameter"),
            // Norm bytes up to 39 keep a length exactly (Lucene's SmallFloat), past it approximately.
            Explanation::leaf(
                dl,
                if norm > 39 { "dl, length of field (approximate)" } else { "dl, length of field" },
            ),
            Explanation::leaf(avgdl, "avgdl, average length of field"),
        ],
    );
    let mut parts = Vec::with_capacity(3);
    if boost != 1.0 {
        parts.push(Explanation::leaf(boost, "boost"));
    }
    parts.push(idf_expl);
    parts.push(tf_expl);
    let computed =
        Explanation::new(score, format!("score(freq={freq:?}), computed as boost * idf * tf from:"), parts);
    Explanation::new(
        score,
        format!("weight({text} in {}) [PerFieldSimilarity], result of:", cx.global),
        vec![computed],
    )
}

/// A query as Lucene prints it (`field:term`, `+a -b #c`, `field:"a b"`).
pub fn describe(query: &Query, names: &dyn Fn(FieldId) -> String) -> String {
    let inner = |q: &Query| describe(q, names);
    match query {
        Query::Term(t) => format!("{}:{}", names(t.field), String::from_utf8_lossy(&t.term)),
        Query::Phrase(p) => format!("{}:\"{}\"", names(p.field), phrase_words(p)),
        Query::Span { field, span } => span_words(&names(*field), span),
        Query::Bool(b) => {
            let mut parts: Vec<String> = Vec::new();
            parts.extend(b.must.iter().map(|q| format!("+{}", inner(q))));
            parts.extend(b.should.iter().map(inner));
            parts.extend(b.must_not.iter().map(|q| format!("-{}", inner(q))));
            parts.extend(b.filter.iter().map(|q| format!("#{}", inner(q))));
            format!("({})", parts.join(" "))
        }
        Query::MatchAll => "*:*".into(),
        Query::MatchNone => "MatchNoDocsQuery".into(),
        Query::Boost(q, b) => format!("({})^{b}", inner(q)),
        Query::Constant(q) => format!("ConstantScore({})", inner(q)),
        Query::DisMax { clauses, tie_breaker } => {
            format!("({})~{tie_breaker}", clauses.iter().map(inner).collect::<Vec<_>>().join(" | "))
        }
        Query::Range(r) => format!("{}:[{} TO {}]", names(r.field), r.lower, r.upper),
        Query::Exists(f) => format!("FieldExistsQuery [field={}]", names(*f)),
        Query::MultiTerm(m) => format!("{}:{:?}", names(m.field), m.pattern),
        Query::TermSet { field, terms } => format!("{}:({} terms)", names(*field), terms.len()),
        Query::Blended { field, terms } => format!("Blended({}: {} terms)", names(*field), terms.len()),
        Query::Synonym { field, terms } => {
            let each: Vec<String> =
                terms.iter().map(|t| format!("{}:{}", names(*field), String::from_utf8_lossy(t))).collect();
            format!("Synonym({})", each.join(" "))
        }
        Query::CrossFields { fields, term, tie_breaker } => {
            let word = String::from_utf8_lossy(term);
            let each: Vec<String> = fields
                .iter()
                .map(|&(f, b)| match b {
                    1.0 => format!("{}:{word}", names(f)),
                    b => format!("({}:{word})^{b}", names(f)),
                })
                .collect();
            format!("({})~{tie_breaker}", each.join(" | "))
        }
        Query::Boosting { positive, negative, factor } => {
            format!("FunctionScoreQuery({}, scored by boost({})^{factor})", inner(positive), inner(negative))
        }
    }
}
