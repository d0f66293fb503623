//! What wraps every request: the API key check, the headers Elasticsearch's
//! clients look for (`X-Elastic-Product`, the compatible media type they
//! asked for), and the `pretty` and `filter_path` parameters.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::error::ApiError;
use crate::server::Shared;

pub async fn around(State(app): State<Shared>, request: Request, next: Next) -> Response {
    let compatible = compatible_with(request.headers());
    let version = compatible.as_ref().ok().copied().flatten();
    let shaping = Shaping::of(request.uri().query());
    let mut response = match (authorized(&app.api_key, request.headers(), request.uri().path()), compatible) {
        (Err(e), _) | (Ok(()), Err(e)) => e.into_response(),
        (Ok(()), Ok(_)) => next.run(request).await,
    };
    if shaping.applies() && is_json(response.headers()) {
        response = shaping.apply(response).await;
    }
    let headers = response.headers_mut();
    headers.insert("x-elastic-product", HeaderValue::from_static("Elasticsearch"));
    if let (Some(version), true) = (version, is_json(headers)) {
        let media = format!("application/vnd.elasticsearch+json;compatible-with={version}");
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_str(&media).expect("a valid header"));
    }
    response
}

fn is_json(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"application/json"))
}

/// The `compatible-with` version the client's Accept or Content-Type header
/// asks for: 7, 8 and 9 are served (the answers are the same); others are refused.
fn compatible_with(headers: &HeaderMap) -> Result<Option<u8>, ApiError> {
    let mut version = None;
    for name in [header::ACCEPT, header::CONTENT_TYPE] {
        let Some(value) = headers.get(&name).and_then(|v| v.to_str().ok()) else { continue };
        let Some(at) = value.find("compatible-with=") else { continue };
        let digits: String =
            value[at + "compatible-with=".len()..].chars().take_while(char::is_ascii_digit).collect();
        match digits.parse::<u8>() {
            Ok(v @ 7..=9) => version = Some(v),
            _ => {
                return Err(ApiError::bad_request(
                    "media_type_header_exception",
                    format!("Invalid media-type value on headers [{name}]: compatible-with [{digits}] is not supported (7, 8 or 9)"),
                ))
            }
        }
    }
    Ok(version)
}

/// With an API key configured, the request must carry it
/// (`Authorization: ApiKey KEY`), compared in constant time.
fn authorized(key: &Option<String>, headers: &HeaderMap, path: &str) -> Result<(), ApiError> {
    let Some(key) = key else { return Ok(()) };
    // The search page is static: the key goes with the API calls it makes.
    if path == "/_ui" {
        return Ok(());
    }
    let given = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes());
    let token = given.and_then(|v| v.strip_prefix(b"ApiKey ")).map(|t| t.trim_ascii());
    match token {
        Some(t) if bool::from(t.ct_eq(key.as_bytes())) => Ok(()),
        Some(_) => Err(unauthorized("unable to authenticate with provided credentials and anonymous access is not allowed for this request")),
        None => Err(unauthorized(&format!("missing authentication credentials for REST request [{path}]"))),
    }
}

fn unauthorized(reason: &str) -> ApiError {
    let mut e = ApiError::new(StatusCode::UNAUTHORIZED, "security_exception", reason);
    e.extra.insert("header".into(), serde_json::json!({"WWW-Authenticate": ["ApiKey"]}));
    e
}

/// `pretty` and `filter_path`, applied to a JSON response body.
struct Shaping {
    pretty: bool,
    filter: Option<crate::filter_path::FilterPath>,
}

impl Shaping {
    fn of(query: Option<&str>) -> Shaping {
        let pairs: Vec<(String, String)> =
            query.and_then(|q| serde_urlencoded::from_str(q).ok()).unwrap_or_default();
        let value = |name: &str| pairs.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        Shaping {
            pretty: value("pretty").is_some_and(|v| v != "false"),
            filter: value("filter_path").map(crate::filter_path::FilterPath::parse),
        }
    }

    fn applies(&self) -> bool {
        self.pretty || self.filter.is_some()
    }

    async fn apply(&self, response: Response) -> Response {
        let (parts, body) = response.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
            return Response::from_parts(parts, Body::empty());
        };
        let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            return Response::from_parts(parts, Body::from(bytes));
        };
        if let Some(filter) = &self.filter {
            value = filter.apply(value);
        }
        let out = match self.pretty {
            true => serde_json::to_vec_pretty(&value),
            false => serde_json::to_vec(&value),
        }
        .expect("JSON values serialize");
        let mut response = Response::from_parts(parts, Body::from(out));
        response.headers_mut().remove(header::CONTENT_LENGTH);
        response
    }
}
