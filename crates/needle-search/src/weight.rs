//! Turns a rewritten query into the scorer tree for one segment, as Lucene's
//! BooleanWeight does: required clauses in a conjunction, optional ones in a
//! disjunction added to it, exclusions around the whole.

use needle_codecs::bloom::{term_hash, BloomParams, Side};
use needle_codecs::SegmentRead;
use needle_core::Result;

use crate::iter::{
    AllScorer, BoxScorer, Conjunction, Disjunction, Exclude, PhraseScorer, PhraseTerm, ReqOpt, TermScorer,
};
use crate::stats::IndexStats;
use crate::{BoolQuery, PhraseQuery, Query};

/// The scorer of `query` in segment `seg`, or `None` when nothing there can match.
pub(crate) fn scorer<'a>(
    query: &Query,
    stats: &mut IndexStats<'_>,
    seg: usize,
    segment: &'a dyn SegmentRead,
) -> Result<Option<BoxScorer<'a>>> {
    Ok(match query {
        Query::Term(t) => stats.postings(seg, t.field, &t.term)?.map(|p| {
            let bm25 = stats.bm25(t.field, &[&t.term]);
            Box::new(TermScorer::new(p, bm25, segment.norms(t.field))) as BoxScorer<'a>
        }),
        Query::Phrase(p) => phrase(p, stats, seg, segment)?,
        Query::Bool(b) => boolean(b, stats, seg, segment)?,
        Query::MatchAll => Some(Box::new(AllScorer::new(segment.meta().max_doc))),
        Query::MatchNone => None,
    })
}

fn phrase<'a>(
    p: &PhraseQuery,
    stats: &mut IndexStats<'_>,
    seg: usize,
    segment: &'a dyn SegmentRead,
) -> Result<Option<BoxScorer<'a>>> {
    let mut terms = Vec::with_capacity(p.terms.len());
    for (offset, term) in &p.terms {
        match stats.postings(seg, p.field, term)? {
            Some(postings) => terms.push(PhraseTerm { postings, offset: *offset, bloom_tests: Vec::new() }),
            None => return Ok(None),
        }
    }
    if p.slop == 0 && stats.use_bloom() {
        if let Some(params) = &segment.meta().bloom {
            plan_bloom_tests(p, &mut terms, params);
        }
    }
    let refs: Vec<&[u8]> = p.terms.iter().map(|(_, t)| t.as_slice()).collect();
    let bm25 = stats.bm25(p.field, &refs);
    Ok(Some(Box::new(PhraseScorer::new(terms, bm25, segment.norms(p.field), p.slop))))
}

/// The cost model of two-way Bloom filters: for each pair of adjacent phrase
/// terms `a b`, test `b` in `after(a)` or `a` in `before(b)` (the filters of
/// the rarer term: fewer of them to read), but only when one filter is
/// cheaper to read than the positions a document's check would need, which
/// term frequencies (known before any position is read) estimate.
fn plan_bloom_tests(p: &PhraseQuery, terms: &mut [PhraseTerm], params: &BloomParams) {
    // Bytes a position costs in our blocks, roughly; a filter costs its bytes plus its bitmap bit.
    const BYTES_PER_POSITION: f64 = 1.5;
    let per_doc =
        |t: &PhraseTerm| t.postings.total_term_freq() as f64 / f64::from(t.postings.doc_freq().max(1));
    for i in 0..terms.len().saturating_sub(1) {
        if p.terms[i + 1].0 != p.terms[i].0 + 1 {
            continue;
        }
        let (fa, fb) = (per_doc(&terms[i]), per_doc(&terms[i + 1]));
        let filter_cost = params.shape.bytes(fa.min(fb).round() as u32) as f64 + 0.25;
        if filter_cost >= BYTES_PER_POSITION * (fa + fb) {
            continue;
        }
        let (a, b) = (&p.terms[i].1, &p.terms[i + 1].1);
        let a_side = (i, Side::After, b);
        let b_side = (i + 1, Side::Before, a);
        let mut order = [a_side, b_side];
        if terms[i + 1].postings.doc_freq() < terms[i].postings.doc_freq() {
            order.swap(0, 1);
        }
        if let Some(&(owner, side, tested)) = order.iter().find(|(_, _, tested)| !params.is_stop_word(tested))
        {
            terms[owner].bloom_tests.push((side, term_hash(tested)));
        }
    }
}

fn boolean<'a>(
    b: &BoolQuery,
    stats: &mut IndexStats<'_>,
    seg: usize,
    segment: &'a dyn SegmentRead,
) -> Result<Option<BoxScorer<'a>>> {
    let mut required = Vec::new();
    for (q, scoring) in b.must.iter().map(|q| (q, true)).chain(b.filter.iter().map(|q| (q, false))) {
        match scorer(q, stats, seg, segment)? {
            Some(s) => required.push((s, scoring)),
            None => return Ok(None),
        }
    }
    let should = all_some(&b.should, stats, seg, segment)?;
    let msm = b.minimum_should_match as usize;
    if should.len() < msm {
        return Ok(None);
    }
    let positive = if required.is_empty() {
        match should.len() {
            0 => return Ok(None),
            1 => should.into_iter().next().unwrap(),
            _ => Box::new(Disjunction::new(should, msm)),
        }
    } else {
        if msm > 0 {
            required.push((Box::new(Disjunction::new(should, msm)), true));
            conjunction(required)
        } else {
            let req = conjunction(required);
            match should.len() {
                0 => req,
                1 => Box::new(ReqOpt::new(req, should.into_iter().next().unwrap())),
                _ => Box::new(ReqOpt::new(req, Box::new(Disjunction::new(should, 1)))),
            }
        }
    };
    let excluded = all_some(&b.must_not, stats, seg, segment)?;
    Ok(Some(match excluded.len() {
        0 => positive,
        1 => Box::new(Exclude::new(positive, excluded.into_iter().next().unwrap())),
        _ => Box::new(Exclude::new(positive, Box::new(Disjunction::new(excluded, 1)))),
    }))
}

fn conjunction<'a>(mut required: Vec<(BoxScorer<'a>, bool)>) -> BoxScorer<'a> {
    if required.len() == 1 && required[0].1 {
        return required.pop().unwrap().0;
    }
    Box::new(Conjunction::new(required))
}

/// Scorers of the clauses that can match in this segment.
pub(crate) fn all_some<'a>(
    clauses: &[Query],
    stats: &mut IndexStats<'_>,
    seg: usize,
    segment: &'a dyn SegmentRead,
) -> Result<Vec<BoxScorer<'a>>> {
    let mut out = Vec::with_capacity(clauses.len());
    for q in clauses {
        if let Some(s) = scorer(q, stats, seg, segment)? {
            out.push(s);
        }
    }
    Ok(out)
}
