//! Scrolls over a cluster's index (or several). Each shard's node keeps its
//! own scroll, over its own snapshot, as a one-node scroll does; the
//! coordinator's `_scroll_id` names them all (`needle-cluster.` then, base64,
//! the shards searched with their indexes and nodes, the sort and each
//! unfinished shard's scroll id), so any node of the cluster continues it. A page holds each
//! unfinished shard's next `size / shards` hits (one at least), merged in
//! the sort's order (by score when none was asked for); a shard with no more
//! hits is dropped from the id and its scroll freed.

use std::time::Instant;

use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use bytes::Bytes;
use needle_cluster::Member;
use percent_encoding::percent_decode_str;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::search::{merged, sort_keys_of, Page};
use super::{fetch, ok_or_error, Part};
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::server::Shared;

/// How a cluster's scroll id begins (a node's own ids hold no dot).
const PREFIX: &str = "needle-cluster.";

/// What a cluster's scroll id holds.
#[derive(Debug, Serialize, Deserialize)]
pub struct ClusterScroll {
    /// The shards searched (what `_shards` counts).
    pub parts: Vec<Part>,
    /// The search's `sort`, as given (`null`: by score).
    pub sort: Value,
    /// The shards with hits left: (place in `parts`, the node's scroll id).
    pub open: Vec<(usize, String)>,
}

impl ClusterScroll {
    pub fn id(&self) -> String {
        format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(serde_json::to_vec(self).expect("JSON")))
    }

    /// The scroll an id names; a damaged one (its shards' places among them) is refused.
    fn parse(id: &str) -> ApiResult<ClusterScroll> {
        let bytes = id.strip_prefix(PREFIX).and_then(|b| URL_SAFE_NO_PAD.decode(b).ok());
        let scroll = bytes.and_then(|b| serde_json::from_slice::<ClusterScroll>(&b).ok());
        let whole = scroll.filter(|s| s.open.iter().all(|(k, _)| *k < s.parts.len()));
        whole.ok_or_else(|| {
            ApiError::illegal_argument(format!(
                "Cannot parse scroll id [{}]",
                needle_core::printable(id, 100)
            ))
        })
    }
}

/// `/_search/scroll` (and `/_search/scroll/{id}`): a cluster's scroll
/// continued or cleared here; any other passed on to this node's own.
pub async fn around(app: &Shared, member: &Member, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, app.max_body).await {
        Ok(body) => body,
        Err(e) => return crate::call::too_large(&e, app.max_body).into_response(),
    };
    let given: Value = serde_json::from_slice(&body).unwrap_or_default();
    let ids = given_ids(parts.uri.path(), parts.uri.query().unwrap_or_default(), &given);
    if !ids.iter().any(|id| id.starts_with(PREFIX)) {
        return next.run(Request::from_parts(parts, Body::from(body))).await;
    }
    let answered = match parts.method.as_str() {
        "DELETE" => clear(app.api_key.as_deref(), member, &ids).await,
        _ => {
            let keep = keep_alive(parts.uri.query().unwrap_or_default(), &given);
            continue_scroll(app.api_key.as_deref(), member, &ids[0], keep).await
        }
    };
    answered.unwrap_or_else(IntoResponse::into_response)
}

