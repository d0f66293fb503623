//! A node of a cluster as the coordinator of the cluster's indexes, whose
//! shards are ordinary indexes on the nodes (`needle_cluster::indices`). Any
//! node takes a request for such an index and answers it as one index would:
//! it creates the index by recording where its shards go in etcd, then
//! creating each on its node; it sends a document's request to the node of
//! its shard (by `_id`); it searches every shard in two or three rounds
//! (`search.rs`); and it sends `_refresh`, `_flush` and `_forcemerge` to
//! every shard. Requests reach the nodes over HTTP, answered by the same
//! handlers as any request, so a shard is served exactly as a one-node index.
//!
//! `_bulk` and `_mget` are split by node (`bulk.rs`, `mget.rs`); `_cat/indices`
//! and `_cat/shards` list the cluster's indexes (`cat.rs`); a scroll is each
//! shard's own scroll, named by one id (`scroll.rs`); each search of an
//! `_msearch` is a search as above (`msearch.rs`); `_delete_by_query` is
//! every shard's own (`by_query.rs`). A search, count or delete by query
//! over several indexes (`a,b`, `logs-*`, `/_search`) reaches every shard of
//! each cluster index the expression names. What is not coordinated yet is
//! refused with a 400 naming it (`top_hits`, `collapse`, `max_docs` of a
//! delete by query). Writes reach the shard's primary, logged to its stream in
//! NATS JetStream when the node has one (`ingest.rs`), which its replicas
//! follow; a read whose primary's node does not answer goes to a replica
//! ([`fetch_any`]), and a shard whose every copy is down is unavailable.

mod aliases;
mod bulk;
mod by_query;
pub(crate) mod cat;
mod mget;
mod msearch;
mod scroll;
mod search;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use needle_cluster::{shard_name, shard_of, Member, ShardedIndex};
use percent_encoding::{percent_decode_str, utf8_percent_encode, NON_ALPHANUMERIC};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::task::JoinSet;

use crate::error::{shard_counts, ApiError, ApiResult};
use crate::respond;
use crate::routes::aliases::{listed, listing};
use crate::server::Shared;

/// Parameters this node applies to the coordinated answer, never passed on to
/// the shards: those that shape an answer, and a search's paging (each shard
/// answers its best `from + size`).
const NOT_PASSED_ON: [&str; 6] = ["pretty", "filter_path", "human", "error_trace", "from", "size"];

/// Marks a request a coordinator sends to a shard: the node answers it as a
/// request for its own index (else creating shard `logs.shard-0` would make a
/// cluster index of that name).
const FROM_COORDINATOR: &str = "x-needle-coordinator";

pub async fn around(State(app): State<Shared>, request: Request, next: Next) -> Response {
    let Some(member) = app.member.clone() else { return next.run(request).await };
    if request.headers().contains_key(FROM_COORDINATOR) {
        return next.run(request).await;
    }
    let path = request.uri().path().to_string();
    let method = request.method().as_str().to_string();
    if let Some((listing, expression)) = cat::listing_of(&path).filter(|_| method == "GET") {
        let answered = cat::cat(&app, &member, request, listing, &expression).await;
        return answered.unwrap_or_else(IntoResponse::into_response);
    }
    if path == "/_search/scroll" || path.starts_with("/_search/scroll/") {
        return scroll::around(&app, &member, request, next).await;
    }
    if path == "/_aliases" && method == "POST" {
        return aliases::update(&app, &member, request, next).await;
    }
    if let Some(names) = alias_listing(&path).filter(|_| method == "GET" || method == "HEAD") {
        return aliases::get_all(&member, names.as_deref(), request, next).await;
    }
    let bulk = matches!(method.as_str(), "POST" | "PUT").then(|| many_of(&path, "_bulk")).flatten();
    let mget = matches!(method.as_str(), "GET" | "POST").then(|| many_of(&path, "_mget")).flatten();
    let many = bulk.map(|index| (index, true)).or(mget.map(|index| (index, false)));
    if let Some((default_index, bulk)) = many {
        return match Forward::read(&app, member, default_index.clone().unwrap_or_default(), request).await {
            Ok(call) if bulk => bulk::bulk(&call, default_index.as_deref()).await,
            Ok(call) => mget::mget(&call, default_index.as_deref()).await,
            Err(e) => Err(e),
        }
        .unwrap_or_else(IntoResponse::into_response);
    }
    let msearch = matches!(method.as_str(), "GET" | "POST").then(|| many_of(&path, "_msearch")).flatten();
    // A node's own index (a shard) is searched as any one node's index.
    if let Some(default_index) = msearch.filter(|i| i.as_ref().is_none_or(|i| app.catalog.get(i).is_err())) {
        let name = default_index.clone().unwrap_or_default();
        return match Forward::read(&app, member, name, request).await {
            Ok(call) => msearch::msearch(&call, default_index.as_deref()).await,
            Err(e) => Err(e),
        }
        .unwrap_or_else(IntoResponse::into_response);
    }
    if let Some((expression, api)) = searched_expression(&method, &path) {
        let answered = match Forward::read(&app, member, expression, request).await {
            Ok(call) => call.search_expression(api).await,
            Err(e) => Err(e),
        };
        return answered.unwrap_or_else(IntoResponse::into_response);
    }
    let Some((index, rest)) = split_path(&path) else { return next.run(request).await };
    // The node's own index (no cluster index holds a name a node's shard or own index holds).
    if app.catalog.get(&index).is_ok() {
        return next.run(request).await;
    }
    // A shard's own name (of a cluster index that exists) reaches the node
    // holding it: here, it is not made yet (moved here a moment ago) or moved
    // away. Nothing is made for it. Another name of that form is an index's.
    if let Some((owner, k)) = needle_cluster::indices::split_shard_name(&index) {
        match member.index(owner).await {
            Ok(Some(_)) => return shard_unavailable(owner, k, "not on this node (moving)").into_response(),
            Ok(None) => {}
            Err(e) => return unavailable(&e).into_response(),
        }
    }
    let creating = rest.is_empty() && method == "PUT";
    let found = match creating {
        true => None,
        false => match aliases::one_index(&member, &index).await {
            Ok(found) => found,
            // An alias of several indexes, searched: every index it names.
            Err(_) if searched_api(&method, &rest).is_some() => {
                let api = searched_api(&method, &rest).expect("a search");
                return match Forward::read(&app, member, index, request).await {
                    Ok(call) => call.search_expression(api).await,
                    Err(e) => Err(e),
                }
                .unwrap_or_else(IntoResponse::into_response);
            }
            Err(e) => return e.into_response(),
        },
    };
    // A write to an index that exists nowhere makes a cluster index, as Elasticsearch auto-creates.
    let auto_create = found.is_none() && is_document_write(&method, &rest);
    if found.is_none() && !creating && !auto_create {
        return next.run(request).await;
    }
    // Through an alias, the index it names is meant, and named in the answer.
    let (index, sharded) = match found {
        Some((name, sharded)) => (name, Some(sharded)),
        None => (index, None),
    };
    let call = match Forward::read(&app, member, index, request).await {
        Ok(call) => call,
        Err(e) => return e.into_response(),
    };
    let answered = match sharded {
        Some(sharded) => call.coordinate_fresh(&sharded).await,
        None => call.create(auto_create).await,
    };
    answered.unwrap_or_else(IntoResponse::into_response)
}

