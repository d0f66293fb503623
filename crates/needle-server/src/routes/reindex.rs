//! `POST /_reindex`: copies the documents of one index or several (those a
//! query matches, all without one) into another, each under its `_id`, from
//! a snapshot taken now, in the source's index order (Elasticsearch's `_doc`
//! order, so that `max_docs` takes the same documents). The destination is
//! made, with dynamic mappings, when it does not exist, as a write makes it.
//!
//! `dest.op_type: create` writes only the `_id`s the destination lacks; one
//! it has is a version conflict, which ends the run after its batch (a 409
//! listing the batch's conflicts; what was written stays) unless `conflicts:
//! proceed`, which counts it and goes on until `max_docs` documents are
//! written. A document the destination refuses (a value its mapping cannot
//! take, a name no index can have) is listed in `failures` and ends the run
//! after its batch too, as a bulk request's items fail alone. `source._source` keeps part of
//! each document. Not supported yet, and refused by name: a `script`, a
//! remote source, slices, an ingest pipeline, external versions, running as
//! a task (`wait_for_completion=false`) and indexes of a cluster.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::State;
use axum::response::Response;
use needle_engine::{IfCurrent, Searcher};
use serde_json::{Map, Value};

use crate::call::Call;
use crate::catalog::{Handle, Reached};
use crate::error::{ApiError, ApiResult};
use crate::pools;
use crate::routes::by_query::{conflict, failure, proceeds, Api, Tally, BATCH};
use crate::routes::documents::parse_source;
use crate::routes::search::filtered_query;
use crate::routes::write::{about_index, validation, WRITE_PARAMS};
use crate::server::Shared;
use crate::source_filter::SourceFilter;

pub async fn reindex(State(app): State<Shared>, call: Call) -> Response {
    pools::write(app, move |app| run(app, &call)).await
}

/// What a request asks for.
struct Asked {
    /// The source's index expression (names, patterns, aliases), comma-joined.
    source: String,
    query: Option<Value>,
    keep: SourceFilter,
    batch: u64,
    dest: String,
    create_only: bool,
    max_docs: u64,
    proceed: bool,
}

fn run(app: &Shared, call: &Call) -> ApiResult<Response> {
    let started = Instant::now();
    let asked = read(call)?;
    if app.member.is_some() {
        return Err(ApiError::illegal_argument("[_reindex] is not supported yet by Needle on a cluster"));
    }
    let sources = app.catalog.resolve_filtered(&asked.source)?;
    // The destination, or an alias's write index, among the sources (a new one cannot be).
    let existing = app.catalog.get(&asked.dest).ok();
    let reading = |s: &&Reached| existing.as_ref().is_some_and(|d| Arc::ptr_eq(d, &s.handle));
    if let Some(same) = sources.iter().find(reading) {
        let reason = format!("reindex cannot write into an index its reading from [{}]", same.handle.name);
        return Err(validation(&reason));
    }
    let mut matched = Vec::new();
    for Reached { handle, filter } in &sources {
        let searcher = handle.index.searcher();
        let q = filtered_query(&asked.query, filter.as_ref(), &searcher)?;
        let ids = searcher.matching(&q)?.into_iter().map(|m| m.id).collect::<Vec<_>>();
        matched.push((ids, searcher));
    }
    let mut copying = Copying { asked: &asked, dest: None, tally: Tally::default(), last: None };
    copying.tally.total = asked.max_docs.min(matched.iter().map(|(ids, _)| ids.len() as u64).sum());
    let outcome = copying.all(app, &matched);
    // What was written is made durable whether or not the run ended early.
    if let (Some(dest), Some(seq_no)) = (&copying.dest, copying.last) {
        dest.writer.durable_through(seq_no)?;
    }
    outcome?;
    let mut tally = copying.tally;
    tally.batches = tally.read.div_ceil(asked.batch);
    Ok(tally.answer(Api::Reindex, started))
}

/// A run under way.
struct Copying<'a> {
    asked: &'a Asked,
    /// The destination, made when the first document is written to it.
    dest: Option<Arc<Handle>>,
    tally: Tally,
    /// The last write's sequence number.
    last: Option<u64>,
}

