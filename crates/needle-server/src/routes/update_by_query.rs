//! `POST /{index}/_update_by_query`: every document the query matches (all
//! of them without one) in a snapshot taken now is written again from its
//! source, as it is: what picks up a mapping's new fields. A document
//! changed since the snapshot is a version conflict: the run stops at the end
//! of its batch (a 409 naming it; what was written stays) unless
//! `conflicts=proceed`, which counts it and goes on (`by_query.rs`). A
//! `script` is not supported yet.

use std::time::Instant;

use axum::extract::{Path, State};
use axum::response::Response;
use needle_engine::IfCurrent;

use crate::call::Call;
use crate::error::{ApiError, ApiResult};
use crate::pools;
use crate::routes::by_query::{read_asked, run_by_query, unknown_key, Api};
use crate::server::Shared;

pub async fn update_by_query(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    pools::write(app, move |app| run(app, &index, &call)).await
}

fn run(app: &Shared, index: &str, call: &Call) -> ApiResult<Response> {
    let started = Instant::now();
    let asked = read_asked(call, own_key)?;
    let tally = run_by_query(app, index, &asked, Api::UpdateByQuery, |h, searcher, doc| {
        // The snapshot's source, written if the document is still as the snapshot has it.
        let Some(stored) = searcher.get_document(&doc.id)? else {
            return Err(needle_engine::Error::invalid(format!("document [{}] left its snapshot", doc.id)));
        };
        Ok(h.writer.put_deferred(Some(&doc.id), &stored.source, IfCurrent::SeqNo(doc.seq_no))?.seq_no)
    })?;
    Ok(tally.answer(Api::UpdateByQuery, started))
}

/// An update's own key of the body: a `script` is not run yet.
fn own_key(key: &str) -> ApiResult<()> {
    match key {
        "script" => Err(ApiError::illegal_argument("[script] is not supported yet by Needle")),
        other => unknown_key(other),
    }
}
