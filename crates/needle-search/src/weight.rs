//! Turns a rewritten query into the scorer tree for one segment, as Lucene's
//! BooleanWeight does: required clauses in a conjunction, optional ones in a
//! disjunction added to it, exclusions around the whole.

use needle_codecs::doc_values::NumericValues;
use needle_codecs::filter_cache::FilterKey;
use needle_codecs::{Postings, SegmentRead};
use needle_core::Result;

use crate::iter::{
    bits_in_range, checked, AllScorer, BoxScorer, Combine, Conjunction, ConstantScorer, Demote, Disjunction,
    DocBits, Exclude, ExistsScorer, FilterPlan, PhraseScorer, PhraseTerm, RangeScorer, ReqOpt, SpanNode,
    SpanScorer, TermScorer, TermSetScorer, UnionPostings,
};
use crate::stats::IndexStats;
use crate::{BoolQuery, PhraseQuery, Query, Span};

/// The scorer of a range matching more than an eighth of `segment`: its
/// matches from the segment's filter cache when kept there (a bit test
/// each), read whole into it when asked a second time, else checked
/// document by document from the doc values.
fn dense_range<'a>(
    segment: &'a dyn SegmentRead,
    mut values: Box<dyn NumericValues + Send>,
    r: &crate::RangeQuery,
    boost: f32,
) -> BoxScorer<'a> {
    let max_doc = segment.meta().max_doc;
    let key = FilterKey::Range { field: r.field, lower: r.lower, upper: r.upper };
    let bits = match segment.filter_cache().map(|cache| (cache, cache.lookup(key))) {
        Some((_, Ok(kept))) => DocBits::cached(kept),
        Some((cache, Err(true))) => {
            let bits = DocBits::of(bits_in_range(values.as_mut(), r.lower, r.upper, max_doc));
            cache.keep(key, bits.shared());
            bits
        }
        _ => return checked(Box::new(RangeScorer::new(values, r.lower, r.upper, max_doc, boost)), "range"),
    };
    checked(Box::new(TermSetScorer::new(bits, boost)), "range kept")
}

