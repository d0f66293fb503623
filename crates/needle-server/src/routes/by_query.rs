//! What `_delete_by_query`, `_update_by_query` and `_reindex` share: the
//! `conflicts` option, a version conflict as their `failures` list it, and
//! their answer, whose counts Elasticsearch names alike (each API leaves out
//! the counts it never makes: `created` for the by-query APIs, `updated` too
//! for a delete).

use std::time::Instant;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::respond;

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
