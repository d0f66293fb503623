//! What every document write shares: its conditions (`op_type`,
//! `if_seq_no`, `if_primary_term`), partial updates, and the shape of its answer.

use axum::http::StatusCode;
use needle_engine::{in_place_field, IfCurrent, Schema, WriteOutcome};
use serde_json::{json, Map, Value};

use crate::catalog::Handle;
use crate::error::{ApiError, ApiResult};
use crate::params::Params;
use crate::routes::shards;

/// One node that never loses its primary: the primary term is always 1.
pub const PRIMARY_TERM: u64 = 1;

/// Parameters of a write that change nothing on one node.
pub const WRITE_PARAMS: [&str; 5] =
    ["timeout", "wait_for_active_shards", "routing", "require_alias", "require_data_stream"];

/// A write's answer: `_index`, `_id`, `_version`, `result`, `_shards`, `_seq_no`, `_primary_term`.
pub fn written(index: &str, id: &str, version: u64, seq_no: u64, result: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("_index".into(), json!(index));
    m.insert("_id".into(), json!(id));
    m.insert("_version".into(), json!(version));
    m.insert("result".into(), json!(result));
    m.insert("_shards".into(), shards());
    m.insert("_seq_no".into(), json!(seq_no));
    m.insert("_primary_term".into(), json!(PRIMARY_TERM));
    m
}

/// Marks a write's answer as refreshed when `refresh=true` asked for it.
pub fn note_refresh(body: &mut Map<String, Value>, refresh: bool) {
    if refresh {
        body.insert("forced_refresh".into(), json!(true));
    }
}

/// The answer to an index or create: 201 and `created`, or 200 and `updated`.
pub fn indexed(index: &str, o: &WriteOutcome) -> (StatusCode, Map<String, Value>) {
    match o.created {
        true => (StatusCode::CREATED, written(index, &o.id, o.version, o.seq_no, "created")),
        false => (StatusCode::OK, written(index, &o.id, o.version, o.seq_no, "updated")),
    }
}

/// Deletes `id` from `h` if `condition` holds, not waiting for durability:
/// the answer (200 `deleted` or 404 `not_found`) and the sequence number to wait for.
pub fn delete_deferred(
    h: &Handle,
    id: &str,
    condition: IfCurrent,
) -> ApiResult<(StatusCode, Map<String, Value>, u64)> {
    let (outcome, seq_no) = h.writer.remove_deferred(id, condition).map_err(|e| about_index(e.into(), h))?;
    Ok(match outcome {
        Some(o) => (StatusCode::OK, written(&h.name, id, o.version, o.seq_no, "deleted"), seq_no),
        None => (StatusCode::NOT_FOUND, written(&h.name, id, 1, seq_no, "not_found"), seq_no),
    })
}

/// The condition `op_type`, `if_seq_no` and `if_primary_term` put on a write to `id`.
pub fn condition(
    id: &str,
    create: bool,
    if_seq_no: Option<u64>,
    if_primary_term: Option<u64>,
) -> ApiResult<IfCurrent> {
    match (if_seq_no, if_primary_term) {
        (None, None) => Ok(if create { IfCurrent::Absent } else { IfCurrent::Any }),
        (Some(_), _) if create => Err(validation("create operations do not support compare and set. use index instead")),
        (Some(_), None) => Err(validation("ifSeqNo is set, but primary term is [0]")),
        (None, Some(term)) => Err(validation(&format!("ifSeqNo is unassigned, but primary term is [{term}]"))),
        (Some(seq_no), Some(PRIMARY_TERM)) => Ok(IfCurrent::SeqNo(seq_no)),
        (Some(seq_no), Some(term)) => Err(conflict(
            id,
            &format!("required seqNo [{seq_no}], primary term [{term}]. The current primary term is [{PRIMARY_TERM}]"),
        )),
    }
}

