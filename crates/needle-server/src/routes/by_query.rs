//! What `_delete_by_query`, `_update_by_query` and `_reindex` share: the
//! `conflicts` option, a version conflict as their `failures` list it, and
//! their answer, whose counts Elasticsearch names alike (each API leaves out
//! the counts it never makes: `created` for the by-query APIs, `updated` too
//! for a delete); and how the two by-query APIs read a request and run.

use std::time::Instant;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Map, Value};

use needle_engine::{Matched, Searcher};

use crate::call::Call;
use crate::catalog::{Handle, Reached};
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::routes::search::{filtered_query, url_query, SEARCH_PARAMS};
use crate::routes::write::{about_index, WRITE_PARAMS};
use crate::server::Shared;

/// What a `_delete_by_query` or `_update_by_query` asks.
pub struct Asked {
    /// The URL's `q` over the body's `query`, as Elasticsearch reads a search.
    pub query: Option<Value>,
    /// At most this many documents (the first in the index's order).
    pub max_docs: u64,
    /// Whether a version conflict lets the run go on (`conflicts`, the URL's over the body's).
    pub proceed: bool,
}

/// Reads a by-query request: its parameters, and its body's `query`,
/// `max_docs` and `conflicts`; any other key of the body goes to `other`
/// (an API's own, as an update's `script`), which refuses what it does not know.
pub fn read_asked(call: &Call, other: impl Fn(&str) -> ApiResult<()>) -> ApiResult<Asked> {
    let p = &call.params;
    let from_url = url_query(p)?;
    p.refresh()?;
    p.ignore(&SEARCH_PARAMS);
    p.ignore(&WRITE_PARAMS);
    p.ignore(&["requests_per_second", "scroll_size", "slices", "scroll", "pipeline"]);
    if p.get("wait_for_completion") == Some("false") {
        return Err(ApiError::illegal_argument("[wait_for_completion=false] is not supported yet by Needle"));
    }
    let url_max_docs = p.number::<i64>("max_docs")?;
    let url_conflicts = p.get("conflicts");
    p.finish(&call.path)?;
    let mut asked = Asked { query: None, max_docs: u64::MAX, proceed: false };
    let mut body_max_docs = None;
    if let Some(body) = call.json()? {
        let Value::Object(body) = body else {
            return Err(ApiError::parsing("the request body must be an object"));
        };
        for (key, value) in body {
            match key.as_str() {
                "query" => asked.query = Some(value),
                "max_docs" => {
                    body_max_docs =
                        Some(value.as_i64().ok_or_else(|| ApiError::parsing("[max_docs] must be a number"))?)
                }
                "conflicts" => asked.proceed = proceeds(value.as_str().unwrap_or_default())?,
                other_key => other(other_key)?,
            }
        }
    }
    if let Some(c) = url_conflicts {
        asked.proceed = proceeds(c)?;
    }
    if from_url.is_some() {
        asked.query = from_url;
    }
    if let (Some(body), Some(url)) = (body_max_docs, url_max_docs) {
        if body != url {
            let reason = format!("[max_docs] set to two different values [{body}] and [{url}]");
            return Err(ApiError::illegal_argument(reason));
        }
    }
    if let Some(n) = body_max_docs.or(url_max_docs) {
        asked.max_docs = checked_max_docs(n)?;
    }
    Ok(asked)
}

/// A body's key no by-query API knows.
pub fn unknown_key(key: &str) -> ApiResult<()> {
    Err(ApiError::parsing(format!("request does not support [{key}]")))
}

/// A `max_docs` as Elasticsearch takes it: not negative, and at least one
/// (a request runs in one slice, and each slice takes one document at least).
pub fn checked_max_docs(n: i64) -> ApiResult<u64> {
    match n {
        n if n < 0 => {
            Err(ApiError::illegal_argument(format!("[max_docs] parameter cannot be negative, found [{n}]")))
        }
        0 => Err(ApiError::illegal_argument("[max_docs] should be >= [slices]")),
        n => Ok(n as u64),
    }
}

/// Documents an Elasticsearch run reads at a time (`scroll_size`, a reindex's `source.size`):
/// what its answer's `batches` counts.
pub const BATCH: u64 = 1000;