/// `Some(default index)` when `path` is `/{api}` or `/{index}/{api}` (`_bulk`, `_mget`).
fn many_of(path: &str, api: &str) -> Option<Option<String>> {
    if path.trim_end_matches('/').strip_prefix('/') == Some(api) {
        return Some(None);
    }
    split_path(path).filter(|(_, rest)| rest == api).map(|(index, _)| Some(index))
}

/// `(expression, api)` of a search, count or delete by query over several
/// indexes: `/_search`, `/_count` (all the cluster's indexes), or
/// `/{expression}/{api}` with an expression naming several (`a,b`,
/// `logs-*`, `_all`). A plain name goes the way of any one index's request.
fn searched_expression(method: &str, path: &str) -> Option<(String, &'static str)> {
    let path = path.strip_prefix('/')?.trim_end_matches('/');
    if let Some(api) = searched_api(method, path).filter(|api| *api != "_delete_by_query") {
        return Some(("_all".into(), api));
    }
    let (first, rest) = path.split_once('/')?;
    let expression = percent_decode_str(first).decode_utf8().ok()?;
    let several = expression == "_all" || expression.contains([',', '*']);
    several.then(|| searched_api(method, rest).map(|api| (expression.into_owned(), api))).flatten()
}

/// The API of a search, count or delete by query (`rest` of its path after the index, if any).
fn searched_api(method: &str, rest: &str) -> Option<&'static str> {
    match (method, rest) {
        ("GET" | "POST", "_search") => Some("_search"),
        ("GET" | "POST", "_count") => Some("_count"),
        ("POST", "_delete_by_query") => Some("_delete_by_query"),
        _ => None,
    }
}

/// `Some(names asked for)` when `path` lists the aliases of every index:
/// `/_alias`, `/_aliases`, `/_alias/{names}`.
fn alias_listing(path: &str) -> Option<Option<String>> {
    let path = path.trim_end_matches('/');
    match path {
        "/_alias" | "/_aliases" => Some(None),
        _ => {
            let names = path.strip_prefix("/_alias/").filter(|n| !n.is_empty() && !n.contains('/'))?;
            Some(Some(percent_decode_str(names).decode_utf8_lossy().into_owned()))
        }
    }
}

/// `/{index}/{rest}` of a path naming one index (not an API such as `/_search`).
fn split_path(path: &str) -> Option<(String, String)> {
    let path = path.strip_prefix('/')?;
    let (first, rest) = path.split_once('/').unwrap_or((path, ""));
    let index = percent_decode_str(first).decode_utf8().ok()?;
    let plain = !index.is_empty() && !index.starts_with('_') && !index.contains([',', '*']);
    plain.then(|| (index.into_owned(), rest.trim_end_matches('/').to_string()))
}

fn is_document_write(method: &str, rest: &str) -> bool {
    let first = rest.split('/').next().unwrap_or_default();
    matches!((method, first), ("PUT" | "POST", "_doc" | "_create" | "_update"))
}

/// The request's query without the parameters not passed on.
fn forwarded_query(query: Option<&str>) -> String {
    let kept: Vec<&str> = query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty() && !NOT_PASSED_ON.contains(&p.split('=').next().unwrap_or_default()))
        .collect();
    kept.join("&")
}

/// A request for a cluster index, read whole.
struct Forward {
    app: Shared,
    member: std::sync::Arc<Member>,
    /// This node's API key, shown to the nodes requests are passed on to.
    api_key: Option<String>,
    /// Whether the shards' writes are logged (`--log`): only then can a
    /// replica follow its primary.
    logged: bool,
    index: String,
    rest: String,
    method: String,
    /// The query passed on to the shards.
    query: String,
    /// The query as the request gave it.
    url_query: String,
    content_type: Option<String>,
    body: Bytes,
}