/// The condition of a write's URL parameters.
pub fn condition_of(params: &Params, id: &str, create: bool) -> ApiResult<IfCurrent> {
    if params.get("version").is_some() || params.get("version_type").is_some() {
        return Err(ApiError::illegal_argument(
            "external versioning ([version], [version_type]) is not supported by Needle: use if_seq_no and if_primary_term",
        ));
    }
    let create = match params.get("op_type") {
        None => create,
        Some("create") => true,
        Some("index") if !create => false,
        Some(other) => {
            return Err(ApiError::illegal_argument(format!(
                "opType must be 'create' or 'index', found: [{other}]"
            )))
        }
    };
    condition(id, create, params.number("if_seq_no")?, params.number("if_primary_term")?)
}

pub fn validation(reason: &str) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "action_request_validation_exception",
        format!("Validation Failed: 1: {reason};"),
    )
}

fn conflict(id: &str, reason: &str) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "version_conflict_engine_exception",
        format!("[{id}]: version conflict, {reason}"),
    )
}

/// Adds the index to an error about a document write, as Elasticsearch does.
pub fn about_index(mut e: ApiError, h: &Handle) -> ApiError {
    if e.status == StatusCode::CONFLICT || e.kind == "document_missing_exception" {
        e.extra.insert("index_uuid".into(), json!(h.settings().uuid));
        e.extra.insert("shard".into(), json!("0"));
        e.extra.insert("index".into(), json!(h.name));
    }
    e
}

/// A partial update's body: `doc`, `upsert`, `doc_as_upsert`, `detect_noop`.
pub struct Update {
    pub doc: Option<Map<String, Value>>,
    pub upsert: Option<Map<String, Value>>,
    pub doc_as_upsert: bool,
    pub detect_noop: bool,
    /// The body's `_source`: what of the updated document to return.
    pub source: Option<Value>,
}

impl Update {
    pub fn parse(body: Map<String, Value>) -> ApiResult<Update> {
        let mut u = Update { doc: None, upsert: None, doc_as_upsert: false, detect_noop: true, source: None };
        let object = |key: &str, v: Value| match v {
            Value::Object(m) => Ok(m),
            other => Err(ApiError::parsing(format!("[update] [{key}] must be an object, not {other}"))),
        };
        let flag = |key: &str, v: &Value| {
            v.as_bool().ok_or_else(|| ApiError::parsing(format!("[update] [{key}] must be true or false")))
        };
        for (key, value) in body {
            match key.as_str() {
                "doc" => u.doc = Some(object("doc", value)?),
                "upsert" => u.upsert = Some(object("upsert", value)?),
                "doc_as_upsert" => u.doc_as_upsert = flag(&key, &value)?,
                "detect_noop" => u.detect_noop = flag(&key, &value)?,
                "_source" => u.source = Some(value),
                "script" | "scripted_upsert" => {
                    return Err(ApiError::illegal_argument(
                        "scripted updates are not supported by Needle: send a partial [doc]",
                    ))
                }
                other => return Err(ApiError::parsing(format!("[UpdateRequest] unknown field [{other}]"))),
            }
        }
        if u.doc.is_none() && u.upsert.is_none() {
            return Err(validation("script or doc is missing"));
        }
        Ok(u)
    }
}

/// What an update did.
pub struct Updated {
    /// `created`, `updated` or `noop`.
    pub result: &'static str,
    pub version: u64,
    pub seq_no: u64,
    /// The document now.
    pub source: Map<String, Value>,
}

/// Applies `update` to document `id` of `h` (not waiting for durability:
/// the caller waits for `seq_no`). A concurrent change to the document is
/// retried `retries` times; `if_seq_no` must match the document read.
pub fn apply_update(
    h: &Handle,
    id: &str,
    update: &Update,
    condition: IfCurrent,
    retries: u32,
) -> ApiResult<Updated> {
    let mut attempt = 0;
    loop {
        match update_once(h, id, update, condition) {
            Err(e)
                if e.status == StatusCode::CONFLICT && condition == IfCurrent::Any && attempt < retries =>
            {
                attempt += 1
            }
            other => return other.map_err(|e| about_index(e, h)),
        }
    }
}

