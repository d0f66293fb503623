//! `_stats`: for each index, what it holds (documents, bytes, segments,
//! caches) and what it was asked to do since the server started (writes,
//! searches, scrolls, refreshes, flushes, merges: `counters.rs`), in
//! Elasticsearch's shape (`_all`, `indices`, `primaries` = `total`: no
//! replicas). Needle's own figures are under `needle`: segments on disk and
//! in memory (the growing tail included), the application page cache and
//! the result cache.

use axum::extract::{Path, State};
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::call::Call;
use crate::catalog::Handle;
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::routes::cat::store_bytes;
use crate::server::{blocking, Shared};

/// The sections `_stats/{metric}` may name.
const METRICS: [&str; 11] = [
    "docs",
    "store",
    "indexing",
    "search",
    "refresh",
    "flush",
    "merge",
    "segments",
    "request_cache",
    "query_cache",
    "needle",
];

pub async fn stats_all(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || stats(&app, "_all", None, &call)).await
}

pub async fn stats_all_of(State(app): State<Shared>, Path(metric): Path<String>, call: Call) -> Response {
    blocking(move || stats(&app, "_all", Some(&metric), &call)).await
}

pub async fn stats_of(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    blocking(move || stats(&app, &index, None, &call)).await
}

pub async fn stats_metric(
    State(app): State<Shared>,
    Path((index, metric)): Path<(String, String)>,
    call: Call,
) -> Response {
    blocking(move || stats(&app, &index, Some(&metric), &call)).await
}

fn stats(app: &Shared, expression: &str, metric: Option<&str>, call: &Call) -> ApiResult<Response> {
    let wanted: Vec<String> = match metric {
        None => METRICS.iter().map(|m| m.to_string()).collect(),
        Some(list) if list.split(',').any(|m| m == "_all") => METRICS.iter().map(|m| m.to_string()).collect(),
        Some(list) => list.split(',').map(str::to_string).collect(),
    };
    if let Some(bad) = wanted.iter().find(|m| !METRICS.contains(&m.as_str())) {
        return Err(ApiError::illegal_argument(format!(
            "request [{}] contains unrecognized metric: [{bad}]",
            call.path
        )));
    }
    call.params.ignore(&[
        "level",
        "expand_wildcards",
        "forbid_closed_indices",
        "completion_fields",
        "fielddata_fields",
        "fields",
        "groups",
        "include_segment_file_sizes",
        "include_unloaded_segments",
    ]);
    call.params.finish(&call.path)?;
    let handles = app.catalog.resolve(expression)?;
    let mut indices = Map::new();
    let mut all = Value::Object(Map::new());
    for h in &handles {
        let block = index_stats(app, h, &wanted);
        add_numbers(&mut all, &block);
        indices.insert(
            h.name.clone(),
            json!({"uuid": h.settings().uuid, "health": "green", "status": "open", "primaries": block, "total": block}),
        );
    }
    let n = handles.len();
    Ok(respond::ok(&json!({
        "_shards": {"total": n, "successful": n, "failed": 0},
        "_all": {"primaries": all, "total": all},
        "indices": indices,
    })))
}

/// One index's sections, those in `wanted`.
fn index_stats(app: &Shared, h: &Handle, wanted: &[String]) -> Value {
    let searcher = h.index.searcher();
    // The growing in-memory tail is like Elasticsearch's indexing buffer, not a segment.
    let (on_disk, segments) = h.index.segment_counts();
    let bytes = store_bytes(h);
    let requests = h.requests.stats();
    let mut out = Map::new();
    // Sections by their names in the answer; `merges` is asked for as `merge`.
    let mut put = |name: &str, value: Value| {
        let metric = if name == "merges" { "merge" } else { name };
        if wanted.iter().any(|w| w == metric) {
            out.insert(name.to_string(), value);
        }
    };
    put("docs", json!({"count": searcher.num_docs(), "deleted": searcher.deleted_docs()}));
    put(
        "store",
        json!({"size_in_bytes": bytes, "total_data_set_size_in_bytes": bytes, "reserved_in_bytes": 0}),
    );
    put("indexing", h.counters.indexing());
    put("search", h.counters.search(app.scrolls.open_on(&h.name)));
    for (name, value) in h.counters.maintenance() {
        put(name, value);
    }
    put("segments", json!({"count": on_disk}));
    put(
        "request_cache",
        json!({"memory_size_in_bytes": requests.bytes, "evictions": requests.evictions,
               "hit_count": requests.hits, "miss_count": requests.misses}),
    );
    // Elasticsearch's query cache: the filters' matches the segments keep (`needle_codecs::filter_cache`).
    let filters = h.index.searcher().filter_cache_stats();
    put(
        "query_cache",
        json!({"memory_size_in_bytes": filters.bytes, "total_count": filters.hits + filters.misses,
               "hit_count": filters.hits, "miss_count": filters.misses, "cache_size": filters.entries,
               "cache_count": filters.entries + filters.evictions, "evictions": filters.evictions}),
    );
    put(
        "needle",
        json!({
            "segments_on_disk": on_disk,
            "segments_in_memory": segments - on_disk,
            "page_cache": h.index.page_cache_stats(),
            "result_cache": h.index.result_cache_stats(),
        }),
    );
    Value::Object(out)
}

/// Adds `from`'s numbers into `into`, key by key (the `_all` sums).
fn add_numbers(into: &mut Value, from: &Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                add_numbers(a.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (slot @ Value::Null, v) => *slot = v.clone(),
        (Value::Number(a), Value::Number(b)) => {
            *a = match (a.as_u64(), b.as_u64()) {
                (Some(x), Some(y)) => (x + y).into(),
                _ => serde_json::Number::from_f64(a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0))
                    .unwrap_or_else(|| 0.into()),
            }
        }
        _ => {}
    }
}