impl Copying<'_> {
    /// Reads the sources' documents a batch at a time until done, `max_docs` is reached, or a
    /// batch ends with failures (a version conflict without `conflicts: proceed`, or a
    /// destination that cannot be made; see [`Tally::stops_here`]).
    fn all(&mut self, app: &Shared, matched: &[(Vec<String>, Searcher)]) -> ApiResult<()> {
        let asked = self.asked;
        // With `conflicts: proceed` only written documents count towards `max_docs`, as Elasticsearch counts.
        let done = |c: &Self| match asked.proceed {
            true => c.tally.created + c.tally.updated >= asked.max_docs,
            false => c.tally.read >= asked.max_docs,
        };
        for (ids, searcher) in matched {
            for id in ids {
                if done(self) || self.tally.stops_here(asked.batch) {
                    return Ok(());
                }
                self.tally.read += 1;
                let Some(doc) = searcher.get_document(id)? else { continue };
                let source = kept(&asked.keep, doc.source)?;
                self.write(app, id, &source)?;
            }
        }
        Ok(())
    }

    fn write(&mut self, app: &Shared, id: &str, source: &str) -> ApiResult<()> {
        let dest = match &self.dest {
            Some(dest) => Arc::clone(dest),
            None => match app.index_for_write(&self.asked.dest, self.asked.create_only) {
                Ok(made) => Arc::clone(self.dest.insert(made)),
                Err(e) if e.status.is_client_error() => {
                    self.tally.failures.push(failure(&self.asked.dest, id, &e));
                    return Ok(());
                }
                Err(e) => return Err(e),
            },
        };
        let condition = if self.asked.create_only { IfCurrent::Absent } else { IfCurrent::Any };
        match dest.writer.put_deferred(Some(id), source, condition) {
            Ok(written) => {
                *if written.created { &mut self.tally.created } else { &mut self.tally.updated } += 1;
                self.last = Some(written.seq_no);
            }
            Err(e @ needle_engine::Error::Conflict { .. }) => {
                self.tally.version_conflicts += 1;
                if !self.asked.proceed {
                    self.tally.failures.push(conflict(&dest.name, id, &e.to_string()));
                }
            }
            Err(e) => {
                // A document the destination refuses (a value its mapping cannot take) fails
                // alone, as in a bulk request; what is wrong with the server ends the run.
                let e = about_index(e.into(), &dest);
                match e.status.is_client_error() {
                    true => self.tally.failures.push(failure(&dest.name, id, &e)),
                    false => return Err(e),
                }
            }
        }
        Ok(())
    }
}

/// A stored source less what `source._source` leaves out.
fn kept(keep: &SourceFilter, source: String) -> ApiResult<String> {
    if keep.is_everything() {
        return Ok(source);
    }
    Ok(keep.apply(parse_source(&source)?).to_string())
}

