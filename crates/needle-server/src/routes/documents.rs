//! Single documents: index, create, get, exists, `_source`, delete, update, `_mget`.

use std::time::Instant;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use needle_engine::{IfCurrent, StoredDocument};
use serde_json::{json, Map, Value};

use crate::call::Call;
use crate::catalog::Handle;
use crate::error::{ApiError, ApiResult};
use crate::pools;
use crate::respond;
use crate::routes::write::{self, Update, PRIMARY_TERM, WRITE_PARAMS};
use crate::server::{blocking, Shared};
use crate::source_filter::SourceFilter;

/// Parameters of a read that change nothing here: every acknowledged write is visible at once.
const READ_PARAMS: [&str; 4] = ["realtime", "routing", "preference", "refresh"];

/// `PUT|POST /{index}/_doc/{id}`.
pub async fn index(
    State(app): State<Shared>,
    Path((index, id)): Path<(String, String)>,
    call: Call,
) -> Response {
    pools::write(app, move |app| put(app, &index, Some(&id), false, &call)).await
}

/// `POST /{index}/_doc`: a generated `_id`.
pub async fn index_new(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    pools::write(app, move |app| put(app, &index, None, false, &call)).await
}

/// `PUT|POST /{index}/_create/{id}`: only when no document has the `_id`.
pub async fn create(
    State(app): State<Shared>,
    Path((index, id)): Path<(String, String)>,
    call: Call,
) -> Response {
    pools::write(app, move |app| put(app, &index, Some(&id), true, &call)).await
}

fn put(app: &Shared, index: &str, id: Option<&str>, create: bool, call: &Call) -> ApiResult<Response> {
    let p = &call.params;
    let refresh = p.refresh()?;
    let condition = write::condition_of(p, id.unwrap_or_default(), create)?;
    p.ignore(&WRITE_PARAMS);
    if p.get("pipeline").is_some() {
        return Err(ApiError::illegal_argument("ingest pipelines are not supported by Needle"));
    }
    p.finish(&call.path)?;
    check_id(id)?;
    let source = call.document()?;
    // A generated `_id` makes a new document: a `create`.
    let creating = matches!(condition, IfCurrent::Absent) || id.is_none();
    let h = app.index_for_write(index, creating)?;
    app.check_stream_document(&h, source.as_bytes())?;
    let started = Instant::now();
    let outcome = h.writer.put(id, source, condition).map_err(|e| write::about_index(e.into(), &h));
    let outcome = h.counters.indexed(started, outcome)?;
    let (status, mut body) = write::indexed(&h.name, &outcome);
    write::note_refresh(&mut body, refresh);
    Ok(respond::json(status, &Value::Object(body)))
}

/// Elasticsearch's limit on `_id`s: at most 512 bytes.
fn check_id(id: Option<&str>) -> ApiResult<()> {
    match id {
        Some(id) if id.len() > 512 => Err(write::validation(&format!(
            "id [{}] is too long, must be no longer than 512 bytes but was: {}",
            needle_core::printable(id, 60),
            id.len()
        ))),
        Some("") => Err(write::validation("id is missing")),
        _ => Ok(()),
    }
}

/// `GET /{index}/_doc/{id}`.
pub async fn get(
    State(app): State<Shared>,
    Path((index, id)): Path<(String, String)>,
    call: Call,
) -> Response {
    blocking(move || {
        let p = &call.params;
        let filter = SourceFilter::from_params(p, SourceFilter::all())?;
        p.ignore(&READ_PARAMS);
        p.ignore(&["stored_fields", "version", "version_type"]);
        p.finish(&call.path)?;
        let h = app.catalog.get_one(&index)?;
        let found = h.index.searcher().get_document(&id)?;
        let status = if found.is_some() { StatusCode::OK } else { StatusCode::NOT_FOUND };
        Ok(respond::json(status, &Value::Object(got(&h.name, &id, found.as_ref(), &filter)?)))
    })
    .await
}

