//! One request as a handler sees it: its path, its query parameters and its
//! body, read whole up to the server's limit.

use axum::body::{Body, Bytes};
use axum::extract::FromRequest;
use axum::http::{Request, StatusCode};
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::params::Params;
use crate::server::Shared;

/// Bodies above this are refused with 413, unless configured otherwise
/// (Elasticsearch's `http.max_content_length`).
pub const MAX_BODY: usize = 100 << 20;

pub struct Call {
    pub path: String,
    pub params: Params,
    pub body: Bytes,
}

impl FromRequest<Shared> for Call {
    type Rejection = ApiError;

    async fn from_request(request: Request<Body>, app: &Shared) -> Result<Self, Self::Rejection> {
        let path = request.uri().path().to_string();
        let params = Params::parse(request.uri().query())?;
        let limit = app.max_body;
        let body =
            axum::body::to_bytes(request.into_body(), limit).await.map_err(|e| too_large(&e, limit))?;
        Ok(Call { path, params, body })
    }
}

pub(crate) fn too_large(e: &axum::Error, limit: usize) -> ApiError {
    // to_bytes fails on the limit or on a broken connection; either way the body is not whole.
    let reason = match std::error::Error::source(e).map(|s| s.to_string()) {
        Some(s) if s.contains("length limit") => {
            format!("request body is larger than the limit of [{limit}] bytes")
        }
        _ => format!("request body is larger than the limit of [{limit}] bytes or was cut off: {e}"),
    };
    ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "content_too_long_exception", reason)
}

impl Call {
    /// The body as JSON (`None` when empty); malformed JSON is a 400 naming where.
    pub fn json(&self) -> ApiResult<Option<Value>> {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        parse_json(&self.body).map(Some)
    }

    /// The body as a JSON object; an empty body is an error.
    pub fn json_object(&self) -> ApiResult<serde_json::Map<String, Value>> {
        match self.json()? {
            Some(Value::Object(m)) => Ok(m),
            Some(other) => Err(ApiError::parsing(format!(
                "request body must be a JSON object, not {}",
                needle_core::printable(&other.to_string(), 60)
            ))),
            None => Err(body_required()),
        }
    }

    /// The body as a document's JSON text, checked (see [`check_document`]);
    /// an empty body is an error.
    pub fn document(&self) -> ApiResult<&str> {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            return Err(body_required());
        }
        check_document(&self.body)?;
        self.text()
    }

    /// The body as UTF-8 text.
    pub fn text(&self) -> ApiResult<&str> {
        std::str::from_utf8(&self.body).map_err(|e| {
            ApiError::bad_request("not_x_content_exception", format!("request body is not UTF-8: {e}"))
        })
    }
}

/// Parses JSON, reporting an error the way Elasticsearch does: `[line:column] reason`.
pub fn parse_json(bytes: &[u8]) -> ApiResult<Value> {
    serde_json::from_slice(bytes).map_err(json_error)
}

/// Checks that a document's `bytes` are one JSON object without building it
/// (the engine parses the text itself). A failure is Elasticsearch's
/// document parser's: `document_parsing_exception`, `failed to parse` with
/// the JSON error as its `caused_by`, or `Malformed content, must start
/// with an object`.
pub fn check_document(bytes: &[u8]) -> ApiResult<()> {
    serde_json::from_slice::<serde::de::IgnoredAny>(bytes).map_err(|e| {
        let reason = format!("[{}:{}] failed to parse: {e}", e.line(), e.column());
        let mut error = ApiError::bad_request(DOCUMENT_ERROR, reason);
        error.extra.insert("caused_by".into(), json_error(e).item_body());
        error
    })?;
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => Ok(()),
        _ => Err(ApiError::bad_request(DOCUMENT_ERROR, "Malformed content, must start with an object")),
    }
}

/// Elasticsearch's type for a document that cannot be indexed (8.8 on;
/// OpenSearch keeps the older `mapper_parsing_exception`).
const DOCUMENT_ERROR: &str = "document_parsing_exception";

fn body_required() -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "action_request_validation_exception",
        "Validation Failed: 1: request body is required;",
    )
}

fn json_error(e: serde_json::Error) -> ApiError {
    ApiError::bad_request("x_content_parse_exception", format!("[{}:{}] {e}", e.line(), e.column()))
}

/// The JSON token Elasticsearch's parser names for a value (`START_OBJECT`, `VALUE_STRING`...), for messages.
pub fn token_name(v: &Value) -> &'static str {
    match v {
        Value::Object(_) => "START_OBJECT",
        Value::Array(_) => "START_ARRAY",
        Value::String(_) => "VALUE_STRING",
        Value::Number(_) => "VALUE_NUMBER",
        Value::Bool(_) => "VALUE_BOOLEAN",
        Value::Null => "VALUE_NULL",
    }
}