impl Forward {
    /// `request` for `index`, its body read whole.
    async fn read(
        app: &Shared,
        member: std::sync::Arc<Member>,
        index: String,
        request: Request,
    ) -> ApiResult<Forward> {
        let (parts, body) = request.into_parts();
        let body = axum::body::to_bytes(body, app.max_body)
            .await
            .map_err(|e| crate::call::too_large(&e, app.max_body))?;
        let path = parts.uri.path();
        let rest = split_path(path).map(|(_, rest)| rest).unwrap_or_default();
        Ok(Forward {
            app: app.clone(),
            member,
            api_key: app.api_key.clone(),
            logged: app.ingest.is_some(),
            index,
            rest,
            method: parts.method.as_str().to_string(),
            query: forwarded_query(parts.uri.query()),
            url_query: parts.uri.query().unwrap_or_default().to_string(),
            content_type: parts.headers.get("content-type").and_then(|v| v.to_str().ok()).map(str::to_string),
            body,
        })
    }

    /// A bodiless request for `index` from the same caller: the one that makes it.
    fn about(&self, index: &str) -> Forward {
        Forward {
            app: self.app.clone(),
            member: self.member.clone(),
            api_key: self.api_key.clone(),
            logged: self.logged,
            index: index.to_string(),
            rest: String::new(),
            method: "PUT".into(),
            query: String::new(),
            url_query: String::new(),
            content_type: None,
            body: Bytes::new(),
        }
    }

    /// `_search`, `_count` or `_delete_by_query` (`api`) over every shard of the cluster's
    /// indexes the expression (`self.index`) names.
    async fn search_expression(&self, api: &str) -> ApiResult<Response> {
        let parts = self.resolve().await?;
        match api {
            "_count" => search::count(self, &parts).await,
            "_delete_by_query" => by_query::delete_by_query(self, &parts).await,
            _ => search::search(self, &parts).await,
        }
    }

