//! `_mget` over a cluster's indexes: each document asked for goes to the
//! node of its shard, each node gets one `_mget` of its documents, all
//! nodes at once, and the documents come back in the order asked, naming
//! the cluster's index. A missing index, or a node that does not answer,
//! fails its documents alone, as a missing index does on one node.

use std::collections::BTreeMap;

use bytes::Bytes;
use needle_cluster::{shard_name, shard_of, ShardedIndex};
use serde_json::{json, Map, Value};

use super::{rename_index, to_nodes, Forward, Share};
use crate::error::{ApiError, ApiResult};
use crate::routes::documents::{id_text, mget_doc};
use crate::routes::write;
use crate::source_filter::SourceFilter;

/// One document asked for: its index, shard, and its entry as sent.
struct Asked {
    index: String,
    shard: usize,
    entry: Value,
}

pub async fn mget(call: &Forward, default_index: Option<&str>) -> ApiResult<axum::response::Response> {
    let asked = asked(call, default_index)?;
    let mut indices: BTreeMap<String, Option<(String, ShardedIndex)>> = BTreeMap::new();
    let mut docs: Vec<Value> = vec![Value::Null; asked.len()];
    let mut per_node: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut routed = Vec::with_capacity(asked.len());
    for (i, (index, id, mut entry)) in asked.into_iter().enumerate() {
        if !indices.contains_key(&index) {
            // Through an alias, the one index it names.
            let found = super::aliases::one_index(&call.member, &index).await;
            let found = match found {
                Err(e) if e.status.is_client_error() => {
                    docs[i] = json!({"_index": index, "_id": id, "error": e.body()["error"]});
                    routed.push(None);
                    continue;
                }
                found => found?,
            };
            indices.insert(index.clone(), found);
        }
        let Some((index, sharded)) = &indices[&index] else {
            docs[i] = json!({"_index": index, "_id": id, "error": ApiError::index_not_found(&index).body()["error"]});
            routed.push(None);
            continue;
        };
        let shard = shard_of(&id, sharded.shards.len());
        entry["_index"] = json!(shard_name(index, shard));
        per_node.entry(sharded.shards[shard].clone()).or_default().push(i);
        routed.push(Some(Asked { index: index.clone(), shard, entry }));
    }
    let shares = per_node.into_iter().map(|(node, places)| {
        let entries: Vec<&Value> =
            places.iter().map(|&i| &routed[i].as_ref().expect("routed").entry).collect();
        let body = Bytes::from(json!({ "docs": entries }).to_string());
        Share { node, places, body }
    });
    for (places, answered) in to_nodes(call, "_mget", "application/json", "docs", shares.collect()).await {
        for (n, &i) in places.iter().enumerate() {
            let asked = routed[i].as_ref().expect("routed");
            docs[i] = match &answered {
                Ok(list) => {
                    let mut doc = list[n].clone();
                    rename_index(&mut doc, &shard_name(&asked.index, asked.shard), &asked.index);
                    doc
                }
                Err(why) => {
                    let e = super::shard_unavailable(&asked.index, asked.shard, why);
                    json!({"_index": asked.index, "_id": asked.entry["_id"], "error": e.body()["error"]})
                }
            };
        }
    }
    // Moved in: `json!` would copy every document's source.
    Ok(crate::respond::ok(&Value::Object(Map::from_iter([("docs".to_string(), Value::Array(docs))]))))
}

/// Each document asked for: (index, id, its entry), checked as one node checks them.
fn asked(call: &Forward, default_index: Option<&str>) -> ApiResult<Vec<(String, String, Value)>> {
    let body: Value = serde_json::from_slice(&call.body)
        .map_err(|e| ApiError::parsing(format!("the body is not JSON: {e}")))?;
    let Value::Object(body) = body else {
        return Err(ApiError::parsing("the [mget] body must be an object"));
    };
    let mut out = Vec::new();
    for (key, value) in &body {
        match (key.as_str(), value) {
            ("ids", Value::Array(ids)) => {
                for id in ids {
                    let id = id_text(id).ok_or_else(|| ApiError::parsing("[mget] ids must be strings"))?;
                    out.push((None, id.clone(), json!({ "_id": id })));
                }
            }
            ("docs", Value::Array(docs)) => {
                for doc in docs {
                    let (index, id, _) = mget_doc(doc, &SourceFilter::all())?;
                    let mut entry = doc.clone();
                    entry["_id"] = json!(id);
                    out.push((index, id, entry));
                }
            }
            (other, _) => {
                return Err(ApiError::parsing(format!("[mget] unknown key [{other}] or not an array")))
            }
        }
    }
    if out.is_empty() {
        return Err(write::validation("no documents to get"));
    }
    out.into_iter()
        .map(|(index, id, entry)| match index.as_deref().or(default_index) {
            Some(index) => Ok((index.to_string(), id, entry)),
            None => Err(write::validation("index is missing for doc 0")),
        })
        .collect()
}
