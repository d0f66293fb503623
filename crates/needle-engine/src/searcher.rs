//! A searcher: the index at one moment. Taking one holds the index's lock
//! only to copy a few pointers; searching, fetching and highlighting hold
//! none, so a writer never waits for a search and a search never sees half
//! of a change (an update is its delete and its add, seen both or neither).

use std::sync::Arc;

use needle_core::{Error, Result};
use needle_search::{
    parse_query, parse_query_with, Explanation, ParseOptions, Query, SearchOptions, TopDocs,
};

use serde_json::{Map, Value};

use crate::aggs::{Aggregation, FoundHits, Gathered, TopHits};
use crate::corpus_stats::CorpusStatistics;
use crate::index::Shared;
use crate::schema::Schema;
use crate::search::{
    fetch, find_id, run_search, stored_document, stored_document_versioned, stored_head, SearchRequest,
    SearchResponse, View,
};
use crate::segments::Snapshot;
use crate::values::numeric_terms;

/// A stored document with its version (Elasticsearch's `_version`, `_seq_no`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredDocument {
    pub id: String,
    pub source: String,
    pub version: u64,
    pub seq_no: u64,
}

/// A live document a query matched, as its record's head tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched {
    pub id: String,
    /// Its `_seq_no` in the snapshot: what a write conditional on it being unchanged names.
    pub seq_no: u64,
}

pub struct Searcher {
    snapshot: Snapshot,
    shared: Arc<Shared>,
}

impl Searcher {
    pub(crate) fn new(snapshot: Snapshot, shared: Arc<Shared>) -> Self {
        Searcher { snapshot, shared }
    }

    pub fn schema(&self) -> &Schema {
        &self.snapshot.schema
    }

    /// Moves on with every change to the index: two searchers with the same
    /// generation see the same documents.
    pub fn generation(&self) -> u64 {
        self.snapshot.generation
    }

    /// Segments, in memory ones included.
    pub fn segment_count(&self) -> usize {
        self.snapshot.segments.len()
    }

    /// Parses a query string against the schema.
    pub fn parse(&self, query: &str) -> Result<Query> {
        parse_query(query, self.schema())
    }

    /// [`Searcher::parse`] with `options` (e.g. Elasticsearch's query_string,
    /// whose fields join in a dis-max).
    pub fn parse_with(&self, query: &str, options: &ParseOptions) -> Result<Query> {
        parse_query_with(query, self.schema(), options)
    }

