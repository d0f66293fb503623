//! `_search` and `_count` over a cluster's index, or over every index an
//! expression names (`a,b`, `logs-*`, none: all). Round 1 asks every shard
//! for the BM25 statistics of the query's terms (`_needle/corpus_stats`);
//! round 2 sends every shard the search with those of its index's shards
//! (`needle_corpus`; with `search_type=dfs_query_then_fetch`, those of every
//! index searched), so each scores its documents as one index holding every
//! document would, as one node does, and returns its best `from + size`. The
//! hits are merged by score (or by the `sort` values each shard shows), ties
//! by index (in the order named), then by shard, then by their rank in the
//! shard: the same order on any node.
//! `_source` comes with round 2's hits. With aggregations, each shard also
//! answers what they gathered, as bytes, and a third round has one node
//! merge and answer them (`_needle/aggregate`), exactly as one index would.

use std::cmp::Ordering;
use std::time::Instant;

use axum::response::Response;
use bytes::Bytes;
use serde_json::{json, Map, Value};
use tokio::task::JoinSet;

use super::scroll::ClusterScroll;
use super::{fetch_any, ok_or_error, rename_index, Forward, Part};
use crate::error::{search_shard_counts, ApiError, ApiResult};
use crate::respond;
use crate::sort::{self, SortSpec};

/// Search body keys not merged across shards yet.
const NOT_YET: [&str; 5] = ["collapse", "rescore", "suggest", "pit", "scroll"];

pub async fn search(call: &Forward, parts: &[Part]) -> ApiResult<Response> {
    Ok(respond::ok(&search_answer(call, parts).await?))
}

/// The answer to a search over `parts`, as [`search`] sends it.
pub async fn search_answer(call: &Forward, parts: &[Part]) -> ApiResult<Value> {
    let started = Instant::now();
    let mut body = body_object(call)?;
    for (key, value) in url_paging(&call.url_query)? {
        body.insert(key.into(), json!(value));
    }
    if let Some(key) = NOT_YET.iter().find(|k| body.contains_key(**k)) {
        return Err(not_yet(&format!("[{key}]"), &call.index));
    }
    let scroll = call.url_query.split('&').any(|p| p.starts_with("scroll="));
    // A scroll's pages come from the copies that opened it: its primaries, never a replica instead.
    let primaries: Vec<Part>;
    let parts = match scroll {
        true => {
            primaries = parts.iter().map(|p| Part { replicas: Vec::new(), ..p.clone() }).collect();
            &primaries[..]
        }
        false => parts,
    };
    let keys = sort_keys(&body, &call.url_query)?;
    let track = tracked_hits(&body, &call.url_query);
    let doc_key = keys.iter().position(SortSpec::is_doc);
    let from = body.get("from").and_then(Value::as_u64).unwrap_or(0);
    let size = body.get("size").and_then(Value::as_u64).unwrap_or(10);
    let aggs = body.get("aggs").or_else(|| body.get("aggregations")).cloned();
    if scroll && from > 0 {
        return Err(ApiError::illegal_argument("using [from] is not allowed in a scroll context"));
    }

    if parts.is_empty() {
        // An expression that matched no index: nothing to search.
        let page = Page { from, size, keys, track };
        let mut answer = merged(parts, Vec::new(), Vec::new(), &page, started);
        answer["hits"]["total"] = json!({"value": 0, "relation": "eq"});
        return Ok(answer);
    }
    let mut failures = Vec::new();
    // The query as the search gives it: in the body, or the URL's `q`.
    let query: Map<String, Value> =
        body.get("query").map(|q| ("query".to_string(), q.clone())).into_iter().collect();
    let round1 = Bytes::from(Value::Object(query).to_string());
    let mut corpus = Vec::new();
    for (k, answer) in
        to_every_shard(call, parts, "_needle/corpus_stats", &call.query, &|_| Some(round1.clone())).await
    {
        match answer {
            Ok(stats) => corpus.push((k, stats.unwrap_or_default())),
            Err(e) => failures.push(parts[k].failure(&e)),
        }
    }
    let answering: Vec<usize> = corpus.iter().map(|(k, _)| *k).collect();
    body.insert("from".into(), json!(0));
    // A scroll's page holds each shard's next share of `size` (one at least);
    // a search's, the best `from + size` of all.
    let per_shard = match scroll {
        true => (size / answering.len().max(1) as u64).max(1),
        false => from + size,
    };
    body.insert("size".into(), json!(per_shard));
    let sort_given = body.get("sort").cloned().or_else(|| url_sort(&call.url_query).map(Value::String));
    if aggs.is_some() {
        body.insert("needle_gathered".into(), json!(true));
    }
    // A place by `_doc` names a shard and a document in it: each shard pages from its part of it.
    let doc_after = doc_key.zip(body.get("search_after").and_then(Value::as_array).cloned());
    let shard_bodies = match &doc_after {
        Some((p, values)) => Some(shard_afters(&body, *p, keys[*p].is_descending(), values, parts.len())?),
        None => None,
    };
    let dfs = call.url_query.split('&').any(|p| p == "search_type=dfs_query_then_fetch");
    let by_index = corpus_by_index(parts, &corpus, dfs);
    let with_corpus = |mut body: Map<String, Value>, corpus: &Value| {
        body.insert("needle_corpus".into(), corpus.clone());
        Bytes::from(Value::Object(body).to_string())
    };
    // One body an index (one in all under dfs), but where a `_doc` place gives each shard its own.
    let index_bodies: Vec<Bytes> = match &shard_bodies {
        Some(_) => Vec::new(),
        None => by_index.iter().map(|(_, corpus)| with_corpus(body.clone(), corpus)).collect(),
    };
    let mut answers = Vec::new();
    let round2_of = |k: usize| {
        if !answering.contains(&k) {
            return None;
        }
        let group = by_index.iter().position(|(of, _)| dfs || *of == parts[k].index)?;
        Some(match &shard_bodies {
            Some(bodies) => with_corpus(bodies[k].clone(), &by_index[group].1),
            None => index_bodies[group].clone(),
        })
    };
    for (k, answer) in to_every_shard(call, parts, "_search", &call.query, &round2_of).await {
        match answer {
            Ok(answer) => answers.push((k, answer.unwrap_or_default())),
            Err(e) => failures.push(parts[k].failure(&e)),
        }
    }
    if answers.is_empty() {
        return Err(ApiError::all_shards_failed(failures));
    }
    let aggregations = match &aggs {
        Some(aggs) => Some(aggregate(call, parts, aggs, &mut answers).await?),
        None => None,
    };
    if scroll {
        let mut open = Vec::new();
        for (k, answer) in &answers {
            let node = &parts[*k].node;
            let hits = answer["hits"]["hits"].as_array().map_or(0, Vec::len);
            match answer["_scroll_id"].as_str() {
                Some(id) if hits > 0 => open.push((*k, id.to_string())),
                Some(id) => super::scroll::free(call.api_key.as_deref(), &call.member, node, id).await,
                None => {}
            }
        }
        let page = Page { from: 0, size: u64::MAX, keys, track };
        let mut answer = merged(parts, answers, failures, &page, started);
        let id = ClusterScroll { parts: parts.to_vec(), sort: sort_given.unwrap_or_default(), open };
        answer["_scroll_id"] = json!(id.id());
        // Aggregations come with the first page only, as in Elasticsearch.
        if let Some(aggregations) = aggregations {
            answer["aggregations"] = aggregations;
        }
        return Ok(super::scroll::with_id_first(answer));
    }
    let page = Page { from, size, keys, track };
    let mut answer = merged(parts, answers, failures, &page, started);
    if let Some(aggregations) = aggregations {
        answer["aggregations"] = aggregations;
    }
    Ok(answer)
}

