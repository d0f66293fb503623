//! Scrolls: `_search?scroll=1m` keeps the index's snapshot of that moment
//! and answers with a `_scroll_id`; `POST /_search/scroll` returns the next
//! page of the same search over the same snapshot (writes since are not
//! seen, as in Elasticsearch); `DELETE /_search/scroll` frees them.
//!
//! Each page continues after the last hit's sort values: the keys asked for
//! (the score when none were), then the document, so every hit has one place
//! in one order and a page costs one pass over the matches, not a re-read of
//! the pages before it. Over several indexes, hits equal on the keys asked
//! for go by index, then document: a page continues after its last hit in
//! that hit's index, past the ties in the indexes before, from the first tie
//! in those after. An unused scroll is dropped when its keep-alive runs
//! out; at most [`MAX_OPEN`] are open at once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::call::Call;
use crate::error::{ApiError, ApiResult};
use crate::pools;
use crate::respond;
use crate::routes::search::{search_page, Place, Request, Target};
use crate::server::{blocking, Shared};
use crate::sort;

/// Elasticsearch's `search.max_open_scroll_context`.
pub const MAX_OPEN: usize = 500;

/// Elasticsearch's `search.max_keep_alive`.
const MAX_KEEP_ALIVE: Duration = Duration::from_secs(24 * 3600);

/// The open scrolls of the server, by id.
#[derive(Default)]
pub struct Scrolls {
    open: Mutex<HashMap<String, Open>>,
    made: AtomicU64,
}

struct Open {
    targets: Vec<Target>,
    request: Request,
    /// The last hit's place: the next page starts after it.
    after: Option<Place>,
    expires: Instant,
}

impl Scrolls {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Open>> {
        let mut open = self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = Instant::now();
        open.retain(|_, o| o.expires > now);
        open
    }

    fn insert(&self, id: String, scroll: Open) -> ApiResult<()> {
        let mut open = self.lock();
        if open.len() >= MAX_OPEN {
            return Err(ApiError::illegal_argument(format!(
                "Trying to create too many scroll contexts. Must be less than or equal to: [{MAX_OPEN}]. \
                 Clear the scrolls you no longer need with DELETE /_search/scroll."
            )));
        }
        open.insert(id, scroll);
        Ok(())
    }

    /// How many open scrolls read `index`.
    pub fn open_on(&self, index: &str) -> usize {
        self.lock().values().filter(|o| o.targets.iter().any(|t| t.name == index)).count()
    }

    fn new_id(&self) -> String {
        format!("{}{}", crate::catalog::uuid(), self.made.fetch_add(1, Ordering::Relaxed))
    }
}

/// A keep-alive: `30s`, `1m`, `500ms`, `2h`, `1d` (Elasticsearch's time units), at most a day.
pub fn keep_alive(text: &str) -> ApiResult<Duration> {
    let keep = crate::params::time_value("scroll", text)?;
    if keep > MAX_KEEP_ALIVE {
        return Err(ApiError::illegal_argument(format!(
            "Keep alive for request ({text}) is too large. It must be less than (1d). \
             This limit can be set by changing the [search.max_keep_alive] cluster level setting."
        )));
    }
    Ok(keep)
}

/// The first page of a scroll: the search as asked, in a total order, its
/// snapshot kept under a new id.
pub fn start(
    app: &Shared,
    targets: Vec<Target>,
    mut request: Request,
    keep_alive: Duration,
    started: Instant,
) -> ApiResult<Response> {
    if request.from > 0 {
        return Err(ApiError::illegal_argument("using [from] is not allowed in a scroll context"));
    }
    if request.search_after.is_some() {
        return Err(ApiError::illegal_argument("[search_after] cannot be used in a scroll context"));
    }
    request.shown_sort_keys = Some(request.sort.len());
    if request.sort.is_empty() {
        request.sort = sort::parse(&json!("_score"))?;
    }
    if !request.sort.last().is_some_and(sort::SortSpec::is_doc) {
        request.sort.extend(sort::parse(&json!("_doc"))?);
    }
    let page = search_page(&targets, &request, None)?;
    targets.iter().for_each(|t| t.counters.query.add(started));
    let after = page.last_place();
    let answer = page.answer(&request, started);
    // Aggregations come with the first page only, as in Elasticsearch.
    request.aggs = None;
    let id = app.scrolls.new_id();
    let expires = Instant::now() + keep_alive;
    app.scrolls.insert(id.clone(), Open { targets, request, after, expires })?;
    Ok(respond::ok(&with_id(&id, answer)))
}

/// `GET|POST /_search/scroll` with `scroll_id` (and `scroll`, a new keep-alive) in the body or the URL.
pub async fn next(State(app): State<Shared>, call: Call) -> Response {
    pools::search(app, false, move |app| continue_scroll(app, None, &call)).await
}

/// `GET|POST /_search/scroll/{scroll_id}`.
pub async fn next_by_path(State(app): State<Shared>, Path(id): Path<String>, call: Call) -> Response {
    pools::search(app, false, move |app| continue_scroll(app, Some(id), &call)).await
}