    /// The shards of the cluster's indexes an expression names, index by
    /// index (a wildcard's in name order): comma-separated names, `*`
    /// wildcards, `_all`. A name without a wildcard that names no index is
    /// an error; a wildcard may match none.
    async fn resolve(&self) -> ApiResult<Vec<Part>> {
        let known = self.member.view().indices;
        let mut names: Vec<String> = Vec::new();
        for pattern in self.index.split(',').filter(|p| !p.is_empty()) {
            let wild = pattern == "_all" || pattern.contains('*');
            let named = |name: &str| pattern == "_all" || crate::pattern::matches(pattern, name);
            let matched: Vec<String> = match wild {
                // A pattern matches indexes by their names and their aliases.
                true => known
                    .iter()
                    .filter(|(name, index)| named(name) || index.aliases.iter().any(|a| named(a)))
                    .map(|(name, _)| name.clone())
                    .collect(),
                false if known.contains_key(pattern) => vec![pattern.to_string()],
                false => {
                    let via = aliases::aliased_in(&self.member, pattern).await?;
                    match via.is_empty() {
                        true => vec![pattern.to_string()],
                        false => via.into_keys().collect(),
                    }
                }
            };
            for name in matched {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        let mut parts = Vec::new();
        for name in names {
            let sharded = match known.get(&name) {
                Some(sharded) => sharded.clone(),
                None => self
                    .member
                    .index(&name)
                    .await
                    .map_err(|e| unavailable(&e))?
                    .ok_or_else(|| ApiError::index_not_found(&name))?,
            };
            parts.extend(Part::all_of(&name, &sharded));
        }
        Ok(parts)
    }

    /// [`Forward::coordinate`] by the view's record of the index; a 404 or
    /// 503 may come of a record a moment old (the index deleted, or made
    /// again elsewhere, since): then the record in etcd decides.
    async fn coordinate_fresh(&self, sharded: &ShardedIndex) -> ApiResult<Response> {
        let answered = self.coordinate(sharded).await;
        let status = match &answered {
            Ok(response) => response.status(),
            Err(e) => e.status,
        };
        if status != StatusCode::NOT_FOUND && status != StatusCode::SERVICE_UNAVAILABLE {
            return answered;
        }
        match self.member.fresh_index(&self.index).await.map_err(|e| unavailable(&e))? {
            None => Err(ApiError::index_not_found(&self.index)),
            Some(fresh) if fresh != *sharded => self.coordinate(&fresh).await,
            Some(_) => answered,
        }
    }

    async fn coordinate(&self, sharded: &ShardedIndex) -> ApiResult<Response> {
        let method = self.method.as_str();
        let mut segments = self.rest.splitn(2, '/');
        let (first, second) = (segments.next().unwrap_or_default(), segments.next());
        match (method, first, second) {
            ("DELETE", "", None) => self.delete(sharded).await,
            ("GET" | "HEAD", "", None) | ("GET", "_mapping" | "_settings", None) => {
                self.to_shard(sharded, 0, &self.rest, method).await
            }
            (_, "_doc" | "_create" | "_update" | "_source", Some(id)) => {
                let decoded = percent_decode_str(id).decode_utf8_lossy();
                self.to_shard(sharded, shard_of(&decoded, sharded.shards.len()), &self.rest, method).await
            }
            ("POST", "_doc", None) => {
                let id = crate::catalog::uuid();
                let rest = format!("_create/{id}");
                self.to_shard(sharded, shard_of(&id, sharded.shards.len()), &rest, "PUT").await
            }
            ("GET" | "POST", "_search", None) => search::search(self, &Part::all_of(&self.index, sharded)).await,
            ("GET" | "POST", "_count", None) => search::count(self, &Part::all_of(&self.index, sharded)).await,
            ("POST", "_delete_by_query", None) => {
                by_query::delete_by_query(self, &Part::all_of(&self.index, sharded)).await
            }
            ("PUT" | "POST" | "DELETE", "_alias" | "_aliases", Some(names)) => {
                let names = percent_decode_str(names).decode_utf8_lossy();
                self.change_aliases(sharded, &names, method != "DELETE").await
            }
            ("GET", "_alias" | "_aliases", names) => {
                let names = names.map(|n| percent_decode_str(n).decode_utf8_lossy().into_owned());
                let own = [(self.index.clone(), crate::alias_options::plain(&sharded.aliases))];
                Ok(listed(listing(own, names.as_deref()), names.as_deref()))
            }
            ("PUT" | "POST", "_mapping", None) => self.change_record(sharded).await,
            ("PUT", "_settings", None) => self.change_record(sharded).await,
            (_, "_refresh" | "_flush" | "_forcemerge" | "_mapping", None) => self.broadcast(sharded).await,
            ("GET", "_stats", _) => self.stats(sharded).await,
            _ => Err(ApiError::illegal_argument(format!(
                "[{method} /{}/{}] is not supported yet on index [{}], whose shards are on the cluster's nodes",
                self.index, self.rest, self.index
            ))),
        }
    }

    /// Creates the index (`then_forward`: a document write that made it goes on to its shard).
    async fn create(&self, then_forward: bool) -> ApiResult<Response> {
        let body: Value = match then_forward || self.body.is_empty() {
            true => json!({}),
            false => serde_json::from_slice(&self.body)
                .map_err(|e| ApiError::parsing(format!("the body is not JSON: {e}")))?,
        };
        match (self.make(body).await?, then_forward) {
            ((sharded, _), true) => self.coordinate(&sharded).await,
            ((_, true), false) => Ok(respond::ok(
                &json!({"acknowledged": true, "shards_acknowledged": true, "index": self.index}),
            )),
            ((_, false), false) => Err(ApiError::bad_request(
                "resource_already_exists_exception",
                format!("index [{}] already exists", self.index),
            )),
        }
    }

    /// The index made with `body`: its shards placed on the live nodes and
    /// recorded in etcd, then each created on its node. When another request
    /// made it meanwhile, that one, with false.
    async fn make(&self, body: Value) -> ApiResult<(ShardedIndex, bool)> {
        let shards = number_of_shards(&body)?;
        let (body, aliases) = aliases::taken_from(body)?;
        let indices = self.member.indices().await.map_err(|e| unavailable(&e))?;
        if !needle_cluster::indices::aliased(&indices, &self.index).is_empty() {
            return Err(ApiError::bad_request(
                "invalid_index_name_exception",
                format!("Invalid index name [{}], an alias with the same name already exists", self.index),
            ));
        }
        aliases::check_new(&self.app, &indices, aliases.iter().filter(|a| *a != &self.index))?;
        if aliases.contains(&self.index) {
            return Err(aliases::same_name_as_index(&self.index));
        }
        let view = self.member.view();
        let nodes: Vec<String> = view.nodes.iter().map(|n| n.id.clone()).collect();
        let mut sharded = ShardedIndex { shards: Vec::new(), replicas: Vec::new(), created: body, aliases };
        sharded.shards = needle_cluster::indices::place(&self.index, shards, &nodes);
        if self.logged {
            let wanted = number_of_replicas(&sharded.created)?;
            sharded.replicas = needle_cluster::indices::place_replicas(&sharded.shards, wanted, &nodes);
        }
        if sharded.shards.is_empty() {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "no_shard_available_action_exception",
                "no live node to hold a shard",
            ));
        }
        if !self.member.create_index(&self.index, &sharded).await.map_err(|e| unavailable(&e))? {
            return match self.member.fresh_index(&self.index).await.map_err(|e| unavailable(&e))? {
                Some(existing) => Ok((existing, false)),
                None => Err(unavailable(&"the index was made and deleted meanwhile")),
            };
        }
        let shard_body = Bytes::from(sharded.created.to_string());
        for k in 0..sharded.shards.len() {
            let answer =
                self.send(&sharded, k, "PUT", "", "", Some("application/json"), shard_body.clone()).await;
            if let Err(e) = answer.and_then(|(status, value)| ok_or_error(status, value)) {
                self.undo_create(&sharded, k).await;
                return Err(e);
            }
        }
        Ok((sharded, true))
    }

    /// Forgets a creation that failed at shard `failed`: the shards before it and the record.
    async fn undo_create(&self, sharded: &ShardedIndex, failed: usize) {
        for k in 0..failed {
            let _ = self.send(sharded, k, "DELETE", "", "", None, Bytes::new()).await;
        }
        let _ = self.member.delete_index(&self.index).await;
    }