/// The answer of a get: the document with its versions and (filtered) source, or `found: false`.
fn got(
    index: &str,
    id: &str,
    doc: Option<&StoredDocument>,
    filter: &SourceFilter,
) -> ApiResult<Map<String, Value>> {
    let mut out = Map::new();
    out.insert("_index".into(), json!(index));
    out.insert("_id".into(), json!(id));
    let Some(doc) = doc else {
        out.insert("found".into(), json!(false));
        return Ok(out);
    };
    out.insert("_version".into(), json!(doc.version));
    out.insert("_seq_no".into(), json!(doc.seq_no));
    out.insert("_primary_term".into(), json!(PRIMARY_TERM));
    out.insert("found".into(), json!(true));
    if filter.fetch {
        out.insert("_source".into(), filter.apply(parse_source(&doc.source)?));
    }
    Ok(out)
}

pub fn parse_source(source: &str) -> ApiResult<Value> {
    serde_json::from_str(source).map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "exception",
            format!("a stored source is not JSON: {e}"),
        )
    })
}

/// `HEAD /{index}/_doc/{id}` and `HEAD /{index}/_source/{id}`.
pub async fn exists(State(app): State<Shared>, Path((index, id)): Path<(String, String)>) -> Response {
    blocking(move || {
        let found = app.catalog.get_one(&index).ok().map(|h| h.index.searcher().contains(&id)).transpose()?;
        Ok(respond::status(if found == Some(true) { StatusCode::OK } else { StatusCode::NOT_FOUND }))
    })
    .await
}

/// `GET /{index}/_source/{id}`: the source alone.
pub async fn source(
    State(app): State<Shared>,
    Path((index, id)): Path<(String, String)>,
    call: Call,
) -> Response {
    blocking(move || {
        let p = &call.params;
        let filter = SourceFilter::from_params(p, SourceFilter::all())?;
        p.ignore(&READ_PARAMS);
        p.finish(&call.path)?;
        let h = app.catalog.get_one(&index)?;
        match h.index.searcher().get_document(&id)? {
            Some(doc) => Ok(respond::ok(&filter.apply(parse_source(&doc.source)?))),
            None => Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "resource_not_found_exception",
                format!("Document not found [{index}]/[{id}]"),
            )),
        }
    })
    .await
}

/// `DELETE /{index}/_doc/{id}`: 200 and `deleted`, or 404 and `not_found`.
pub async fn delete(
    State(app): State<Shared>,
    Path((index, id)): Path<(String, String)>,
    call: Call,
) -> Response {
    pools::write(app, move |app| {
        let p = &call.params;
        let refresh = p.refresh()?;
        let condition = write::condition_of(p, &id, false)?;
        p.ignore(&WRITE_PARAMS);
        p.finish(&call.path)?;
        let h = app.catalog.get(&index)?;
        let started = Instant::now();
        let (status, mut body, seq_no) =
            h.counters.deleted(started, write::delete_deferred(&h, &id, condition))?;
        h.writer.durable_through(seq_no)?;
        write::note_refresh(&mut body, refresh);
        Ok(respond::json(status, &Value::Object(body)))
    })
    .await
}

/// `POST /{index}/_update/{id}`: a partial `doc` merged into the document.
pub async fn update(
    State(app): State<Shared>,
    Path((index, id)): Path<(String, String)>,
    call: Call,
) -> Response {
    pools::write(app, move |app| {
        let p = &call.params;
        let refresh = p.refresh()?;
        let retries = p.number::<u32>("retry_on_conflict")?.unwrap_or(0);
        let condition = write::condition(&id, false, p.number("if_seq_no")?, p.number("if_primary_term")?)?;
        let url_filter = SourceFilter::from_params(p, SourceFilter::default())?;
        p.ignore(&WRITE_PARAMS);
        p.ignore(&["lang"]);
        p.finish(&call.path)?;
        check_id(Some(&id))?;
        let update = Update::parse(call.json_object()?)?;
        let h = app.index_for_write(&index, false)?;
        let started = Instant::now();
        let done = h.counters.indexed(started, write::apply_update(&h, &id, &update, condition, retries))?;
        h.writer.durable_through(done.seq_no)?;
        let filter = match &update.source {
            Some(v) => SourceFilter::from_json(v)?,
            None => url_filter,
        };
        Ok(update_answer(&h, &id, &done, &filter, refresh))
    })
    .await
}