/// Round 2's statistics: for each index searched, the sum of its shards'
/// (`dfs`: one entry, every shard's), as `needle_corpus` lists them.
fn corpus_by_index(parts: &[Part], corpus: &[(usize, Value)], dfs: bool) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = Vec::new();
    for (k, stats) in corpus {
        let index = if dfs { "" } else { parts[*k].index.as_str() };
        match out.iter_mut().find(|(of, _)| of == index) {
            Some((_, Value::Array(list))) => list.push(stats.clone()),
            _ => out.push((index.to_string(), Value::Array(vec![stats.clone()]))),
        }
    }
    out
}

/// The third round of a search with aggregations: what each shard gathered
/// (`needle_gathered` of its answer), merged and answered by the node of the
/// first shard that answered, against its index's mapping.
async fn aggregate(
    call: &Forward,
    parts: &[Part],
    aggs: &Value,
    answers: &mut [(usize, Value)],
) -> ApiResult<Value> {
    let gathered: Vec<Value> = answers.iter_mut().map(|(_, a)| a["needle_gathered"].take()).collect();
    let part = &parts[answers[0].0];
    // Moved in: `json!` would copy what every shard gathered.
    let mut body = json!({"aggs": aggs});
    body["gathered"] = Value::Array(gathered);
    let body = Bytes::from(body.to_string());
    let path = part.path("_needle/aggregate", "");
    let json = Some("application/json");
    let answered = fetch_any(&call.member, call.api_key.as_deref(), part, "POST", &path, json, body)
        .await
        .and_then(|(status, value)| ok_or_error(status, value))?;
    Ok(answered.unwrap_or_default()["aggregations"].take())
}

