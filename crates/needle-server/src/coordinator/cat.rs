//! `_cat/indices` and `_cat/shards` on a node of a cluster: the cluster's
//! indexes (each shard's figures asked of its node, all nodes at once), and
//! this node's own indexes that are no cluster index's shards. A primary
//! whose node does not answer shows as `UNASSIGNED` and makes its index red;
//! a replica so, or one the index wants and no node holds, makes it yellow.

use std::collections::{BTreeMap, HashMap};

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
    for (node, address, rows) in every_node_rows(member, app.api_key.as_deref()).await {
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
    for (name, sharded) in indices.iter().filter(|(name, _)| wanted(name)) {
        let copy = |k: usize, node: Option<&String>| held.get(&(shard_name(name, k), node?.clone()));
        let primaries: Vec<Option<&Held>> =
            (0..sharded.shards.len()).map(|k| copy(k, Some(&sharded.shards[k]))).collect();
        // Each shard's wanted replicas, those no node holds too.
        let replicas: Vec<(usize, Option<&Held>)> = (0..sharded.shards.len())
            .flat_map(|k| (0..sharded.replicas_wanted()).map(move |r| (k, r)))
            .map(|(k, r)| (k, copy(k, sharded.replicas_of(k).get(r))))
            .collect();
        match listing {
            Listing::Indices => {
                rows.push(index_row(name, sharded.replicas_wanted(), &primaries, &replicas, unit.as_deref()))
            }
            Listing::Shards => {
                rows.extend(
                    primaries.iter().enumerate().map(|(k, h)| shard_row(name, k, "p", *h, unit.as_deref())),
                );
                rows.extend(replicas.iter().map(|(k, h)| shard_row(name, *k, "r", *h, unit.as_deref())));
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
                rows.push(shard_row(&name, 0, "p", Some(&held), unit.as_deref()));
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

/// Every live node's `_cat/indices` rows (sizes in bytes), with its id and address.
async fn every_node_rows(
    member: &Member,
    api_key: Option<&str>,
) -> Vec<(String, String, Vec<Map<String, Value>>)> {
    let mut running = JoinSet::new();
    for node in member.view().nodes {
        let api_key = api_key.map(str::to_string);
        running.spawn(async move {
            let answer = fetch(
                api_key.as_deref(),
                &node.address,
                "GET",
                "/_cat/indices?format=json&bytes=b",
                None,
                Bytes::new(),
            )
            .await;
            let rows = match answer {
                Ok((200, Some(Value::Array(rows)))) => {
                    rows.into_iter().filter_map(|r| r.as_object().cloned()).collect()
                }
                _ => Vec::new(),
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
    replicas: &[(usize, Option<&Held>)],
    unit: Option<&str>,
) -> Map<String, Value> {
    let sum = |copies: &mut dyn Iterator<Item = &Held>, column: &str| {
        copies.map(|h| number(&h.row, column)).sum::<u64>()
    };
    let primary = |column: &str| sum(&mut primaries.iter().flatten().copied(), column);
    let replica = |column: &str| sum(&mut replicas.iter().filter_map(|(_, h)| *h), column);
    let health = match (primaries.iter().all(Option::is_some), replicas.iter().all(|(_, h)| h.is_some())) {
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

/// A copy's row (`prirep`: `p` or `r`): started on its node, or unassigned
/// while no node answers for it.
fn shard_row(
    name: &str,
    k: usize,
    prirep: &str,
    held: Option<&Held>,
    unit: Option<&str>,
) -> Map<String, Value> {
    let values = match held {
        Some(h) => [
            name.to_string(),
            k.to_string(),
            prirep.into(),
            "STARTED".into(),
            number(&h.row, "docs.count").to_string(),
            shown_bytes(number(&h.row, "store.size"), unit),
            h.address.rsplit_once(':').map_or(h.address.as_str(), |(ip, _)| ip).to_string(),
            h.node.clone(),
        ],
        None => [
            name.to_string(),
            k.to_string(),
            prirep.into(),
            "UNASSIGNED".into(),
            "".into(),
            "".into(),
            "".into(),
            "".into(),
        ],
    };
    row(&SHARD_COLUMNS, values)
}