/// The scorer of `query` in segment `seg`, or `None` when nothing there can
/// match. `boost` is the product of the boosts around `query` (1 at the top):
/// as in Lucene, it goes into each term's BM25 weight, not onto a sum.
pub(crate) fn scorer<'a>(
    query: &Query,
    stats: &mut IndexStats<'_>,
    seg: usize,
    segment: &'a dyn SegmentRead,
    boost: f32,
) -> Result<Option<BoxScorer<'a>>> {
    Ok(match query {
        Query::Term(t) => stats.postings(seg, t.field, &t.term)?.map(|p| {
            let bm25 = stats.bm25(t.field, &[&t.term], boost);
            checked(Box::new(TermScorer::new(p, bm25, segment.norms(t.field))), "term")
        }),
        Query::Phrase(p) => phrase(p, stats, seg, segment, boost)?,
        Query::Span { field, span } => span_node(*field, span, stats, seg)?.map(|root| {
            let bm25 = stats.bm25(*field, &span_idf_terms(*field, span, stats), boost);
            checked(Box::new(SpanScorer::new(root, bm25, segment.norms(*field))), "span")
        }),
        Query::Bool(b) => boolean(b, stats, seg, segment, boost)?,
        Query::MatchAll => {
            Some(checked(Box::new(AllScorer::new(segment.meta().max_doc, boost)), "match-all"))
        }
        Query::MatchNone => None,
        Query::Range(r) => match (segment.numeric_values(r.field), &r.indexed) {
            (Some(values), _) => {
                let max_doc = segment.meta().max_doc;
                // A narrow range's documents from its points (an eighth of the segment or
                // fewer): cheaper than reading every block, and a bit test when asked one by one.
                let narrow = segment
                    .numeric_points(r.field)
                    .filter(|p| p.estimate(r.lower, r.upper).saturating_mul(8) <= u64::from(max_doc));
                Some(match narrow {
                    Some(points) => {
                        let bits = DocBits::in_range(&points, r.lower, r.upper, max_doc);
                        checked(Box::new(TermSetScorer::new(bits, boost)), "range points")
                    }
                    None => dense_range(segment, values, r, boost),
                })
            }
            (None, Some(term)) => stats.postings(seg, r.field, term)?.map(|p| {
                let bm25 = stats.bm25(r.field, &[term], 1.0);
                let inner = checked(Box::new(TermScorer::new(p, bm25, segment.norms(r.field))), "term");
                checked(Box::new(ConstantScorer::new(inner, boost)), "constant")
            }),
            (None, None) => None,
        },
        Query::Exists(field) => {
            let max_doc = segment.meta().max_doc;
            let keywords = segment.keyword_values(*field).map(|v| ExistsScorer::keyword(v, max_doc, boost));
            let scorer = keywords
                .or_else(|| segment.binary_values(*field).map(|v| ExistsScorer::binary(v, max_doc, boost)))
                .or_else(|| segment.norms(*field).map(|n| ExistsScorer::text(n, max_doc, boost)));
            scorer.map(|s| checked(Box::new(s), "exists"))
        }
        Query::TermSet { field, terms } => {
            let mut lists = Vec::new();
            for term in terms {
                lists.extend(stats.postings(seg, *field, term)?);
            }
            let bits = DocBits::union(lists, segment.meta().max_doc);
            (!bits.is_empty()).then(|| checked(Box::new(TermSetScorer::new(bits, boost)), "term-set"))
        }
        Query::Blended { field, terms } => {
            let mut children = Vec::new();
            for (term, term_boost) in terms {
                if let Some(p) = stats.postings(seg, *field, term)? {
                    let bm25 = stats.bm25_blended(*field, terms, boost * term_boost);
                    children.push(checked(Box::new(TermScorer::new(p, bm25, segment.norms(*field))), "term"));
                }
            }
            match children.len() {
                0 => None,
                1 => children.pop(),
                _ => Some(checked(Box::new(Disjunction::new(children, 1)), "blended")),
            }
        }
        Query::Synonym { field, terms } => {
            let mut lists = Vec::new();
            for term in terms {
                lists.extend(stats.postings(seg, *field, term)?);
            }
            let doc_freq = terms.iter().map(|t| stats.doc_freq(*field, t)).max().unwrap_or(0);
            let bm25 = stats.bm25_with_doc_freq(*field, doc_freq, boost);
            (!lists.is_empty()).then(|| {
                let union = Box::new(UnionPostings::new(lists));
                checked(Box::new(TermScorer::new(union, bm25, segment.norms(*field))), "synonym")
            })
        }
        Query::CrossFields { fields, term, tie_breaker } => {
            let doc_freqs = stats.blended_doc_freqs(fields, term);
            let mut children = Vec::new();
            for (&(field, field_boost), doc_freq) in fields.iter().zip(doc_freqs) {
                if let Some(p) = stats.postings(seg, field, term)? {
                    let bm25 = stats.bm25_with_doc_freq(field, doc_freq, boost * field_boost);
                    children.push(checked(Box::new(TermScorer::new(p, bm25, segment.norms(field))), "term"));
                }
            }
            match children.len() {
                0 => None,
                1 => children.pop(),
                _ => Some(checked(
                    Box::new(Disjunction::combining(children, 1, Combine::Max { tie_breaker: *tie_breaker })),
                    "cross-fields",
                )),
            }
        }
        Query::MultiTerm(_) => {
            return Err(needle_core::Error::query("a multi-term query reached a segment unexpanded (a bug)"))
        }
        Query::Boosting { positive, negative, factor } => match scorer(positive, stats, seg, segment, 1.0)? {
            None => None,
            Some(p) => {
                let negative = scorer(negative, stats, seg, segment, 1.0)?;
                Some(checked(Box::new(Demote::new(p, negative, *factor, boost)), "boosting"))
            }
        },
        Query::Boost(q, b) => scorer(q, stats, seg, segment, boost * b)?,
        Query::Constant(q) => scorer(q, stats, seg, segment, 1.0)?
            .map(|inner| checked(Box::new(ConstantScorer::new(inner, boost)), "constant")),
        Query::DisMax { clauses, tie_breaker } => {
            let children = all_some(clauses, stats, seg, segment, boost)?;
            match children.len() {
                0 => None,
                _ => Some(checked(
                    Box::new(Disjunction::combining(children, 1, Combine::Max { tie_breaker: *tie_breaker })),
                    "dis-max",
                )),
            }
        }
    })
}

fn phrase<'a>(
    p: &PhraseQuery,
    stats: &mut IndexStats<'_>,
    seg: usize,
    segment: &'a dyn SegmentRead,
    boost: f32,
) -> Result<Option<BoxScorer<'a>>> {
    let Some(terms) = phrase_places(p, stats, seg)? else { return Ok(None) };
    let meta = segment.meta();
    // The filters test pairs of single terms.
    let filters = match &meta.bloom {
        Some(params) if p.slop == 0 && stats.use_bloom() && !p.has_alternatives() => {
            FilterPlan::new(p, &terms, params, meta.max_doc)
        }
        _ => None,
    };
    let bm25 = stats.bm25(p.field, &phrase_idf_terms(p, stats), boost);
    Ok(Some(checked(
        Box::new(PhraseScorer::new(terms, filters, bm25, segment.norms(p.field), p.slop)),
        "phrase",
    )))
}

/// The postings of each place of `p` in segment `seg` (a union where it has
/// several terms), `None` when a place has none there.
pub(crate) fn phrase_places(
    p: &PhraseQuery,
    stats: &mut IndexStats<'_>,
    seg: usize,
) -> Result<Option<Vec<PhraseTerm>>> {
    let mut out = Vec::new();
    for (offset, terms) in p.places() {
        let mut lists = Vec::new();
        for term in terms {
            lists.extend(stats.postings(seg, p.field, term)?);
        }
        let stacked = lists.len() > 1;
        let postings: Box<dyn Postings> = match lists.len() {
            0 => return Ok(None),
            1 => lists.pop().expect("one list"),
            _ => Box::new(UnionPostings::new(lists)),
        };
        out.push(PhraseTerm { postings, offset, stacked });
    }
    Ok(Some(out))
}