    /// Runs `request` (its query string parsed against the schema).
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        self.search_query(&self.parse(&request.query)?, request)
    }

    /// Runs `query` (built by the caller: `request.query` is not read) as `request` says.
    pub fn search_query(&self, query: &Query, request: &SearchRequest) -> Result<SearchResponse> {
        let query = &numeric_terms(query, self.schema());
        let cache = self.shared.results.as_ref().map(|c| (c, self.snapshot.generation));
        let mut response = run_search(&self.snapshot.views(), self.schema(), query, request, cache)?;
        if let Some(stats) = &mut response.stats {
            stats.page_cache = self.shared.page_cache_stats();
        }
        Ok(response)
    }

    /// What BM25 reads of this index for `query`: to be summed with the
    /// statistics of the other indexes searched with it and given back to
    /// each search as `SearchRequest::corpus` (see `corpus_stats.rs`).
    pub fn corpus_stats(&self, query: &Query) -> Result<CorpusStatistics> {
        let searcher = needle_search::Searcher::with_deletes(self.snapshot.views());
        let query = searcher.prepare(&numeric_terms(query, self.schema()))?;
        Ok(CorpusStatistics::named(searcher.corpus_stats(&query)?, self.schema()))
    }

    /// Runs a parsed query: hits as (segment, document, score).
    pub fn top_docs(&self, query: &Query, options: SearchOptions) -> Result<TopDocs> {
        let query = numeric_terms(query, self.schema());
        needle_search::Searcher::with_deletes(self.snapshot.views()).search(&query, options)
    }

    /// The stored JSON source of the live document with `_id` `id`.
    pub fn get(&self, id: &str) -> Result<Option<String>> {
        let views = self.snapshot.views();
        match find_id(&views, id)? {
            Some((i, doc)) => Ok(Some(stored_document(views[i].0, doc)?.1)),
            None => Ok(None),
        }
    }

    /// The live document with `_id` `id`: its source, version and sequence number.
    pub fn get_document(&self, id: &str) -> Result<Option<StoredDocument>> {
        let views = self.snapshot.views();
        let Some((i, doc)) = find_id(&views, id)? else { return Ok(None) };
        let (id, at, source) = stored_document_versioned(views[i].0, doc)?;
        Ok(Some(StoredDocument { id, source, version: at.version, seq_no: at.shown_seq_no() }))
    }

    /// The doc values of `field` in the live document with `_id` `id`, as
    /// a search's `docvalue_fields` shows them (see `value_fields.rs`);
    /// `None` when there is no such document. A field not in the mapping, or
    /// a text field, is an error.
    pub fn doc_values(&self, id: &str, field: &str) -> Result<Option<Vec<Value>>> {
        let schema = self.schema();
        let unknown = || Error::invalid_field(field, format!("no field [{field}] in the mapping"));
        let field = schema.field_id(field).ok_or_else(unknown)?;
        crate::value_fields::check_field(schema, field)?;
        let views = self.snapshot.views();
        let Some((i, doc)) = find_id(&views, id)? else { return Ok(None) };
        let shown = crate::value_fields::DocValueField::new(field);
        crate::value_fields::doc_values_json(views[i].0, schema, &shown, doc).map(Some)
    }

    /// Why the live document with `_id` `id` scores what it does for
    /// `query`: `None` when there is no such document, `Some(None)` when
    /// the query does not match it.
    pub fn explain_id(&self, query: &Query, id: &str) -> Result<Option<Option<Explanation>>> {
        let views = self.snapshot.views();
        let Some(found) = find_id(&views, id)? else { return Ok(None) };
        let searcher = needle_search::Searcher::with_deletes(views);
        let query = searcher.prepare(&numeric_terms(query, self.schema()))?;
        let schema = self.schema();
        let explained = searcher.explain(&query, &[found], &|f| schema.field(f).name.clone())?;
        Ok(Some(explained.into_iter().next().flatten()))
    }

    /// Whether a live document has `_id` `id` (a lookup in the id field, no stored fields read).
    pub fn contains(&self, id: &str) -> Result<bool> {
        Ok(find_id(&self.snapshot.views(), id)?.is_some())
    }

    /// Live documents.
    pub fn num_docs(&self) -> u64 {
        self.snapshot
            .segments
            .iter()
            .map(|s| u64::from(s.data.meta().max_doc) - u64::from(s.deletes.count()))
            .sum()
    }

    /// What the segments' filter caches hold and were asked (see
    /// `needle_codecs::filter_cache`), summed.
    pub fn filter_cache_stats(&self) -> needle_codecs::filter_cache::FilterCacheStats {
        let mut total = needle_codecs::filter_cache::FilterCacheStats::default();
        for s in &self.snapshot.segments {
            if let Some(cache) = s.data.filter_cache() {
                total += cache.stats();
            }
        }
        total
    }

    /// Deleted documents still taking space in segments (until a merge drops them).
    pub fn deleted_docs(&self) -> u64 {
        self.snapshot.segments.iter().map(|s| u64::from(s.deletes.count())).sum()
    }

    /// Runs `aggs` over the documents `query` matches: their count and the
    /// `aggregations` object of an Elasticsearch response (see `aggs.rs`),
    /// `top_hits` answered as [`TopHits::json`] shapes them.
    pub fn aggregate(&self, query: &Query, aggs: &[Aggregation]) -> Result<(u64, Map<String, Value>)> {
        self.aggregate_with(query, aggs, &mut |_, found| Ok(found.json()))
    }

    /// [`Searcher::aggregate`], each `top_hits` bucket answered by `answer`
    /// (given the aggregation's tag and the bucket's fetched hits).
    pub fn aggregate_with(
        &self,
        query: &Query,
        aggs: &[Aggregation],
        answer: &mut dyn FnMut(usize, TopHits) -> Result<Value>,
    ) -> Result<(u64, Map<String, Value>)> {
        let views = self.snapshot.views();
        let schema = self.schema();
        let searcher = needle_search::Searcher::with_deletes(views.clone());
        // Prepared once: the walk, the highlights and the explanations of `top_hits` use it.
        let query = searcher.prepare(&numeric_terms(query, schema))?;
        let gathered = self.gather_prepared(&views, &searcher, &query, aggs)?;
        let mut fetch_hits = |request: &SearchRequest, tag: usize, found: FoundHits| {
            let by_score = request.sort.is_empty();
            let wanted: Vec<_> = found
                .hits
                .into_iter()
                .skip(request.from)
                .map(|h| (h.hit, if by_score { Vec::new() } else { h.values }))
                .collect();
            let hits = fetch(&views, schema, &searcher, &query, &wanted, request)?;
            answer(tag, TopHits { total: found.total, max_score: found.max_score, hits })
        };
        let total = gathered.total;
        Ok((total, gathered.answer_with(aggs, &mut fetch_hits)?))
    }

    /// What `aggs` gather over the documents `query` matches, to merge with
    /// what they gather in other indexes and answer (see [`Gathered`]).
    pub fn gather(&self, query: &Query, aggs: &[Aggregation]) -> Result<Gathered> {
        let views = self.snapshot.views();
        let searcher = needle_search::Searcher::with_deletes(views.clone());
        let query = searcher.prepare(&numeric_terms(query, self.schema()))?;
        self.gather_prepared(&views, &searcher, &query, aggs)
    }

    /// [`Searcher::gather`] of a prepared query over `views` (this snapshot's).
    fn gather_prepared(
        &self,
        views: &[View<'_>],
        searcher: &needle_search::Searcher<'_>,
        query: &Query,
        aggs: &[Aggregation],
    ) -> Result<Gathered> {
        if matches!(query, Query::MatchAll) {
            if let Some(counted) = crate::aggs::counted::every_document(aggs, views)? {
                return Ok(counted);
            }
        }
        let schema = self.schema();
        // What each filter aggregation's query matches, walked first (live documents only).
        let mut filters = Vec::new();
        for q in crate::aggs::filter_queries(aggs) {
            let mut bits: Vec<Vec<u64>> =
                views.iter().map(|(s, _)| vec![0u64; (s.meta().max_doc as usize).div_ceil(64)]).collect();
            searcher.for_each_match(&numeric_terms(q, schema), false, &mut |seg, _, docs, _| {
                docs.iter().for_each(|&doc| bits[seg][doc as usize / 64] |= 1 << (doc % 64));
            })?;
            filters.push(bits);
        }
        let bases = views
            .iter()
            .scan(0u64, |next, (s, _)| {
                let base = *next;
                *next += u64::from(s.meta().max_doc);
                Some(base)
            })
            .collect();
        let scores = aggs.iter().any(Aggregation::needs_scores);
        crate::aggs::gather(aggs, filters, bases, |visit| searcher.for_each_match(query, scores, visit))
    }

    /// Every live document matching `query`, in the index's order (segment
    /// by segment, each in document order: Elasticsearch's `_doc` order,
    /// which its by-query APIs and `_reindex` walk, so that a `max_docs`
    /// takes the same documents). Only the records' heads are read.
    pub fn matching(&self, query: &Query) -> Result<Vec<Matched>> {
        let views = self.snapshot.views();
        let all = usize::try_from(self.num_docs()).unwrap_or(usize::MAX);
        let mut top =
            self.top_docs(query, SearchOptions { top_k: all, track_total_hits: u64::MAX, bloom: true })?;
        top.hits.sort_unstable_by_key(|h| (h.segment, h.doc));
        let matched = |h: &needle_search::ScoredDoc| {
            let (id, at) = stored_head(views[h.segment].0, h.doc)?;
            Ok(Matched { id, seq_no: at.shown_seq_no() })
        };
        top.hits.iter().map(matched).collect()
    }
}
