//! Index administration: create, delete, get, mappings, settings, refresh,
//! flush and force-merge.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use needle_engine::index_analyzers::{self, IndexAnalysis};
use needle_engine::Schema;
use serde_json::{json, Map, Value};

use crate::call::Call;
use crate::catalog::{Catalog, Handle};
use crate::counters::IndexCounters;
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::server::{blocking, App, Shared};

/// Parameters of index administration that change nothing on one node.
pub(crate) const ADMIN_PARAMS: [&str; 6] = [
    "timeout",
    "master_timeout",
    "wait_for_active_shards",
    "ignore_unavailable",
    "allow_no_indices",
    "expand_wildcards",
];

/// `PUT /{index}` with `settings` and `mappings`.
pub async fn create(State(app): State<Shared>, Path(name): Path<String>, call: Call) -> Response {
    blocking(move || {
        call.params.ignore(&ADMIN_PARAMS);
        call.params.finish(&call.path)?;
        let body = call.json()?.unwrap_or_else(|| json!({}));
        if let Some((template, _)) = app.catalog.templates().data_stream_for(&name) {
            return Err(ApiError::illegal_argument(format!(
                "cannot create index with name [{name}], because it matches with template [{template}] that creates data streams only, use create data stream api instead"
            )));
        }
        let body = app.catalog.templates().applied(&name, &body)?;
        // A shard is served once its writes are logged: none escapes the log.
        let made = |h: &Handle| app.ingest.as_ref().map_or(Ok(()), |ingest| ingest.made(h));
        create_with(&app.catalog, &name, &body, None, Some(&made))?;
        Ok(respond::ok(&json!({"acknowledged": true, "shards_acknowledged": true, "index": name})))
    })
    .await
}

/// Creates index `name` as the body of `PUT /{name}` asks (settings, mappings, aliases).
pub fn create_with(
    catalog: &Catalog,
    name: &str,
    body: &Value,
    seed: Option<crate::catalog::Seed<'_>>,
    fill: Option<crate::catalog::Fill<'_>>,
) -> ApiResult<Arc<Handle>> {
    let Value::Object(body) = body else {
        return Err(ApiError::parsing("the body of an index creation must be an object"));
    };
    let mut settings = json!({});
    let mut mappings = None;
    let mut aliases = Default::default();
    for (key, value) in body {
        match key.as_str() {
            "settings" => settings = value.clone(),
            "mappings" => mappings = Some(value),
            "aliases" => aliases = crate::routes::aliases::at_creation(value)?,
            other => return Err(ApiError::parsing(format!("unknown key [{other}] for create index"))),
        }
    }
    let analysis = analyzers_of(&settings)?;
    let mapping = match mappings {
        Some(m) => Some(parse_mapping(m, &analysis)?),
        // The analyzers live in the schema: an index defining some has one.
        None if !analysis.is_empty() => Some(parse_mapping(&json!({}), &analysis)?),
        None => None,
    };
    catalog.create_filled(name, mapping, &settings, aliases, seed, fill)
}

/// The analyzers an index's `settings` define; what Needle cannot make is an `illegal_argument_exception`.
pub fn analyzers_of(settings: &Value) -> ApiResult<IndexAnalysis> {
    index_analyzers::read(settings).map_err(|e| ApiError::illegal_argument(e.to_string()))
}

/// A `mappings` object as a schema whose text fields may name `analysis`'s
/// analyzers; what Needle cannot map is a `mapper_parsing_exception`.
pub fn parse_mapping(value: &Value, analysis: &IndexAnalysis) -> ApiResult<Schema> {
    // Wrapped, so that a `settings` key in `value` is refused as any unknown key of a mapping.
    let body = json!({"mappings": value});
    Schema::from_mapping_with(&body.to_string(), Some(analysis)).map_err(|e| {
        ApiError::bad_request("mapper_parsing_exception", format!("Failed to parse mapping: {}", e))
    })
}

pub async fn delete(State(app): State<Shared>, Path(expression): Path<String>, call: Call) -> Response {
    blocking(move || {
        call.params.ignore(&ADMIN_PARAMS);
        call.params.finish(&call.path)?;
        // A data stream is deleted as a stream (`DELETE /_data_stream/{name}`), not by this.
        let streams = app.catalog.data_streams();
        if let Some(stream) = expression.split(',').find(|part| streams.get(part).is_some()) {
            return Err(ApiError::index_not_found(stream));
        }
        for h in app.catalog.resolve(&expression)? {
            app.catalog.delete(&h.name)?;
            if let Some(ingest) = &app.ingest {
                ingest.deleted(&h.name);
            }
        }
        Ok(respond::ok(&json!({"acknowledged": true})))
    })
    .await
}

