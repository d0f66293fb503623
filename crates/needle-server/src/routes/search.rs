//! `_search`, `_count` and `_delete_by_query`, on one index or several
//! (hits merged by score, as Elasticsearch merges its shards' hits; each
//! index scores with its own statistics, or with all of theirs summed under
//! `search_type=dfs_query_then_fetch`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use needle_core::deadline;
use needle_engine::{
    CorpusStatistics, FieldKind, FragmentOptions, IfCurrent, Query, Schema, SearchRequest, Searcher,
    SharedCorpus, SortKey, SortValue,
};
use needle_search::BoolQuery;
use serde_json::{json, Map, Value};

use crate::call::{token_name, Call};
use crate::catalog::{Handle, Reached};
use crate::counters::IndexCounters;
use crate::error::{search_shard_counts, shard_counts, ApiError, ApiResult};
use crate::params::Params;
use crate::pattern;
use crate::pools;
use crate::request_cache::{self, RequestCache};
use crate::respond::{self, score};
use crate::routes::by_query::{read_asked, run_by_query, unknown_key, Api};
use crate::routes::documents::parse_source;
use crate::routes::write::PRIMARY_TERM;
use crate::server::Shared;
use crate::sort::{self, SortSpec};
use crate::source_filter::SourceFilter;
use crate::{docvalue_fields, dsl};

/// Parameters of a search that change nothing on one node.
pub(crate) const SEARCH_PARAMS: [&str; 11] = [
    "allow_no_indices",
    "ignore_unavailable",
    "expand_wildcards",
    "typed_keys",
    "preference",
    "routing",
    "batched_reduce_size",
    "ccs_minimize_roundtrips",
    "pre_filter_shard_size",
    "max_concurrent_shard_requests",
    "allow_partial_search_results",
];

pub async fn search(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    searched(app, index, call).await
}

pub async fn search_all(State(app): State<Shared>, call: Call) -> Response {
    searched(app, "_all".to_string(), call).await
}

/// Runs the search `call` asks for, here and now.
pub(crate) fn search_call(app: &Shared, expression: &str, call: &Call) -> ApiResult<Response> {
    run_search(app, expression, parse_request(call)?)
}

/// Reads the request, then runs it in the search pool.
async fn searched(app: Shared, expression: String, call: Call) -> Response {
    let request = match parse_request(&call) {
        Ok(request) => request,
        Err(e) => return axum::response::IntoResponse::into_response(e),
    };
    pools::search(app, request.is_light(), move |app| run_search(app, &expression, request)).await
}

/// A search request's body and parameters, parsed.
pub struct Request {
    query: Option<Value>,
    pub from: usize,
    size: usize,
    /// `None` when `track_total_hits` is false (no total in the answer).
    track: Option<u64>,
    source: SourceFilter,
    highlight: Option<Highlight>,
    /// The `sort` keys (empty: by score, with no `sort` values in the hits).
    pub sort: Vec<SortSpec>,
    pub search_after: Option<Vec<Value>>,
    track_scores: bool,
    /// The `aggs` object, read against each index's mapping.
    pub aggs: Option<Value>,
    docvalue_fields: Vec<docvalue_fields::ValueField>,
    version: bool,
    seq_no: bool,
    pub total_as_int: bool,
    /// `scroll`: keep a snapshot this long and page through it.
    pub scroll: Option<std::time::Duration>,
    /// `explain`: each hit's score explained (`_explanation`).
    pub explain: bool,
    /// `timeout`: how long the indexes are searched; what was found by then is the answer (`timed_out`).
    pub timeout: Option<Duration>,
    /// `profile`: what each index's search read (Needle's figures, under `profile.shards[].needle`).
    pub profile: bool,
    /// The request as the request cache knows it, when its answer may be kept there.
    cached_as: Option<String>,
    /// How many of each hit's sort values are shown (`None`: all; a
    /// scroll shows only the keys asked for, not the ones it adds).
    pub shown_sort_keys: Option<usize>,
    /// `search_type=dfs_query_then_fetch`: over several indexes, score
    /// with their statistics summed, as one index holding them all would.
    pub dfs: bool,
    /// `needle_corpus`: statistics of the parts of a corpus spread over
    /// nodes (each from `_needle/corpus_stats`), summed; every index here
    /// scores with them.
    corpus: Option<SharedCorpus>,
    /// `needle_gathered: true`: the aggregations' gathered states are
    /// answered as bytes (`needle_gathered`, base64) for a node that merges
    /// them with other shards' (`_needle/aggregate`), not answered here.
    gathered_only: bool,
    /// `needle_after_leading: true`: `search_after` may hold fewer values
    /// than the sort has keys, bounding the leading keys only (a hit equal
    /// on them comes after): how a cluster's coordinator pages a shard
    /// from the first of the hits equal on the keys before `_doc`.
    after_leading: bool,
}

struct Highlight {
    /// The field patterns asked for, each with its options.
    fields: Vec<(String, FragmentOptions)>,
    /// The options of fields not given their own.
    options: FragmentOptions,
}

pub(crate) fn run_search(app: &Shared, expression: &str, request: Request) -> ApiResult<Response> {
    if let Some(keep_alive) = request.scroll {
        let started = Instant::now();
        let targets = targets_of(app, expression, &request)?.1;
        return crate::routes::scroll::start(app, targets, request, keep_alive, started);
    }
    let started = Instant::now();
    let (handles, targets) = targets_of(app, expression, &request)?;
    let cache = request.cached_as.as_deref().and_then(|text| cache_slot(&handles, &targets, text));
    if let Some((cache, generation, text)) = &cache {
        if let Some(answer) = cache.get(*generation, text, started.elapsed().as_millis() as u64) {
            count_query(&handles, started);
            return Ok(respond::json_bytes(StatusCode::OK, answer));
        }
    }
    let answer = page_answer(&handles, &targets, &request, started)?;
    // A timed-out answer is partial: the same search given time may find
    // more; so is one with a failed index, which may answer next time.
    let complete = answer["timed_out"] == json!(false) && answer["_shards"]["failed"] == json!(0);
    let answer = serde_json::to_vec(&answer).expect("JSON values serialize");
    if let (Some((cache, generation, text)), true) = (cache, complete) {
        cache.put(generation, text, &answer);
    }
    Ok(respond::json_bytes(StatusCode::OK, answer))
}

/// Where the answer to a search known as `text` over `handles` (snapshots
/// `targets`) is kept, and its key: the first index's request cache at its
/// generation, the key naming every other index's generation and epoch
/// (see `request_cache.rs`); none when an index turns its cache off.
fn cache_slot<'a>(
    handles: &'a [Arc<Handle>],
    targets: &[Target],
    text: &str,
) -> Option<(&'a RequestCache, u64, String)> {
    let (first, first_target) = handles.first().zip(targets.first())?;
    if !handles.iter().all(|h| h.requests_cache_enabled()) {
        return None;
    }
    let mut key = String::new();
    for (h, t) in handles.iter().zip(targets).skip(1) {
        key += &format!("{}@{}.{} ", h.name, t.searcher.generation(), h.requests.epoch());
    }
    // An alias's filter may change under the same request.
    for (h, filter) in handles.iter().zip(targets).filter_map(|(h, t)| Some((h, t.filter.as_ref()?))) {
        key += &format!("{} filtered by {filter} ", h.name);
    }
    key += text;
    Some((&first.requests, first_target.searcher.generation(), key))
}

