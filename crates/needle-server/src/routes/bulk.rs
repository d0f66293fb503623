//! `_bulk`: newline-delimited actions (`index`, `create`, `update`,
//! `delete`), each followed by its document when it has one. Each item
//! succeeds or fails alone; the writes of one request share one wait for the
//! write-ahead log, after which the answer acknowledges them all.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::call::{check_document, parse_json, token_name, Call};
use crate::catalog::Handle;
use crate::error::{ApiError, ApiResult};
use crate::pools;
use crate::respond;
use crate::routes::documents::id_text;
use crate::routes::write::{self, Update, WRITE_PARAMS};
use crate::server::Shared;

pub async fn bulk(State(app): State<Shared>, call: Call) -> Response {
    pools::write(app, move |app| run(app, None, &call)).await
}

pub async fn bulk_into(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    pools::write(app, move |app| run(app, Some(&index), &call)).await
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Index,
    Create,
    Update,
    Delete,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Index => "index",
            Kind::Create => "create",
            Kind::Update => "update",
            Kind::Delete => "delete",
        }
    }
}

/// One parsed action.
pub(crate) struct Action<'a> {
    pub kind: Kind,
    /// The action line as given.
    pub line: &'a str,
    pub index: String,
    pub id: Option<String>,
    if_seq_no: Option<u64>,
    if_primary_term: Option<u64>,
    retry_on_conflict: u32,
    /// The document line (index, create, update).
    pub source: Option<&'a str>,
}

fn run(app: &Shared, default_index: Option<&str>, call: &Call) -> ApiResult<Response> {
    let started = Instant::now();
    let p = &call.params;
    let refresh = p.refresh()?;
    p.ignore(&WRITE_PARAMS);
    p.ignore(&["_source", "_source_includes", "_source_excludes", "list_executed_pipelines"]);
    if p.get("pipeline").is_some() {
        return Err(ApiError::illegal_argument("ingest pipelines are not supported by Needle"));
    }
    p.finish(&call.path)?;
    let actions = parse(call.text()?, default_index)?;

    // Every write first, then one wait per index for the log to hold them.
    let mut waits: BTreeMap<String, (Arc<Handle>, u64)> = BTreeMap::new();
    let mut items = Vec::with_capacity(actions.len());
    let mut errors = false;
    for action in &actions {
        let (status, mut item) = match execute(app, action, &mut waits) {
            Ok(done) => done,
            Err(e) => {
                errors = true;
                let mut item = Map::new();
                item.insert("_index".into(), json!(action.index));
                item.insert("_id".into(), json!(action.id));
                item.insert("error".into(), e.item_body());
                (e.status, item)
            }
        };
        item.insert("status".into(), json!(status.as_u16()));
        write::note_refresh(&mut item, refresh && status.is_success());
        // Built by moving, not with `json!`, which would copy each item.
        items.push(Value::Object(Map::from_iter([(action.kind.name().to_string(), Value::Object(item))])));
    }
    for (handle, seq_no) in waits.values() {
        handle.writer.durable_through(*seq_no)?;
    }
    let took = started.elapsed().as_millis() as u64;
    let mut answer = Map::new();
    answer.insert("took".into(), json!(took));
    answer.insert("errors".into(), json!(errors));
    answer.insert("items".into(), Value::Array(items));
    Ok(respond::ok(&Value::Object(answer)))
}

/// Runs one action; notes in `waits` the sequence number its index must be durable through.
fn execute(
    app: &Shared,
    a: &Action,
    waits: &mut BTreeMap<String, (Arc<Handle>, u64)>,
) -> ApiResult<(StatusCode, Map<String, Value>)> {
    let h = match a.kind {
        Kind::Delete => app.catalog.get(&a.index)?,
        _ => app.index_for_write(&a.index, a.kind == Kind::Create)?,
    };
    let mut note = |seq_no: u64| {
        let entry = waits.entry(h.name.clone()).or_insert_with(|| (h.clone(), 0));
        entry.1 = entry.1.max(seq_no);
    };
    let started = Instant::now();
    let result = match (a.kind, a.source) {
        (Kind::Index | Kind::Create, Some(source)) => app.check_stream_document(&h, source.as_bytes()),
        _ => Ok(()),
    };
    let result = result.and_then(|()| run_action(&h, a, &mut note));
    match a.kind {
        Kind::Delete => h.counters.deleted(started, result),
        Kind::Index | Kind::Create | Kind::Update => h.counters.indexed(started, result),
    }
}

