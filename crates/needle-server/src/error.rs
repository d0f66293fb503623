//! Errors as Elasticsearch shapes them:
//! `{"error": {"root_cause": [{"type", "reason", ...}], "type", "reason", ...}, "status": N}`,
//! with the status code and the exception type its clients match on.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use needle_core::Error;
use serde_json::{json, Map, Value};

use crate::respond;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    /// Elasticsearch's exception type (`index_not_found_exception`, ...).
    pub kind: &'static str,
    pub reason: String,
    /// More fields of the error object (`index`, `index_uuid`, `resource.id`...).
    pub extra: Map<String, Value>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, kind: &'static str, reason: impl Into<String>) -> Self {
        ApiError { status, kind, reason: reason.into(), extra: Map::new() }
    }

    pub fn bad_request(kind: &'static str, reason: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, kind, reason)
    }

    /// A request body or parameter this server does not understand.
    pub fn parsing(reason: impl Into<String>) -> Self {
        ApiError::bad_request("parsing_exception", reason)
    }

    pub fn illegal_argument(reason: impl Into<String>) -> Self {
        ApiError::bad_request("illegal_argument_exception", reason)
    }

    pub fn index_not_found(index: &str) -> Self {
        let mut e = ApiError::new(
            StatusCode::NOT_FOUND,
            "index_not_found_exception",
            format!("no such index [{index}]"),
        );
        e.extra.insert("index".into(), json!(index));
        e.extra.insert("resource.type".into(), json!("index_or_alias"));
        e.extra.insert("resource.id".into(), json!(index));
        e
    }

    /// The error of a write in a bulk request's item (no `root_cause`).
    pub fn item_body(&self) -> Value {
        let mut e = self.extra.clone();
        e.insert("type".into(), json!(self.kind));
        e.insert("reason".into(), json!(self.reason));
        Value::Object(e)
    }

    pub fn body(&self) -> Value {
        let mut cause = self.item_body();
        let mut error = cause.as_object().cloned().unwrap_or_default();
        // The root cause is the error itself, without what caused it (unless given: see `all_shards_failed`).
        cause.as_object_mut().map(|c| c.remove("caused_by"));
        error.entry("root_cause").or_insert_with(|| json!([cause]));
        json!({"error": error, "status": self.status.as_u16()})
    }

    /// Whether the error is in what a request says, found before any index
    /// reads it (Elasticsearch's coordinating node answers these itself);
    /// any other error of a search is an index's (a shard's) failure.
    pub fn is_request_error(&self) -> bool {
        matches!(
            self.kind,
            "parsing_exception" | "x_content_parse_exception" | "action_request_validation_exception"
        )
    }

    /// This error as shard `shard` of `index` (whose UUID is `uuid`) failed
    /// with it, as a search's `_shards.failures` lists it (with the status,
    /// which `all_shards_failed` reads); an error made before the index was
    /// known (`index_uuid` `_na_`) names the index's UUID, as Elasticsearch's do.
    pub fn shard_failure(&self, index: &str, uuid: &str, shard: usize) -> Value {
        let mut reason = self.item_body();
        reason["index"] = json!(index);
        if reason.get("index_uuid").is_some_and(|u| u == "_na_") {
            reason["index_uuid"] = json!(uuid);
        }
        json!({"shard": shard, "index": index, "status": self.status.as_u16(), "reason": reason})
    }

    /// The error of a search of one index, as Elasticsearch answers it:
    /// the request's own as it is, any other as that index's (its one
    /// shard's) failure, all of the search's shards having failed.
    pub fn failing_index(self, index: &str, uuid: &str) -> ApiError {
        match self.is_request_error() {
            true => self,
            false => ApiError::all_shards_failed(vec![self.shard_failure(index, uuid, 0)]),
        }
    }

    /// Every shard of a search failed (`failures`, from `shard_failure`): the
    /// error Elasticsearch answers, under the status they share when all were
    /// refused as bad requests (else unavailable), their distinct reasons as
    /// its root causes, the first as its cause.
    pub fn all_shards_failed(failures: Vec<Value>) -> ApiError {
        let statuses: Vec<u64> = failures.iter().filter_map(|f| f["status"].as_u64()).collect();
        let status = match statuses.first() {
            Some(&s) if (400..500).contains(&s) && statuses.iter().all(|&t| t == s) => s as u16,
            _ => 503,
        };
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
        let mut roots: Vec<Value> = Vec::new();
        for failure in &failures {
            let mut root = failure["reason"].clone();
            root.as_object_mut().map(|r| r.remove("caused_by"));
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
        let mut e = ApiError::new(status, "search_phase_execution_exception", "all shards failed");
        e.extra.insert("phase".into(), json!("query"));
        e.extra.insert("grouped".into(), json!(true));
        if let Some(first) = failures.first() {
            e.extra.insert("caused_by".into(), first["reason"].clone());
        }
        e.extra.insert("failed_shards".into(), Value::Array(failures));
        e.extra.insert("root_cause".into(), Value::Array(roots));
        e
    }
}

/// `_shards` of a request to `n` shards, those that failed (`failures`,
/// from [`ApiError::shard_failure`]) listed.
pub fn shard_counts(n: usize, failures: Vec<Value>) -> Value {
    let mut shards = json!({"total": n, "successful": n - failures.len(), "failed": failures.len()});
    if !failures.is_empty() {
        shards["failures"] = Value::Array(failures);
    }
    shards
}

/// [`shard_counts`] of a search (which also counts the shards it skipped: none here).
pub fn search_shard_counts(n: usize, failures: Vec<Value>) -> Value {
    let mut shards = shard_counts(n, failures);
    shards["skipped"] = json!(0);
    shards
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.kind, self.status.as_u16(), self.reason)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        respond::json(self.status, &self.body())
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        let reason = e.to_string();
        match e {
            Error::InvalidInput { .. } => ApiError::bad_request("document_parsing_exception", reason),
            Error::Query { reason } => {
                ApiError::bad_request("query_shard_exception", format!("Failed to parse query: {reason}"))
            }
            Error::Conflict { .. } => {
                ApiError::new(StatusCode::CONFLICT, "version_conflict_engine_exception", reason)
            }
            Error::NotFound { .. } => {
                ApiError::new(StatusCode::NOT_FOUND, "resource_not_found_exception", reason)
            }
            Error::Resources { .. } => {
                ApiError::new(StatusCode::TOO_MANY_REQUESTS, "es_rejected_execution_exception", reason)
            }
            Error::Unavailable { .. } => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable_shards_exception", reason)
            }
            Error::Poisoned { .. } => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "index_closed_exception", reason)
            }
            Error::Locked { .. } => {
                ApiError::new(StatusCode::CONFLICT, "lock_obtain_failed_exception", reason)
            }
            Error::Corrupt { .. } | Error::Format { .. } => {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "corrupt_index_exception", reason)
            }
            _ => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "exception", reason),
        }
    }
}