/// The answer to `request` over the indexes `expression` names (not a scroll).
pub(crate) fn search_answer(app: &Shared, expression: &str, request: &Request) -> ApiResult<Value> {
    let started = Instant::now();
    let (handles, targets) = targets_of(app, expression, request)?;
    page_answer(&handles, &targets, request, started)
}

/// The answer to `request` over `targets` (the snapshots of `handles`), counted on each index.
fn page_answer(
    handles: &[Arc<Handle>],
    targets: &[Target],
    request: &Request,
    started: Instant,
) -> ApiResult<Value> {
    let page = search_page(targets, request, None)?;
    count_query(handles, started);
    Ok(page.answer(request, started))
}

/// Counts a search on each index it ran on.
fn count_query(handles: &[Arc<Handle>], started: Instant) {
    for h in handles {
        h.counters.query.add(started);
    }
}

/// The indexes `expression` names, once `request` is checked against their
/// limits, and the snapshot of each it searches.
fn targets_of(
    app: &Shared,
    expression: &str,
    request: &Request,
) -> ApiResult<(Vec<Arc<Handle>>, Vec<Target>)> {
    let reached = app.catalog.resolve_filtered(expression)?;
    let handles: Vec<Arc<Handle>> = reached.iter().map(|r| r.handle.clone()).collect();
    let window = request.from + request.size;
    for h in &handles {
        let max_result_window = h.settings().max_result_window;
        if window > max_result_window {
            return Err(ApiError::illegal_argument(format!(
                "Result window is too large, from + size must be less than or equal to: [{}] but was [{window}]. \
                 See the scroll api for a more efficient way to request large data sets. This limit can be set by \
                 changing the [index.max_result_window] index level setting.",
                max_result_window
            )));
        }
    }
    if request.search_after.is_some() && request.from > 0 {
        return Err(ApiError::illegal_argument(
            "[from] parameter must be set to 0 when [search_after] is used",
        ));
    }
    if request.search_after.is_some() && sort::is_by_score(&request.sort) {
        return Err(ApiError::illegal_argument("[search_after] needs a [sort] by fields"));
    }
    let target = |Reached { handle: h, filter }: Reached| Target {
        name: h.name.clone(),
        uuid: h.settings().uuid.clone(),
        searcher: h.index.searcher(),
        counters: h.counters.clone(),
        filter,
    };
    Ok((handles, reached.into_iter().map(target).collect()))
}

/// What the server answers to `_search` with `body` on one index's
/// snapshot, without HTTP: the same reading of the body, the same search and
/// the same answer. For measuring the engine's share of a search in-process
/// (WSBench's field-value searches).
pub fn search_body(name: &str, searcher: Searcher, body: Value) -> ApiResult<Value> {
    let started = Instant::now();
    let request = body_request(body)?;
    let target = Target {
        name: name.to_string(),
        uuid: "_na_".to_string(),
        searcher,
        counters: Arc::default(),
        filter: None,
    };
    let page = search_page(std::slice::from_ref(&target), &request, None)?;
    Ok(page.answer(&request, started))
}

/// A search request's body read into a request (the URL's parameters at their defaults).
pub(crate) fn body_request(body: Value) -> ApiResult<Request> {
    let Value::Object(body) = body else {
        return Err(ApiError::parsing("the search body must be an object"));
    };
    let mut request = Request::new();
    for (key, value) in body {
        apply_body_key(&mut request, &key, value)?;
    }
    Ok(request)
}

/// An index's name and the snapshot of it a search reads (not its handle:
/// a scroll keeping one must not keep a deleted index's writer open).
pub struct Target {
    pub name: String,
    pub uuid: String,
    pub searcher: Searcher,
    pub counters: Arc<IndexCounters>,
    /// The filter of the aliases the search reached the index through.
    pub filter: Option<Value>,
}

/// One page of hits over one or more indexes.
pub struct Page {
    total: u64,
    exact: bool,
    max_score: Option<f32>,
    hits: Vec<Ranked>,
    aggregations: Option<Map<String, Value>>,
    /// With `needle_gathered`: what the aggregations gathered, as base64 of their bytes.
    gathered: Option<String>,
    indexes: usize,
    /// The indexes that could not run the request, each as a shard's failure (see `ApiError::shard_failure`).
    failures: Vec<Value>,
    /// With `profile`: each index's `profile.shards` entry.
    profiles: Vec<Value>,
    /// The `timeout` passed before every index's matches were seen.
    timed_out: bool,
}

/// Where a scroll's next page starts: after the hit with sort values
/// `values` in the index numbered `index` (its place among those searched).
#[derive(Clone)]
pub struct Place {
    pub index: usize,
    pub values: Vec<SortValue>,
}

impl Place {
    /// Where index `n` continues, the sort ending with `_doc` (descending
    /// when `doc_descending`): after the place in its own index; past the
    /// hits equal on the other keys in an index before it (done with them);
    /// from the first of them in an index after it.
    fn after_in(&self, n: usize, doc_descending: bool) -> Vec<SortValue> {
        let others = &self.values[..self.values.len() - 1];
        let past_every_doc = SortValue::Doc(if doc_descending { 0 } else { u64::MAX });
        match n.cmp(&self.index) {
            std::cmp::Ordering::Equal => self.values.clone(),
            std::cmp::Ordering::Less => [others, &[past_every_doc]].concat(),
            std::cmp::Ordering::Greater => others.to_vec(),
        }
    }
}

impl Page {
    /// The place of the page's last hit: where the next page starts.
    pub fn last_place(&self) -> Option<Place> {
        self.hits.last().map(|h| Place { index: h.index, values: h.values.clone() })
    }

    /// The search answer, as Elasticsearch shapes it.
    pub fn answer(self, request: &Request, started: Instant) -> Value {
        let mut hits_json = Map::new();
        if let Some(track) = request.track {
            let (value, relation) = match self.exact && self.total <= track {
                true => (self.total, "eq"),
                false => (self.total.min(track), "gte"),
            };
            let total = match request.total_as_int {
                true => json!(value),
                false => json!({"value": value, "relation": relation}),
            };
            hits_json.insert("total".into(), total);
        }
        hits_json.insert("max_score".into(), self.max_score.map_or(Value::Null, score));
        hits_json.insert("hits".into(), Value::Array(self.hits.into_iter().map(|h| h.json).collect()));
        let mut answer = json!({
            "took": started.elapsed().as_millis() as u64,
            "timed_out": self.timed_out,
            "_shards": search_shard_counts(self.indexes, self.failures),
        });
        // Moved in: `json!` would copy every hit's source.
        answer["hits"] = Value::Object(hits_json);
        if let Some(aggregations) = self.aggregations {
            answer["aggregations"] = Value::Object(aggregations);
        }
        if let Some(gathered) = self.gathered {
            answer["needle_gathered"] = json!(gathered);
        }
        if request.profile {
            answer["profile"] = json!({"shards": self.profiles});
        }
        answer
    }
}

/// A request as one index reads it, against its mapping.
struct ReadRequest {
    query: Query,
    /// The sort's keys, when by fields.
    resolved: Option<sort::Resolved>,
    /// The request's `search_after` in the index's values.
    after: Option<Vec<SortValue>>,
    value_fields: docvalue_fields::Resolved,
    /// The request's aggregations.
    aggs: Option<ReadAggs>,
}

