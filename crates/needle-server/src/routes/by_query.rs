//! What `_delete_by_query`, `_update_by_query` and `_reindex` share: the
//! `conflicts` option, a version conflict as their `failures` list it, and
//! their answer, whose counts Elasticsearch names alike (each API leaves out
//! the counts it never makes: `created` for the by-query APIs, `updated` too
//! for a delete); and how the two by-query APIs read a request.

use std::time::Instant;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::call::Call;
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::routes::search::{url_query, SEARCH_PARAMS};
use crate::routes::write::WRITE_PARAMS;

/// What a `_delete_by_query` or `_update_by_query` asks.
pub struct Asked {
    /// The URL's `q` over the body's `query`, as Elasticsearch reads a search.
    pub query: Option<Value>,
    /// At most this many documents (the first in the index's order).
    pub max_docs: u64,
    /// Whether a version conflict lets the run go on (`conflicts`, the URL's over the body's).
    pub proceed: bool,
}

/// Reads a by-query request: its parameters, and its body's `query`,
/// `max_docs` and `conflicts`; any other key of the body goes to `other`
/// (an API's own, as an update's `script`), which refuses what it does not know.
pub fn read_asked(call: &Call, other: impl Fn(&str) -> ApiResult<()>) -> ApiResult<Asked> {
    let p = &call.params;
    let from_url = url_query(p)?;
    p.refresh()?;
    p.ignore(&SEARCH_PARAMS);
    p.ignore(&WRITE_PARAMS);
    p.ignore(&["requests_per_second", "scroll_size", "slices", "scroll", "pipeline"]);
    if p.get("wait_for_completion") == Some("false") {
        return Err(ApiError::illegal_argument("[wait_for_completion=false] is not supported yet by Needle"));
    }
    let url_max_docs = p.number::<i64>("max_docs")?;
    let url_conflicts = p.get("conflicts");
    p.finish(&call.path)?;
    let mut asked = Asked { query: None, max_docs: u64::MAX, proceed: false };
    let mut body_max_docs = None;
    if let Some(body) = call.json()? {
        let Value::Object(body) = body else {
            return Err(ApiError::parsing("the request body must be an object"));
        };
        for (key, value) in body {
            match key.as_str() {
                "query" => asked.query = Some(value),
                "max_docs" => {
                    body_max_docs =
                        Some(value.as_i64().ok_or_else(|| ApiError::parsing("[max_docs] must be a number"))?)
                }
                "conflicts" => asked.proceed = proceeds(value.as_str().unwrap_or_default())?,
                other_key => other(other_key)?,
            }
        }
    }
    if let Some(c) = url_conflicts {
        asked.proceed = proceeds(c)?;
    }
    if from_url.is_some() {
        asked.query = from_url;
    }
    if let (Some(body), Some(url)) = (body_max_docs, url_max_docs) {
        if body != url {
            let reason = format!("[max_docs] set to two different values [{body}] and [{url}]");
            return Err(ApiError::illegal_argument(reason));
        }
    }
    if let Some(n) = body_max_docs.or(url_max_docs) {
        asked.max_docs = checked_max_docs(n)?;
    }
    Ok(asked)
}

/// A body's key no by-query API knows.
pub fn unknown_key(key: &str) -> ApiResult<()> {
    Err(ApiError::parsing(format!("request does not support [{key}]")))
}

/// A `max_docs` as Elasticsearch takes it: not negative, and at least one
/// (a request runs in one slice, and each slice takes one document at least).
pub fn checked_max_docs(n: i64) -> ApiResult<u64> {
    match n {
        n if n < 0 => {
            Err(ApiError::illegal_argument(format!("[max_docs] parameter cannot be negative, found [{n}]")))
        }
        0 => Err(ApiError::illegal_argument("[max_docs] should be >= [slices]")),
        n => Ok(n as u64),
    }
}

/// Documents an Elasticsearch run reads at a time (`scroll_size`, a reindex's `source.size`):
/// what its answer's `batches` counts.
pub const BATCH: u64 = 1000;

/// Which of the three APIs answers.
#[derive(Clone, Copy, PartialEq)]
pub enum Api {
    DeleteByQuery,
    UpdateByQuery,
    Reindex,
}

/// What a run counted.
#[derive(Default)]
pub struct Tally {
    /// Documents the query matched, at most `max_docs`.
    pub total: u64,
    pub updated: u64,
    pub created: u64,
    pub deleted: u64,
    pub version_conflicts: u64,
    /// Batches of documents read (see [`BATCH`]).
    pub batches: u64,
    /// What ended the run (see [`failure`]).
    pub failures: Vec<Value>,
}

impl Tally {
    /// The answer: 200, or the status of the failures that ended the run.
    pub fn answer(self, api: Api, started: Instant) -> Response {
        let mut a = Map::new();
        a.insert("took".into(), json!(started.elapsed().as_millis() as u64));
        a.insert("timed_out".into(), json!(false));
        a.insert("total".into(), json!(self.total));
        if api != Api::DeleteByQuery {
            a.insert("updated".into(), json!(self.updated));
        }
        if api == Api::Reindex {
            a.insert("created".into(), json!(self.created));
        }
        a.insert("deleted".into(), json!(self.deleted));
        a.insert("batches".into(), json!(self.batches));
        a.insert("version_conflicts".into(), json!(self.version_conflicts));
        a.insert("noops".into(), json!(0));
        a.insert("retries".into(), json!({"bulk": 0, "search": 0}));
        a.insert("throttled_millis".into(), json!(0));
        a.insert("requests_per_second".into(), json!(-1.0));
        a.insert("throttled_until_millis".into(), json!(0));
        let status = self.failures.first().and_then(|f| f["status"].as_u64()).map_or(StatusCode::OK, |s| {
            StatusCode::from_u16(s as u16).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
        });
        a.insert("failures".into(), Value::Array(self.failures));
        respond::json(status, &Value::Object(a))
    }
}

/// The `conflicts` option: whether a version conflict lets the run go on.
pub fn proceeds(value: &str) -> ApiResult<bool> {
    match value {
        "proceed" => Ok(true),
        "abort" => Ok(false),
        other => Err(ApiError::illegal_argument(format!(
            "conflicts may only be \"proceed\" or \"abort\" but was [{other}]"
        ))),
    }
}

/// A version conflict as Elasticsearch lists it in `failures`.
pub fn conflict(index: &str, id: &str, reason: &str) -> Value {
    failure(index, id, &ApiError::new(StatusCode::CONFLICT, "version_conflict_engine_exception", reason))
}

/// A document's failed write as Elasticsearch lists it in `failures`.
pub fn failure(index: &str, id: &str, e: &ApiError) -> Value {
    json!({
        "index": index,
        "id": id,
        "cause": {"type": e.kind, "reason": e.reason, "index": index},
        "status": e.status.as_u16(),
    })
}
