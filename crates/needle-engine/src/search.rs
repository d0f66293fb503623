//! Running a search request over a snapshot of segments: parse, collect the
//! top hits, fetch their `_id`s and highlights from the document store.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use needle_codecs::SegmentRead;
use needle_core::{deadline, Deletes, DocId, Error, Result};
use needle_search::highlight::{
    fragments, keyword_fragments, leading_text, marked_terms, match_spans, FragmentOptions,
};
use needle_search::{
    Explanation, Query, ScoredDoc, SearchOptions, Searcher, SortKey, SortRequest, SortValue,
};
use needle_storage::cache::CacheStats;
use needle_storage::counters::{self, DataKind};
use serde::Serialize;

use crate::corpus_stats::SharedCorpus;
use crate::document::{field_strings, field_text, record, DocVersion};
use crate::result_cache::ResultCache;
use crate::schema::{FieldKind, Schema, ID_FIELD};
use crate::value_fields::{doc_values_json, DocValueField};

/// A segment as a search sees it: its data and the documents deleted from it since.
pub(crate) type View<'a> = (&'a dyn SegmentRead, Option<&'a dyn Deletes>);

/// What to search for and what to return. (Every field is part of the
/// result cache's key: a field added here must be `Hash` and `Eq`.)
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct SearchRequest {
    pub query: String,
    pub top_k: usize,
    /// Hits ranked before `from` are counted but not returned (nor fetched):
    /// the response holds the hits ranked `from..top_k`.
    pub from: usize,
    pub highlight: bool,
    /// How highlighted fragments are cut and marked.
    pub fragments: FragmentOptions,
    /// Fields cut and marked their own way (by name), in place of `fragments`.
    pub field_fragments: BTreeMap<String, FragmentOptions>,
    pub track_total_hits: u64,
    /// Count what the query read (see [`QueryStats`]).
    pub stats: bool,
    /// Let phrases use Bloom filters (off for ablation).
    pub bloom: bool,
    /// Return each hit's JSON source ([`Hit::source`]).
    pub source: bool,
    /// Return each hit's version and sequence number ([`Hit::version`]).
    pub versions: bool,
    /// Rank by these keys instead of the score (empty: by score).
    pub sort: Vec<SortKey>,
    /// With `sort`: only hits ranked after these values (one per key).
    pub search_after: Option<Vec<SortValue>>,
    /// With `sort`: compute scores even when no key is the score.
    pub track_scores: bool,
    /// Return each hit's doc values of these fields ([`Hit::fields`]).
    pub value_fields: Vec<DocValueField>,
    /// Explain each hit's score ([`Hit::explanation`]).
    pub explain: bool,
    /// Stop looking for matches after this long and answer with those found
    /// ([`SearchResponse::timed_out`]); `None`: no limit.
    pub timeout: Option<Duration>,
    /// Score with these statistics of a corpus this index is part of, in
    /// place of its own (see `corpus_stats.rs`).
    pub corpus: Option<SharedCorpus>,
}

impl SearchRequest {
    pub fn new(query: &str) -> Self {
        SearchRequest {
            query: query.to_string(),
            top_k: 10,
            from: 0,
            highlight: false,
            fragments: FragmentOptions::default(),
            field_fragments: BTreeMap::new(),
            track_total_hits: 10_000,
            stats: false,
            bloom: true,
            source: false,
            versions: false,
            sort: Vec::new(),
            search_after: None,
            track_scores: false,
            value_fields: Vec::new(),
            explain: false,
            timeout: None,
            corpus: None,
        }
    }

    /// How `field`'s highlights are cut: its own options, else the request's.
    pub fn fragments_for(&self, field: &str) -> &FragmentOptions {
        self.field_fragments.get(field).unwrap_or(&self.fragments)
    }
}

/// What a query read: bytes needed by data kind, 4 KiB pages touched, bytes the
/// process read from storage meanwhile, and the process's resident memory.
#[derive(Debug, Clone, Serialize)]
pub struct QueryStats {
    pub needed_bytes: BTreeMap<&'static str, u64>,
    pub needed_total: u64,
    pub pages_touched: usize,
    /// Pages touched by the kind of data first used from each.
    pub pages_by_kind: BTreeMap<&'static str, u64>,
    /// Bytes prefetched (adaptive prefetch of long records' zones).
    pub prefetched_bytes: u64,
    /// Requests the `pread` and `direct` backends sent to the files, and the bytes asked for.
    pub storage_requests: u64,
    pub requested_bytes: u64,
    /// Batches of those requests, each waited for in turn: the device round trips on the query's path.
    pub storage_waits: u64,
    /// Pages found in, and missing from, the application cache.
    pub cache_hits: u64,
    pub cache_misses: u64,
    /// `read_bytes` of /proc/self/io over the query (what the device delivered).
    pub storage_read_bytes: Option<u64>,
    /// Storage bytes over bytes needed.
    pub read_amplification: Option<f64>,
    pub resident_bytes: Option<u64>,
    /// The application cache's size and counters, for an index read through one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_cache: Option<CacheStats>,
}