/// A request's aggregations read against an index's mapping, with what
/// shows the hits of each `top_hits` among them.
struct ReadAggs {
    tree: Vec<needle_engine::Aggregation>,
    tops: Vec<TopHitsSpec>,
}

impl ReadAggs {
    fn read(spec: &Value, schema: &needle_engine::Schema) -> ApiResult<ReadAggs> {
        let mut tops = Vec::new();
        let tree = crate::aggs::parse(spec, schema, &mut tops)?;
        Ok(ReadAggs { tree, tops })
    }
}

/// `request` read against `target`'s mapping; an error here is the index's
/// failure (Elasticsearch's shard failure) unless it is the request's own.
fn read_for(target: &Target, request: &Request, by_fields: bool) -> ApiResult<ReadRequest> {
    let schema = target.searcher.schema();
    let query = filtered_query(&request.query, target.filter.as_ref(), &target.searcher)?;
    let resolved = match by_fields {
        true => Some(sort::resolve(&request.sort, schema)?),
        false => None,
    };
    let after = match (&resolved, &request.search_after) {
        (Some(r), Some(values)) => Some(r.after(values, &request.sort, request.after_leading)?),
        _ => None,
    };
    let value_fields = docvalue_fields::resolve(&request.docvalue_fields, schema)?;
    let aggs = request.aggs.as_ref().map(|spec| ReadAggs::read(spec, schema)).transpose()?;
    Ok(ReadRequest { query, resolved, after, value_fields, aggs })
}

/// Runs `request` over `targets`; `after`, when given, stands for the
/// request's `search_after` (a scroll's place, in the engine's values).
/// Over several indexes, a sort ending with `_doc` ranks hits equal on the
/// other keys by index, then document (so a place is one index's).
pub fn search_page(targets: &[Target], request: &Request, after: Option<&Place>) -> ApiResult<Page> {
    let window = request.from + request.size;
    let by_fields = !sort::is_by_score(&request.sort);
    let doc_last = targets.len() > 1 && request.sort.last().is_some_and(SortSpec::is_doc);
    // Each index returns its top `from + size`; the merge keeps `from..from + size`.
    let one = targets.len() == 1;
    let mut aggregations = None;
    let mut total = 0;
    let mut exact = true;
    let mut max_score: Option<f32> = None;
    let mut hits: Vec<Ranked> = Vec::new();
    let mut keys: Vec<SortKey> = Vec::new();
    let mut profiles = Vec::new();
    let mut timed_out = false;
    let started = Instant::now();
    // What is left of the request's time, for each index in turn.
    let left = || request.timeout.map(|t| t.saturating_sub(started.elapsed()));
    // Over several indexes (or for another node to merge), each gathers
    // with the aggregations read against its mapping.
    let apart = !one || request.gathered_only;
    // Each index reads the request against its mapping; one that cannot (a
    // field of another type there, an analyzer it lacks) fails alone, as a
    // shard does in Elasticsearch, and the others answer.
    let mut failures = Vec::new();
    let mut read = Vec::new();
    for (n, target) in targets.iter().enumerate() {
        match read_for(target, request, by_fields) {
            Ok(r) => read.push((n, target, r)),
            Err(e) if e.is_request_error() => return Err(e),
            Err(e) => failures.push(e.shard_failure(&target.name, &target.uuid, 0)),
        }
    }
    if read.is_empty() && !failures.is_empty() {
        return Err(ApiError::all_shards_failed(failures));
    }
    let trees = match apart {
        true => aggregations_of(read.iter_mut().filter_map(|(_, _, r)| r.aggs.take()))?,
        false => None,
    };
    let mut gathered_wire = None;
    let mut gathered: Option<needle_engine::Gathered> = None;
    let corpus = match (&request.corpus, request.dfs && !one) {
        (Some(given), _) => Some(given.clone()),
        (None, true) => Some(corpus_of(read.iter().map(|(_, t, r)| (&t.searcher, &r.query)))?),
        (None, false) => None,
    };
    for (at, (n, Target { name, uuid, searcher, .. }, read)) in read.into_iter().enumerate() {
        let ReadRequest { query, resolved, after: read_after, value_fields, aggs } = read;
        let search_after = match after {
            Some(place) if doc_last => {
                Some(place.after_in(n, request.sort.last().is_some_and(SortSpec::is_descending)))
            }
            Some(place) => Some(place.values.clone()),
            None => read_after,
        };
        let scored = resolved.as_ref().is_none_or(|r| r.by_score()) || request.track_scores;
        let from = if one { request.from } else { 0 };
        let engine_request = SearchRequest {
            search_after,
            timeout: left(),
            corpus: corpus.clone(),
            ..engine_request(request, searcher.schema(), resolved.as_ref(), &value_fields, window, from)
        };
        let tree = trees.as_ref().map(|t| t[at].as_slice());
        let shown = |hit| shown_hit(name, hit, request, resolved.as_ref(), scored, &value_fields);
        let ran = match run_index(
            name,
            searcher,
            &query,
            tree,
            aggs.as_ref(),
            &engine_request,
            request,
            &left,
            shown,
        ) {
            Ok(ran) => ran,
            // One index's failure fails the search when it is the only one
            // (or all fail); over several, the others answer, as shards do.
            Err(e) if one || e.is_request_error() => return Err(e.failing_index(name, uuid)),
            Err(e) => {
                failures.push(e.shard_failure(name, uuid, 0));
                continue;
            }
        };
        timed_out |= ran.timed_out;
        if let Some(mine) = ran.gathered {
            match gathered.as_mut() {
                Some(all) => all.merge(mine),
                None => gathered = Some(mine),
            }
        }
        if let Some((matched, answer)) = ran.aggregated {
            aggregations = Some(answer);
            if ran.response.is_none() {
                // The aggregations walked every match: the count is theirs, no second walk.
                total += matched;
            }
        }
        let Some(response) = ran.response else { continue };
        if let Some(stats) = &response.stats {
            let id = format!("[needle][{name}][0]");
            profiles.push(json!({"id": id, "searches": [], "aggregations": [], "needle": stats}));
        }
        total += response.total;
        exact &= response.total_relation == "eq";
        if scored {
            max_score = match (max_score, response.max_score) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
        }
        for (rank, (score, values, json)) in ran.hits.into_iter().enumerate() {
            hits.push(Ranked { score, index: n, rank: n * window + rank, values, json });
        }
        if let Some(r) = resolved {
            keys = r.keys;
        }
    }
    if !failures.is_empty() && failures.len() == targets.len() {
        return Err(ApiError::all_shards_failed(failures));
    }
    if let (Some(trees), Some(all)) = (&trees, gathered) {
        match request.gathered_only {
            true => gathered_wire = Some(needle_engine::base64_text(&all.to_wire()?)),
            false => aggregations = Some(all.answer(&trees[0]).map_err(too_many_buckets)?),
        }
    }
    if !one {
        // Ties on the keys go by index, then by rank in it; with `_doc` last, ties on the others.
        let compared = if doc_last { keys.len() - 1 } else { keys.len() };
        hits.sort_by(|a, b| match by_fields {
            true => needle_search::compare_sort_values(&keys[..compared], &a.values, &b.values)
                .then(a.rank.cmp(&b.rank)),
            false => b.score.total_cmp(&a.score).then(a.rank.cmp(&b.rank)),
        });
        hits = hits.into_iter().skip(request.from).collect();
    }
    hits.truncate(request.size);
    Ok(Page {
        total,
        exact,
        max_score,
        hits,
        aggregations,
        gathered: gathered_wire,
        indexes: targets.len(),
        failures,
        profiles,
        timed_out,
    })
}