    async fn delete(&self, sharded: &ShardedIndex) -> ApiResult<Response> {
        self.member.delete_index(&self.index).await.map_err(|e| unavailable(&e))?;
        // A shard whose node is down stays on its disk, no longer part of any index.
        let _ = self.send_all(sharded, "DELETE", "", "", None, Bytes::new()).await;
        // Replicas too (each node also drops a replica of an index gone from its view).
        let view = self.member.view();
        let mut replicas = Vec::new();
        for k in 0..sharded.shards.len() {
            let part = Part::of(&self.index, sharded, k);
            for (_, address) in part.copies(|n| view.address_of(n).map(str::to_string)).into_iter().skip(1) {
                replicas.extend(address.map(|a| (a, part.path("", ""))));
            }
        }
        let api_key = self.api_key.as_deref();
        let each = replicas.iter().map(|(a, path)| fetch(api_key, a, "DELETE", path, None, Bytes::new()));
        futures_util::future::join_all(each).await;
        Ok(respond::ok(&json!({"acknowledged": true})))
    }

    /// The request, as `method /{shard}/{rest}`, answered by shard `k`'s node; its answer names the index.
    async fn to_shard(
        &self,
        sharded: &ShardedIndex,
        k: usize,
        rest: &str,
        method: &str,
    ) -> ApiResult<Response> {
        let local = shard_name(&self.index, k);
        let (status, value) = self
            .send(sharded, k, method, rest, &self.query, self.content_type.as_deref(), self.body.clone())
            .await?;
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        match value {
            Some(mut value) => {
                rename_index(&mut value, &local, &self.index);
                // An index's description names its aliases, which its record holds.
                if let (true, Some(about)) = (rest.is_empty() && method == "GET", value.get_mut(&self.index))
                {
                    let aliases: serde_json::Map<String, Value> =
                        sharded.aliases.iter().map(|a| (a.clone(), json!({}))).collect();
                    about["aliases"] = Value::Object(aliases);
                }
                Ok(respond::json(status, &value))
            }
            None => Ok(respond::status(status)),
        }
    }

    /// The request sent to every copy of every shard at once (a replica
    /// refreshes, flushes, merges and takes a mapping as its primary does):
    /// its answer counts them, `total` every copy the index wants.
    async fn broadcast(&self, sharded: &ShardedIndex) -> ApiResult<Response> {
        let (sent, failed) = self.to_every_copy(sharded).await;
        let failures: Vec<Value> =
            failed.iter().map(|(k, e)| e.shard_failure(&self.index, "_na_", *k)).collect();
        let total = sharded.shards.len() * (1 + sharded.replicas_wanted());
        let mut shards =
            json!({"total": total, "successful": sent - failures.len(), "failed": failures.len()});
        if !failures.is_empty() {
            shards["failures"] = Value::Array(failures);
        }
        let answer = match self.rest.as_str() {
            "_mapping" => json!({"acknowledged": true}),
            _ => json!({"_shards": shards}),
        };
        Ok(respond::ok(&answer))
    }

    /// The request sent to every copy of every shard at once: how many
    /// copies it was sent to, and those that failed (by shard) with why.
    async fn to_every_copy(&self, sharded: &ShardedIndex) -> (usize, Vec<(usize, ApiError)>) {
        let view = self.member.view();
        let mut copies = Vec::new();
        for k in 0..sharded.shards.len() {
            let part = Part::of(&self.index, sharded, k);
            let path = part.path(&self.rest, &self.query);
            copies.extend(
                part.copies(|n| view.address_of(n).map(str::to_string))
                    .into_iter()
                    .map(|(node, address)| (k, node, address, path.clone())),
            );
        }
        let (api_key, content_type) = (self.api_key.as_deref(), self.content_type.as_deref());
        let each = copies.iter().map(|(k, node, address, path)| async move {
            let sent = match address {
                Some(address) => {
                    let asked = fetch(api_key, address, &self.method, path, content_type, self.body.clone());
                    unless_gone(&self.member, node, asked)
                        .await
                        .map_err(|e| shard_unavailable(&self.index, *k, &e))
                }
                None => Err(shard_unavailable(
                    &self.index,
                    *k,
                    &format!("its node [{node}] is not in the cluster"),
                )),
            };
            sent.and_then(|(status, value)| ok_or_error(status, value)).err().map(|e| (*k, e))
        });
        let failed = futures_util::future::join_all(each).await.into_iter().flatten().collect();
        (copies.len(), failed)
    }

    /// `PUT _mapping` or `PUT _settings`: sent to every copy (each refuses
    /// what it cannot take), then kept in the index's record, so a copy made
    /// later (a replica, a shard moved) is made with it too; a change of
    /// `number_of_replicas` has the manager place or drop replicas.
    async fn change_record(&self, sharded: &ShardedIndex) -> ApiResult<Response> {
        let body: Value = serde_json::from_slice(&self.body)
            .map_err(|e| ApiError::parsing(format!("the body is not JSON: {e}")))?;
        let settings = match self.rest.as_str() {
            "_settings" => flat_settings(&body)?,
            _ => Vec::new(),
        };
        if let Some((_, n)) = settings.iter().find(|(k, _)| k == "number_of_replicas") {
            number_of_replicas(&json!({"settings": {"number_of_replicas": n}}))?;
        }
        // A change a copy refuses is refused; one a copy down did not get is
        // kept in the record all the same (as a cluster state is).
        let (_, failed) = self.to_every_copy(sharded).await;
        if let Some((k, mut e)) = failed.into_iter().find(|(_, e)| e.status.is_client_error()) {
            // The shard's refusal, naming the index.
            e.reason = e.reason.replace(&shard_name(&self.index, k), &self.index);
            return Err(e);
        }
        let mapping = body.clone();
        let changed = self
            .member
            .update_index(&self.index, |record| match settings.is_empty() {
                true => merge(&mut record.created["mappings"], &mapping),
                false => settings.iter().for_each(|(k, v)| {
                    needle_cluster::indices::set_index_setting(&mut record.created, k, v.clone())
                }),
            })
            .await
            .map_err(|e| unavailable(&e))?;
        changed.ok_or_else(|| ApiError::index_not_found(&self.index))?;
        Ok(respond::ok(&json!({"acknowledged": true})))
    }

