//! Aliases of the cluster's indexes. They are kept in each index's record in
//! etcd (`ShardedIndex::aliases`), never in its shards: a node answers a name
//! its own catalog knows with its own index, so an alias given to a shard
//! would be answered with that shard's documents alone. `POST /_aliases`
//! naming cluster indexes, `PUT|POST|DELETE /{index}/_alias/{name}` and
//! the `GET`s of aliases change and list them here; a request naming an
//! alias reaches the index it names ([`one_index`]) or, for a search, every
//! index it names (`Forward::resolve`).

use std::collections::{BTreeMap, BTreeSet};

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use needle_cluster::indices::{aliased, split_shard_name};
use needle_cluster::{Member, ShardedIndex};
use serde_json::{json, Map, Value};

use super::{unavailable, Forward};
use crate::alias_options::{none_in_cluster, plain, AliasOptions};
use crate::catalog::AliasChange;
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::routes::aliases::{alias_changes, at_creation, listed, listing, missing, parse_actions};
use crate::server::Shared;

/// The cluster index `name` names, with its name: the index of that name,
/// or the one index an alias of that name is an alias of; `None` when it
/// names neither. An alias of several indexes names no one index (an error).
pub(super) async fn one_index(member: &Member, name: &str) -> ApiResult<Option<(String, ShardedIndex)>> {
    if let Some(found) = member.index(name).await.map_err(|e| unavailable(&e))? {
        return Ok(Some((name.to_string(), found)));
    }
    let indices = aliased_in(member, name).await?;
    match indices.len() {
        0 => Ok(None),
        1 => Ok(indices.into_iter().next()),
        _ => Err(no_write_index(name)),
    }
}

/// The indexes `alias` is an alias of, by the view, else by etcd (an alias
/// made a moment ago on another node).
pub(super) async fn aliased_in(member: &Member, alias: &str) -> ApiResult<BTreeMap<String, ShardedIndex>> {
    let pick = |indices: &BTreeMap<String, ShardedIndex>| -> BTreeMap<String, ShardedIndex> {
        aliased(indices, alias).into_iter().map(|n| (n.to_string(), indices[n].clone())).collect()
    };
    let seen = pick(&member.view().indices);
    if !seen.is_empty() {
        return Ok(seen);
    }
    Ok(pick(&member.indices().await.map_err(|e| unavailable(&e))?))
}

/// Elasticsearch's answer to a write or a one-index request through an alias of several indexes.
pub(super) fn no_write_index(alias: &str) -> ApiError {
    ApiError::illegal_argument(format!(
        "no write index is defined for alias [{alias}]. The write index may be explicitly disabled using is_write_index=false or the alias points to multiple indices without one being designated as a write index"
    ))
}

/// A creation body without its `aliases`, and those aliases: they go in
/// the index's record, not to its shards.
pub(super) fn taken_from(mut body: Value) -> ApiResult<(Value, BTreeSet<String>)> {
    let given = body.as_object_mut().and_then(|b| b.remove("aliases"));
    let aliases = given.map(|a| at_creation(&a)).transpose()?.unwrap_or_default();
    aliases.values().try_for_each(none_in_cluster)?;
    Ok((body, aliases.into_keys().collect()))
}

/// `POST /_aliases`: handled here when every index it names is a cluster
/// index; otherwise the node's own indexes are meant, and its own handler answers.
pub(super) async fn update(app: &Shared, member: &Member, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, app.max_body).await {
        Ok(bytes) => bytes,
        Err(e) => return crate::call::too_large(&e, app.max_body).into_response(),
    };
    let parsed = serde_json::from_slice::<Value>(&bytes).ok();
    let Some(actions) = parsed.and_then(|body| parse_actions(Some(body)).ok()) else {
        // Malformed: the node's handler names what is wrong.
        return next.run(Request::from_parts(parts, Body::from(bytes))).await;
    };
    let indices = match member.indices().await {
        Ok(indices) => indices,
        Err(e) => return unavailable(&e).into_response(),
    };
    let mut changes = Vec::new();
    for action in &actions {
        let Some(targets) = targets(&indices, &action.indexes) else {
            return next.run(Request::from_parts(parts, Body::from(bytes))).await;
        };
        let checked = none_in_cluster(&action.options);
        match checked.and_then(|()| alias_changes(&targets, &action.aliases.join(","), action.added())) {
            Ok(more) => changes.extend(more),
            Err(e) => return e.into_response(),
        }
    }
    match apply(app, member, &indices, &changes).await {
        Ok(()) => respond::ok(&json!({"acknowledged": true, "errors": false})),
        Err(e) => e.into_response(),
    }
}

