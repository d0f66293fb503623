//! `_bulk` over a cluster's indexes. The body is parsed as one node parses
//! it (a malformed action line fails the whole request); each action goes
//! to the shard of its `_id` (one drawn for an `index` or `create` without
//! one), its line naming the shard; each node gets one `_bulk` of its
//! shards' actions, all nodes at once; the items come back in the request's
//! order, naming the cluster's index. A missing index is made as a document
//! write would make it; a node that does not answer fails its items alone.

use std::collections::BTreeMap;
use std::time::Instant;

use bytes::Bytes;
use needle_cluster::{shard_name, shard_of, ShardedIndex};
use serde_json::{json, Map, Value};

use super::{rename_index, to_nodes, Forward, Share};
use crate::error::{ApiError, ApiResult};
use crate::routes::bulk::{parse, Action, Kind};

/// Where one action goes: its index, shard and line as sent.
struct Routed {
    index: String,
    shard: usize,
    node: String,
    lines: String,
}

pub async fn bulk(call: &Forward, default_index: Option<&str>) -> ApiResult<axum::response::Response> {
    let started = Instant::now();
    let text = std::str::from_utf8(&call.body)
        .map_err(|e| ApiError::parsing(format!("the body is not UTF-8: {e}")))?;
    let actions = parse(text, default_index)?;
    let mut indices: BTreeMap<String, (String, ShardedIndex)> = BTreeMap::new();
    let mut items: Vec<Option<Value>> = vec![None; actions.len()];
    let mut per_node: BTreeMap<String, (Vec<usize>, String)> = BTreeMap::new();
    let mut routed = Vec::with_capacity(actions.len());
    for (i, action) in actions.iter().enumerate() {
        match route(call, action, &mut indices).await {
            Ok(r) => {
                let (positions, body) = per_node.entry(r.node.clone()).or_default();
                positions.push(i);
                body.push_str(&r.lines);
                routed.push(Some(r));
            }
            Err(e) => {
                items[i] = Some(failed_item(action, &e));
                routed.push(None);
            }
        }
    }
    let shares =
        per_node.into_iter().map(|(node, (places, body))| Share { node, places, body: Bytes::from(body) });
    for (places, answered) in to_nodes(call, "_bulk", "application/x-ndjson", "items", shares.collect()).await
    {
        match answered {
            Ok(answered) => {
                for (i, mut item) in places.into_iter().zip(answered) {
                    let r = routed[i].as_ref().expect("routed");
                    if let Some(inner) = item.as_object_mut().and_then(|o| o.values_mut().next()) {
                        rename_index(inner, &shard_name(&r.index, r.shard), &r.index);
                    }
                    items[i] = Some(item);
                }
            }
            Err(why) => fail_all(&mut items, &places, &actions, &routed, &why),
        }
    }
    let items: Vec<Value> = items.into_iter().map(Option::unwrap_or_default).collect();
    let errors = items.iter().any(|item| {
        item.as_object().and_then(|o| o.values().next()).is_some_and(|i| i.get("error").is_some())
    });
    let mut answer = json!({"took": started.elapsed().as_millis() as u64, "errors": errors});
    // Moved in: `json!` would copy every item.
    answer["items"] = Value::Array(items);
    Ok(crate::respond::ok(&answer))
}

/// The shard of `action` and its lines rewritten to name it; its index made when missing.
async fn route(
    call: &Forward,
    action: &Action<'_>,
    indices: &mut BTreeMap<String, (String, ShardedIndex)>,
) -> ApiResult<Routed> {
    if !indices.contains_key(&action.index) {
        let of_index = call.about(&action.index);
        // Through an alias, the one index it names.
        let found = match super::aliases::one_index(&call.member, &action.index).await? {
            Some(found) => found,
            None if action.kind == Kind::Delete => return Err(ApiError::index_not_found(&action.index)),
            None => (action.index.clone(), of_index.make(json!({})).await?.0),
        };
        indices.insert(action.index.clone(), found);
    }
    let (index, sharded) = &indices[&action.index];
    let id = action.id.clone().unwrap_or_else(crate::catalog::uuid);
    let shard = shard_of(&id, sharded.shards.len());
    let mut line: Map<String, Value> = serde_json::from_str(action.line).expect("parsed before");
    if let Some(Value::Object(meta)) = line.values_mut().next() {
        meta.insert("_index".into(), json!(shard_name(index, shard)));
        meta.insert("_id".into(), json!(id));
    }
    let mut lines = Value::Object(line).to_string();
    lines.push('\n');
    if let Some(source) = action.source {
        lines.push_str(source);
        lines.push('\n');
    }
    Ok(Routed { index: index.clone(), shard, node: sharded.shards[shard].clone(), lines })
}

fn failed_item(action: &Action, e: &ApiError) -> Value {
    let item = json!({"_index": action.index, "_id": action.id, "status": e.status.as_u16(), "error": e.item_body()});
    json!({ action.kind.name(): item })
}

/// Every item sent to a node that did not answer them, failed.
fn fail_all(
    items: &mut [Option<Value>],
    positions: &[usize],
    actions: &[Action],
    routed: &[Option<Routed>],
    why: &str,
) {
    for &i in positions {
        let shard = routed[i].as_ref().map_or(0, |r| r.shard);
        let e = super::shard_unavailable(&actions[i].index, shard, why);
        items[i] = Some(failed_item(&actions[i], &e));
    }
}