pub async fn count(call: &Forward, parts: &[Part]) -> ApiResult<Response> {
    let mut total = 0;
    let mut failures = Vec::new();
    let body = call.body.clone();
    for (k, answer) in to_every_shard(call, parts, "_count", &call.query, &|_| Some(body.clone())).await {
        match answer {
            Ok(answer) => total += answer.and_then(|a| a["count"].as_u64()).unwrap_or(0),
            Err(e) => failures.push(parts[k].failure(&e)),
        }
    }
    Ok(respond::ok(&json!({"count": total, "_shards": search_shard_counts(parts.len(), failures)})))
}

/// The page asked for: where it starts, its length, and the sort's keys.
pub(super) struct Page {
    pub from: u64,
    pub size: u64,
    pub keys: Vec<SortSpec>,
    /// Up to how many hits the total counts exactly.
    pub track: u64,
}

/// The pages of the shards `parts` (each answer by its place there) merged
/// into the page `from..from + size`.
pub(super) fn merged(
    parts: &[Part],
    answers: Vec<(usize, Value)>,
    failures: Vec<Value>,
    page: &Page,
    started: Instant,
) -> Value {
    let mut hits: Vec<(f64, usize, usize, Value)> = Vec::new();
    let (mut total, mut total_int, mut at_least, mut timed_out) = (None::<u64>, false, false, false);
    let mut max_score: Option<f64> = None;
    for (k, mut answer) in answers {
        timed_out |= answer["timed_out"].as_bool().unwrap_or(false);
        let shown = &answer["hits"]["total"];
        if let Some(value) = shown.as_u64().or_else(|| shown["value"].as_u64()) {
            total = Some(total.unwrap_or(0) + value);
            total_int |= shown.is_u64();
            at_least |= shown["relation"] == "gte";
        }
        if let Some(score) = answer["hits"]["max_score"].as_f64() {
            max_score = Some(max_score.map_or(score, |m: f64| m.max(score)));
        }
        let (local, index) = (parts[k].local_name(), &parts[k].index);
        let list = answer["hits"]["hits"].take();
        let doc_key = page.keys.iter().position(SortSpec::is_doc);
        for (rank, mut hit) in list.as_array().cloned().unwrap_or_default().into_iter().enumerate() {
            rename_index(&mut hit, &local, index);
            if let Some(doc) = doc_key.and_then(|p| hit["sort"].get_mut(p)) {
                *doc = json!(cluster_doc(k, doc.as_u64().unwrap_or(0)));
            }
            hits.push((hit["_score"].as_f64().unwrap_or(f64::NEG_INFINITY), k, rank, hit));
        }
    }
    let by_fields = !sort::is_by_score(&page.keys);
    hits.sort_by(|a, b| {
        let ranked = match by_fields {
            true => page.keys.iter().enumerate().fold(Ordering::Equal, |o, (i, key)| {
                o.then_with(|| key.compare_shown(&a.3["sort"][i], &b.3["sort"][i]))
            }),
            false => b.0.total_cmp(&a.0),
        };
        ranked.then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
    });
    let shown = hits.into_iter().skip(page.from as usize).take(page.size as usize).map(|h| h.3);
    let shown: Vec<Value> = shown.collect();
    let mut out_hits = Map::new();
    if let Some(mut total) = total {
        // Each shard counted up to the bound: their sum may pass it.
        if total > page.track {
            (total, at_least) = (page.track, true);
        }
        let relation = if at_least { "gte" } else { "eq" };
        let shown = if total_int { json!(total) } else { json!({"value": total, "relation": relation}) };
        out_hits.insert("total".into(), shown);
    }
    out_hits.insert("max_score".into(), max_score.map_or(Value::Null, |s| json!(s)));
    out_hits.insert("hits".into(), Value::Array(shown));
    json!({
        "took": started.elapsed().as_millis() as u64,
        "timed_out": timed_out,
        "_shards": search_shard_counts(parts.len(), failures),
        "hits": out_hits,
    })
}

/// A hit's `_doc` sort value over a cluster: its shard (its place among
/// those searched), then its document in the shard (a shard's documents are
/// numbered below 2^32), so hits go shard by shard and a place names the
/// shard it is in.
fn cluster_doc(shard: usize, doc: u64) -> u64 {
    ((shard as u64) << 32) | doc.min(u64::from(u32::MAX) - 1)
}

