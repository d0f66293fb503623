//! `/_data_stream` (make, list, delete, `_stats`) over the registry of
//! `data_streams.rs`, and `/{target}/_rollover` of a data stream or an
//! alias. A stream is made here, by its `PUT` or by a first write to its
//! name ([`crate::server::App::index_for_write`]), from the index template
//! that makes it one; its backing indexes are made as indexes are
//! (`indices.rs`), hidden, their timestamp field mapped as a date. Not on a
//! cluster yet: its nodes would each need every stream.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use needle_engine::{AggField, AggKind, Aggregation, Metric, Query};
use serde_json::{json, Map, Value};

use crate::alias_options::AliasOptions;
use crate::call::Call;
use crate::catalog::{now_ms, AliasChange, Handle};
use crate::data_streams::{self, backing_index, Stream};
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::routes::cat::store_bytes;
use crate::routes::indices::{create_with, ADMIN_PARAMS};
use crate::server::{blocking, App, Shared};

/// Makes data stream `name` from the index template matching it, with its
/// first backing index; `None` when no template makes `name` a stream.
/// Made once, whatever requests race to make it: the one that finds it made gets `resource_already_exists_exception`.
pub fn make(app: &App, name: &str) -> ApiResult<Option<Arc<Handle>>> {
    let Some((template, field)) = app.catalog.templates().data_stream_for(name) else { return Ok(None) };
    not_on_a_cluster(app)?;
    data_streams::check_name(name)?;
    let mut change = app.catalog.data_streams().change();
    if change.get(name).is_some() {
        return Err(ApiError::bad_request(
            "resource_already_exists_exception",
            format!("data_stream [{name}] already exists"),
        ));
    }
    if app.catalog.exists(name) {
        return Err(ApiError::bad_request(
            "resource_already_exists_exception",
            format!("index [{name}] already exists, a data stream cannot have its name"),
        ));
    }
    let index = backing_index(name, 1);
    let handle = make_backing(app, name, &index, &field)?;
    let stream = Stream { timestamp_field: field, template, generation: 1, indices: vec![index.clone()] };
    if let Err(e) = change.keep(name, Some(stream)) {
        drop(change);
        let _ = app.catalog.delete_unchecked(&index);
        return Err(e);
    }
    Ok(Some(handle))
}

/// Backing index `index` of stream `name`: made from the template matching
/// the stream's name, hidden, `field` a date, no aliases.
fn make_backing(app: &App, name: &str, index: &str, field: &str) -> ApiResult<Arc<Handle>> {
    let mut body = app.catalog.templates().applied(name, &json!({}))?;
    body.as_object_mut().map(|b| b.remove("aliases"));
    body["settings"]["index.hidden"] = json!(true);
    if !body["mappings"].is_object() {
        body["mappings"] = json!({});
    }
    body["mappings"]["properties"][field] = json!({"type": "date"});
    create_with(&app.catalog, index, &body, None, None)
}

fn not_on_a_cluster(app: &App) -> ApiResult<()> {
    match app.member {
        Some(_) => {
            Err(ApiError::illegal_argument("data streams are not supported on a cluster yet by Needle"))
        }
        None => Ok(()),
    }
}

/// `PUT /_data_stream/{name}`.
pub async fn put(State(app): State<Shared>, Path(name): Path<String>, call: Call) -> Response {
    blocking(move || {
        call.params.ignore(&ADMIN_PARAMS);
        call.params.finish(&call.path)?;
        data_streams::check_name(&name)?;
        match make(&app, &name)? {
            Some(_) => Ok(respond::ok(&json!({"acknowledged": true}))),
            None => Err(ApiError::illegal_argument(format!(
                "no matching index template found for data stream [{name}]"
            ))),
        }
    })
    .await
}

/// The streams `names` names (comma-separated, `*` patterns; all without
/// it), by name; a plain name naming none is a 404.
fn named(app: &App, names: Option<&str>) -> ApiResult<Vec<(String, Stream)>> {
    let mut all = app.catalog.data_streams().all();
    let names = match names.filter(|n| *n != "_all" && *n != "*") {
        Some(names) => crate::pattern::named(&all, names, ApiError::index_not_found)?,
        None => all.keys().cloned().collect(),
    };
    let mut streams: Vec<(String, Stream)> =
        names.into_iter().filter_map(|n| all.remove(&n).map(|s| (n, s))).collect();
    streams.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(streams)
}