/// `GET /{index}`: aliases, mappings and settings of each index named.
pub async fn get(State(app): State<Shared>, Path(expression): Path<String>, call: Call) -> Response {
    blocking(move || {
        call.params.ignore(&ADMIN_PARAMS);
        call.params.ignore(&["flat_settings", "include_defaults", "local", "features"]);
        call.params.finish(&call.path)?;
        let mut out = Map::new();
        for h in app.catalog.resolve(&expression)? {
            let settings = h.settings();
            let aliases: Map<String, Value> = settings.aliases.iter().map(|(a, o)| (a.clone(), o.shown())).collect();
            let mut about = json!({"aliases": aliases, "mappings": mapping_of(&app, &h), "settings": settings.to_json(&h.name, &h.index.schema())});
            if let Some((stream, _)) = app.catalog.data_streams().backed_by(&h.name) {
                about["data_stream"] = json!(stream);
            }
            out.insert(h.name.clone(), about);
        }
        Ok(respond::ok(&Value::Object(out)))
    })
    .await
}

pub async fn exists(State(app): State<Shared>, Path(expression): Path<String>) -> Response {
    let found = app.catalog.resolve(&expression).is_ok_and(|v| !v.is_empty());
    respond::status(if found { StatusCode::OK } else { StatusCode::NOT_FOUND })
}

/// Index `h`'s mapping; a data stream's backing index tells its timestamp
/// field as Elasticsearch does (`_data_stream_timestamp`, the field named
/// unless it is `@timestamp`).
fn mapping_of(app: &App, h: &Handle) -> Value {
    let mut mapping = h.index.schema().to_mapping();
    if let Some((_, stream)) = app.catalog.data_streams().backed_by(&h.name) {
        let mut meta = json!({"enabled": true});
        if stream.timestamp_field != "@timestamp" {
            meta["timestamp_field"] = json!({"name": stream.timestamp_field});
        }
        mapping["_data_stream_timestamp"] = meta;
    }
    mapping
}

pub async fn mapping(State(app): State<Shared>, Path(expression): Path<String>, call: Call) -> Response {
    blocking(move || mappings(&app, &expression, &call)).await
}

pub async fn mapping_all(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || mappings(&app, "_all", &call)).await
}

fn mappings(app: &Shared, expression: &str, call: &Call) -> ApiResult<Response> {
    call.params.ignore(&ADMIN_PARAMS);
    call.params.ignore(&["local"]);
    call.params.finish(&call.path)?;
    let out: Map<String, Value> = app
        .catalog
        .resolve(expression)?
        .iter()
        .map(|h| (h.name.clone(), json!({"mappings": mapping_of(app, h)})))
        .collect();
    Ok(respond::ok(&Value::Object(out)))
}

/// `PUT /{index}/_mapping`: adds fields, and changes a field's search
/// analyzers or `ignore_above`; any other change of a field is refused.
pub async fn put_mapping(State(app): State<Shared>, Path(expression): Path<String>, call: Call) -> Response {
    blocking(move || {
        call.params.ignore(&ADMIN_PARAMS);
        call.params.ignore(&["write_index_only"]);
        call.params.finish(&call.path)?;
        let body = Value::Object(call.json_object()?);
        // Read for every index (each with its own analyzers) before any changes.
        let mut read = Vec::new();
        for h in app.catalog.resolve(&expression)? {
            let mapping = parse_mapping(&body, &h.index.schema().analysis).map_err(|e| {
                // An analyzer the index lacks, named in an update: Elasticsearch's error type then.
                match e.reason.split_once("Failed to parse mapping: ") {
                    Some((_, reason)) if reason.contains("has not been configured in mappings") => {
                        ApiError::illegal_argument(reason.to_string())
                    }
                    _ => e,
                }
            })?;
            read.push((h, mapping));
        }
        let refused = |e: needle_core::Error| match e {
            needle_core::Error::InvalidInput { .. } => ApiError::illegal_argument(e.to_string()),
            other => other.into(),
        };
        // Every index's fields checked before any changes, so a refusal changes nothing.
        for (h, mapping) in &read {
            let schema = h.index.schema();
            for def in &mapping.fields {
                schema.check_update(def).map_err(refused)?;
            }
        }
        for (h, mapping) in read {
            h.writer.add_mapping(&mapping).map_err(refused)?;
        }
        Ok(respond::ok(&json!({"acknowledged": true})))
    })
    .await
}