/// Which of the three APIs answers.
#[derive(Clone, Copy, PartialEq)]
pub enum Api {
    DeleteByQuery,
    UpdateByQuery,
    Reindex,
}

/// What a run counted.
#[derive(Default)]
pub struct Tally {
    /// Documents the query matched, at most `max_docs`.
    pub total: u64,
    pub updated: u64,
    pub created: u64,
    pub deleted: u64,
    pub version_conflicts: u64,
    /// Batches of documents read (see [`BATCH`]).
    pub batches: u64,
    /// Documents read so far.
    pub read: u64,
    /// What ended the run (see [`failure`]).
    pub failures: Vec<Value>,
}

impl Tally {
    /// Whether the run stops before reading another document: a batch of
    /// `batch` has ended with failures. Elasticsearch writes a batch in one
    /// bulk request, so every document of the batch a failure is in is tried.
    pub fn stops_here(&self, batch: u64) -> bool {
        !self.failures.is_empty() && self.read % batch == 0
    }

    /// The answer: 200, or the status of the failures that ended the run.
    pub fn answer(self, api: Api, started: Instant) -> Response {
        let mut a = Map::new();
        a.insert("took".into(), json!(started.elapsed().as_millis() as u64));
        a.insert("timed_out".into(), json!(false));
        a.insert("total".into(), json!(self.total));
        if api != Api::DeleteByQuery {
            a.insert("updated".into(), json!(self.updated));
        }
        if api == Api::Reindex {
            a.insert("created".into(), json!(self.created));
        }
        a.insert("deleted".into(), json!(self.deleted));
        a.insert("batches".into(), json!(self.batches));
        a.insert("version_conflicts".into(), json!(self.version_conflicts));
        a.insert("noops".into(), json!(0));
        a.insert("retries".into(), json!({"bulk": 0, "search": 0}));
        a.insert("throttled_millis".into(), json!(0));
        a.insert("requests_per_second".into(), json!(-1.0));
        a.insert("throttled_until_millis".into(), json!(0));
        let status = self.failures.first().and_then(|f| f["status"].as_u64()).map_or(StatusCode::OK, |s| {
            StatusCode::from_u16(s as u16).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
        });
        a.insert("failures".into(), Value::Array(self.failures));
        respond::json(status, &Value::Object(a))
    }
}

/// The `conflicts` option: whether a version conflict lets the run go on.
pub fn proceeds(value: &str) -> ApiResult<bool> {
    match value {
        "proceed" => Ok(true),
        "abort" => Ok(false),
        other => Err(ApiError::illegal_argument(format!(
            "conflicts may only be \"proceed\" or \"abort\" but was [{other}]"
        ))),
    }
}

/// A version conflict as Elasticsearch lists it in `failures`.
pub fn conflict(index: &str, id: &str, reason: &str) -> Value {
    failure(index, id, &ApiError::new(StatusCode::CONFLICT, "version_conflict_engine_exception", reason))
}

/// A document's failed write as Elasticsearch lists it in `failures`.
pub fn failure(index: &str, id: &str, e: &ApiError) -> Value {
    json!({
        "index": index,
        "id": id,
        "cause": {"type": e.kind, "reason": e.reason, "index": index},
        "status": e.status.as_u16(),
    })
}

