//! `_cat/indices` and `_cat/shards` on a node of a cluster: the cluster's
//! indexes (each shard's figures asked of its node, all nodes at once), and
//! this node's own indexes that are no cluster index's shards. A copy its
//! node serves is `STARTED`; one placed on a live node that does not serve
//! it yet (filling it) is `INITIALIZING`; one whose node does not answer, or
//! a replica the index wants and no node is given, `UNASSIGNED`. A primary
//! not started makes its index red, a replica yellow; `_cluster/health`
//! counts copies the same way ([`serving`], [`state_of`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use axum::extract::{FromRequest, Request};
use axum::response::Response;
use bytes::Bytes;
use needle_cluster::{shard_name, Member, ShardedIndex};
use serde_json::{Map, Value};
use tokio::task::JoinSet;

use super::fetch;
use crate::call::Call;
use crate::error::{ApiError, ApiResult};
use crate::pattern;
use crate::routes::cat::{cat_table, row, shown_bytes, CAT_COLUMNS, SHARD_COLUMNS};
use crate::server::Shared;

/// Which listing.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    Indices,
    Shards,
}

/// `GET /_cat/indices[/{expression}]` or `/_cat/shards[/{expression}]`, when `path` is one.
pub fn listing_of(path: &str) -> Option<(Listing, String)> {
    let rest = path.strip_prefix("/_cat/")?;
    let (what, expression) = rest.split_once('/').unwrap_or((rest, "*"));
    let listing = match what {
        "indices" => Listing::Indices,
        "shards" => Listing::Shards,
        _ => return None,
    };
    let expression = percent_encoding::percent_decode_str(expression).decode_utf8().ok()?;
    Some((listing, expression.into_owned()))
}

/// Which node serves which shard copy, as the live nodes told.
#[derive(Debug, Default)]
pub struct Serving {
    /// (a copy's local name, its node's id).
    copies: HashSet<(String, String)>,
    /// The nodes that answered.
    answered: HashSet<String>,
}

impl Serving {
    /// Node `node` answered, serving copies `names`.
    pub fn told(&mut self, node: &str, names: impl IntoIterator<Item = String>) {
        self.answered.insert(node.to_string());
        self.copies.extend(names.into_iter().map(|name| (name, node.to_string())));
    }
}

/// What a shard copy is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyState {
    Started,
    /// Placed on a live node that does not serve it yet.
    Initializing,
    /// Its node is gone, or no node was given it.
    Unassigned,
}

impl CopyState {
    fn as_str(self) -> &'static str {
        match self {
            CopyState::Started => "STARTED",
            CopyState::Initializing => "INITIALIZING",
            CopyState::Unassigned => "UNASSIGNED",
        }
    }
}

/// The state of copy `shard` (a local name) given to `node`, if any: a
/// node that does not answer serves nothing.
pub fn state_of(serving: &Serving, shard: &str, node: Option<&String>) -> CopyState {
    match node {
        Some(n) if serving.copies.contains(&(shard.to_string(), n.clone())) => CopyState::Started,
        Some(n) if serving.answered.contains(n) => CopyState::Initializing,
        _ => CopyState::Unassigned,
    }
}

/// The copies every live node serves, asked of them all at once.
pub async fn serving(member: &Member, api_key: Option<&str>) -> Serving {
    let mut serving = Serving::default();
    for (node, _, rows) in every_node_rows(member, api_key).await {
        let Some(rows) = rows else { continue };
        serving.told(&node, names_of(&rows));
    }
    serving
}

/// The index names of `_cat/indices` rows.
fn names_of(rows: &[Map<String, Value>]) -> Vec<String> {
    rows.iter().filter_map(|r| Some(r.get("index")?.as_str()?.to_string())).collect()
}

/// A shard's `_cat/indices` row on its node, and that node's id and address.
struct Held {
    row: Map<String, Value>,
    node: String,
    address: String,
}