/// What one index of a search found: what its aggregations gathered (over
/// several indexes) or answered (over one, with the matches they counted),
/// its page of hits (none when the aggregations' count was all it asked),
/// each shown, and whether its time ran out.
struct IndexRun {
    gathered: Option<needle_engine::Gathered>,
    aggregated: Option<(u64, Map<String, Value>)>,
    response: Option<needle_engine::SearchResponse>,
    hits: Vec<(f32, Vec<SortValue>, Value)>,
    timed_out: bool,
}

/// Runs one index's part of a search: its aggregations (`tree` to gather, or
/// `aggs` to answer), then its page of hits (`engine_request`), shown by `shown`.
/// Nothing is merged here, so an index that fails adds nothing to the answer.
#[allow(clippy::too_many_arguments)]
fn run_index(
    name: &str,
    searcher: &Searcher,
    query: &Query,
    tree: Option<&[needle_engine::Aggregation]>,
    aggs: Option<&ReadAggs>,
    engine_request: &SearchRequest,
    request: &Request,
    left: &dyn Fn() -> Option<std::time::Duration>,
    shown: impl Fn(needle_engine::Hit) -> ApiResult<Value>,
) -> ApiResult<IndexRun> {
    let mut run =
        IndexRun { gathered: None, aggregated: None, response: None, hits: Vec::new(), timed_out: false };
    if let Some(tree) = tree {
        let limit = deadline::limit(left());
        run.gathered = Some(searcher.gather(query, tree)?);
        run.timed_out |= limit.timed_out();
    }
    if let Some(aggs) = aggs {
        let limit = deadline::limit(left());
        run.aggregated = Some(aggregate(name, searcher, query, aggs)?);
        run.timed_out |= limit.timed_out();
        if engine_request.top_k == 0 && !request.profile {
            return Ok(run);
        }
    }
    let mut response = searcher.search_query(query, engine_request)?;
    run.timed_out |= response.timed_out;
    for hit in std::mem::take(&mut response.hits) {
        run.hits.push((hit.score, hit.sort.clone(), shown(hit)?));
    }
    run.response = Some(response);
    Ok(run)
}

/// The request's query as each index of `targets` reads it (against its mapping).
fn queries_of(targets: &[Target], request: &Request) -> ApiResult<Vec<Query>> {
    targets.iter().map(|t| filtered_query(&request.query, t.filter.as_ref(), &t.searcher)).collect()
}

/// The first round of `dfs_query_then_fetch`: the statistics of each
/// index's query (`queries`, one an index of `targets`), summed.
fn corpus_of<'a>(read: impl IntoIterator<Item = (&'a Searcher, &'a Query)>) -> ApiResult<SharedCorpus> {
    let mut summed = CorpusStatistics::default();
    for (searcher, query) in read {
        summed.merge(&searcher.corpus_stats(query)?);
    }
    Ok(SharedCorpus(Arc::new(summed)))
}

/// `POST /{index}/_needle/corpus_stats` (`{"query": ...}`): the first round
/// of a search over nodes that each hold part of a corpus. Its answer, with
/// the other parts', goes in each part's search as `needle_corpus`, and
/// every document then scores as in one index holding them all (the
/// statistics' JSON: `needle_engine::CorpusStatistics::to_json`).
pub async fn corpus_stats(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    pools::search(app, false, move |app| {
        let request = parse_request(&call)?;
        let (_, targets) = targets_of(app, &index, &request)?;
        let queries = queries_of(&targets, &request)?;
        let read = targets.iter().map(|t| &t.searcher).zip(&queries);
        Ok(respond::ok(&corpus_of(read)?.0.to_json()))
    })
    .await
}

/// `POST /{index}/_needle/aggregate` (`{"aggs": ..., "gathered": [...]}`):
/// the last round of aggregations over nodes that each hold part of a
/// corpus. Each part's search with `needle_gathered: true` answered what its
/// aggregations gathered (base64 of `needle_engine::Gathered::to_wire`);
/// merged here, read against this index's mapping, they are answered as one
/// index holding every part would answer them: `{"aggregations": ...}`.
pub async fn aggregate_gathered(
    State(app): State<Shared>,
    Path(index): Path<String>,
    call: Call,
) -> Response {
    pools::search(app, false, move |app| {
        let body = call.json_object()?;
        let spec = body.get("aggs").ok_or_else(|| ApiError::parsing("[aggs] is missing"))?;
        let Some(Value::Array(parts)) = body.get("gathered") else {
            return Err(ApiError::parsing("[gathered] must be a list of what each part gathered"));
        };
        let (_, targets) = targets_of(app, &index, &Request::new())?;
        let read = ReadAggs::read(spec, targets[0].searcher.schema())?;
        let trees = aggregations_of([read])?.expect("one index's aggregations");
        let mut merged: Option<needle_engine::Gathered> = None;
        for part in parts {
            let bytes = part.as_str().and_then(needle_engine::base64_bytes);
            let bytes = bytes.ok_or_else(|| ApiError::parsing("[gathered] each part must be base64 text"))?;
            let part = needle_engine::Gathered::from_wire(&bytes, &trees[0])?;
            match merged.as_mut() {
                Some(all) => all.merge(part),
                None => merged = Some(part),
            }
        }
        let merged = merged.ok_or_else(|| ApiError::parsing("[gathered] is empty"))?;
        let aggregations = merged.answer(&trees[0]).map_err(too_many_buckets)?;
        Ok(respond::ok(&json!({ "aggregations": aggregations })))
    })
    .await
}

/// `needle_corpus`: the statistics of each part of the corpus (a list, or one), summed.
fn corpus_value(value: &Value) -> ApiResult<SharedCorpus> {
    let parts = match value {
        Value::Array(parts) => parts.as_slice(),
        one => std::slice::from_ref(one),
    };
    let mut summed = CorpusStatistics::default();
    for part in parts {
        let part = CorpusStatistics::from_json(part)
            .map_err(|e| ApiError::parsing(format!("[needle_corpus] {e}")))?;
        summed.merge(&part);
    }
    Ok(SharedCorpus(Arc::new(summed)))
}

/// The engine's request for `request`'s hits in one index: its best
/// `top_k`, those ranked from `from` fetched and shown as it asks.
fn engine_request(
    request: &Request,
    schema: &Schema,
    resolved: Option<&sort::Resolved>,
    value_fields: &docvalue_fields::Resolved,
    top_k: usize,
    from: usize,
) -> SearchRequest {
    SearchRequest {
        top_k,
        from,
        highlight: request.highlight.is_some(),
        fragments: request.highlight.as_ref().map(|h| h.options.clone()).unwrap_or_default(),
        field_fragments: request.highlight.as_ref().map(|h| h.field_fragments(schema)).unwrap_or_default(),
        track_total_hits: request.track.unwrap_or(0).max(top_k as u64),
        source: request.source.fetch,
        versions: request.version || request.seq_no,
        sort: resolved.map(|r| r.keys.clone()).unwrap_or_default(),
        track_scores: request.track_scores,
        value_fields: value_fields.fields.clone(),
        stats: request.profile,
        explain: request.explain,
        ..SearchRequest::new("")
    }
}