/// An update's answer: 201 when it created the document; with `get` when `_source` was asked for.
pub fn update_answer(
    h: &Handle,
    id: &str,
    done: &write::Updated,
    filter: &SourceFilter,
    refresh: bool,
) -> Response {
    let mut body = write::written(&h.name, id, done.version, done.seq_no, done.result);
    if done.result == "noop" {
        body.insert("_shards".into(), json!({"total": 0, "successful": 0, "failed": 0}));
    }
    write::note_refresh(&mut body, refresh);
    if filter.fetch {
        let source = filter.apply(Value::Object(done.source.clone()));
        let get =
            json!({"_seq_no": done.seq_no, "_primary_term": PRIMARY_TERM, "found": true, "_source": source});
        body.insert("get".into(), get);
    }
    let status = if done.result == "created" { StatusCode::CREATED } else { StatusCode::OK };
    respond::json(status, &Value::Object(body))
}

/// `GET|POST /{index}/_mget`: `docs` (each may name its index) or `ids`.
pub async fn mget(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    blocking(move || multi_get(&app, Some(&index), &call)).await
}

/// `GET|POST /_mget`: each doc names its index.
pub async fn mget_any(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || multi_get(&app, None, &call)).await
}

fn multi_get(app: &Shared, index: Option<&str>, call: &Call) -> ApiResult<Response> {
    let p = &call.params;
    let filter = SourceFilter::from_params(p, SourceFilter::all())?;
    p.ignore(&READ_PARAMS);
    p.ignore(&["stored_fields"]);
    p.finish(&call.path)?;
    if let Some(index) = index {
        app.catalog.get_one(index)?;
    }
    let body = call.json_object()?;
    let mut wanted: Vec<(Option<String>, String, SourceFilter)> = Vec::new();
    for (key, value) in &body {
        match (key.as_str(), value) {
            ("ids", Value::Array(ids)) => {
                for id in ids {
                    let id = id_text(id).ok_or_else(|| ApiError::parsing("[mget] ids must be strings"))?;
                    wanted.push((None, id, filter.clone()));
                }
            }
            ("docs", Value::Array(docs)) => {
                for doc in docs {
                    wanted.push(mget_doc(doc, &filter)?);
                }
            }
            (other, _) => {
                return Err(ApiError::parsing(format!("[mget] unknown key [{other}] or not an array")))
            }
        }
    }
    if wanted.is_empty() {
        return Err(write::validation("no documents to get"));
    }
    let mut docs = Vec::with_capacity(wanted.len());
    for (doc_index, id, filter) in wanted {
        let Some(name) = doc_index.as_deref().or(index) else {
            return Err(write::validation("index is missing for doc 0"));
        };
        let answer = match app.catalog.get_one(name) {
            Ok(h) => {
                Value::Object(got(&h.name, &id, h.index.searcher().get_document(&id)?.as_ref(), &filter)?)
            }
            Err(e) => json!({"_index": name, "_id": id, "error": e.body()["error"]}),
        };
        docs.push(answer);
    }
    Ok(respond::ok(&Value::Object(Map::from_iter([("docs".to_string(), Value::Array(docs))]))))
}

pub(crate) fn mget_doc(
    doc: &Value,
    default: &SourceFilter,
) -> ApiResult<(Option<String>, String, SourceFilter)> {
    let Value::Object(m) = doc else {
        return Err(ApiError::parsing("[mget] each of [docs] must be an object"));
    };
    let mut out = (None, None, default.clone());
    for (key, value) in m {
        match key.as_str() {
            "_index" => out.0 = value.as_str().map(str::to_string),
            "_id" => out.1 = id_text(value),
            "_source" => out.2 = SourceFilter::from_json(value)?,
            "routing" | "stored_fields" => {}
            other => return Err(ApiError::parsing(format!("[mget] unknown key [{other}] in a doc"))),
        }
    }
    let id = out.1.ok_or_else(|| write::validation("id is missing for doc 0"))?;
    Ok((out.0, id, out.2))
}

/// An `_id` given as a string or a number.
pub fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
