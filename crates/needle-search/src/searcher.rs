//! Runs a query over an index's segments and returns the top k.

use needle_codecs::SegmentRead;
use needle_core::deadline::{self, CHECK_EVERY};
use needle_core::{read_error, Deletes, DocId, Result, TERMINATED};

pub use crate::collect::ScoredDoc;
use crate::collect::TopCollector;
use crate::iter::{checked, count_in_range, BoxScorer, Combine, Disjunction};
use crate::maxscore::{max_score, Clauses};
use crate::sort::{SortRequest, SortedDocs};
use crate::stats::{CorpusStats, IndexStats};
use crate::weight::{all_some, scorer};
use crate::{Query, Scorer};

#[derive(Debug, Clone, Copy)]
pub struct SearchOptions {
    pub top_k: usize,
    /// Hits are counted exactly up to this many (Elasticsearch's
    /// `track_total_hits`, 10,000 by default); past it, pruning may skip
    /// documents and the count is a lower bound. `u64::MAX` counts them all.
    pub track_total_hits: u64,
    /// Let phrases skip positions with Bloom filters (off for ablation).
    pub bloom: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions { top_k: 10, track_total_hits: 10_000, bloom: true }
    }
}

#[derive(Debug, Clone)]
pub struct TopDocs {
    /// Best first; equal scores in index order.
    pub hits: Vec<ScoredDoc>,
    pub total: u64,
    /// `false` when `total` is only a lower bound.
    pub total_is_exact: bool,
}

/// Searches a list of segments, in index order, skipping deleted documents.
pub struct Searcher<'a> {
    segments: Vec<&'a dyn SegmentRead>,
    deletes: Vec<Option<&'a dyn Deletes>>,
    /// Statistics of a wider corpus that scores read in place of these segments'.
    corpus: Option<&'a CorpusStats>,
}

impl<'a> Searcher<'a> {
    pub fn new(segments: Vec<&'a dyn SegmentRead>) -> Self {
        let deletes = vec![None; segments.len()];
        Searcher { segments, deletes, corpus: None }
    }

    /// Segments, each with the documents deleted from it since it was written.
    pub fn with_deletes(segments: Vec<(&'a dyn SegmentRead, Option<&'a dyn Deletes>)>) -> Self {
        let (segments, deletes) = segments.into_iter().unzip();
        Searcher { segments, deletes, corpus: None }
    }

    /// Scores with `corpus`'s statistics where it has them (those of these
    /// segments and of others searched with them, see [`CorpusStats`]).
    pub fn with_corpus(self, corpus: Option<&'a CorpusStats>) -> Self {
        Searcher { corpus, ..self }
    }

    /// What BM25 reads of these segments for `query` (a prepared one), to be
    /// summed with other parts' and given back through [`Searcher::with_corpus`].
    pub fn corpus_stats(&self, query: &Query) -> Result<CorpusStats> {
        CorpusStats::of(&self.segments, query)
    }

    pub fn segments(&self) -> &[&'a dyn SegmentRead] {
        &self.segments
    }

    /// The query that runs for `query`: its size checked, rewritten, and its
    /// prefix, wildcard and fuzzy queries expanded over these segments' terms.
    pub fn prepare(&self, query: &Query) -> Result<Query> {
        crate::parser::check_size(query)?;
        Ok(crate::multi_term::expand(query.clone().rewrite(), &self.segments)?.rewrite())
    }

    pub fn search(&self, query: &Query, options: SearchOptions) -> Result<TopDocs> {
        let query = self.prepare(query)?;
        // A list that fails mid-walk records its error and ends: checked after each segment.
        read_error::clear();
        let mut stats = IndexStats::collect(&self.segments, &query, options.bloom, self.corpus)?;
        let mut top = TopCollector::new(options.top_k, options.track_total_hits);
        let mut base = 0u64;
        for (i, &segment) in self.segments.iter().enumerate() {
            search_segment(&query, &mut stats, i, segment, self.deletes[i], base, &mut top)?;
            read_error::check()?;
            base += u64::from(segment.meta().max_doc);
        }
        let total = top.count;
        let total_is_exact = total < options.track_total_hits || options.track_total_hits == u64::MAX;
        Ok(TopDocs { hits: top.into_sorted(), total, total_is_exact })
    }