    /// `_stats`: every shard's, their figures summed (counts, bytes and
    /// times alike), under the index's name; a shard that does not answer is
    /// counted failed in `_shards`.
    async fn stats(&self, sharded: &ShardedIndex) -> ApiResult<Response> {
        let mut summed = Value::Null;
        let mut failures = Vec::new();
        let answers = self.send_all(sharded, "GET", &self.rest, &self.query, None, Bytes::new()).await;
        for (k, sent) in answers.into_iter().enumerate() {
            match sent.and_then(|(status, value)| ok_or_error(status, value)) {
                Ok(Some(mut value)) => {
                    let local = shard_name(&self.index, k);
                    if let Some(Value::Object(indices)) = value.get_mut("indices") {
                        if let Some(shard) = indices.remove(&local) {
                            indices.insert(self.index.clone(), shard);
                        }
                    }
                    add_figures(&mut summed, value);
                }
                Ok(None) => {}
                Err(e) => failures.push(e.shard_failure(&self.index, "_na_", k)),
            }
        }
        if summed.is_null() {
            return Err(shard_unavailable(&self.index, 0, "no shard answered"));
        }
        summed["_shards"] = shard_counts(sharded.shards.len(), failures);
        Ok(respond::ok(&summed))
    }

    /// [`Self::send`] to every shard at once: their answers in shard order.
    async fn send_all(
        &self,
        sharded: &ShardedIndex,
        method: &str,
        rest: &str,
        query: &str,
        content_type: Option<&str>,
        body: Bytes,
    ) -> Vec<ApiResult<(u16, Option<Value>)>> {
        let each = (0..sharded.shards.len())
            .map(|k| self.send(sharded, k, method, rest, query, content_type, body.clone()));
        futures_util::future::join_all(each).await
    }

    /// Sends `method /{shard}/{rest}?{query}` to the node of shard `k`: its
    /// status and JSON answer (`None`: no body, as HEAD answers). A read
    /// goes to a replica when the primary's node does not answer.
    #[allow(clippy::too_many_arguments)]
    async fn send(
        &self,
        sharded: &ShardedIndex,
        k: usize,
        method: &str,
        rest: &str,
        query: &str,
        content_type: Option<&str>,
        body: Bytes,
    ) -> ApiResult<(u16, Option<Value>)> {
        let mut part = Part::of(&self.index, sharded, k);
        if !matches!(method, "GET" | "HEAD") {
            part.replicas.clear();
        }
        let path = part.path(rest, query);
        fetch_any(&self.member, self.api_key.as_deref(), &part, method, &path, content_type, body).await
    }
}

/// `method path` answered by the first copy of `part` that can, the
/// primary's first: one whose node does not answer (or leaves the cluster
/// while it is asked, see [`unless_gone`]), or answers that the shard is
/// unavailable there (503), gives way to the next; the last one's failure
/// is the answer.
pub(super) async fn fetch_any(
    member: &Member,
    api_key: Option<&str>,
    part: &Part,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: Bytes,
) -> ApiResult<(u16, Option<Value>)> {
    // Asked for every shard of every search: the member's view is looked into, not copied.
    let copies = part.copies(|n| member.address_of(n));
    let n = copies.len();
    let mut failure = part.unavailable("no copy of it is placed");
    for (i, (node, address)) in copies.into_iter().enumerate() {
        let Some(address) = address else {
            failure = part.unavailable(&format!("its node [{node}] is not in the cluster"));
            continue;
        };
        let fetched = fetch(api_key, &address, method, path, content_type, body.clone());
        match unless_gone(member, &node, fetched).await {
            Ok((503, value)) if i + 1 < n => {
                failure = ok_or_error(503, value).err().unwrap_or(failure);
            }
            Ok(answer) => return Ok(answer),
            Err(e) => failure = part.unavailable(&e),
        }
    }
    Err(failure)
}

/// `asked` (a request to node `node`), given up when the node leaves the
/// cluster meanwhile: a node cut off does not answer, nor refuse, until its
/// lease runs out and the cluster counts it gone (looked at every half second).
async fn unless_gone<T>(
    member: &Member,
    node: &str,
    asked: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    let gone = async {
        while member.has_node(node) {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        }
    };
    tokio::select! {
        answer = asked => answer,
        () = gone => Err(format!("its node [{node}] left the cluster")),
    }
}

/// One shard a request reaches: its index, its number there, the node of
/// its primary and those of its replicas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub index: String,
    pub shard: usize,
    pub node: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<String>,
}

impl Part {
    /// Shard `k` of `index`.
    fn of(index: &str, sharded: &ShardedIndex, k: usize) -> Part {
        let (node, replicas) = (sharded.shards[k].clone(), sharded.replicas_of(k).to_vec());
        Part { index: index.to_string(), shard: k, node, replicas }
    }

    /// Each copy's node and where it serves (`None`: not in the cluster), the primary's first.
    /// (`address_of` tells where a node serves: a view's, or the member's without copying its view.)
    fn copies(&self, address_of: impl Fn(&str) -> Option<String>) -> Vec<(String, Option<String>)> {
        let nodes = std::iter::once(&self.node).chain(&self.replicas);
        nodes.map(|n| (n.clone(), address_of(n))).collect()
    }

