//! `GET|POST /{index}/_explain/{id}`: why one document scores what it does
//! for a query (the body's `query`, or the URL's `q`), as Elasticsearch
//! explains it: `matched` and the BM25 breakdown, or `matched: false` with
//! a zero explanation; a 404 with `matched: false` when there is no such document.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use crate::call::Call;
use crate::error::ApiResult;
use crate::respond;
use crate::routes::search::{explanation_json, query_of, query_only, url_query};
use crate::server::{blocking, Shared};

pub async fn explain(
    State(app): State<Shared>,
    Path((index, id)): Path<(String, String)>,
    call: Call,
) -> Response {
    blocking(move || run(&app, &index, &id, &call)).await
}

pub(crate) fn run(app: &Shared, index: &str, id: &str, call: &Call) -> ApiResult<Response> {
    let p = &call.params;
    let mut query = url_query(p)?;
    p.ignore(&["routing", "preference", "stored_fields", "_source", "_source_includes", "_source_excludes"]);
    p.finish(&call.path)?;
    if let Some(body) = call.json()? {
        query = query_only(body, "explain")?.or(query);
    }
    if query.is_none() {
        return Err(crate::routes::write::validation("query is missing"));
    }
    let h = app.catalog.get_one(index)?;
    let searcher = h.index.searcher();
    let q = query_of(&query, &searcher)?;
    let (name, id) = (h.name.as_str(), id);
    match searcher.explain_id(&q, id)? {
        None => {
            Ok(respond::json(StatusCode::NOT_FOUND, &json!({"_index": name, "_id": id, "matched": false})))
        }
        Some(Some(e)) => Ok(respond::ok(
            &json!({"_index": name, "_id": id, "matched": true, "explanation": explanation_json(&e)}),
        )),
        Some(None) => {
            let none =
                json!({"value": 0.0, "description": "the query does not match this document", "details": []});
            Ok(respond::ok(&json!({"_index": name, "_id": id, "matched": false, "explanation": none})))
        }
    }
}