fn update_once(h: &Handle, id: &str, update: &Update, condition: IfCurrent) -> ApiResult<Updated> {
    let Some(current) = h.index.searcher().get_document(id)? else {
        let upsert = match (&update.upsert, update.doc_as_upsert) {
            (Some(u), _) => u,
            (None, true) => update.doc.as_ref().expect("doc or upsert"),
            (None, false) => return Err(missing(id)),
        };
        if let IfCurrent::SeqNo(_) = condition {
            return Err(missing(id));
        }
        let o =
            h.writer.put_deferred(Some(id), &Value::Object(upsert.clone()).to_string(), IfCurrent::Absent)?;
        return Ok(Updated {
            result: "created",
            version: o.version,
            seq_no: o.seq_no,
            source: upsert.clone(),
        });
    };
    if let IfCurrent::SeqNo(want) = condition {
        if want != current.seq_no {
            return Err(conflict(
                id,
                &format!("required seqNo [{want}], primary term [1]. current document has seqNo [{}] and primary term [1]", current.seq_no),
            ));
        }
    }
    let Ok(Value::Object(mut source)) = serde_json::from_str::<Value>(&current.source) else {
        return Err(ApiError::illegal_argument(format!("the stored source of [{id}] is not a JSON object")));
    };
    let before = source.clone();
    if let Some(doc) = &update.doc {
        merge(&mut source, doc);
    }
    if update.detect_noop && source == before {
        return Ok(Updated { result: "noop", version: current.version, seq_no: current.seq_no, source });
    }
    let condition = IfCurrent::SeqNo(current.seq_no);
    // Only numeric values change: set in place, the document is not re-indexed.
    if let Some(doc) = update.doc.as_ref().filter(|doc| in_place(&h.index.schema(), doc)) {
        let o = h.writer.update_values_deferred(id, doc, condition)?;
        return Ok(Updated { result: "updated", version: o.version, seq_no: o.seq_no, source });
    }
    let text = Value::Object(source.clone()).to_string();
    let o = h.writer.put_deferred(Some(id), &text, condition)?;
    Ok(Updated { result: "updated", version: o.version, seq_no: o.seq_no, source })
}

/// Whether a partial document sets only single values of fields the engine
/// updates in place ([`in_place_field`]).
fn in_place(schema: &Schema, doc: &Map<String, Value>) -> bool {
    doc.iter().all(|(name, value)| {
        let scalar = matches!(value, Value::Number(_) | Value::String(_) | Value::Bool(_));
        scalar && in_place_field(schema, name).is_ok()
    })
}

fn missing(id: &str) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "document_missing_exception", format!("[{id}]: document missing"))
}

/// Merges `changes` into `into` as Elasticsearch's partial update does:
/// objects recursively, anything else replaced.
fn merge(into: &mut Map<String, Value>, changes: &Map<String, Value>) {
    for (key, change) in changes {
        match (into.get_mut(key), change) {
            (Some(Value::Object(have)), Value::Object(inner)) => merge(have, inner),
            _ => {
                into.insert(key.clone(), change.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_updates_merge_objects_and_replace_the_rest() {
        let mut doc = json!({"a": 1, "o": {"x": 1, "y": [1, 2]}, "keep": true}).as_object().cloned().unwrap();
        let change = json!({"a": 2, "o": {"y": [3], "z": "new"}}).as_object().cloned().unwrap();
        merge(&mut doc, &change);
        assert_eq!(Value::Object(doc), json!({"a": 2, "o": {"x": 1, "y": [3], "z": "new"}, "keep": true}));
    }

    #[test]
    fn conditions() {
        assert_eq!(condition("1", false, None, None).unwrap(), IfCurrent::Any);
        assert_eq!(condition("1", true, None, None).unwrap(), IfCurrent::Absent);
        assert_eq!(condition("1", false, Some(4), Some(1)).unwrap(), IfCurrent::SeqNo(4));
        assert_eq!(condition("1", false, Some(4), None).unwrap_err().status, StatusCode::BAD_REQUEST);
        assert_eq!(condition("1", false, Some(4), Some(2)).unwrap_err().status, StatusCode::CONFLICT);
        assert_eq!(condition("1", true, Some(4), Some(1)).unwrap_err().status, StatusCode::BAD_REQUEST);
    }
}