/// The parameters and body of a request.
fn read(call: &Call) -> ApiResult<Asked> {
    let p = &call.params;
    p.refresh()?;
    p.ignore(&WRITE_PARAMS);
    p.ignore(&["requests_per_second", "scroll", "error_trace"]);
    if p.get("wait_for_completion") == Some("false") {
        return Err(ApiError::illegal_argument("[wait_for_completion=false] is not supported yet by Needle"));
    }
    if p.get("slices").is_some_and(|s| s != "1") {
        return Err(ApiError::illegal_argument("[slices] is not supported yet by Needle"));
    }
    let url_max_docs = p.number::<u64>("max_docs")?;
    if url_max_docs == Some(0) {
        return Err(ApiError::illegal_argument("[max_docs] should be >= [slices]"));
    }
    p.finish(&call.path)?;
    let body = match call.json()? {
        Some(Value::Object(body)) => body,
        Some(other) => return Err(content(format!("the reindex body must be an object, not {other}"))),
        None => return Err(ApiError::bad_request("parse_exception", "request body is required")),
    };
    let mut asked = Asked {
        source: String::new(),
        query: None,
        keep: SourceFilter::all(),
        batch: BATCH,
        dest: String::new(),
        create_only: false,
        max_docs: url_max_docs.unwrap_or(u64::MAX),
        proceed: false,
    };
    for (key, value) in body {
        match key.as_str() {
            "source" => read_source(&mut asked, value)?,
            "dest" => read_dest(&mut asked, value)?,
            "max_docs" => {
                asked.max_docs = value.as_u64().filter(|&n| n > 0).ok_or_else(|| {
                    content(format!(
                        "[reindex] failed to parse field [max_docs]: {value} is not a positive number"
                    ))
                })?
            }
            "conflicts" => {
                asked.proceed = proceeds(value.as_str().unwrap_or_default()).map_err(|e| {
                    content(format!("[reindex] failed to parse field [conflicts]: {}", e.reason))
                })?
            }
            "script" => return Err(ApiError::illegal_argument("[script] is not supported yet by Needle")),
            other => return Err(unknown("reindex", other)),
        }
    }
    let mut problems = Vec::new();
    if asked.source.is_empty() {
        problems.push("use _all if you really want to copy from all existing indexes");
    }
    if asked.dest.is_empty() {
        problems.push("index must be specified");
    }
    if !problems.is_empty() {
        return Err(validation(&problems.join(";")));
    }
    Ok(asked)
}

fn read_source(asked: &mut Asked, value: Value) -> ApiResult<()> {
    for (key, value) in object(value, "source")? {
        match key.as_str() {
            "index" => asked.source = names(&value)?,
            "query" => asked.query = Some(value),
            "_source" => asked.keep = SourceFilter::from_json(&value)?,
            "size" => {
                asked.batch = value
                    .as_u64()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| content("[source.size] must be a positive number"))?
            }
            "remote" => {
                return Err(ApiError::illegal_argument(
                    "reindex from a remote cluster is not supported yet by Needle",
                ))
            }
            "slice" => {
                return Err(ApiError::illegal_argument("[source.slice] is not supported yet by Needle"))
            }
            other => return Err(unknown("source", other)),
        }
    }
    Ok(())
}

fn read_dest(asked: &mut Asked, value: Value) -> ApiResult<()> {
    for (key, value) in object(value, "dest")? {
        let text = value.as_str().unwrap_or_default();
        match key.as_str() {
            "index" => asked.dest = value.as_str().ok_or_else(|| content("[dest.index] must be a string"))?.to_string(),
            "op_type" => asked.create_only = match text {
                "create" => true,
                "index" => false,
                other => return Err(content(format!("[dest] failed to parse field [op_type]: opType must be \"create\" or \"index\", found: [{other}]"))),
            },
            "version_type" if text == "internal" => {}
            "version_type" => return Err(ApiError::illegal_argument(format!("[dest.version_type] {value} is not supported yet by Needle"))),
            // One shard an index: routing picks nothing.
            "routing" => {}
            "pipeline" => return Err(ApiError::illegal_argument("[dest.pipeline] is not supported yet by Needle")),
            other => return Err(unknown("dest", other)),
        }
    }
    Ok(())
}

fn object(value: Value, what: &str) -> ApiResult<Map<String, Value>> {
    match value {
        Value::Object(m) => Ok(m),
        other => Err(content(format!("[{what}] must be an object, not {other}"))),
    }
}

/// `source.index`: a name or a list of them, as one expression.
fn names(value: &Value) -> ApiResult<String> {
    let bad = || content("[source.index] must be a string or a list of strings");
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Array(list) => {
            Ok(list.iter().map(|v| v.as_str().ok_or_else(bad)).collect::<ApiResult<Vec<_>>>()?.join(","))
        }
        _ => Err(bad()),
    }
}

fn unknown(object: &str, key: &str) -> ApiError {
    content(format!("[{object}] unknown field [{key}]"))
}

/// A body Elasticsearch's parser rejects.
fn content(reason: impl Into<String>) -> ApiError {
    ApiError::bad_request("x_content_parse_exception", reason)
}