    /// The path of `/{shard}/{rest}?{query}` on a node holding it.
    fn path(&self, rest: &str, query: &str) -> String {
        let mut path = format!("/{}", utf8_percent_encode(&self.local_name(), NON_ALPHANUMERIC));
        if !rest.is_empty() {
            path = format!("{path}/{rest}");
        }
        if !query.is_empty() {
            path = format!("{path}?{query}");
        }
        path
    }

    /// Every shard of `index`, in order.
    fn all_of(index: &str, sharded: &ShardedIndex) -> Vec<Part> {
        (0..sharded.shards.len()).map(|k| Part::of(index, sharded, k)).collect()
    }

    /// The index holding it on its node.
    fn local_name(&self) -> String {
        shard_name(&self.index, self.shard)
    }

    /// Where its node serves, if the node is in the cluster.
    fn address(&self, view: &needle_cluster::View) -> ApiResult<String> {
        let why = || format!("its node [{}] is not in the cluster", self.node);
        view.address_of(&self.node).map(str::to_string).ok_or_else(|| self.unavailable(&why()))
    }

    /// Its failure, as `_shards.failures` lists it.
    fn failure(&self, e: &ApiError) -> Value {
        e.shard_failure(&self.index, "_na_", self.shard)
    }

    fn unavailable(&self, why: &str) -> ApiError {
        shard_unavailable(&self.index, self.shard, why)
    }
}

/// A request's share for one node: that node's id, the places (in the
/// request) of the entries it carries, and its body.
struct Share {
    node: String,
    places: Vec<usize>,
    body: Bytes,
}

/// `POST /{api}?{query}` to every node at once, each with its share (`_bulk`,
/// `_mget`): each share's places and the list under `key` in its node's
/// answer, one entry a place, or why the node did not give it.
async fn to_nodes(
    call: &Forward,
    api: &str,
    content_type: &'static str,
    key: &'static str,
    shares: Vec<Share>,
) -> Vec<(Vec<usize>, Result<Vec<Value>, String>)> {
    let view = call.member.view();
    let path = match call.query.is_empty() {
        true => format!("/{api}"),
        false => format!("/{api}?{}", call.query),
    };
    let mut running = JoinSet::new();
    for Share { node, places, body } in shares {
        let address = view.address_of(&node).map(str::to_string);
        let (path, api_key, member) = (path.clone(), call.api_key.clone(), call.member.clone());
        running.spawn(async move {
            let Some(address) = address else {
                return (places, Err(format!("its node [{node}] is not in the cluster")));
            };
            let asked = fetch(api_key.as_deref(), &address, "POST", &path, Some(content_type), body);
            let answer = unless_gone(&member, &node, asked).await;
            let listed = answer.and_then(|(status, value)| match (status, value) {
                (200, Some(mut value)) => match value[key].take() {
                    Value::Array(list) if list.len() == places.len() => Ok(list),
                    other => Err(format!("it answered {key} {other}")),
                },
                (status, value) => Err(format!("it answered {status}: {}", value.unwrap_or_default())),
            });
            (places, listed)
        });
    }
    let mut out = Vec::new();
    while let Some(done) = running.join_next().await {
        out.extend(done.ok());
    }
    out
}

/// How long a node may take to answer a request passed on to it: a node
/// cut off (not refusing connections) fails its shards after this.
const NODE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// One request to a node, showing `api_key` (the nodes of a cluster share
/// one): its status and JSON answer (`None`: no body).
async fn fetch(
    api_key: Option<&str>,
    address: &str,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: Bytes,
) -> Result<(u16, Option<Value>), String> {
    let authorization = api_key.map(|key| format!("ApiKey {key}"));
    let mut headers = vec![(FROM_COORDINATOR, "1")];
    headers.extend(content_type.map(|c| ("content-type", c)));
    headers.extend(authorization.as_deref().map(|a| ("authorization", a)));
    let call = needle_cluster::http::call(address, method, path, &headers, body);
    let answer = match tokio::time::timeout(NODE_TIMEOUT, call).await {
        Ok(answer) => answer.map_err(|e| format!("the node at {address}: {e}"))?,
        Err(_) => {
            return Err(format!("the node at {address} did not answer in {} s", NODE_TIMEOUT.as_secs()))
        }
    };
    if answer.body.is_empty() {
        return Ok((answer.status, None));
    }
    let value = serde_json::from_slice(&answer.body)
        .map_err(|e| format!("the node at {address} answered no JSON: {e}"))?;
    Ok((answer.status, Some(value)))
}

/// Adds `from`'s numbers to `into`'s at the same places (objects merged
/// key by key); anything else keeps `into`'s, or takes `from`'s where `into` has none.
fn add_figures(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(mine), Value::Object(theirs)) => {
            for (key, value) in theirs {
                match mine.get_mut(&key) {
                    Some(slot) => add_figures(slot, value),
                    None => drop(mine.insert(key, value)),
                }
            }
        }
        (Value::Number(a), Value::Number(b)) => {
            *a = match (a.as_u64(), b.as_u64()) {
                (Some(x), Some(y)) => x.saturating_add(y).into(),
                _ => serde_json::Number::from_f64(a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0))
                    .unwrap_or_else(|| a.clone()),
            }
        }
        (slot @ Value::Null, value) => *slot = value,
        _ => {}
    }
}