impl QueryStats {
    fn from(read: counters::ReadStats, storage: Option<u64>) -> Self {
        let needed_bytes =
            DataKind::ALL.iter().map(|k| (k.name(), read.needed(*k))).filter(|(_, n)| *n > 0).collect();
        let needed_total = read.total_needed();
        let pages_by_kind =
            DataKind::ALL.iter().map(|k| (k.name(), read.pages_of(*k))).filter(|(_, n)| *n > 0).collect();
        QueryStats {
            needed_bytes,
            needed_total,
            pages_touched: read.pages.len(),
            pages_by_kind,
            prefetched_bytes: read.prefetched,
            storage_requests: read.storage_reads,
            requested_bytes: read.storage_bytes,
            storage_waits: read.storage_waits,
            cache_hits: read.cache_hits,
            cache_misses: read.cache_misses,
            storage_read_bytes: storage,
            read_amplification: storage.map(|s| s as f64 / needed_total.max(1) as f64),
            resident_bytes: counters::resident_bytes(),
            page_cache: None,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    #[serde(rename = "_id")]
    pub id: String,
    #[serde(rename = "_score")]
    pub score: f32,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub highlight: BTreeMap<String, Vec<String>>,
    /// The stored JSON source, when the request asked for it.
    #[serde(rename = "_source", skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// (version, sequence number), when the request asked for them.
    #[serde(skip)]
    pub version: Option<(u64, u64)>,
    /// The hit's value for each sort key, when the request sorted.
    #[serde(skip)]
    pub sort: Vec<SortValue>,
    /// The hit's doc values of each field the request named (by field
    /// name; see `value_fields.rs`), fields without values left out.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, Vec<serde_json::Value>>,
    /// Why the hit scored what it did, when the request asked (`explain`).
    #[serde(skip)]
    pub explanation: Option<Explanation>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchResponse {
    pub took_ms: f64,
    pub total: u64,
    /// "eq", or "gte" when `total` is a lower bound.
    pub total_relation: &'static str,
    /// The best score of every hit (those before `from` included).
    pub max_score: Option<f32>,
    pub hits: Vec<Hit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<QueryStats>,
    /// The request's `timeout` passed before every match was seen: the hits,
    /// the total and the best score are of the matches seen by then.
    pub timed_out: bool,
}

/// Runs `query` (`request.query` parsed, or built otherwise) as `request`
/// says, from `cache` (with the index's generation) when one is given.
pub(crate) fn run_search(
    views: &[View<'_>],
    schema: &Schema,
    query: &Query,
    request: &SearchRequest,
    cache: Option<(&ResultCache, u64)>,
) -> Result<SearchResponse> {
    let query = query.clone();
    if !request.stats {
        let cache = cache.filter(|_| request.corpus.is_none());
        return match cache {
            Some((cache, generation)) => cache
                .get_or_run(generation, &query, request, || search_and_fetch(views, schema, &query, request)),
            None => search_and_fetch(views, schema, &query, request),
        };
    }
    let storage_before = counters::process_read_bytes();
    counters::start();
    let result = search_and_fetch(views, schema, &query, request);
    let read = counters::finish();
    let storage = storage_before.zip(counters::process_read_bytes()).map(|(a, b)| b.saturating_sub(a));
    let mut response = result?;
    response.stats = Some(QueryStats::from(read, storage));
    Ok(response)
}

fn search_and_fetch(
    views: &[View<'_>],
    schema: &Schema,
    query: &Query,
    request: &SearchRequest,
) -> Result<SearchResponse> {
    let started = Instant::now();
    for shown in &request.value_fields {
        crate::value_fields::check_field(schema, shown.field)?;
    }
    let corpus = request.corpus.as_ref().map(|c| c.0.numbered(schema));
    let searcher = Searcher::with_deletes(views.to_vec()).with_corpus(corpus.as_ref());
    // Expanded once (prefix, wildcard and fuzzy terms), for the search and the highlights.
    let query = &searcher.prepare(query)?;
    let limit = deadline::limit(request.timeout);
    let ranked = match request.sort.is_empty() {
        true => {
            let options = SearchOptions {
                top_k: request.top_k,
                track_total_hits: request.track_total_hits,
                bloom: request.bloom,
            };
            let top = searcher.search(query, options)?;
            let max_score = top.hits.iter().map(|h| h.score).reduce(f32::max);
            let hits = top.hits.into_iter().map(|h| (h, Vec::new())).collect();
            Ranked { hits, total: top.total, exact: top.total_is_exact, max_score }
        }
        false => {
            let sort = SortRequest {
                keys: &request.sort,
                top_k: request.top_k,
                after: request.search_after.as_deref(),
                scores: request.track_scores,
                track_total_hits: request.track_total_hits,
            };
            let top = searcher.search_sorted(query, &sort, request.bloom)?;
            let max_score = top.hits.iter().map(|h| h.hit.score).filter(|s| !s.is_nan()).reduce(f32::max);
            let hits = top.hits.into_iter().map(|h| (h.hit, h.values)).collect();
            Ranked { hits, total: top.total, exact: top.total_is_exact, max_score }
        }
    };
    // The hits found are fetched whatever the time: a timed-out search still answers.
    let timed_out = limit.timed_out();
    drop(limit);
    let wanted = ranked.hits.get(request.from..).unwrap_or_default();
    let hits = fetch(views, schema, &searcher, query, wanted, request)?;
    Ok(SearchResponse {
        took_ms: started.elapsed().as_secs_f64() * 1e3,
        total: ranked.total,
        total_relation: if ranked.exact && !timed_out { "eq" } else { "gte" },
        max_score: ranked.max_score,
        hits,
        stats: None,
        timed_out,
    })
}

/// The fetch phase: each of `wanted` (ranked hits and their sort values) as
/// a [`Hit`], with what `request` asks to show of it. `query` is the one
/// that found them, prepared by `searcher` (highlights and explanations use it).
pub(crate) fn fetch(
    views: &[View<'_>],
    schema: &Schema,
    searcher: &Searcher<'_>,
    query: &Query,
    wanted: &[(ScoredDoc, Vec<SortValue>)],
    request: &SearchRequest,
) -> Result<Vec<Hit>> {
    let rewritten = request.highlight.then_some(query);
    for (i, (segment, _)) in views.iter().enumerate() {
        let docs: Vec<DocId> = wanted.iter().filter(|(h, _)| h.segment == i).map(|(h, _)| h.doc).collect();
        if !docs.is_empty() {
            segment.prefetch_stored(&docs);
        }
    }
    let explained: Vec<(usize, DocId)> = match request.explain {
        true => wanted.iter().map(|(h, _)| (h.segment, h.doc)).collect(),
        false => Vec::new(),
    };
    let mut explanations =
        searcher.explain(query, &explained, &|f| schema.field(f).name.clone())?.into_iter();
    let mut hits = Vec::with_capacity(wanted.len());
    // Only the `_id` wanted: the record as written has it, updates need not be applied.
    let id_only = !request.source && !request.versions && rewritten.is_none();
    for (h, sort) in wanted {
        let segment = views[h.segment].0;
        let (id, at, source) = match id_only {
            true => (stored_head(segment, h.doc)?.0, DocVersion::default(), String::new()),
            false => stored_document_versioned(segment, h.doc)?,
        };
        let highlight = match &rewritten {
            Some(query) => highlight(segment, h.doc, &source, query, schema, request)?,
            None => BTreeMap::new(),
        };
        needle_core::read_error::check()?;
        let version = request.versions.then_some((at.version, at.shown_seq_no()));
        let source = request.source.then_some(source);
        let mut fields = BTreeMap::new();
        for shown in &request.value_fields {
            let values = doc_values_json(segment, schema, shown, h.doc)?;
            if !values.is_empty() {
                fields.insert(schema.field(shown.field).name.clone(), values);
            }
        }
        let explanation = explanations.next().flatten();
        hits.push(Hit {
            id,
            score: h.score,
            highlight,
            source,
            version,
            sort: sort.clone(),
            fields,
            explanation,
        });
    }
    Ok(hits)
}

/// The hits ranked, by score or by sort keys (with their sort values).
struct Ranked {
    hits: Vec<(ScoredDoc, Vec<SortValue>)>,
    total: u64,
    exact: bool,
    max_score: Option<f32>,
}

/// `(_id, JSON source)` of a stored document.
pub(crate) fn stored_document(segment: &dyn SegmentRead, doc: DocId) -> Result<(String, String)> {
    let (id, _, source) = stored_document_versioned(segment, doc)?;
    Ok((id, source))
}

/// The `_id` and version of a stored document, read from its record's head.
pub(crate) fn stored_head(segment: &dyn SegmentRead, doc: DocId) -> Result<(String, DocVersion)> {
    let head = segment.stored_head(doc)?;
    let file = format!("{}.docs", segment.name());
    let r = record::decode(&file, &head)?;
    Ok((r.id.to_string(), r.version))
}

/// The version a segment's record of `doc` holds (its head alone is read).
pub(crate) fn stored_version(segment: &dyn SegmentRead, doc: DocId) -> Result<DocVersion> {
    let head = segment.stored_head(doc)?;
    // Every update reads a version: the file's name is made only for an error.
    match record::decode("", &head) {
        Ok(r) => Ok(r.version),
        Err(_) => Ok(record::decode(&format!("{}.docs", segment.name()), &head)?.version),
    }
}

/// `(_id, version, JSON source)` of a stored document.
pub(crate) fn stored_document_versioned(
    segment: &dyn SegmentRead,
    doc: DocId,
) -> Result<(String, DocVersion, String)> {
    let record = segment.stored(doc)?;
    let file = format!("{}.docs", segment.name());
    let r = record::decode(&file, &record)?;
    Ok((r.id.to_string(), r.version, r.source.to_string()))
}

fn highlight(
    segment: &dyn SegmentRead,
    doc: DocId,
    source: &str,
    query: &Query,
    schema: &Schema,
    request: &SearchRequest,
) -> Result<BTreeMap<String, Vec<String>>> {
    let spans = match_spans(segment, doc, query)?;
    let mut out = BTreeMap::new();
    let mut keyword_terms = marked_terms(query);
    // `_id` is never highlighted (Elasticsearch does not show it).
    keyword_terms.retain(|&field, _| {
        field != ID_FIELD
            && schema.fields.get(usize::from(field)).is_some_and(|d| d.kind == FieldKind::Keyword)
    });
    let unmatched_shown = request.field_fragments.values().any(|o| o.no_match_size > 0);
    if spans.is_empty() && keyword_terms.is_empty() && !unmatched_shown {
        return Ok(out);
    }
    let json: serde_json::Value = serde_json::from_str(source).map_err(|e| {
        Error::corrupt(format!("{}.docs", segment.name()), format!("stored source is not JSON: {e}"))
    })?;
    for (field, field_spans) in spans {
        let name = &schema.field(field).name;
        if let Some(text) = field_text(&json, name) {
            let options = request.fragments_for(name);
            let f = fragments(&text, &field_spans, options);
            if !f.is_empty() {
                out.insert(name.clone(), f);
            }
        }
    }
    for (field, terms) in &keyword_terms {
        let name = &schema.field(*field).name;
        let options = request.fragments_for(name);
        let values = field_strings(&json, name).unwrap_or_default();
        let f = keyword_fragments(&values, terms, options);
        if !f.is_empty() {
            out.insert(name.clone(), f);
        }
    }
    // Fields where nothing matched show their first value's start, when asked.
    for (name, options) in request.field_fragments.iter().filter(|(_, o)| o.no_match_size > 0) {
        if out.contains_key(name) {
            continue;
        }
        let first = field_strings(&json, name).and_then(|values| values.into_iter().next());
        if let Some(shown) = first.map(|text| leading_text(&text, options.no_match_size)) {
            out.insert(name.clone(), vec![shown]);
        }
    }
    Ok(out)
}

/// Every live document with `_id` `id` (one, unless something went wrong):
/// (view index, doc), newest first. A failed read is an error, never "none".
pub(crate) fn find_ids(views: &[View<'_>], id: &str) -> Result<Vec<(usize, DocId)>> {
    let mut found = Vec::new();
    for (i, (segment, deletes)) in views.iter().enumerate().rev() {
        let docs = segment.term_docs(ID_FIELD, id.as_bytes())?;
        let live = docs.into_iter().rev().filter(|&doc| !deletes.is_some_and(|d| d.is_deleted(doc)));
        found.extend(live.map(|doc| (i, doc)));
    }
    Ok(found)
}

/// The live document with `_id` `id` (the newest, should there be several).
pub(crate) fn find_id(views: &[View<'_>], id: &str) -> Result<Option<(usize, DocId)>> {
    Ok(find_ids(views, id)?.into_iter().next())
}