pub async fn get_all(state: State<Shared>, call: Call) -> Response {
    get(state, None, call).await
}

pub async fn get_named(state: State<Shared>, Path(names): Path<String>, call: Call) -> Response {
    get(state, Some(names), call).await
}

/// `GET /_data_stream[/{names}]`.
async fn get(State(app): State<Shared>, names: Option<String>, call: Call) -> Response {
    blocking(move || {
        call.params.ignore(&ADMIN_PARAMS);
        call.params.finish(&call.path)?;
        let uuid_of = |index: &str| app.catalog.index(index).map(|h| h.settings().uuid).unwrap_or_default();
        let shown: Vec<Value> =
            named(&app, names.as_deref())?.iter().map(|(n, s)| data_streams::shown(n, s, uuid_of)).collect();
        Ok(respond::ok(&json!({"data_streams": shown})))
    })
    .await
}

/// `DELETE /_data_stream/{names}`: each stream, then its backing indexes.
/// A name that names none is acknowledged, as OpenSearch acknowledges it.
pub async fn delete(State(app): State<Shared>, Path(names): Path<String>, call: Call) -> Response {
    blocking(move || {
        call.params.ignore(&ADMIN_PARAMS);
        call.params.finish(&call.path)?;
        let streams = match named(&app, Some(&names)) {
            Err(e) if e.kind == "index_not_found_exception" => Vec::new(),
            found => found?,
        };
        for (name, stream) in streams {
            app.catalog.data_streams().change().keep(&name, None)?;
            for index in &stream.indices {
                match app.catalog.delete_unchecked(index) {
                    Err(e) if e.kind == "index_not_found_exception" => {}
                    done => done?,
                }
            }
        }
        Ok(respond::ok(&json!({"acknowledged": true})))
    })
    .await
}

pub async fn stats_all(state: State<Shared>, call: Call) -> Response {
    stats(state, None, call).await
}

pub async fn stats_named(state: State<Shared>, Path(names): Path<String>, call: Call) -> Response {
    stats(state, Some(names), call).await
}

/// `GET /_data_stream[/{names}]/_stats`: each stream's backing indexes, their bytes and latest timestamp.
async fn stats(State(app): State<Shared>, names: Option<String>, call: Call) -> Response {
    blocking(move || {
        call.params.ignore(&ADMIN_PARAMS);
        call.params.finish(&call.path)?;
        let (mut total_bytes, mut shards) = (0, 0);
        let mut shown = Vec::new();
        for (name, stream) in named(&app, names.as_deref())? {
            let handles: Vec<Arc<Handle>> =
                stream.indices.iter().filter_map(|i| app.catalog.index(i)).collect();
            let bytes: u64 = handles.iter().map(|h| store_bytes(h)).sum();
            let mut latest = 0;
            for h in &handles {
                latest = latest.max(latest_timestamp(h, &stream.timestamp_field)?);
            }
            total_bytes += bytes;
            shards += handles.len();
            shown.push(json!({"data_stream": name, "backing_indices": handles.len(),
                              "store_size_bytes": bytes, "maximum_timestamp": latest}));
        }
        Ok(respond::ok(&json!({
            "_shards": {"total": shards, "successful": shards, "failed": 0},
            "data_stream_count": shown.len(),
            "backing_indices": shards,
            "total_store_size_bytes": total_bytes,
            "data_streams": shown,
        })))
    })
    .await
}

/// The latest date in `field` of index `h` (0 when it holds none).
fn latest_timestamp(h: &Handle, field: &str) -> ApiResult<i64> {
    let schema = h.index.schema();
    let Some(id) = schema.field_id(field) else { return Ok(0) };
    let max = AggKind::Metric(Metric::Max, AggField { id, kind: schema.field(id).kind });
    let agg = Aggregation { name: "m".into(), kind: max, subs: vec![], format: None, missing: None };
    let (_, found) = h.index.searcher().aggregate(&Query::MatchAll, &[agg])?;
    Ok(found["m"]["value"].as_f64().map_or(0, |v| v as i64))
}