/// The action itself, on its index's handle.
fn run_action(
    h: &Arc<Handle>,
    a: &Action,
    note: &mut impl FnMut(u64),
) -> ApiResult<(StatusCode, Map<String, Value>)> {
    let id = a.id.as_deref();
    let condition =
        write::condition(id.unwrap_or_default(), a.kind == Kind::Create, a.if_seq_no, a.if_primary_term)?;
    match a.kind {
        Kind::Index | Kind::Create => {
            let source = a.source.unwrap_or_default();
            check_document(source.as_bytes())?;
            let o =
                h.writer.put_deferred(id, source, condition).map_err(|e| write::about_index(e.into(), h))?;
            note(o.seq_no);
            Ok(write::indexed(&h.name, &o))
        }
        Kind::Delete => {
            let (status, item, seq_no) = write::delete_deferred(h, id.unwrap_or_default(), condition)?;
            note(seq_no);
            Ok((status, item))
        }
        Kind::Update => {
            let id = id.unwrap_or_default();
            let body = match parse_json(a.source.unwrap_or_default().as_bytes())? {
                Value::Object(m) => m,
                _ => return Err(ApiError::parsing("an update's body must be a JSON object")),
            };
            let update = Update::parse(body)?;
            let done = write::apply_update(h, id, &update, condition, a.retry_on_conflict)?;
            note(done.seq_no);
            let status = if done.result == "created" { StatusCode::CREATED } else { StatusCode::OK };
            Ok((status, write::written(&h.name, id, done.version, done.seq_no, done.result)))
        }
    }
}

/// The actions of a bulk body. A malformed action line fails the whole
/// request (as in Elasticsearch: what follows it cannot be trusted); a
/// malformed document fails only its item.
pub(crate) fn parse<'a>(body: &'a str, default_index: Option<&str>) -> ApiResult<Vec<Action<'a>>> {
    if !body.is_empty() && !body.ends_with('\n') {
        return Err(ApiError::illegal_argument("The bulk request must be terminated by a newline [\\n]"));
    }
    let mut lines = body.split('\n').enumerate().filter(|(_, l)| !l.trim().is_empty());
    let mut actions = Vec::new();
    while let Some((n, line)) = lines.next() {
        let n = n + 1;
        let mut action = action_line(n, line, default_index)?;
        if action.kind != Kind::Delete {
            let Some((_, source)) = lines.next() else {
                return Err(ApiError::illegal_argument(format!(
                    "The bulk request's action on line [{n}] has no document line after it"
                )));
            };
            action.source = Some(source);
        }
        actions.push(action);
    }
    if actions.is_empty() {
        return Err(write::validation("no requests added"));
    }
    Ok(actions)
}