/// The matches and the `aggregations` of a search of index `name`; each
/// `top_hits` bucket's hits shown as the search's hits are.
fn aggregate(
    name: &str,
    searcher: &Searcher,
    query: &Query,
    aggs: &ReadAggs,
) -> ApiResult<(u64, Map<String, Value>)> {
    let ReadAggs { tree, tops } = aggs;
    // A failure to show a hit is the server's error, kept here to answer with.
    let mut failed = None;
    let mut answer = |tag: usize, found: needle_engine::TopHits| {
        tops[tag].json(name, found).map_err(|e| {
            let reason = e.reason.clone();
            failed = Some(e);
            needle_engine::Error::invalid(reason)
        })
    };
    let answered = searcher.aggregate_with(query, tree, &mut answer);
    if let Some(e) = failed {
        return Err(e);
    }
    answered.map_err(too_many_buckets)
}

/// The aggregations each index read against its mapping (none when the
/// request has none), their fields' types made one so that what each index
/// gathers merges (see `needle_engine::Gathered`). `top_hits` are refused:
/// their hits would come from several indexes.
fn aggregations_of(
    read: impl IntoIterator<Item = ReadAggs>,
) -> ApiResult<Option<Vec<Vec<needle_engine::Aggregation>>>> {
    let mut trees = Vec::new();
    for ReadAggs { tree, tops } in read {
        trees.push(tree);
        if !tops.is_empty() {
            return Err(ApiError::illegal_argument(
                "[top_hits] over several indexes is not supported yet by Needle: aggregate one index at a time",
            ));
        }
    }
    if trees.is_empty() {
        return Ok(None);
    }
    needle_engine::unify_fields(&mut trees).map_err(|e| match e {
        needle_engine::Error::InvalidInput { reason, .. } => ApiError::illegal_argument(reason),
        other => other.into(),
    })?;
    Ok(Some(trees))
}

/// An aggregation's refusal to answer with more buckets than allowed, as Elasticsearch words it.
fn too_many_buckets(e: needle_engine::Error) -> ApiError {
    match e {
        needle_engine::Error::InvalidInput { reason, .. } => {
            ApiError::bad_request("too_many_buckets_exception", reason)
        }
        other => other.into(),
    }
}

/// The most hits a `top_hits` may rank (Elasticsearch's `index.max_inner_result_window`).
const MAX_INNER_RESULT_WINDOW: usize = 100;

/// The keys of a search body a `top_hits` aggregation takes.
const TOP_HITS_KEYS: [&str; 11] = [
    "from",
    "size",
    "sort",
    "_source",
    "highlight",
    "docvalue_fields",
    "version",
    "seq_no_primary_term",
    "explain",
    "track_scores",
    "stored_fields",
];

/// A `top_hits` aggregation's body, read as a search body's keys (3 hits by
/// default), resolved against the index: what shows its hits.
pub(crate) struct TopHitsSpec {
    request: Request,
    resolved: Option<sort::Resolved>,
    value_fields: docvalue_fields::Resolved,
}

/// The engine's request of the `top_hits` aggregation `name`, and what shows its hits.
pub(crate) fn top_hits(name: &str, body: &Value, schema: &Schema) -> ApiResult<(SearchRequest, TopHitsSpec)> {
    let Value::Object(m) = body else {
        return Err(ApiError::parsing(format!("[top_hits] of aggregation [{name}] must be an object")));
    };
    let mut request = Request { size: 3, track: None, ..Request::new() };
    for (key, value) in m {
        if !TOP_HITS_KEYS.contains(&key.as_str()) {
            return Err(ApiError::parsing(format!(
                "[top_hits] unknown field [{key}] (or an option Needle does not support yet) in aggregation [{name}]"
            )));
        }
        apply_body_key(&mut request, key, value.clone())?;
    }
    let window = request.from + request.size;
    if window > MAX_INNER_RESULT_WINDOW {
        return Err(ApiError::illegal_argument(format!(
            "Top hits result window is too large, the top hits aggregator [{name}]'s from + size must be less than \
             or equal to: [{MAX_INNER_RESULT_WINDOW}] but was [{window}]. This limit can be set by changing the \
             [index.max_inner_result_window] index level setting."
        )));
    }
    let resolved = match sort::is_by_score(&request.sort) {
        true => None,
        false => Some(sort::resolve(&request.sort, schema)?),
    };
    let value_fields = docvalue_fields::resolve(&request.docvalue_fields, schema)?;
    let engine = engine_request(&request, schema, resolved.as_ref(), &value_fields, window, request.from);
    Ok((engine, TopHitsSpec { request, resolved, value_fields }))
}

impl TopHitsSpec {
    /// A bucket's `top_hits` answer: its documents, best score and hits, shown as a search's.
    fn json(&self, index: &str, found: needle_engine::TopHits) -> ApiResult<Value> {
        let scored = self.resolved.as_ref().is_none_or(|r| r.by_score()) || self.request.track_scores;
        let hits = found
            .hits
            .into_iter()
            .map(|hit| {
                shown_hit(index, hit, &self.request, self.resolved.as_ref(), scored, &self.value_fields)
            })
            .collect::<ApiResult<Vec<_>>>()?;
        let max_score = found.max_score.filter(|_| scored).map_or(Value::Null, score);
        let mut top = json!({"total": {"value": found.total, "relation": "eq"}, "max_score": max_score});
        top["hits"] = Value::Array(hits);
        Ok(Value::Object(Map::from_iter([("hits".to_string(), top)])))
    }
}

/// A hit as Elasticsearch shows it, with its `sort` values when the request sorts.
fn shown_hit(
    index: &str,
    hit: needle_engine::Hit,
    request: &Request,
    resolved: Option<&sort::Resolved>,
    scored: bool,
    value_fields: &docvalue_fields::Resolved,
) -> ApiResult<Value> {
    let sort_json = match resolved {
        Some(r) => {
            Some(r.json(&hit.sort[..request.shown_sort_keys.unwrap_or(hit.sort.len()).min(hit.sort.len())]))
        }
        None if !request.sort.is_empty() => Some(json!([score(hit.score)])),
        None => None,
    };
    let sort_json = sort_json.filter(|_| request.shown_sort_keys != Some(0));
    hit_json(index, hit, request, scored, sort_json, value_fields)
}

/// A hit of one index, to be merged with the others'.
struct Ranked {
    score: f32,
    /// Its index's place among the indices searched.
    index: usize,
    /// Its index's place among the indices, then its rank there.
    rank: usize,
    values: Vec<SortValue>,
    json: Value,
}

