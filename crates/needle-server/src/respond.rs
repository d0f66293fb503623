//! Responses: JSON bodies and the headers every answer carries.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// A JSON response.
pub fn json(status: StatusCode, value: &Value) -> Response {
    json_bytes(status, serde_json::to_vec(value).expect("JSON values serialize"))
}

/// A JSON response already written.
pub fn json_bytes(status: StatusCode, body: Vec<u8>) -> Response {
    (status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
}

pub fn ok(value: &Value) -> Response {
    json(StatusCode::OK, value)
}

/// A plain-text response (the `_cat` APIs).
pub fn text(body: String) -> Response {
    (StatusCode::OK, [(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=UTF-8"))], body)
        .into_response()
}

/// A status with no body (HEAD answers).
pub fn status(status: StatusCode) -> Response {
    status.into_response()
}

/// A score as Elasticsearch prints it: the shortest decimal that reads back
/// as the same `f32` (`0.2876821`, not the `f64` widening `0.28768208622932434`).
pub fn score(s: f32) -> Value {
    s.to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}