/// `settings.number_of_shards` (or `settings.index.number_of_shards`, or
/// `settings["index.number_of_shards"]`), 1 when absent.
fn number_of_shards(body: &Value) -> ApiResult<usize> {
    let Some(given) = needle_cluster::indices::index_setting(body, "number_of_shards") else { return Ok(1) };
    let n = given.as_u64().or_else(|| given.as_str().and_then(|s| s.parse().ok()));
    match n {
        Some(n @ 1..=1024) => Ok(n as usize),
        _ => Err(ApiError::illegal_argument(format!(
            "Failed to parse value [{given}] for setting [index.number_of_shards] must be >= 1 and <= 1024"
        ))),
    }
}

/// The settings a `PUT _settings` body changes (`{"index": {...}}`,
/// `{"settings": {...}}` or the settings themselves), by name without the
/// `index.` prefix; a setting that is an object is read as dotted names.
fn flat_settings(body: &Value) -> ApiResult<Vec<(String, Value)>> {
    let settings = body.get("settings").unwrap_or(body);
    let Value::Object(map) = settings else {
        return Err(ApiError::parsing("the settings must be an object"));
    };
    let mut out = Vec::new();
    let mut stack: Vec<(String, &Value)> = map.iter().map(|(k, v)| (k.clone(), v)).collect();
    while let Some((name, value)) = stack.pop() {
        match value {
            Value::Object(inner) => stack.extend(inner.iter().map(|(k, v)| (format!("{name}.{k}"), v))),
            _ => out.push((name.strip_prefix("index.").unwrap_or(&name).to_string(), value.clone())),
        }
    }
    Ok(out)
}

/// `from`'s keys put into `into` (objects merged key by key, anything else replaced).
fn merge(into: &mut Value, from: &Value) {
    match (into, from) {
        (Value::Object(mine), Value::Object(theirs)) => {
            for (key, value) in theirs {
                merge(mine.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
        (slot, value) => *slot = value.clone(),
    }
}

/// `settings.number_of_replicas` (in any of the forms the shard count
/// takes), 0 when absent: a replica on each of that many other nodes.
fn number_of_replicas(body: &Value) -> ApiResult<usize> {
    let Some(given) = needle_cluster::indices::index_setting(body, "number_of_replicas") else {
        return Ok(0);
    };
    match given.as_u64().or_else(|| given.as_str().and_then(|s| s.parse().ok())) {
        Some(n @ 0..=16) => Ok(n as usize),
        _ => Err(ApiError::illegal_argument(format!(
            "Failed to parse value [{given}] for setting [index.number_of_replicas] must be >= 0 and <= 16"
        ))),
    }
}

/// Every `_index` naming shard `local` (at the top, in hits) named `index`
/// instead, and a top-level key `local` (a GET of the index) too.
fn rename_index(value: &mut Value, local: &str, index: &str) {
    if let Value::Object(map) = value {
        if map.get("_index").and_then(Value::as_str) == Some(local) {
            map.insert("_index".into(), json!(index));
        }
        if let Some(mut inner) = map.remove(local) {
            if let Some(name) = inner.pointer_mut("/settings/index/provided_name") {
                *name = json!(index);
            }
            map.insert(index.to_string(), inner);
        }
        if let Some(Value::Array(hits)) = map.get_mut("hits").and_then(|h| h.get_mut("hits")) {
            hits.iter_mut().for_each(|h| rename_index(h, local, index));
        }
        if let Some(error) = map.get_mut("error") {
            rename_error(error, local, index);
        }
    }
}

/// An error naming a shard, made to name its index.
fn rename_error(error: &mut Value, local: &str, index: &str) {
    match error {
        Value::String(s) => *s = s.replace(local, index),
        Value::Array(list) => list.iter_mut().for_each(|e| rename_error(e, local, index)),
        Value::Object(map) => map.values_mut().for_each(|v| rename_error(v, local, index)),
        _ => {}
    }
}

/// A shard's answer when it succeeded, else its error as this node's.
fn ok_or_error(status: u16, value: Option<Value>) -> ApiResult<Option<Value>> {
    if (200..300).contains(&status) {
        return Ok(value);
    }
    let value = value.unwrap_or_default();
    let mut error = &value["error"];
    // A shard's node answers its one index's failure as all of its shards failing: the failure is the cause.
    if error["type"] == "search_phase_execution_exception" && error["caused_by"].is_object() {
        error = &error["caused_by"];
    }
    let kind = error["type"].as_str().unwrap_or("exception").to_string();
    let reason = error["reason"].as_str().map_or_else(|| value.to_string(), str::to_string);
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    Err(ApiError::new(status, leak_kind(kind), reason))
}

/// Error types are `&'static str`; a shard's is one of the few this server
/// itself names, else the generic one.
fn leak_kind(kind: String) -> &'static str {
    const KNOWN: [&str; 13] = [
        "too_many_buckets_exception",
        "action_request_validation_exception",
        "search_phase_execution_exception",
        "query_shard_exception",
        "resource_already_exists_exception",
        "index_not_found_exception",
        "parsing_exception",
        "illegal_argument_exception",
        "mapper_parsing_exception",
        "version_conflict_engine_exception",
        "document_parsing_exception",
        "x_content_parse_exception",
        "parse_exception",
    ];
    KNOWN.into_iter().find(|k| *k == kind).unwrap_or("exception")
}

pub(crate) fn shard_unavailable(index: &str, k: usize, why: &str) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "unavailable_shards_exception",
        format!("[{index}][{k}] shard unavailable: {why}"),
    )
}

/// The cluster's state (in etcd) could not be read or written.
fn unavailable(why: &dyn std::fmt::Display) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "cluster_block_exception",
        format!("the cluster's state is unavailable: {why}"),
    )
}