/// Each shard's search body for a `search_after` of `values` whose key `p`
/// is `_doc` (a [`cluster_doc`]; `descending`: shards and documents from
/// the last): the shard it names pages after the document in it; a shard
/// ranked before it has nothing left at that place (past its every
/// document); one ranked after it pages from the first hit equal on the
/// keys before `_doc` (them alone bounding it, or from the start).
fn shard_afters(
    body: &Map<String, Value>,
    p: usize,
    descending: bool,
    values: &[Value],
    n: usize,
) -> ApiResult<Vec<Map<String, Value>>> {
    let place = values.get(p).and_then(Value::as_u64).ok_or_else(|| {
        ApiError::illegal_argument(format!(
            "search_after value for [_doc] must be a whole number, not {values:?}"
        ))
    })?;
    let (shard, doc) = ((place >> 32) as usize, place & u64::from(u32::MAX));
    let bodies = (0..n).map(|k| {
        let mut body = body.clone();
        let mut after = values.to_vec();
        let ranked = if descending { shard.cmp(&k) } else { k.cmp(&shard) };
        match ranked {
            Ordering::Equal => after[p] = json!(doc),
            Ordering::Less => after[p] = json!(if descending { 0 } else { u64::MAX }),
            Ordering::Greater => {
                after.truncate(p);
                body.insert("needle_after_leading".into(), json!(true));
            }
        }
        match after.is_empty() {
            true => body.remove("search_after"),
            false => body.insert("search_after".into(), Value::Array(after)),
        };
        body
    });
    Ok(bodies.collect())
}

/// `POST /{shard}/{rest}?{query}` with `body_of(k)` to every shard of
/// `parts` at once (but those it gives no body), each to its primary, or a
/// replica when the primary does not answer; each shard's answer or error,
/// by its place in `parts`.
pub(super) async fn to_every_shard(
    call: &Forward,
    parts: &[Part],
    rest: &str,
    query: &str,
    body_of: &(dyn Fn(usize) -> Option<Bytes> + Sync),
) -> Vec<(usize, ApiResult<Option<Value>>)> {
    let mut running = JoinSet::new();
    let mut out = Vec::new();
    for (k, part) in parts.iter().enumerate() {
        let Some(body) = body_of(k) else { continue };
        let (part, path) = (part.clone(), part.path(rest, query));
        let (member, api_key) = (call.member.clone(), call.api_key.clone());
        running.spawn(async move {
            let json = Some("application/json");
            (k, fetch_any(&member, api_key.as_deref(), &part, "POST", &path, json, body).await)
        });
    }
    while let Some(done) = running.join_next().await {
        let Ok((k, answer)) = done else { continue };
        out.push((k, answer.and_then(|(status, value)| ok_or_error(status, value))));
    }
    out.sort_by_key(|(k, _)| *k);
    out
}

/// Up to how many hits a total counts exactly: `track_total_hits` in the
/// body or the URL (a number; `true`: all), 10,000 by default.
fn tracked_hits(body: &Map<String, Value>, url_query: &str) -> u64 {
    let param = url_query.split('&').find_map(|p| p.strip_prefix("track_total_hits="));
    let given =
        body.get("track_total_hits").cloned().or_else(|| param.and_then(|p| serde_json::from_str(p).ok()));
    match given {
        Some(Value::Number(n)) => n.as_u64().unwrap_or(u64::MAX),
        Some(Value::Bool(true)) => u64::MAX,
        _ => 10_000,
    }
}

/// The keys of the body's `sort`, else of the URL's `sort` parameter.
fn sort_keys(body: &Map<String, Value>, url_query: &str) -> ApiResult<Vec<SortSpec>> {
    match body.get("sort") {
        Some(given) => sort::parse(given),
        None => sort_keys_of(&url_sort(url_query).map_or(Value::Null, Value::String)),
    }
}

/// The keys of a `sort` as given: in a body (JSON), or a URL's parameter (a
/// string); none when `null`.
pub(super) fn sort_keys_of(sort: &Value) -> ApiResult<Vec<SortSpec>> {
    match sort {
        Value::Null => Ok(Vec::new()),
        Value::String(param) => sort::parse_param(param),
        given => sort::parse(given),
    }
}

/// The URL's `sort` parameter, decoded.
fn url_sort(url_query: &str) -> Option<String> {
    let param = url_query.split('&').find_map(|p| p.strip_prefix("sort="))?;
    Some(percent_encoding::percent_decode_str(param).decode_utf8_lossy().into_owned())
}

fn body_object(call: &Forward) -> ApiResult<Map<String, Value>> {
    if call.body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice(&call.body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::parsing("the search body must be an object")),
        Err(e) => Err(ApiError::parsing(format!("the search body is not JSON: {e}"))),
    }
}

/// `from` and `size` given in the URL.
fn url_paging(query: &str) -> ApiResult<Vec<(&'static str, u64)>> {
    let mut out = Vec::new();
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = match key {
            "from" => "from",
            "size" => "size",
            _ => continue,
        };
        let n = value.parse().map_err(|_| {
            ApiError::illegal_argument(format!("Failed to parse int parameter [{key}] with value [{value}]"))
        })?;
        out.push((key, n));
    }
    Ok(out)
}

fn not_yet(what: &str, index: &str) -> ApiError {
    ApiError::illegal_argument(format!(
        "{what} not supported yet in a search of index [{index}], whose shards are on the cluster's nodes"
    ))
}