pub async fn cat(
    app: &Shared,
    member: &Member,
    request: Request,
    listing: Listing,
    expression: &str,
) -> ApiResult<Response> {
    let call = Call::from_request(request, app).await?;
    let unit = call.params.get("bytes").map(str::to_string);
    call.params.ignore(&["health", "pri", "include_unloaded_segments"]);
    let indices = member.indices().await.map_err(|e| super::unavailable(&e))?;
    // Each copy's row, by its local name and node.
    let mut held: HashMap<(String, String), Held> = HashMap::new();
    let mut own = Vec::new();
    let mut serving = Serving::default();
    for (node, address, rows) in every_node_rows(member, app.api_key.as_deref()).await {
        let Some(rows) = rows else { continue };
        serving.told(&node, names_of(&rows));
        for row in rows {
            let name = row.get("index").and_then(Value::as_str).unwrap_or_default().to_string();
            let shard = of_shard(&name, &indices).filter(|(index, k)| indices[*index].holds(&node, *k));
            match shard {
                Some(_) => drop(held.insert(
                    (name, node.clone()),
                    Held { row, node: node.clone(), address: address.clone() },
                )),
                None if node == member.node_id() && of_shard(&name, &indices).is_none() => own.push(row),
                None => {}
            }
        }
    }
    let wanted = |name: &str| expression.split(',').any(|p| pattern::matches(p, name));
    let mut rows = Vec::new();
    // A cluster index is listed by its name or an alias's.
    let listed = |(name, sharded): &(&String, &ShardedIndex)| {
        wanted(name) || sharded.aliases.iter().any(|a| wanted(a))
    };
    for (name, sharded) in indices.iter().filter(listed) {
        let copy = |k: usize, node: Option<&String>| held.get(&(shard_name(name, k), node?.clone()));
        let primaries: Vec<Option<&Held>> =
            (0..sharded.shards.len()).map(|k| copy(k, Some(&sharded.shards[k]))).collect();
        // Each shard's wanted replicas, those no node holds too.
        let replicas: Vec<(usize, Option<&String>, Option<&Held>)> = (0..sharded.shards.len())
            .flat_map(|k| (0..sharded.replicas_wanted()).map(move |r| (k, sharded.replicas_of(k).get(r))))
            .map(|(k, node)| (k, node, copy(k, node)))
            .collect();
        match listing {
            Listing::Indices => {
                rows.push(index_row(name, sharded.replicas_wanted(), &primaries, &replicas, unit.as_deref()))
            }
            Listing::Shards => {
                let view = member.view();
                let shard_row = |k: usize, prirep: &str, node: Option<&String>, h: Option<&Held>| {
                    let state = state_of(&serving, &shard_name(name, k), node);
                    let placed = node.map(|n| (n.as_str(), view.address_of(n).unwrap_or_default()));
                    shard_row(name, k, prirep, state, h, placed, unit.as_deref())
                };
                for (k, h) in primaries.iter().enumerate() {
                    rows.push(shard_row(k, "p", Some(&sharded.shards[k]), *h));
                }
                for (k, node, h) in &replicas {
                    rows.push(shard_row(*k, "r", *node, *h));
                }
            }
        }
    }
    for mut local in own.into_iter().filter(|r| wanted(r["index"].as_str().unwrap_or_default())) {
        match listing {
            Listing::Indices => {
                for column in ["store.size", "pri.store.size"] {
                    let bytes = number(&local, column);
                    local.insert(column.into(), Value::String(shown_bytes(bytes, unit.as_deref())));
                }
                rows.push(local);
            }
            Listing::Shards => {
                let held =
                    Held { row: local, node: member.node_id().to_string(), address: app.address.to_string() };
                let name = held.row["index"].as_str().unwrap_or_default().to_string();
                rows.push(shard_row(&name, 0, "p", CopyState::Started, Some(&held), None, unit.as_deref()));
            }
        }
    }
    let concrete = !expression.contains(['*', ',']);
    if concrete && rows.is_empty() {
        return Err(ApiError::index_not_found(expression));
    }
    match listing {
        Listing::Indices => cat_table(&call, "_cat/indices", &CAT_COLUMNS, rows),
        Listing::Shards => {
            let key = |r: &Map<String, Value>| {
                (r["index"].clone().to_string(), number(r, "shard"), r["prirep"].to_string())
            };
            rows.sort_by_key(key);
            cat_table(&call, "_cat/shards", &SHARD_COLUMNS, rows)
        }
    }
}