/// A hit as Elasticsearch shows it; `scored`: whether its score was computed
/// (not when sorting by fields alone), `sort`: its sort values, when sorted.
fn hit_json(
    index: &str,
    hit: needle_engine::Hit,
    request: &Request,
    scored: bool,
    sort: Option<Value>,
    value_fields: &docvalue_fields::Resolved,
) -> ApiResult<Value> {
    let hit_explanation = hit.explanation.clone();
    let mut out = Map::new();
    out.insert("_index".into(), json!(index));
    out.insert("_id".into(), json!(hit.id));
    if let Some((version, seq_no)) = hit.version {
        if request.version {
            out.insert("_version".into(), json!(version));
        }
        if request.seq_no {
            out.insert("_seq_no".into(), json!(seq_no));
            out.insert("_primary_term".into(), json!(PRIMARY_TERM));
        }
    }
    out.insert("_score".into(), if scored { score(hit.score) } else { Value::Null });
    if let Some(source) = &hit.source {
        out.insert("_source".into(), request.source.apply(parse_source(source)?));
    }
    if let Some(fields) = value_fields.json(&hit.id, hit.fields) {
        out.insert("fields".into(), fields);
    }
    if let Some(wanted) = &request.highlight {
        let fields: Map<String, Value> = hit
            .highlight
            .into_iter()
            .filter(|(field, _)| wanted.fields.iter().any(|(p, _)| pattern::matches(p, field)))
            .map(|(field, fragments)| (field, json!(fragments)))
            .collect();
        if !fields.is_empty() {
            out.insert("highlight".into(), Value::Object(fields));
        }
    }
    if let Some(values) = sort {
        out.insert("sort".into(), values);
    }
    if let Some(e) = &hit_explanation {
        out.insert("_explanation".into(), explanation_json(e));
    }
    Ok(Value::Object(out))
}

/// An explanation as Elasticsearch shows one: `value`, `description`, `details`.
pub(crate) fn explanation_json(e: &needle_engine::Explanation) -> Value {
    let details: Vec<Value> = e.details.iter().map(explanation_json).collect();
    json!({"value": score(e.value), "description": e.description, "details": details})
}

/// The query of a request: its DSL query, the `q` parameter's query string, or all documents.
pub(crate) fn query_of(query: &Option<Value>, searcher: &Searcher) -> ApiResult<Query> {
    match query {
        Some(q) => dsl::query(q, searcher.schema()).map(|q| dsl::scored_as_opensearch(q, searcher.schema())),
        None => Ok(Query::MatchAll),
    }
}

/// The query of a request to an index reached through aliases with
/// `filter`: the documents of both, scored by the request's alone (as
/// Elasticsearch adds an alias filter: a filter clause beside the query).
pub(crate) fn filtered_query(
    query: &Option<Value>,
    filter: Option<&Value>,
    searcher: &Searcher,
) -> ApiResult<Query> {
    let query = query_of(query, searcher)?;
    let Some(filter) = filter else { return Ok(query) };
    let filter = dsl::query(filter, searcher.schema())?;
    Ok(Query::Bool(BoolQuery { must: vec![query], filter: vec![filter], ..BoolQuery::default() }))
}

impl Request {
    /// Whether it asks for a page of hits only (no aggregations, no
    /// scroll, 100 hits at most, nothing explained or profiled): work of a
    /// fraction of a millisecond on an index in memory, done where the
    /// request was read (see `pools.rs`).
    fn is_light(&self) -> bool {
        self.aggs.is_none()
            && self.scroll.is_none()
            && self.from + self.size <= 100
            && !self.explain
            && !self.profile
    }

    /// A search's defaults: every document, the first 10 hits by score.
    fn new() -> Self {
        Request {
            query: None,
            from: 0,
            size: 10,
            track: Some(10_000),
            source: SourceFilter::all(),
            highlight: None,
            sort: Vec::new(),
            search_after: None,
            track_scores: false,
            aggs: None,
            docvalue_fields: Vec::new(),
            version: false,
            seq_no: false,
            total_as_int: false,
            scroll: None,
            shown_sort_keys: None,
            profile: false,
            cached_as: None,
            explain: false,
            timeout: None,
            dfs: false,
            corpus: None,
            gathered_only: false,
            after_leading: false,
        }
    }
}

/// Whether `search_type` asks for the statistics of every index searched
/// (`dfs_query_then_fetch`) or each index's own (`query_then_fetch`).
pub(crate) fn is_dfs(search_type: &str) -> ApiResult<bool> {
    match search_type {
        "query_then_fetch" => Ok(false),
        "dfs_query_then_fetch" => Ok(true),
        other => Err(ApiError::illegal_argument(format!("No search type for [{other}]"))),
    }
}

fn parse_request(call: &Call) -> ApiResult<Request> {
    let p = &call.params;
    // The URL's query string wins over the body's query, as in Elasticsearch.
    let from_url = url_query(p)?;
    let mut r = Request {
        version: p.flag("version", false)?,
        seq_no: p.flag("seq_no_primary_term", false)?,
        total_as_int: p.flag("rest_total_hits_as_int", false)?,
        scroll: p.get("scroll").map(crate::routes::scroll::keep_alive).transpose()?,
        explain: p.flag("explain", false)?,
        timeout: p.get("timeout").map(|t| timeout_value(&json!(t))).transpose()?.flatten(),
        dfs: p.get("search_type").map(is_dfs).transpose()?.unwrap_or(false),
        ..Request::new()
    };
    if let Some(body) = call.json()? {
        let Value::Object(body) = body else {
            return Err(ApiError::parsing("the search body must be an object"));
        };
        for (key, value) in body {
            apply_body_key(&mut r, &key, value)?;
        }
    }
    if from_url.is_some() {
        r.query = from_url;
    }
    if let Some(from) = p.get("from") {
        r.from = count_value("from", &json!(from))?;
    }
    if let Some(size) = p.get("size") {
        r.size = count_value("size", &json!(size))?;
    }
    if let Some(spec) = p.get("sort") {
        r.sort = sort::parse_param(spec)?;
    }
    if let Some(track) = p.get("track_total_hits") {
        r.track = track_value(&json!(track))?;
    }
    r.source = SourceFilter::from_params(p, r.source)?;
    if let Some(names) = p.get("stored_fields") {
        let names: Vec<Value> = names.split(',').map(|n| json!(n)).collect();
        r.source.fetch = stored_fields(&Value::Array(names))?;
    }
    r.cached_as = cache_key(call, &r)?;
    p.ignore(&SEARCH_PARAMS);
    p.finish(&call.path)?;
    Ok(r)
}

/// What the request cache knows `r` by (the request as sent), when its
/// answer may be kept there (see `request_cache.rs`): by default one that
/// asks for no hits, and none that mentions `now`, scrolls, explains or profiles.
fn cache_key(call: &Call, r: &Request) -> ApiResult<Option<String>> {
    let asked = call.params.flag("request_cache", r.size == 0)?;
    let keepable = asked && r.scroll.is_none() && !r.explain && !r.profile;
    Ok(keepable.then(|| request_cache::request_text(call, &call.path)).flatten())
}

/// `q`, `df`, `default_operator`, `analyzer`, `lenient`: a `query_string` query.
pub(crate) fn url_query(p: &Params) -> ApiResult<Option<Value>> {
    let df = p.get("df");
    let operator = p.get("default_operator");
    let analyzer = p.get("analyzer");
    let lenient = p.get("lenient").map(|_| p.flag("lenient", false)).transpose()?;
    p.ignore(&["analyze_wildcard"]);
    let Some(q) = p.get("q") else { return Ok(None) };
    let mut body = json!({"query": q});
    if let Some(lenient) = lenient {
        body["lenient"] = json!(lenient);
    }
    if let Some(analyzer) = analyzer {
        body["analyzer"] = json!(analyzer);
    }
    if let Some(df) = df {
        body["default_field"] = json!(df);
    }
    if let Some(op) = operator {
        body["default_operator"] = json!(op);
    }
    Ok(Some(json!({"query_string": body})))
}