fn action_line<'a>(n: usize, line: &'a str, default_index: Option<&str>) -> ApiResult<Action<'a>> {
    let malformed =
        |what: String| ApiError::illegal_argument(format!("Malformed action/metadata line [{n}], {what}"));
    let value: Value = serde_json::from_str(line).map_err(|e| malformed(format!("not JSON: {e}")))?;
    let Value::Object(top) = value else {
        return Err(malformed(format!("expected START_OBJECT but found [{}]", token_name(&value))));
    };
    let mut entries = top.into_iter();
    let (Some((kind, meta)), None) = (entries.next(), entries.next()) else {
        return Err(malformed("expected one action: [create], [delete], [index] or [update]".into()));
    };
    let kind = match kind.as_str() {
        "index" => Kind::Index,
        "create" => Kind::Create,
        "update" => Kind::Update,
        "delete" => Kind::Delete,
        other => {
            return Err(malformed(format!(
                "expected field [create], [delete], [index] or [update] but found [{other}]"
            )))
        }
    };
    let Value::Object(meta) = meta else {
        return Err(malformed(format!("expected START_OBJECT but found [{}]", token_name(&meta))));
    };
    let mut action = Action {
        kind,
        line,
        index: default_index.unwrap_or_default().to_string(),
        id: None,
        if_seq_no: None,
        if_primary_term: None,
        retry_on_conflict: 0,
        source: None,
    };
    let number = |key: &str, v: &Value| {
        v.as_u64().ok_or_else(|| malformed(format!("[{key}] must be a non-negative integer, not {v}")))
    };
    for (key, value) in &meta {
        match key.as_str() {
            "_index" => {
                action.index =
                    value.as_str().ok_or_else(|| malformed("[_index] must be a string".into()))?.to_string()
            }
            "_id" => {
                action.id = Some(id_text(value).ok_or_else(|| malformed("[_id] must be a string".into()))?)
            }
            "if_seq_no" => action.if_seq_no = Some(number(key, value)?),
            "if_primary_term" => action.if_primary_term = Some(number(key, value)?),
            "retry_on_conflict" => {
                action.retry_on_conflict = number(key, value)?.min(u64::from(u32::MAX)) as u32
            }
            "op_type" if kind == Kind::Index => {
                action.kind = match value.as_str() {
                    Some("create") => Kind::Create,
                    Some("index") => Kind::Index,
                    _ => {
                        return Err(malformed(format!("[op_type] must be [index] or [create], not {value}")))
                    }
                }
            }
            "routing" | "require_alias" | "dynamic_templates" | "_source" => {}
            "version" | "version_type" | "pipeline" => {
                return Err(malformed(format!("[{key}] is not supported by Needle")));
            }
            other => {
                return Err(ApiError::illegal_argument(format!(
                    "Action/metadata line [{n}] contains an unknown parameter [{other}]"
                )))
            }
        }
    }
    if action.index.is_empty() {
        return Err(write::validation(&format!("index is missing for the action on line [{n}]")));
    }
    if action.id.is_none() && matches!(kind, Kind::Delete | Kind::Update) {
        return Err(write::validation(&format!("id is missing for the action on line [{n}]")));
    }
    Ok(action)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_and_their_documents() {
        let body = "{\"index\":{\"_index\":\"a\",\"_id\":1}}\n{\"x\":1}\n{\"delete\":{\"_id\":\"2\"}}\n\n{\"update\":{\"_id\":\"3\",\"retry_on_conflict\":2}}\n{\"doc\":{}}\n";
        let actions = parse(body, Some("b")).unwrap();
        assert_eq!(actions.len(), 3);
        assert_eq!(
            (actions[0].index.as_str(), actions[0].id.as_deref(), actions[0].source),
            ("a", Some("1"), Some("{\"x\":1}"))
        );
        assert_eq!((actions[1].index.as_str(), actions[1].source), ("b", None));
        assert_eq!(actions[2].retry_on_conflict, 2);
    }

    #[test]
    fn malformed_bodies_fail_whole() {
        for (body, want) in [
            ("{\"index\":{}}\n{}", "terminated by a newline"),
            ("{\"index\":{}}\n{}\n", "index is missing"),
            ("{\"upsert\":{\"_index\":\"a\"}}\n", "but found [upsert]"),
            ("[1]\n", "expected START_OBJECT but found [START_ARRAY]"),
            ("{\"delete\":{\"_index\":\"a\"}}\n", "id is missing"),
            ("{\"index\":{\"_index\":\"a\",\"bogus\":1}}\n{}\n", "unknown parameter [bogus]"),
            ("{\"index\":{\"_index\":\"a\"}}\n", "no document line"),
            ("", "no requests added"),
        ] {
            let err = parse(body, None).err().unwrap_or_else(|| panic!("{body:?} parsed"));
            assert!(err.reason.contains(want), "{body:?}: {}", err.reason);
        }
    }
}