pub async fn rollover(State(app): State<Shared>, Path(target): Path<String>, call: Call) -> Response {
    blocking(move || roll_over(&app, &target, None, &call)).await
}

pub async fn rollover_named(
    State(app): State<Shared>,
    Path((target, new_index)): Path<(String, String)>,
    call: Call,
) -> Response {
    blocking(move || roll_over(&app, &target, Some(&new_index), &call)).await
}

/// `POST /{target}/_rollover[/{new_index}]`: a new write index for a data
/// stream or an alias, when no `conditions` are given or its write index
/// meets any of them (`dry_run`: only tells).
fn roll_over(app: &App, target: &str, new_index: Option<&str>, call: &Call) -> ApiResult<Response> {
    let dry_run = call.params.flag("dry_run", false)?;
    call.params.ignore(&ADMIN_PARAMS);
    call.params.finish(&call.path)?;
    let asked = read_rollover(call.json()?.as_ref())?;
    let mut change = app.catalog.data_streams().change();
    let Some(mut stream) = change.get(target).cloned() else {
        drop(change);
        return roll_alias_over(app, target, new_index, asked, dry_run);
    };
    if new_index.is_some() {
        return Err(ApiError::illegal_argument(
            "new index name may not be specified when rolling over a data stream",
        ));
    }
    if !asked.body.is_empty() {
        return Err(ApiError::illegal_argument(
            "[settings], [mappings] and [aliases] in a rollover of a data stream are not supported by Needle: its template gives the new index them",
        ));
    }
    let old = stream.write_index().to_string();
    let new = backing_index(target, stream.generation + 1);
    let current = app.catalog.index(&old).ok_or_else(|| ApiError::index_not_found(&old))?;
    let (rolled, met) = asked.met(&current, dry_run);
    if rolled {
        make_backing(app, target, &new, &stream.timestamp_field)?;
        stream.generation += 1;
        stream.indices.push(new.clone());
        change.keep(target, Some(stream))?;
    }
    Ok(rolled_over(&old, &new, rolled, dry_run, met))
}

/// [`roll_over`] of alias `alias`: its write index's successor (`new_index`,
/// or the old name's number plus one) is made as `PUT /{index}` makes one,
/// with the request's settings, mappings and aliases, and takes the alias:
/// marked the write index where the old one was (which keeps the alias,
/// unmarked), else moved to it.
fn roll_alias_over(
    app: &App,
    alias: &str,
    new_index: Option<&str>,
    asked: Rollover,
    dry_run: bool,
) -> ApiResult<Response> {
    let Some((old, options)) = app.catalog.alias_write_index(alias)? else {
        return Err(match app.catalog.exists(alias) {
            true => ApiError::illegal_argument(
                "rollover target is a [concrete index] but one of [alias,data_stream] was expected",
            ),
            false => ApiError::illegal_argument(format!("rollover target [{alias}] does not exist")),
        });
    };
    let new = match new_index {
        Some(name) => name.to_string(),
        None => next_name(&old.name)?,
    };
    let (rolled, met) = asked.met(&old, dry_run);
    if rolled {
        let body = app.catalog.templates().applied(&new, &Value::Object(asked.body))?;
        create_with(&app.catalog, &new, &body, None, None)?;
        let marked = options.is_write_index == Some(true);
        let add = AliasOptions {
            is_write_index: marked.then_some(true),
            is_hidden: options.is_hidden,
            ..Default::default()
        };
        let kept = marked.then(|| AliasOptions { is_write_index: Some(false), ..options });
        app.catalog.change_aliases(&[
            AliasChange { index: new.clone(), alias: alias.to_string(), options: Some(add) },
            AliasChange { index: old.name.clone(), alias: alias.to_string(), options: kept },
        ])?;
    }
    Ok(rolled_over(&old.name, &new, rolled, dry_run, met))
}