fn apply_body_key(r: &mut Request, key: &str, value: Value) -> ApiResult<()> {
    match key {
        "query" => r.query = Some(value),
        "from" => r.from = count_value(key, &value)?,
        "size" => r.size = count_value(key, &value)?,
        "track_total_hits" => r.track = track_value(&value)?,
        "_source" => r.source = SourceFilter::from_json(&value)?,
        "highlight" => r.highlight = Some(highlight(&value)?),
        "sort" => r.sort = sort::parse(&value)?,
        "search_after" => match value {
            Value::Array(values) => r.search_after = Some(values),
            other => return Err(ApiError::parsing(format!("[search_after] must be an array, not {other}"))),
        },
        "track_scores" => r.track_scores = bool_value(key, &value)?,
        "aggs" | "aggregations" => r.aggs = Some(value),
        "docvalue_fields" => r.docvalue_fields = docvalue_fields::parse(&value)?,
        "version" => r.version = bool_value(key, &value)?,
        "seq_no_primary_term" => r.seq_no = bool_value(key, &value)?,
        "profile" => r.profile = bool_value(key, &value)?,
        "explain" => r.explain = bool_value(key, &value)?,
        "timeout" => r.timeout = timeout_value(&value)?,
        "stats" => {}
        "needle_corpus" => r.corpus = Some(corpus_value(&value)?),
        "needle_gathered" => r.gathered_only = bool_value(key, &value)?,
        "needle_after_leading" => r.after_leading = bool_value(key, &value)?,
        "stored_fields" => r.source.fetch = stored_fields(&value)?,
        "post_filter" | "rescore" | "collapse" | "suggest" | "script_fields" | "min_score"
        | "indices_boost" | "knn" | "pit" | "runtime_mappings" | "slice" | "terminate_after" | "fields" => {
            return Err(ApiError::illegal_argument(format!("[{key}] is not supported yet by Needle")));
        }
        other => {
            return Err(ApiError::parsing(format!("Unknown key for a {} in [{other}].", token_name(&value))));
        }
    }
    Ok(())
}

/// `stored_fields`: Needle stores no field apart from `_source`, so a list
/// (or one name) only says whether `_source` comes back: when it is named.
fn stored_fields(v: &Value) -> ApiResult<bool> {
    let names: Vec<&str> = match v {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        other => {
            return Err(ApiError::parsing(format!("[stored_fields] must be a string or a list, not {other}")))
        }
    };
    Ok(names.contains(&"_source"))
}

fn count_value(key: &str, v: &Value) -> ApiResult<usize> {
    let n = match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse::<i64>().ok(),
        _ => None,
    };
    match n {
        Some(n) if n >= 0 => Ok(n as usize),
        Some(_) => Err(ApiError::illegal_argument(format!("[{key}] parameter cannot be negative"))),
        None => Err(ApiError::parsing(format!("[{key}] must be a number, not {v}"))),
    }
}

fn bool_value(key: &str, v: &Value) -> ApiResult<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s == "true" || s == "false" => Ok(s == "true"),
        other => Err(ApiError::parsing(format!("[{key}] must be true or false, not {other}"))),
    }
}

/// `timeout`: a time value, or `-1` for none.
fn timeout_value(v: &Value) -> ApiResult<Option<Duration>> {
    match v {
        Value::String(s) if s == "-1" => Ok(None),
        Value::String(s) => crate::params::time_value("timeout", s).map(Some),
        other => Err(ApiError::parsing(format!("[timeout] must be a time value, not {other}"))),
    }
}

/// `track_total_hits`: true (exact), false (no total), or a number to count up to.
fn track_value(v: &Value) -> ApiResult<Option<u64>> {
    match v {
        Value::Bool(true) => Ok(Some(u64::MAX)),
        Value::Bool(false) => Ok(None),
        Value::String(s) if s == "true" => Ok(Some(u64::MAX)),
        Value::String(s) if s == "false" => Ok(None),
        other => Ok(Some(count_value("track_total_hits", other)? as u64)),
    }
}

/// `highlight`: `fields` (an object or a list of one-key objects), tags,
/// `fragment_size`, `number_of_fragments`; options given in a field apply
/// to that field, over the ones given for all.
fn highlight(v: &Value) -> ApiResult<Highlight> {
    let Value::Object(m) = v else { return Err(ApiError::parsing("[highlight] must be an object")) };
    let mut options = FragmentOptions { max_fragments: 5, fragment_size: 100, ..FragmentOptions::default() };
    let mut per_field: Vec<(String, Option<&Map<String, Value>>)> = Vec::new();
    for (key, value) in m {
        match (key.as_str(), value) {
            ("fields", Value::Object(fields)) => {
                per_field.extend(fields.iter().map(|(name, opts)| (name.clone(), opts.as_object())));
            }
            ("fields", Value::Array(list)) => {
                for entry in list {
                    let Some(one) = entry.as_object() else {
                        return Err(ApiError::parsing("[highlight] [fields] entries must be objects"));
                    };
                    per_field.extend(one.iter().map(|(name, opts)| (name.clone(), opts.as_object())));
                }
            }
            _ => highlight_option(&mut options, key, value)?,
        }
    }
    let mut fields = Vec::with_capacity(per_field.len());
    for (name, opts) in per_field {
        let mut own = options.clone();
        for (key, value) in opts.into_iter().flatten() {
            highlight_option(&mut own, key, value)?;
        }
        fields.push((name, own));
    }
    Ok(Highlight { fields, options })
}

impl Highlight {
    /// The fields of `schema` cut their own way: each takes the options
    /// of the first pattern that names it. Fields with a `no_match_size`
    /// are listed too, as the engine shows them unmatched: text and keyword
    /// fields, and others named in full (as OpenSearch shows them).
    fn field_fragments(&self, schema: &Schema) -> BTreeMap<String, FragmentOptions> {
        let mut out = BTreeMap::new();
        for field in &schema.fields {
            let Some((pattern, own)) = self.fields.iter().find(|(p, _)| pattern::matches(p, &field.name))
            else {
                continue;
            };
            let shown_unmatched = match field.kind {
                FieldKind::Text | FieldKind::Keyword => true,
                FieldKind::Binary => false,
                _ => *pattern == field.name,
            };
            let mut own = own.clone();
            if !shown_unmatched {
                own.no_match_size = 0;
            }
            if own != self.options || own.no_match_size > 0 {
                out.insert(field.name.clone(), own);
            }
        }
        out
    }
}

fn highlight_option(o: &mut FragmentOptions, key: &str, value: &Value) -> ApiResult<()> {
    let first_tag = |v: &Value| match v {
        Value::Array(a) => a.first().and_then(Value::as_str).map(str::to_string),
        Value::String(s) => Some(s.clone()),
        _ => None,
    };
    match key {
        "pre_tags" => {
            o.pre_tag = first_tag(value).ok_or_else(|| ApiError::parsing("[pre_tags] must be strings"))?
        }
        "post_tags" => {
            o.post_tag = first_tag(value).ok_or_else(|| ApiError::parsing("[post_tags] must be strings"))?
        }
        "fragment_size" => o.fragment_size = count_value(key, value)?.max(1),
        "no_match_size" => o.no_match_size = count_value(key, value)?,
        "number_of_fragments" => match count_value(key, value)? {
            // 0: the whole field as one fragment.
            0 => (o.max_fragments, o.fragment_size) = (1, usize::MAX / 2),
            n => o.max_fragments = n,
        },
        "type"
        | "require_field_match"
        | "order"
        | "encoder"
        | "boundary_scanner"
        | "tags_schema"
        | "fragmenter"
        | "phrase_limit"
        | "boundary_chars"
        | "boundary_max_scan"
        | "max_analyzed_offset"
        | "highlight_query"
        | "matched_fields"
        | "fragment_offset"
        | "force_source" => {}
        other => return Err(ApiError::parsing(format!("[highlight] unknown field [{other}]"))),
    }
    Ok(())
}