pub async fn settings(State(app): State<Shared>, Path(expression): Path<String>, call: Call) -> Response {
    blocking(move || {
        call.params.ignore(&ADMIN_PARAMS);
        call.params.ignore(&["flat_settings", "include_defaults", "local"]);
        call.params.finish(&call.path)?;
        let out: Map<String, Value> = app
            .catalog
            .resolve(&expression)?
            .iter()
            .map(|h| (h.name.clone(), json!({"settings": h.settings().to_json(&h.name, &h.index.schema())})))
            .collect();
        Ok(respond::ok(&Value::Object(out)))
    })
    .await
}

/// `PUT /{index}/_settings`, `PUT /_settings`: dynamic settings changed on every index named.
pub async fn put_settings(State(app): State<Shared>, Path(expression): Path<String>, call: Call) -> Response {
    blocking(move || update_settings(&app, &expression, &call)).await
}

pub async fn put_settings_all(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || update_settings(&app, "_all", &call)).await
}

fn update_settings(app: &Shared, expression: &str, call: &Call) -> ApiResult<Response> {
    call.params.ignore(&ADMIN_PARAMS);
    call.params.ignore(&["preserve_existing", "flat_settings", "reopen"]);
    call.params.finish(&call.path)?;
    let body = call.json()?.ok_or_else(|| {
        ApiError::bad_request(
            "action_request_validation_exception",
            "Validation Failed: 1: no settings to update;",
        )
    })?;
    app.catalog.update_settings(expression, &body)?;
    Ok(respond::ok(&json!({"acknowledged": true})))
}

/// `_refresh`: every acknowledged write is searchable already; answers as Elasticsearch does.
pub async fn refresh(State(app): State<Shared>, Path(expression): Path<String>, call: Call) -> Response {
    blocking(move || each_index(&app, &expression, &call, refresh_one)).await
}

pub async fn refresh_all(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || each_index(&app, "_all", &call, refresh_one)).await
}

/// `_cache/clear`: empties the request cache (`request=true`, or no kind
/// named); Needle keeps no query or field data cache to clear.
pub async fn clear_cache(State(app): State<Shared>, Path(expression): Path<String>, call: Call) -> Response {
    call.params.ignore(&CACHE_KINDS);
    blocking(move || each_index(&app, &expression, &call, clear_one)).await
}

pub async fn clear_cache_all(State(app): State<Shared>, call: Call) -> Response {
    call.params.ignore(&CACHE_KINDS);
    blocking(move || each_index(&app, "_all", &call, clear_one)).await
}

/// The caches `_cache/clear` may name.
const CACHE_KINDS: [&str; 4] = ["request", "query", "fielddata", "fields"];

fn clear_one(h: &Handle) -> ApiResult<()> {
    h.requests.clear();
    Ok(())
}

fn refresh_one(h: &Handle) -> ApiResult<()> {
    IndexCounters::bump(&h.counters.refresh);
    Ok(())
}

fn flush_one(h: &Handle) -> ApiResult<()> {
    h.writer.commit()?;
    IndexCounters::bump(&h.counters.flush);
    Ok(())
}

/// `_flush`: commits, so recovery has no log to replay.
pub async fn flush(State(app): State<Shared>, Path(expression): Path<String>, call: Call) -> Response {
    blocking(move || each_index(&app, &expression, &call, flush_one)).await
}

pub async fn flush_all(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || each_index(&app, "_all", &call, flush_one)).await
}

/// `_forcemerge?max_num_segments=N`: merges down to N segments (1 by default).
pub async fn forcemerge(State(app): State<Shared>, Path(expression): Path<String>, call: Call) -> Response {
    blocking(move || {
        let max = call.params.number::<usize>("max_num_segments")?.unwrap_or(1).max(1);
        call.params.ignore(&["only_expunge_deletes", "flush", "wait_for_completion"]);
        each_index(&app, &expression, &call, |h| {
            let started = std::time::Instant::now();
            h.writer.merge(max)?;
            h.counters.merge.add(started);
            Ok(())
        })
    })
    .await
}

/// Runs `work` on each index `expression` names; answers with the shard count.
fn each_index(
    app: &Shared,
    expression: &str,
    call: &Call,
    work: impl Fn(&Handle) -> ApiResult<()>,
) -> ApiResult<Response> {
    call.params.ignore(&ADMIN_PARAMS);
    call.params.ignore(&["force", "wait_if_ongoing"]);
    call.params.finish(&call.path)?;
    let handles = app.catalog.resolve(expression)?;
    for h in &handles {
        work(h)?;
    }
    let n = handles.len();
    Ok(respond::ok(&json!({"_shards": {"total": n, "successful": n, "failed": 0}})))
}
