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

use crate::call::Call;
use crate::catalog::Reached;
use crate::error::{ApiError, ApiResult};
use crate::pools;
use crate::routes::by_query::{conflict, read_asked, unknown_key, Api, Tally, BATCH};
use crate::routes::search::filtered_query;
use crate::server::Shared;

pub async fn update_by_query(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    pools::write(app, move |app| run(app, &index, &call)).await
}

fn run(app: &Shared, index: &str, call: &Call) -> ApiResult<Response> {
    let started = Instant::now();
    let asked = read_asked(call, own_key)?;
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

/// An update's own key of the body: a `script` is not run yet.
fn own_key(key: &str) -> ApiResult<()> {
    match key {
        "script" => Err(ApiError::illegal_argument("[script] is not supported yet by Needle")),
        other => unknown_key(other),
    }
}