pub async fn count(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    pools::search(app, false, move |app| run_count(app, &index, &call)).await
}

pub async fn count_all(State(app): State<Shared>, call: Call) -> Response {
    pools::search(app, false, move |app| run_count(app, "_all", &call)).await
}

pub(crate) fn run_count(app: &Shared, expression: &str, call: &Call) -> ApiResult<Response> {
    let p = &call.params;
    let body = call.json()?;
    // With a body, the query is the body's: a query string too is refused, as Elasticsearch refuses it.
    if body.is_some() && p.get("q").is_some() {
        return Err(ApiError::illegal_argument(format!(
            "request [{}] contains unrecognized parameter: [q]",
            call.path
        )));
    }
    let mut query = url_query(p)?;
    p.ignore(&SEARCH_PARAMS);
    p.ignore(&["min_score", "terminate_after", "ignore_throttled", "timeout"]);
    p.finish(&call.path)?;
    if let Some(body) = body {
        query = query_only(body, "count")?;
    }
    // Each index's count is kept in its request cache, as a search asking for no hits is.
    let cached_as = request_cache::request_text(call, "_count");
    let reached = app.catalog.resolve_filtered(expression)?;
    let mut count = 0;
    let mut failures = Vec::new();
    for Reached { handle: h, filter } in &reached {
        let started = Instant::now();
        // An alias's filter may change under the same request.
        let cached_as = cached_as.as_ref().filter(|_| h.requests_cache_enabled());
        let cached_as = cached_as.map(|text| match filter {
            Some(f) => format!("filtered by {f} {text}"),
            None => text.clone(),
        });
        match index_count(h, &query, filter.as_ref(), cached_as.as_deref()) {
            Ok(n) => count += n,
            Err(e) if e.is_request_error() => return Err(e),
            // The index's failure alone, as a shard's in Elasticsearch.
            Err(e) => failures.push(e.shard_failure(&h.name, &h.settings().uuid, 0)),
        }
        h.counters.query.add(started);
    }
    if failures.len() == reached.len() && !failures.is_empty() {
        return Err(ApiError::all_shards_failed(failures));
    }
    Ok(respond::ok(&json!({"count": count, "_shards": search_shard_counts(reached.len(), failures)})))
}

pub async fn validate(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    pools::search(app, false, move |app| run_validate(app, &index, &call)).await
}

pub async fn validate_all(State(app): State<Shared>, call: Call) -> Response {
    pools::search(app, false, move |app| run_validate(app, "_all", &call)).await
}

/// `GET|POST /{index}/_validate/query`: whether every index named can make
/// its query of the request's (the body's `query`, or the URL's `q`), as
/// Elasticsearch answers it: `valid`, each index's failure counted as
/// invalid, not as an error; a request that cannot be read at all is
/// invalid without `_shards`. With `explain` (or `rewrite`), each index's
/// query as Needle holds it, or its error.
pub(crate) fn run_validate(app: &Shared, expression: &str, call: &Call) -> ApiResult<Response> {
    let p = &call.params;
    let explain = p.flag("explain", false)? | p.flag("rewrite", false)?;
    p.ignore(&["all_shards", "ignore_unavailable", "allow_no_indices", "expand_wildcards"]);
    let mut query = url_query(p)?;
    p.finish(&call.path)?;
    let unreadable = |e: ApiError| {
        let mut answer = json!({"valid": false});
        if explain {
            answer["error"] = json!(e.reason);
        }
        respond::ok(&answer)
    };
    if let Some(body) = call.json()? {
        match query_only(body, "validate") {
            Ok(q) => query = q,
            Err(e) => return Ok(unreadable(e)),
        }
    }
    let reached = app.catalog.resolve_filtered(expression)?;
    let mut explanations = Vec::new();
    for Reached { handle: h, filter } in &reached {
        match filtered_query(&query, filter.as_ref(), &h.index.searcher()) {
            Ok(q) => {
                explanations.push(json!({"index": h.name, "valid": true, "explanation": format!("{q:?}")}))
            }
            Err(e) if e.is_request_error() => return Ok(unreadable(e)),
            Err(e) => explanations.push(json!({"index": h.name, "valid": false, "error": e.reason})),
        }
    }
    let valid = explanations.iter().all(|e| e["valid"] == json!(true));
    let mut answer = json!({"_shards": shard_counts(reached.len(), Vec::new()), "valid": valid});
    if explain {
        answer["explanations"] = Value::Array(explanations);
    }
    Ok(respond::ok(&answer))
}

/// How many documents of `h` match `query`, from its request cache when it
/// holds the count of the request known as `cached_as` at its snapshot.
fn index_count(
    h: &Arc<Handle>,
    query: &Option<Value>,
    filter: Option<&Value>,
    cached_as: Option<&str>,
) -> ApiResult<u64> {
    let searcher = h.index.searcher();
    let generation = searcher.generation();
    let kept = cached_as.and_then(|text| h.requests.get_bytes(generation, text));
    if let Some(count) = kept.and_then(|k| <[u8; 8]>::try_from(&k[..]).ok()) {
        return Ok(u64::from_le_bytes(count));
    }
    let q = filtered_query(query, filter, &searcher)?;
    let request = SearchRequest { top_k: 0, track_total_hits: u64::MAX, ..SearchRequest::new("") };
    let count = searcher.search_query(&q, &request)?.total;
    if let Some(text) = cached_as {
        h.requests.put_bytes(generation, text.to_string(), &count.to_le_bytes());
    }
    Ok(count)
}

/// The `query` of a body that may hold nothing else.
pub(crate) fn query_only(body: Value, what: &str) -> ApiResult<Option<Value>> {
    let Value::Object(m) = body else {
        return Err(ApiError::parsing(format!("the {what} body must be an object")));
    };
    let mut query = None;
    for (key, value) in m {
        match key.as_str() {
            "query" => query = Some(value),
            other => return Err(ApiError::parsing(format!("request does not support [{other}]"))),
        }
    }
    Ok(query)
}

/// `POST /{index}/_delete_by_query`: deletes what the query matches in a
/// snapshot taken now; a document changed since is a version conflict (`by_query.rs`).
pub async fn delete_by_query(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    pools::write(app, move |app| {
        let started = Instant::now();
        let asked = read_asked(&call, unknown_key)?;
        if asked.query.is_none() {
            return Err(crate::routes::write::validation("query is missing"));
        }
        let tally = run_by_query(app, &index, &asked, Api::DeleteByQuery, |h, _, doc| {
            Ok(h.writer.remove_deferred(&doc.id, IfCurrent::SeqNo(doc.seq_no))?.1)
        })?;
        Ok(tally.answer(Api::DeleteByQuery, started))
    })
    .await
}