/// The cluster indexes `expressions` name (names and `*` patterns), each
/// with its aliases; `None` when a name is not a cluster index's or a
/// pattern matches none.
fn targets(
    indices: &BTreeMap<String, ShardedIndex>,
    expressions: &[String],
) -> Option<Vec<(String, BTreeSet<String>)>> {
    let mut out: Vec<(String, BTreeSet<String>)> = Vec::new();
    for pattern in expressions.iter().flat_map(|e| e.split(',')).filter(|p| !p.is_empty()) {
        let matched: Vec<&String> = indices
            .keys()
            .filter(|name| pattern == "_all" || *name == pattern || crate::pattern::matches(pattern, name))
            .collect();
        if matched.is_empty() {
            return None;
        }
        for name in matched {
            if !out.iter().any(|(n, _)| n == name) {
                out.push((name.clone(), indices[name].aliases.clone()));
            }
        }
    }
    Some(out)
}

/// Checks the names of new aliases: valid names, and no index's, here or in the cluster.
pub(super) fn check_new<'a>(
    app: &Shared,
    indices: &BTreeMap<String, ShardedIndex>,
    aliases: impl IntoIterator<Item = &'a String>,
) -> ApiResult<()> {
    for alias in aliases {
        if indices.contains_key(alias) || app.catalog.get(alias).is_ok_and(|h| h.name == *alias) {
            return Err(same_name_as_index(alias));
        }
        crate::catalog::check_name(alias)?;
    }
    Ok(())
}

pub(super) fn same_name_as_index(alias: &str) -> ApiError {
    ApiError::bad_request(
        "invalid_alias_name_exception",
        format!(
            "Invalid alias name [{alias}]: an index or data stream exists with the same name as the alias"
        ),
    )
}

/// Applies alias changes to the cluster indexes' records, every one checked
/// first ([`check_new`]; a removed alias must be there).
async fn apply(
    app: &Shared,
    member: &Member,
    indices: &BTreeMap<String, ShardedIndex>,
    changes: &[AliasChange],
) -> ApiResult<()> {
    check_new(app, indices, changes.iter().filter(|c| c.options.is_some()).map(|c| &c.alias))?;
    let absent = |c: &&AliasChange| indices.get(&c.index).is_none_or(|i| !i.aliases.contains(&c.alias));
    if let Some(c) = changes.iter().filter(|c| c.options.is_none()).find(absent) {
        return Err(missing(&c.alias));
    }
    let mut by_index: BTreeMap<&str, Vec<&AliasChange>> = BTreeMap::new();
    for c in changes {
        by_index.entry(c.index.as_str()).or_default().push(c);
    }
    for (index, changes) in by_index {
        let changed = member
            .update_index(index, |record| {
                for c in &changes {
                    match c.options {
                        Some(_) => record.aliases.insert(c.alias.clone()),
                        None => record.aliases.remove(&c.alias),
                    };
                }
            })
            .await
            .map_err(|e| unavailable(&e))?;
        changed.ok_or_else(|| ApiError::index_not_found(index))?;
    }
    Ok(())
}

impl Forward {
    /// `PUT|POST /{index}/_alias/{names}` (`add`) or `DELETE` of them, on this cluster index.
    pub(super) async fn change_aliases(
        &self,
        sharded: &ShardedIndex,
        names: &str,
        add: bool,
    ) -> ApiResult<Response> {
        if let Ok(Value::Object(options)) = serde_json::from_slice::<Value>(&self.body) {
            none_in_cluster(&AliasOptions::from_object(&options)?)?;
        }
        let targets = [(self.index.clone(), sharded.aliases.clone())];
        let changes = alias_changes(&targets, names, add.then_some(&AliasOptions::default()))?;
        let indices = self.member.indices().await.map_err(|e| unavailable(&e))?;
        apply(&self.app, &self.member, &indices, &changes).await?;
        Ok(respond::ok(&json!({"acknowledged": true})))
    }
}

/// `GET /_alias[/{names}]` and `GET /_aliases`: the cluster's indexes' aliases
/// beside those of the node's own indexes (its shards left out).
pub(super) async fn get_all(member: &Member, names: Option<&str>, request: Request, next: Next) -> Response {
    let indices = match member.indices().await {
        Ok(indices) => indices,
        Err(e) => return unavailable(&e).into_response(),
    };
    let own = next.run(request).await;
    let own = axum::body::to_bytes(own.into_body(), usize::MAX).await.unwrap_or_default();
    let mut out = match serde_json::from_slice::<Value>(&own) {
        Ok(Value::Object(map)) if !map.contains_key("error") => map,
        _ => Map::new(),
    };
    out.retain(|name, _| split_shard_name(name).is_none_or(|(owner, _)| !indices.contains_key(owner)));
    out.extend(listing(indices.into_iter().map(|(name, index)| (name, plain(&index.aliases))), names));
    listed(out, names)
}
