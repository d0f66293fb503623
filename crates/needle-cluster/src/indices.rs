//! Indexes whose shards live on the cluster's nodes: which node holds each
//! shard, kept in etcd under `/needle/{cluster}/indices/{name}` (with no
//! lease: an index outlives the nodes that made it), and which shard a
//! document goes to.
//!
//! A shard is an ordinary index on its node, named [`shard_name`]; the node
//! a request reaches coordinates it (the server's `coordinator`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An index of the cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardedIndex {
    /// The id of the node holding each shard, by shard number.
    pub shards: Vec<String>,
    /// The body it was created with (mappings, settings), which each shard was created with.
    pub created: Value,
}

/// The local index holding shard `shard` of index `index` on its node. An
/// index name ending in `.shard-N` splits one way only, so two shards never
/// share a name.
pub fn shard_name(index: &str, shard: usize) -> String {
    format!("{index}.shard-{shard}")
}

/// Whether `name` is a shard's local index ([`shard_name`]'s form).
pub fn is_shard_name(name: &str) -> bool {
    split_shard_name(name).is_some()
}

/// The index and shard number a shard's local index is named after.
pub fn split_shard_name(name: &str) -> Option<(&str, usize)> {
    let (index, k) = name.rsplit_once(".shard-")?;
    let number = !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit());
    (!index.is_empty() && number).then(|| k.parse().ok()).flatten().map(|k| (index, k))
}

/// `index` with each shard held by a node not in `live` given to the live
/// node holding fewest (`load` counts each node's shards, and is kept up to
/// date; ties go to the one that joined first); `None` when none moves.
pub fn moved(
    index: &ShardedIndex,
    live: &[String],
    gone: impl Fn(&str) -> bool,
    load: &mut BTreeMap<String, usize>,
) -> Option<ShardedIndex> {
    let mut out = index.clone();
    for holder in out.shards.iter_mut().filter(|n| gone(n)) {
        let to = live.iter().min_by_key(|n| load.get(*n).copied().unwrap_or(0))?;
        *load.entry(to.clone()).or_default() += 1;
        *holder = to.clone();
    }
    (out != *index).then_some(out)
}

/// The shard of `shards` that document `id` belongs to: Murmur3 (x86, 32
/// bits, seed 0) of its UTF-8 bytes, modulo the shard count, as Elasticsearch
/// routes by `_id` (it hashes UTF-16 and spreads over more slots, so the
/// shard numbers are not Elasticsearch's).
pub fn shard_of(id: &str, shards: usize) -> usize {
    let hash = murmur3::murmur3_32(&mut std::io::Cursor::new(id.as_bytes()), 0).unwrap_or(0) as i32;
    hash.rem_euclid(shards.max(1) as i32) as usize
}

/// Spreads `shards` shards over `nodes` nodes (ids in the order they joined),
/// one after another from a place that depends on the index's name, so
/// indexes of one shard do not all land on the first node.
pub fn place(index: &str, shards: usize, nodes: &[String]) -> Vec<String> {
    if nodes.is_empty() {
        return Vec::new();
    }
    let start = shard_of(index, nodes.len());
    (0..shards).map(|k| nodes[(start + k) % nodes.len()].clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_spread_over_every_shard() {
        let mut counts = [0usize; 3];
        for i in 0..3000 {
            counts[shard_of(&format!("doc-{i}"), 3)] += 1;
        }
        assert!(counts.iter().all(|&c| (800..1200).contains(&c)), "{counts:?}");
        assert_eq!(shard_of("a", 1), 0);
    }

    #[test]
    fn shard_names_are_told_from_other_names() {
        assert!(is_shard_name(&shard_name("logs.shard-2", 11)));
        for name in ["logs", "logs.shard-", ".shard-1", "logs.shard-x", "logs.shard-1a"] {
            assert!(!is_shard_name(name), "{name}");
        }
    }

    #[test]
    fn the_shards_of_a_gone_node_go_to_the_least_loaded_live_ones() {
        assert_eq!(split_shard_name(&shard_name("a.shard-1", 12)), Some(("a.shard-1", 12)));
        let index = |shards: &[&str]| ShardedIndex {
            shards: shards.iter().map(|s| s.to_string()).collect(),
            created: Value::Null,
        };
        let live: Vec<String> = ["n1", "n2"].map(String::from).to_vec();
        let mut load = BTreeMap::from([("n1".to_string(), 2), ("n2".to_string(), 1)]);
        let before = index(&["n1", "n3", "n2", "n3", "n3"]);
        let after = moved(&before, &live, |n| n == "n3", &mut load).unwrap();
        assert_eq!(after.shards, ["n1", "n2", "n2", "n1", "n2"]);
        assert_eq!(load, BTreeMap::from([("n1".to_string(), 3), ("n2".to_string(), 3)]));
        assert!(moved(&after, &live, |n| n == "n3", &mut load).is_none(), "nothing left to move");
        assert!(moved(&before, &[], |n| n == "n3", &mut load).is_none(), "no live node to move to");
    }

    #[test]
    fn shards_go_round_the_nodes() {
        let nodes: Vec<String> = ["n1", "n2", "n3"].map(String::from).to_vec();
        let placed = place("logs", 4, &nodes);
        assert_eq!(placed.len(), 4);
        assert_eq!(placed[0], placed[3]);
        assert!(placed[..3].iter().all(|n| placed[..3].iter().filter(|m| *m == n).count() == 1));
        assert!(place("logs", 2, &[]).is_empty());
    }
}