/// How long a node is waited for to list its copies: one that does not
/// answer by then (paused, cut off) serves none of them for the listing.
const LISTING_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Every live node's `_cat/indices` rows (sizes in bytes; none: it did not answer), with its id and address.
async fn every_node_rows(
    member: &Member,
    api_key: Option<&str>,
) -> Vec<(String, String, Option<Vec<Map<String, Value>>>)> {
    let mut running = JoinSet::new();
    for node in member.view().nodes {
        let api_key = api_key.map(str::to_string);
        running.spawn(async move {
            let path = "/_cat/indices?format=json&bytes=b";
            let asked = fetch(api_key.as_deref(), &node.address, "GET", path, None, Bytes::new());
            let rows = match tokio::time::timeout(LISTING_TIMEOUT, asked).await {
                Ok(Ok((200, Some(Value::Array(rows))))) => {
                    Some(rows.into_iter().filter_map(|r| r.as_object().cloned()).collect())
                }
                _ => None,
            };
            (node.id, node.address, rows)
        });
    }
    let mut out = Vec::new();
    while let Some(done) = running.join_next().await {
        out.extend(done.ok());
    }
    out
}

/// The cluster index and shard number of local index `name`, if it is one of their shards.
fn of_shard<'a>(name: &str, indices: &'a BTreeMap<String, ShardedIndex>) -> Option<(&'a String, usize)> {
    let (index, k) = name.rsplit_once(".shard-")?;
    let (index, sharded) = indices.get_key_value(index)?;
    let k: usize = k.parse().ok()?;
    (k < sharded.shards.len() && shard_name(index, k) == name).then_some((index, k))
}

fn number(row: &Map<String, Value>, column: &str) -> u64 {
    row.get(column).and_then(Value::as_str).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// An index's row: its primaries' figures summed (sizes: every copy's
/// too); red while a primary is not answered for, yellow while a replica is not.
fn index_row(
    name: &str,
    wanted: usize,
    primaries: &[Option<&Held>],
    replicas: &[(usize, Option<&String>, Option<&Held>)],
    unit: Option<&str>,
) -> Map<String, Value> {
    let sum = |copies: &mut dyn Iterator<Item = &Held>, column: &str| {
        copies.map(|h| number(&h.row, column)).sum::<u64>()
    };
    let primary = |column: &str| sum(&mut primaries.iter().flatten().copied(), column);
    let replica = |column: &str| sum(&mut replicas.iter().filter_map(|(_, _, h)| *h), column);
    let health = match (primaries.iter().all(Option::is_some), replicas.iter().all(|(_, _, h)| h.is_some())) {
        (false, _) => "red",
        (true, false) => "yellow",
        (true, true) => "green",
    };
    let uuid = primaries.iter().flatten().next().and_then(|h| h.row["uuid"].as_str()).unwrap_or("_na_");
    let values = [
        health.to_string(),
        "open".into(),
        name.to_string(),
        uuid.to_string(),
        primaries.len().to_string(),
        wanted.to_string(),
        primary("docs.count").to_string(),
        primary("docs.deleted").to_string(),
        shown_bytes(primary("store.size") + replica("store.size"), unit),
        shown_bytes(primary("store.size"), unit),
    ];
    row(&CAT_COLUMNS, values)
}

/// A copy's row (`prirep`: `p` or `r`): its figures when started, the
/// node it is `placed` on (id, address) while initializing.
fn shard_row(
    name: &str,
    k: usize,
    prirep: &str,
    state: CopyState,
    held: Option<&Held>,
    placed: Option<(&str, &str)>,
    unit: Option<&str>,
) -> Map<String, Value> {
    let ip = |address: &str| address.rsplit_once(':').map_or(address, |(ip, _)| ip).to_string();
    let (docs, size, address, node) = match (state, held, placed) {
        (CopyState::Started, Some(h), _) => (
            number(&h.row, "docs.count").to_string(),
            shown_bytes(number(&h.row, "store.size"), unit),
            ip(&h.address),
            h.node.clone(),
        ),
        (CopyState::Initializing, _, Some((node, address))) => {
            (String::new(), String::new(), ip(address), node.to_string())
        }
        _ => Default::default(),
    };
    let values =
        [name.to_string(), k.to_string(), prirep.into(), state.as_str().into(), docs, size, address, node];
    row(&SHARD_COLUMNS, values)
}
