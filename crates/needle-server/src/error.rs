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
        // The root cause is the error itself, without what caused it.
        cause.as_object_mut().map(|c| c.remove("caused_by"));
        error.insert("root_cause".into(), json!([cause]));
        json!({"error": error, "status": self.status.as_u16()})
    }
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
