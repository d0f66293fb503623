//! `POST /{index}/_update_by_query`: every document the query matches (all
//! of them without one) in a snapshot taken now is written again from its
//! source, as it is: what picks up a mapping's new fields. A document
//! changed since the snapshot is a version conflict: the run stops there
//! (a 409 naming it; what was written before stays) unless `conflicts=proceed`,
//! which counts it and goes on. A `script` is not supported yet.

use std::time::Instant;

use axum::extract::{Path, State};
use axum::response::Response;
use needle_engine::IfCurrent;
use serde_json::Value;

use crate::call::Call;
use crate::catalog::Reached;
use crate::error::{ApiError, ApiResult};
use crate::pools;
use crate::routes::by_query::{conflict, proceeds, Api, Tally, BATCH};
use crate::routes::search::{filtered_query, url_query, SEARCH_PARAMS};
use crate::routes::write::{validation, WRITE_PARAMS};
use crate::server::Shared;

pub async fn update_by_query(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    pools::write(app, move |app| run(app, &index, &call)).await
}

/// What a request asks for: its query, how many documents at most, and whether conflicts stop it.
struct Asked {
    query: Option<Value>,
    max_docs: u64,
    proceed: bool,
}

fn run(app: &Shared, index: &str, call: &Call) -> ApiResult<Response> {
    let started = Instant::now();
    let asked = read(call)?;
    let mut left = asked.max_docs;
    let mut tally = Tally::default();
    for Reached { handle: h, filter } in app.catalog.resolve_filtered(index)? {
        let searcher = h.index.searcher();
        let q = filtered_query(&asked.query, filter.as_ref(), &searcher)?;
        let mut ids = searcher.matching_ids(&q)?;
        ids.truncate(usize::try_from(left).unwrap_or(usize::MAX));
        left -= ids.len() as u64;
        let mut last = None;
        for id in &ids {
            let Some(doc) = searcher.get_document(id)? else { continue };
            tally.total += 1;
            match h.writer.put_deferred(Some(id), &doc.source, IfCurrent::SeqNo(doc.seq_no)) {
                Ok(written) => {
                    tally.updated += 1;
                    last = Some(written.seq_no);
                }
                Err(e @ needle_engine::Error::Conflict { .. }) => {
                    tally.version_conflicts += 1;
                    if !asked.proceed {
                        tally.failures.push(conflict(&h.name, id, &e.to_string()));
                        break;
                    }
                }
                Err(e) => return Err(crate::routes::write::about_index(e.into(), &h)),
            }
        }
        if let Some(seq_no) = last {
            h.writer.durable_through(seq_no)?;
        }
        if !tally.failures.is_empty() {
            break;
        }
    }
    tally.batches = tally.total.div_ceil(BATCH);
    Ok(tally.answer(Api::UpdateByQuery, started))
}

/// The parameters and body of a request (the body's `query`, `max_docs`
/// and `conflicts` over the URL's `q`, `max_docs` and `conflicts`).
fn read(call: &Call) -> ApiResult<Asked> {
    let p = &call.params;
    let mut asked = Asked { query: url_query(p)?, max_docs: u64::MAX, proceed: false };
    p.refresh()?;
    p.ignore(&SEARCH_PARAMS);
    p.ignore(&WRITE_PARAMS);
    p.ignore(&["requests_per_second", "scroll_size", "slices", "scroll", "pipeline"]);
    if p.get("wait_for_completion") == Some("false") {
        return Err(ApiError::illegal_argument("[wait_for_completion=false] is not supported yet by Needle"));
    }
    if let Some(n) = p.number::<u64>("max_docs")? {
        asked.max_docs = n;
    }
    if let Some(c) = p.get("conflicts") {
        asked.proceed = proceeds(c)?;
    }
    p.finish(&call.path)?;
    if let Some(body) = call.json()? {
        let Value::Object(body) = body else {
            return Err(ApiError::parsing("the update by query body must be an object"));
        };
        for (key, value) in body {
            match key.as_str() {
                "query" => asked.query = Some(value),
                "max_docs" => {
                    asked.max_docs =
                        value.as_u64().ok_or_else(|| ApiError::parsing("[max_docs] must be a number"))?
                }
                "conflicts" => asked.proceed = proceeds(value.as_str().unwrap_or_default())?,
                "script" => {
                    return Err(ApiError::illegal_argument("[script] is not supported yet by Needle"))
                }
                other => return Err(ApiError::parsing(format!("request does not support [{other}]"))),
            }
        }
    }
    if asked.max_docs == 0 {
        return Err(validation("maxDocs should be greater than 0"));
    }
    Ok(asked)
}