    /// Calls `visit(segment number, segment, docs, scores)` with every live
    /// match, in index order, a batch of one segment's at a time (the scores
    /// NaN unless `scores`); returns the count.
    pub fn for_each_match(
        &self,
        query: &Query,
        scores: bool,
        visit: &mut crate::MatchVisitor<'_>,
    ) -> Result<u64> {
        let query = self.prepare(query)?;
        read_error::clear();
        crate::matches::for_each_match(&self.segments, &self.deletes, self.corpus, &query, scores, visit)
    }

    /// Why each (segment, document) of `docs` scores what it does for
    /// `query` (a query [`Searcher::prepare`] made); `None` for one it does
    /// not match. The index's statistics are gathered once for them all.
    pub fn explain(
        &self,
        query: &Query,
        docs: &[(usize, DocId)],
        names: &dyn Fn(needle_core::FieldId) -> String,
    ) -> Result<Vec<Option<crate::Explanation>>> {
        if docs.is_empty() {
            return Ok(Vec::new());
        }
        let mut stats = IndexStats::collect(&self.segments, query, true, self.corpus)?;
        let mut out = Vec::with_capacity(docs.len());
        for &(seg, doc) in docs {
            let base: u64 = self.segments[..seg].iter().map(|s| u64::from(s.meta().max_doc)).sum();
            let segment = self.segments[seg];
            let global = base + u64::from(doc);
            let mut cx = crate::explain::Context { stats: &mut stats, seg, segment, doc, global, names };
            out.push(crate::explain::explain(query, &mut cx, 1.0)?);
        }
        Ok(out)
    }

    /// The top hits by `request`'s keys (see `sort.rs`); every match counted.
    pub fn search_sorted(&self, query: &Query, request: &SortRequest<'_>, bloom: bool) -> Result<SortedDocs> {
        let query = self.prepare(query)?;
        read_error::clear();
        crate::sort::search_sorted(&self.segments, &self.deletes, self.corpus, &query, request, bloom)
    }
}

fn search_segment(
    query: &Query,
    stats: &mut IndexStats<'_>,
    seg: usize,
    segment: &dyn SegmentRead,
    deletes: Option<&dyn Deletes>,
    base: u64,
    top: &mut TopCollector,
) -> Result<()> {
    let (query, boost) = match query {
        Query::Boost(inner, boost) => (inner.as_ref(), *boost),
        other => (other, 1.0),
    };
    if top.counts_only() {
        if let Some(count) = deletes.is_none().then(|| count_without_visiting(query, segment)).flatten() {
            top.count += count;
        } else if let Some(s) = scorer(query, stats, seg, segment, boost)? {
            count_matches(s, deletes, top);
        }
        return Ok(());
    }
    if let Query::Bool(b) = query {
        if b.must.is_empty() && b.filter.is_empty() && b.minimum_should_match <= 1 && b.should.len() > 1 {
            let clauses = all_some(&b.should, stats, seg, segment, boost)?;
            let excluded = all_some(&b.must_not, stats, seg, segment, boost)?;
            let excluded: Option<BoxScorer<'_>> = match excluded.len() {
                0 => None,
                1 => excluded.into_iter().next(),
                _ => Some(checked(Box::new(Disjunction::new(excluded, 1)), "disjunction")),
            };
            if !clauses.is_empty() {
                max_score(Clauses::summed(clauses), excluded, deletes, seg, base, top);
            }
            return Ok(());
        }
    }
    if let Query::DisMax { clauses, tie_breaker } = query {
        if (0.0..=1.0).contains(tie_breaker) {
            let grouped = dis_max_groups(clauses, *tie_breaker, stats, seg, segment, boost)?;
            if !grouped.scorers.is_empty() {
                max_score(grouped, None, deletes, seg, base, top);
            }
            return Ok(());
        }
    }
    if let Some(s) = scorer(query, stats, seg, segment, boost)? {
        collect_with_block_max(s, deletes, seg, base, top);
    }
    Ok(())
}