/// Runs `_update_by_query` or `_delete_by_query` (`api`) over the indexes
/// `index` names: what `asked.query` matches in a snapshot of each, taken
/// first (at most `max_docs` of them, in the index's order, make `total`),
/// is written one document at a time by `write`, which is told the
/// document's snapshot and returns the sequence number of its write. A
/// document changed since its snapshot is a version conflict (`write` makes
/// its write conditional on the snapshot's sequence number): counted, and
/// with `conflicts: abort` (the default) listed in `failures`, where the run
/// stops at the end of the batch (see [`Tally::stops_here`]).
pub fn run_by_query(
    app: &Shared,
    index: &str,
    asked: &Asked,
    api: Api,
    mut write: impl FnMut(&Handle, &Searcher, &Matched) -> needle_engine::Result<u64>,
) -> ApiResult<Tally> {
    let mut tally = Tally::default();
    let mut matched = Vec::new();
    let mut left = asked.max_docs;
    for Reached { handle, filter } in app.catalog.resolve_filtered(index)? {
        let searcher = handle.index.searcher();
        let q = filtered_query(&asked.query, filter.as_ref(), &searcher)
            .map_err(|e| e.failing_index(&handle.name, &handle.settings().uuid))?;
        let mut docs = searcher.matching(&q)?;
        docs.truncate(usize::try_from(left).unwrap_or(usize::MAX));
        left -= docs.len() as u64;
        tally.total += docs.len() as u64;
        matched.push((handle, searcher, docs));
    }
    for (h, searcher, docs) in &matched {
        let written =
            write_each(&mut tally, asked.proceed, api, &h.name, docs, |doc| write(h, searcher, doc));
        if let Some(seq_no) = written.last {
            h.writer.durable_through(seq_no)?;
        }
        if let Some(e) = written.error {
            return Err(about_index(e.into(), h));
        }
        if tally.stops_here(BATCH) {
            break;
        }
    }
    tally.batches = tally.read.div_ceil(BATCH);
    Ok(tally)
}

/// What [`write_each`] did to one index.
struct Written {
    /// The sequence number of its last write.
    last: Option<u64>,
    /// What ended it early, other than a version conflict.
    error: Option<needle_engine::Error>,
}

/// Writes `docs` of the index `index` with `write`, counting into `tally`
/// (see [`run_by_query`]), until done or [`Tally::stops_here`].
fn write_each(
    tally: &mut Tally,
    proceed: bool,
    api: Api,
    index: &str,
    docs: &[Matched],
    mut write: impl FnMut(&Matched) -> needle_engine::Result<u64>,
) -> Written {
    let mut written = Written { last: None, error: None };
    for doc in docs {
        if tally.stops_here(BATCH) {
            break;
        }
        tally.read += 1;
        match write(doc) {
            Ok(seq_no) => {
                *if api == Api::DeleteByQuery { &mut tally.deleted } else { &mut tally.updated } += 1;
                written.last = Some(seq_no);
            }
            Err(e @ needle_engine::Error::Conflict { .. }) => {
                tally.version_conflicts += 1;
                if !proceed {
                    tally.failures.push(conflict(index, &doc.id, &e.to_string()));
                }
            }
            Err(e) => {
                written.error = Some(e);
                break;
            }
        }
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2,500 documents of which those numbered in `conflicting` changed since the snapshot.
    fn run(proceed: bool, conflicting: &[usize]) -> Tally {
        let docs: Vec<Matched> = (0..2500).map(|i| Matched { id: i.to_string(), seq_no: i as u64 }).collect();
        let mut tally = Tally::default();
        let written =
            write_each(&mut tally, proceed, Api::UpdateByQuery, "i", &docs, |doc| {
                match conflicting.contains(&(doc.seq_no as usize)) {
                    true => {
                        Err(needle_engine::Error::Conflict { id: doc.id.clone(), reason: "changed".into() })
                    }
                    false => Ok(doc.seq_no + 10_000),
                }
            });
        assert!(written.error.is_none());
        tally
    }

    #[test]
    fn an_aborting_conflict_ends_the_run_with_its_batch() {
        let t = run(false, &[1200, 1500]);
        // The second batch (documents 1000..2000) is written whole; the third is not read.
        assert_eq!((t.read, t.updated, t.version_conflicts), (2000, 1998, 2));
        let failed: Vec<_> = t.failures.iter().map(|f| f["id"].as_str().unwrap()).collect();
        assert_eq!(failed, ["1200", "1500"]);
        assert_eq!(t.failures[0]["status"], 409);
    }

    #[test]
    fn a_conflict_in_the_last_document_of_a_batch_ends_the_run_there() {
        let t = run(false, &[999]);
        assert_eq!((t.read, t.updated, t.version_conflicts, t.failures.len()), (1000, 999, 1, 1));
    }

    #[test]
    fn with_proceed_conflicts_are_counted_and_the_run_goes_on() {
        let t = run(true, &[3, 1200]);
        assert_eq!((t.read, t.updated, t.version_conflicts), (2500, 2498, 2));
        assert!(t.failures.is_empty());
    }
}