/// The name after `old` in a rollover: its number after the last `-` plus one, in six digits at least.
fn next_name(old: &str) -> ApiResult<String> {
    let numbered =
        old.rsplit_once('-').filter(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    match numbered.and_then(|(prefix, n)| Some((prefix, n.parse::<u64>().ok()?))) {
        Some((prefix, n)) => Ok(format!("{prefix}-{:06}", n + 1)),
        None => {
            Err(ApiError::illegal_argument(format!("index name [{old}] does not match pattern '^.*-\\d+$'")))
        }
    }
}

fn rolled_over(old: &str, new: &str, rolled: bool, dry_run: bool, met: Map<String, Value>) -> Response {
    respond::json(
        StatusCode::OK,
        &json!({"acknowledged": rolled, "shards_acknowledged": rolled, "old_index": old, "new_index": new,
                "rolled_over": rolled, "dry_run": dry_run, "conditions": met}),
    )
}

/// A rollover condition: the write index rolls over when it meets any.
enum Condition {
    MaxDocs(u64),
    /// The index's age since its creation, in milliseconds, as written.
    MaxAge(u64, String),
    MaxSize(u64, String),
}

impl Condition {
    fn shown(&self) -> String {
        match self {
            Condition::MaxDocs(n) => format!("[max_docs: {n}]"),
            Condition::MaxAge(_, text) => format!("[max_age: {text}]"),
            Condition::MaxSize(_, text) => format!("[max_size: {text}]"),
        }
    }

    fn met(&self, h: &Handle) -> bool {
        match self {
            Condition::MaxDocs(n) => h.index.searcher().num_docs() >= *n,
            Condition::MaxAge(ms, _) => now_ms().saturating_sub(h.settings().creation_date) >= *ms,
            Condition::MaxSize(bytes, _) => store_bytes(h) >= *bytes,
        }
    }
}

/// A rollover's body: its `conditions`, and what a new index is made with
/// (`settings`, `mappings`, `aliases` as in a creation body; empty ones left out).
struct Rollover {
    conditions: Vec<Condition>,
    body: Map<String, Value>,
}

impl Rollover {
    /// Whether index `h` rolls over (no conditions, or one it meets; never
    /// in a dry run), and each condition as shown with whether `h` meets it.
    fn met(&self, h: &Handle, dry_run: bool) -> (bool, Map<String, Value>) {
        let met: Map<String, Value> = self.conditions.iter().map(|c| (c.shown(), json!(c.met(h)))).collect();
        let rolls = met.is_empty() || met.values().any(|m| m == true);
        (rolls && !dry_run, met)
    }
}

fn read_rollover(body: Option<&Value>) -> ApiResult<Rollover> {
    let parse = |reason: String| ApiError::bad_request("x_content_parse_exception", reason);
    let mut asked = Rollover { conditions: Vec::new(), body: Map::new() };
    let Some(body) = body else { return Ok(asked) };
    let body = body.as_object().ok_or_else(|| parse("[rollover] the body must be an object".into()))?;
    for (key, value) in body {
        match key.as_str() {
            "conditions" => {
                let given =
                    value.as_object().ok_or_else(|| parse("[conditions] must be an object".into()))?;
                for (name, v) in given {
                    asked.conditions.push(read_condition(name, v)?);
                }
            }
            "settings" | "mappings" | "aliases" if value.as_object().is_some_and(Map::is_empty) => {}
            "settings" | "mappings" | "aliases" => {
                asked.body.insert(key.clone(), value.clone());
            }
            other => return Err(parse(format!("[rollover] unknown field [{other}]"))),
        }
    }
    Ok(asked)
}

fn read_condition(name: &str, v: &Value) -> ApiResult<Condition> {
    let text = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
    match name {
        "max_docs" => {
            v.as_u64().or_else(|| text.parse().ok()).map(Condition::MaxDocs).ok_or_else(|| {
                ApiError::illegal_argument(format!("[max_docs] must be a number, not [{text}]"))
            })
        }
        "max_age" => {
            let age = crate::params::time_value("max_age", &text)?;
            Ok(Condition::MaxAge(age.as_millis() as u64, text))
        }
        "max_size" => needle_core::parse_size(&text)
            .map(|bytes| Condition::MaxSize(bytes, text.clone()))
            .map_err(|e| ApiError::illegal_argument(format!("[max_size]: {e}"))),
        other => Err(ApiError::bad_request(
            "x_content_parse_exception",
            format!(
                "[conditions] unknown field [{other}] did you mean any of [max_docs, max_age, max_size]?"
            ),
        )),
    }
}