fn continue_scroll(app: &Shared, path_id: Option<String>, call: &Call) -> ApiResult<Response> {
    let started = Instant::now();
    let mut body = optional_object(call)?;
    let id = match (path_id, body.remove("scroll_id"), call.params.get("scroll_id")) {
        (Some(id), _, _) => id,
        (None, Some(Value::String(id)), _) => id,
        (None, None, Some(id)) => id.to_string(),
        (None, Some(other), _) => {
            return Err(ApiError::parsing(format!("[scroll_id] must be a string, not {other}")))
        }
        (None, None, None) => {
            return Err(ApiError::illegal_argument(
                "request does not support [scroll_id] missing: give [scroll_id]",
            ))
        }
    };
    let renew = match (body.remove("scroll"), call.params.get("scroll")) {
        (Some(Value::String(t)), _) => Some(keep_alive(&t)?),
        (Some(other), _) => {
            return Err(ApiError::parsing(format!("[scroll] must be a time value, not {other}")))
        }
        (None, Some(t)) => Some(keep_alive(t)?),
        (None, None) => None,
    };
    if let Some(key) = body.keys().next() {
        return Err(ApiError::parsing(format!("Unknown key for a scroll request [{key}].")));
    }
    let total_as_int = call.params.flag("rest_total_hits_as_int", false)?;
    call.params.finish(&call.path)?;
    let taken = app.scrolls.lock().remove(&id);
    let Some(mut scroll) = taken else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "search_context_missing_exception",
            format!("No search context found for id [{id}]"),
        ));
    };
    scroll.request.total_as_int = total_as_int;
    let page = search_page(&scroll.targets, &scroll.request, scroll.after.as_ref());
    let page = match page {
        Ok(page) => page,
        Err(e) => {
            app.scrolls.insert(id, scroll)?;
            return Err(e);
        }
    };
    if let Some(place) = page.last_place() {
        scroll.after = Some(place);
    }
    scroll.targets.iter().for_each(|t| t.counters.scroll.add(started));
    let answer = page.answer(&scroll.request, started);
    if let Some(keep) = renew {
        scroll.expires = Instant::now() + keep;
    }
    app.scrolls.insert(id.clone(), scroll)?;
    Ok(respond::ok(&with_id(&id, answer)))
}

/// `DELETE /_search/scroll` with `scroll_id` (one or a list) in the body or the URL.
pub async fn clear(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || clear_scrolls(&app, None, &call)).await
}

/// `DELETE /_search/scroll/{ids}` (comma-separated, or `_all`).
pub async fn clear_by_path(State(app): State<Shared>, Path(ids): Path<String>, call: Call) -> Response {
    blocking(move || clear_scrolls(&app, Some(ids), &call)).await
}

fn clear_scrolls(app: &Shared, path_ids: Option<String>, call: &Call) -> ApiResult<Response> {
    let mut body = optional_object(call)?;
    let mut ids: Vec<String> = Vec::new();
    let split =
        |text: &str| text.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect::<Vec<_>>();
    if let Some(text) = path_ids.as_deref().or(call.params.get("scroll_id")) {
        ids.extend(split(text));
    }
    match body.remove("scroll_id") {
        None => {}
        Some(Value::String(id)) => ids.push(id),
        Some(Value::Array(list)) => {
            for v in list {
                let Value::String(id) = v else {
                    return Err(ApiError::parsing(format!("[scroll_id] must hold strings, not {v}")));
                };
                ids.push(id);
            }
        }
        Some(other) => {
            return Err(ApiError::parsing(format!("[scroll_id] must be a string or a list, not {other}")))
        }
    }
    if let Some(key) = body.keys().next() {
        return Err(ApiError::parsing(format!("Unknown parameter [{key}] in request body")));
    }
    call.params.finish(&call.path)?;
    if ids.is_empty() {
        return Err(ApiError::illegal_argument("no scroll ids specified"));
    }
    let mut open = app.scrolls.lock();
    let freed = match ids.iter().any(|id| id == "_all") {
        true => std::mem::take(&mut *open).len(),
        false => ids.iter().filter(|id| open.remove(id.as_str()).is_some()).count(),
    };
    let status = if freed == 0 { StatusCode::NOT_FOUND } else { StatusCode::OK };
    Ok(respond::json(status, &json!({"succeeded": true, "num_freed": freed})))
}

/// The request's body object; none is an empty one (everything may come in the URL).
fn optional_object(call: &Call) -> ApiResult<Map<String, Value>> {
    match call.json()? {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m),
        Some(other) => Err(ApiError::parsing(format!("the request body must be an object, not {other}"))),
    }
}

/// A search answer with `_scroll_id` first.
fn with_id(id: &str, answer: Value) -> Value {
    let mut out = Map::new();
    out.insert("_scroll_id".into(), json!(id));
    if let Value::Object(rest) = answer {
        out.extend(rest);
    }
    Value::Object(out)
}