/// `span`'s tree over segment `seg`'s postings; `None` where nothing there
/// can match (a near with a part that has none, an or none of whose parts has any).
pub(crate) fn span_node(
    field: needle_core::FieldId,
    span: &Span,
    stats: &mut IndexStats<'_>,
    seg: usize,
) -> Result<Option<SpanNode>> {
    Ok(match span {
        Span::Term(term) => stats.postings(seg, field, term)?.map(SpanNode::Term),
        Span::Or(parts) => {
            let mut nodes = Vec::with_capacity(parts.len());
            for part in parts {
                nodes.extend(span_node(field, part, stats, seg)?);
            }
            (!nodes.is_empty()).then_some(SpanNode::Or(nodes))
        }
        Span::Near(parts) => {
            let mut nodes = Vec::with_capacity(parts.len());
            for part in parts {
                match span_node(field, part, stats, seg)? {
                    Some(node) => nodes.push(node),
                    None => return Ok(None),
                }
            }
            Some(SpanNode::Near(nodes))
        }
    })
}

/// The terms whose idfs sum to a span query's: each distinct term the index
/// holds, ascending (Lucene's SpanWeight leaves out a term no document holds).
pub(crate) fn span_idf_terms<'q>(
    field: needle_core::FieldId,
    span: &'q Span,
    stats: &IndexStats<'_>,
) -> Vec<&'q [u8]> {
    span.distinct_terms().into_iter().filter(|t| stats.doc_freq(field, t) > 0).collect()
}

/// The terms whose idfs sum to a phrase's: each occurrence of each term the
/// index holds (Lucene's MultiPhraseQuery leaves out a term no document
/// holds; a plain phrase with one matches nothing anyway).
pub(crate) fn phrase_idf_terms<'q>(p: &'q PhraseQuery, stats: &IndexStats<'_>) -> Vec<&'q [u8]> {
    p.terms.iter().map(|(_, t)| t.as_slice()).filter(|t| stats.doc_freq(p.field, t) > 0).collect()
}

fn boolean<'a>(
    b: &BoolQuery,
    stats: &mut IndexStats<'_>,
    seg: usize,
    segment: &'a dyn SegmentRead,
    boost: f32,
) -> Result<Option<BoxScorer<'a>>> {
    let mut required = Vec::new();
    for (q, scoring) in b.must.iter().map(|q| (q, true)).chain(b.filter.iter().map(|q| (q, false))) {
        match scorer(q, stats, seg, segment, boost)? {
            Some(s) => required.push((s, scoring)),
            None => return Ok(None),
        }
    }
    let should = all_some(&b.should, stats, seg, segment, boost)?;
    let msm = b.minimum_should_match as usize;
    if should.len() < msm {
        return Ok(None);
    }
    let positive = if required.is_empty() {
        match should.len() {
            0 => return Ok(None),
            1 => should.into_iter().next().unwrap(),
            _ => disjunction(should, msm),
        }
    } else {
        if msm > 0 {
            required.push((disjunction(should, msm), true));
            conjunction(required)
        } else {
            let req = conjunction(required);
            match should.len() {
                0 => req,
                1 => checked(Box::new(ReqOpt::new(req, should.into_iter().next().unwrap())), "req-opt"),
                _ => checked(Box::new(ReqOpt::new(req, disjunction(should, 1))), "req-opt"),
            }
        }
    };
    let excluded = all_some(&b.must_not, stats, seg, segment, boost)?;
    Ok(Some(match excluded.len() {
        0 => positive,
        1 => checked(Box::new(Exclude::new(positive, excluded.into_iter().next().unwrap())), "exclusion"),
        _ => checked(Box::new(Exclude::new(positive, disjunction(excluded, 1))), "exclusion"),
    }))
}

fn conjunction<'a>(mut required: Vec<(BoxScorer<'a>, bool)>) -> BoxScorer<'a> {
    if required.len() == 1 && required[0].1 {
        return required.pop().unwrap().0;
    }
    checked(Box::new(Conjunction::new(required)), "conjunction")
}

fn disjunction(clauses: Vec<BoxScorer<'_>>, min_match: usize) -> BoxScorer<'_> {
    checked(Box::new(Disjunction::new(clauses, min_match)), "disjunction")
}

/// Scorers of the clauses that can match in this segment.
pub(crate) fn all_some<'a>(
    clauses: &[Query],
    stats: &mut IndexStats<'_>,
    seg: usize,
    segment: &'a dyn SegmentRead,
    boost: f32,
) -> Result<Vec<BoxScorer<'a>>> {
    let mut out = Vec::with_capacity(clauses.len());
    for q in clauses {
        if let Some(s) = scorer(q, stats, seg, segment, boost)? {
            out.push(s);
        }
    }
    Ok(out)
}