/// The scroll ids a request names: in its path, its URL's `scroll_id`, or its body's.
fn given_ids(path: &str, query: &str, body: &Value) -> Vec<String> {
    let split = |text: &str| text.split(',').map(str::to_string).collect::<Vec<_>>();
    if let Some(id) = path.strip_prefix("/_search/scroll/").filter(|id| !id.is_empty()) {
        return split(&percent_decode_str(id).decode_utf8_lossy());
    }
    if let Some(id) = query.split('&').find_map(|p| p.strip_prefix("scroll_id=")) {
        return split(&percent_decode_str(id).decode_utf8_lossy());
    }
    match &body["scroll_id"] {
        Value::String(id) => vec![id.clone()],
        Value::Array(ids) => ids.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

/// The request's new keep-alive (`scroll`), in the body or the URL.
fn keep_alive(query: &str, body: &Value) -> Option<String> {
    let in_url = || query.split('&').find_map(|p| p.strip_prefix("scroll=")).map(str::to_string);
    body["scroll"].as_str().map(str::to_string).or_else(in_url)
}

/// The next page: each open shard's next hits, merged.
async fn continue_scroll(
    api_key: Option<&str>,
    member: &Member,
    id: &str,
    keep: Option<String>,
) -> ApiResult<Response> {
    let started = Instant::now();
    let scroll = ClusterScroll::parse(id)?;
    let mut answers = Vec::new();
    let mut failures = Vec::new();
    let mut open = Vec::new();
    for ((k, node_id), answer) in
        scroll.open.iter().zip(on_nodes(api_key, member, &scroll, "POST", keep.as_deref()).await)
    {
        let part = &scroll.parts[*k];
        match answer {
            Ok(answer) => {
                let hits = answer["hits"]["hits"].as_array().map_or(0, Vec::len);
                match answer["_scroll_id"].as_str() {
                    Some(next) if hits > 0 => open.push((*k, next.to_string())),
                    _ => free(api_key, member, &part.node, node_id).await,
                }
                answers.push((*k, answer));
            }
            Err(e) => failures.push(part.failure(&e)),
        }
    }
    if answers.is_empty() && !failures.is_empty() {
        return Err(ApiError::all_shards_failed(failures));
    }
    let keys = sort_keys_of(&scroll.sort)?;
    let page = Page { from: 0, size: u64::MAX, keys, track: u64::MAX };
    let mut answer = merged(&scroll.parts, answers, failures, &page, started);
    let next = ClusterScroll { open, ..scroll };
    answer["_scroll_id"] = json!(next.id());
    Ok(respond::ok(&with_id_first(answer)))
}

/// `DELETE /_search/scroll` of cluster scrolls: each open shard's freed.
async fn clear(api_key: Option<&str>, member: &Member, ids: &[String]) -> ApiResult<Response> {
    let mut freed = 0;
    for id in ids {
        if !id.starts_with(PREFIX) {
            return Err(ApiError::illegal_argument(
                "clear a cluster's scrolls apart from those of the node's own indexes",
            ));
        }
        let scroll = ClusterScroll::parse(id)?;
        for answer in on_nodes(api_key, member, &scroll, "DELETE", None).await.into_iter().flatten() {
            freed += answer["num_freed"].as_u64().unwrap_or(0);
        }
    }
    let status = if freed > 0 { StatusCode::OK } else { StatusCode::NOT_FOUND };
    Ok(respond::json(status, &json!({"succeeded": true, "num_freed": freed})))
}

/// `method /_search/scroll` of each open shard's scroll at its node, at once.
async fn on_nodes(
    api_key: Option<&str>,
    member: &Member,
    scroll: &ClusterScroll,
    method: &str,
    keep: Option<&str>,
) -> Vec<ApiResult<Value>> {
    let view = member.view();
    let each = scroll.open.iter().map(|(k, node_id)| {
        let part = &scroll.parts[*k];
        let address = part.address(&view);
        async move {
            node_scroll(api_key, &address?, method, node_id, keep)
                .await
                .map_err(|e| part.unavailable(&e))
                .and_then(|(status, value)| ok_or_error(status, value))
                .map(Option::unwrap_or_default)
        }
    });
    futures_util::future::join_all(each).await
}

/// Frees a finished shard's scroll at its node (it would expire anyway).
pub async fn free(api_key: Option<&str>, member: &Member, node: &str, node_id: &str) {
    let Some(address) = member.view().address_of(node).map(str::to_string) else { return };
    let _ = node_scroll(api_key, &address, "DELETE", node_id, None).await;
}

/// `method /_search/scroll` of a node's scroll `node_id` (with a new keep-alive, when given).
async fn node_scroll(
    api_key: Option<&str>,
    address: &str,
    method: &str,
    node_id: &str,
    keep: Option<&str>,
) -> Result<(u16, Option<Value>), String> {
    let mut body = json!({"scroll_id": node_id});
    if let Some(keep) = keep {
        body["scroll"] = json!(keep);
    }
    let body = Bytes::from(body.to_string());
    fetch(api_key, address, method, "/_search/scroll", Some("application/json"), body).await
}

/// A search answer with `_scroll_id` first, as Elasticsearch shows it.
pub fn with_id_first(mut answer: Value) -> Value {
    let mut out = serde_json::Map::new();
    if let Some(id) = answer.get_mut("_scroll_id").map(Value::take) {
        out.insert("_scroll_id".into(), id);
    }
    if let Value::Object(rest) = answer {
        out.extend(rest.into_iter().filter(|(k, _)| k != "_scroll_id"));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_names_its_scroll_and_a_damaged_one_is_refused() {
        let part = |index: &str, shard, node: &str| Part {
            index: index.into(),
            shard,
            node: node.into(),
            replicas: Vec::new(),
        };
        let scroll = ClusterScroll {
            parts: vec![part("logs", 0, "n1"), part("logs", 1, "n2"), part("docs", 0, "n3")],
            sort: json!(["seq"]),
            open: vec![(0, "abc1".into()), (2, "def7".into())],
        };
        let id = scroll.id();
        assert!(id.starts_with(PREFIX) && !id.contains(['/', '+', '=', ',']), "{id}");
        let back = ClusterScroll::parse(&id).unwrap();
        assert_eq!((back.parts, back.sort, back.open), (scroll.parts, json!(["seq"]), scroll.open));
        let damaged = ClusterScroll::parse(&format!("{PREFIX}%%")).unwrap_err();
        assert_eq!(damaged.status, StatusCode::BAD_REQUEST);
        let past =
            ClusterScroll { parts: vec![part("a", 0, "n1")], sort: Value::Null, open: vec![(1, "x".into())] };
        assert_eq!(ClusterScroll::parse(&past.id()).unwrap_err().status, StatusCode::BAD_REQUEST);
    }

    #[test]
    fn ids_are_read_from_the_path_the_url_or_the_body() {
        assert_eq!(given_ids("/_search/scroll/a,b", "", &Value::Null), ["a", "b"]);
        assert_eq!(given_ids("/_search/scroll", "scroll=1m&scroll_id=c", &Value::Null), ["c"]);
        assert_eq!(given_ids("/_search/scroll", "", &json!({"scroll_id": "d"})), ["d"]);
        assert_eq!(given_ids("/_search/scroll", "", &json!({"scroll_id": ["e", "f"]})), ["e", "f"]);
        assert!(given_ids("/_search/scroll", "", &json!("not an object")).is_empty());
        assert_eq!(keep_alive("scroll=2m", &json!({"scroll": "1m"})).as_deref(), Some("1m"));
        assert_eq!(keep_alive("scroll=2m", &Value::Null).as_deref(), Some("2m"));
    }
}