/// The documents of `segment` (with no deletions) that `query` matches,
/// when they can be counted without visiting each: every document, a term's
/// (its document frequency), or a numeric range (from its points, or block
/// by block: see [`count_in_range`]).
fn count_without_visiting(query: &Query, segment: &dyn SegmentRead) -> Option<u64> {
    let max_doc = segment.meta().max_doc;
    match query {
        Query::MatchAll => Some(u64::from(max_doc)),
        // A list that fails to open is counted by visiting, which reports the failure.
        Query::Term(t) => match segment.postings(t.field, &t.term) {
            Ok(postings) => Some(postings.map_or(0, |p| u64::from(p.doc_freq()))),
            Err(_) => None,
        },
        Query::Range(r) => {
            // Points count values: documents, when none has two.
            if let Some(points) = segment.numeric_points(r.field).filter(|p| p.single_valued()) {
                return Some(points.count(r.lower, r.upper));
            }
            let mut values = segment.numeric_values(r.field)?;
            Some(count_in_range(values.as_mut(), r.lower, r.upper, max_doc))
        }
        Query::Constant(inner) | Query::Boost(inner, _) => count_without_visiting(inner, segment),
        _ => None,
    }
}

/// A dis-max's clauses as MaxScore's groups: a plain disjunction's clauses
/// (a field's terms, in a query string over several fields) form one group,
/// any other clause a group of its own.
fn dis_max_groups<'a>(
    clauses: &[Query],
    tie_breaker: f32,
    stats: &mut IndexStats<'_>,
    seg: usize,
    segment: &'a dyn SegmentRead,
    boost: f32,
) -> Result<Clauses<'a>> {
    let mut grouped =
        Clauses { scorers: Vec::new(), group: Vec::new(), combine: Combine::Max { tie_breaker } };
    let mut groups = 0;
    for clause in clauses {
        let scorers = match clause {
            Query::Bool(b) if b.is_pure_disjunction() => all_some(&b.should, stats, seg, segment, boost)?,
            other => scorer(other, stats, seg, segment, boost)?.into_iter().collect(),
        };
        if scorers.is_empty() {
            continue;
        }
        grouped.group.extend(std::iter::repeat_n(groups, scorers.len()));
        grouped.scorers.extend(scorers);
        groups += 1;
    }
    Ok(grouped)
}

/// How many matches a request for the count alone takes at a time.
const COUNT_BATCH: usize = 512;

/// Counts the live documents of `scorer` without scoring them (a request
/// for the count alone), up to the number of hits it asks to count exactly.
fn count_matches(mut scorer: BoxScorer<'_>, deletes: Option<&dyn Deletes>, top: &mut TopCollector) {
    let mut docs = Vec::with_capacity(COUNT_BATCH);
    while top.count < top.track_limit() && !deadline::passed() {
        docs.clear();
        let wanted = (top.track_limit() - top.count).min(COUNT_BATCH as u64) as usize;
        scorer.fill_docs(&mut docs, wanted);
        if docs.is_empty() {
            return;
        }
        top.count += match deletes {
            Some(d) => docs.iter().filter(|&&doc| !d.is_deleted(doc)).count(),
            None => docs.len(),
        } as u64;
    }
}

/// Scores every document of `scorer` that can still enter the top k,
/// skipping whole blocks whose bound cannot beat the threshold.
fn collect_with_block_max(
    mut scorer: BoxScorer<'_>,
    deletes: Option<&dyn Deletes>,
    seg: usize,
    base: u64,
    top: &mut TopCollector,
) {
    let mut doc = scorer.doc();
    let mut block_end = None;
    let mut block_bound = f32::INFINITY;
    while doc != TERMINATED {
        if let Some(threshold) = top.threshold() {
            if block_end.is_none_or(|end| doc > end) {
                if deadline::passed() {
                    return;
                }
                let end = scorer.block_end(doc);
                block_bound = scorer.block_max_score(doc, end);
                block_end = Some(end);
            }
            if block_bound <= threshold {
                let end = block_end.unwrap();
                if end == TERMINATED {
                    return;
                }
                doc = scorer.seek(end + 1);
                continue;
            }
        }
        if !deletes.is_some_and(|d| d.is_deleted(doc)) {
            let score = scorer.score();
            top.collect(ScoredDoc { segment: seg, doc, global: base + u64::from(doc), score });
            if top.count % CHECK_EVERY == 0 && deadline::passed() {
                return;
            }
        }
        doc = scorer.advance();
    }
}
