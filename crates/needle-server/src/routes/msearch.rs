//! `_msearch`: several searches in one request, as newline-delimited pairs
//! of a header (`index`, `search_type`, and parameters that change nothing on one node)
//! and a search body. Each search is answered or fails alone, in the
//! order asked, under `responses`, each with its `status`.

use std::time::Instant;

use axum::extract::{Path, State};
use axum::response::Response;
use serde_json::{json, Value};

use crate::call::{parse_json, Call};
use crate::error::{ApiError, ApiResult};
use crate::params::Params;
use crate::pools;
use crate::respond;
use crate::routes::search::{body_request, is_dfs, search_answer};
use crate::server::Shared;

/// Header keys that change nothing on one node.
const IGNORED_HEADER_KEYS: [&str; 8] = [
    "preference",
    "routing",
    "request_cache",
    "ignore_unavailable",
    "allow_no_indices",
    "expand_wildcards",
    "allow_partial_search_results",
    "ccs_minimize_roundtrips",
];

pub async fn msearch(State(app): State<Shared>, call: Call) -> Response {
    pools::search(app, false, move |app| run(app, None, &call)).await
}

pub async fn msearch_into(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    pools::search(app, false, move |app| run(app, Some(&index), &call)).await
}

fn run(app: &Shared, default_index: Option<&str>, call: &Call) -> ApiResult<Response> {
    let started = Instant::now();
    let (options, text) = (Options::read(&call.params, &call.path)?, call.text()?);
    let responses: Vec<Value> = searches(text)?
        .into_iter()
        .map(|(header, body)| answered(one(app, default_index, header, body, options)))
        .collect();
    Ok(respond::ok(&answer(started, responses)))
}

/// What the request's URL sets for every search of it.
#[derive(Clone, Copy)]
pub(crate) struct Options {
    pub total_as_int: bool,
    pub dfs: bool,
}

impl Options {
    /// The URL's parameters (any other is an error naming it).
    pub(crate) fn read(p: &Params, path: &str) -> ApiResult<Options> {
        let total_as_int = p.flag("rest_total_hits_as_int", false)?;
        p.ignore(&[
            "max_concurrent_searches",
            "max_concurrent_shard_requests",
            "pre_filter_shard_size",
            "typed_keys",
        ]);
        p.ignore(&IGNORED_HEADER_KEYS);
        let dfs = p.get("search_type").map(is_dfs).transpose()?.unwrap_or(false);
        p.finish(path)?;
        Ok(Options { total_as_int, dfs })
    }
}

/// The request's searches, each a header line and a body line.
pub(crate) fn searches(text: &str) -> ApiResult<Vec<(&str, &str)>> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return Err(ApiError::illegal_argument("no requests added"));
    }
    if !lines.len().is_multiple_of(2) {
        return Err(ApiError::illegal_argument(format!(
            "the last search header (line {}) has no body: each search is a header line and a body line",
            lines.len()
        )));
    }
    Ok(lines.chunks(2).map(|pair| (pair[0], pair[1])).collect())
}

/// One search's entry under `responses`: its answer, or its error, with its status.
pub(crate) fn answered(result: ApiResult<Value>) -> Value {
    match result {
        Ok(mut answer) => {
            answer["status"] = json!(200);
            answer
        }
        Err(e) => json!({"error": e.body()["error"], "status": e.status.as_u16()}),
    }
}

pub(crate) fn answer(started: Instant, responses: Vec<Value>) -> Value {
    let mut answer = json!({"took": started.elapsed().as_millis() as u64});
    answer["responses"] = Value::Array(responses); // moved: `json!` would copy every hit
    answer
}

/// The indexes a search header names (`default_index` when none, else all)
/// and whether it searches with the statistics of all of them (`dfs`, the
/// URL's unless the header says).
pub(crate) fn header_of(
    default_index: Option<&str>,
    header: &str,
    mut dfs: bool,
) -> ApiResult<(String, bool)> {
    let Value::Object(header) = parse_json(header.as_bytes())? else {
        return Err(ApiError::parsing("a search header must be an object"));
    };
    let mut expression = default_index.unwrap_or("_all").to_string();
    for (key, value) in &header {
        match (key.as_str(), value) {
            ("index", Value::String(s)) => expression = s.clone(),
            ("index", Value::Array(names)) => {
                let names: Option<Vec<&str>> = names.iter().map(Value::as_str).collect();
                expression = names.ok_or_else(|| ApiError::parsing("[index] must be names"))?.join(",");
            }
            ("search_type", Value::String(s)) => dfs = is_dfs(s)?,
            (k, _) if IGNORED_HEADER_KEYS.contains(&k) => {}
            (k, _) => {
                return Err(ApiError::parsing(format!("key [{k}] is not supported in the metadata section")))
            }
        }
    }
    Ok((expression, dfs))
}

/// One search: its header read for the indexes, its body as `_search` reads one.
fn one(
    app: &Shared,
    default_index: Option<&str>,
    header: &str,
    body: &str,
    options: Options,
) -> ApiResult<Value> {
    let (expression, dfs) = header_of(default_index, header, options.dfs)?;
    let mut request = body_request(parse_json(body.as_bytes())?)?;
    request.total_as_int = options.total_as_int;
    request.dfs = dfs;
    search_answer(app, &expression, &request)
}
