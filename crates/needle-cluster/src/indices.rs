//! Indexes whose shards live on the cluster's nodes: which node holds each
//! shard, kept in etcd under `/needle/{cluster}/indices/{name}` (with no
//! lease: an index outlives the nodes that made it), and which shard a
//! document goes to.
//!
//! A shard is an ordinary index on its node, named [`shard_name`]; the node
//! a request reaches coordinates it (the server's `coordinator`). A shard's
//! primary takes its writes; its replicas, on other nodes (as many as the
//! index's `number_of_replicas`, when there are nodes for them), are copies
//! under the same name that follow the shard's ingest log, searched when
//! the primary fails, and one of them becomes the primary when the
//! primary's node is gone ([`moved`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An index of the cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardedIndex {
    /// The id of the node holding each shard's primary, by shard number.
    pub shards: Vec<String>,
    /// The ids of the nodes holding each shard's replicas, by shard number
    /// (none at all: an index without replicas, or recorded before them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<Vec<String>>,
    /// The body it was created with (mappings, settings), which each shard was created with.
    pub created: Value,
    /// The other names it answers to: its aliases (given at its creation or
    /// by `_aliases`). They live here, not in its shards: a shard's node
    /// answers a name its own catalog knows with that shard alone.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub aliases: BTreeSet<String>,
}

impl ShardedIndex {
    /// Replicas each shard should have: the creation's `number_of_replicas`
    /// (as `index.number_of_replicas` too), 0 when absent.
    pub fn replicas_wanted(&self) -> usize {
        let given = index_setting(&self.created, "number_of_replicas");
        let n = given.and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()));
        n.unwrap_or(0) as usize
    }

    /// The nodes holding replicas of shard `k`.
    pub fn replicas_of(&self, k: usize) -> &[String] {
        self.replicas.get(k).map_or(&[], Vec::as_slice)
    }

    /// Every node holding a copy of shard `k`: its primary's first.
    pub fn copies_of(&self, k: usize) -> impl Iterator<Item = &String> {
        std::iter::once(&self.shards[k]).chain(self.replicas_of(k))
    }

    /// Whether `node` holds a copy (primary or replica) of shard `k`.
    pub fn holds(&self, node: &str, k: usize) -> bool {
        self.copies_of(k).any(|n| n == node)
    }
}

/// The indexes that `alias` is an alias of, in name order.
pub fn aliased<'a>(indices: &'a BTreeMap<String, ShardedIndex>, alias: &str) -> Vec<&'a str> {
    indices.iter().filter(|(_, index)| index.aliases.contains(alias)).map(|(name, _)| name.as_str()).collect()
}

/// Setting `name` of an index's creation body, as `settings.{name}`,
/// `settings.index.{name}` or `settings["index.{name}"]`.
pub fn index_setting<'a>(body: &'a Value, name: &str) -> Option<&'a Value> {
    let settings = &body["settings"];
    let forms = [&settings[name], &settings["index"][name], &settings[format!("index.{name}").as_str()]];
    forms.into_iter().find(|v| !v.is_null())
}

/// Sets setting `name` of an index's creation body to `value`, as
/// `settings.{name}`, dropping its other forms (see [`index_setting`]).
pub fn set_index_setting(body: &mut Value, name: &str, value: Value) {
    if !body["settings"].is_object() {
        body["settings"] = Value::Object(Default::default());
    }
    let settings = body["settings"].as_object_mut().expect("an object");
    settings.remove(&format!("index.{name}"));
    if let Some(Value::Object(index)) = settings.get_mut("index") {
        index.remove(name);
    }
    settings.insert(name.to_string(), value);
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

/// `index` with its copies on nodes out of the cluster replaced: a primary
/// not in `live` by its first live replica, else, once its node is `gone`
/// (out for a lease's time), by the live node holding fewest copies; a
/// replica on a gone node dropped; then each shard given replicas on
/// the least loaded live nodes holding no copy of it, up to the number
/// wanted (and no more: a lowered number drops the last ones). `load` counts each node's copies and is kept up to date (ties go
/// to the node that joined first). `None` when nothing changes.
pub fn moved(
    index: &ShardedIndex,
    live: &[String],
    gone: impl Fn(&str) -> bool,
    load: &mut BTreeMap<String, usize>,
) -> Option<ShardedIndex> {
    if live.is_empty() {
        return None;
    }
    let mut out = index.clone();
    let wanted = index.replicas_wanted();
    out.replicas.resize(out.shards.len(), Vec::new());
    let least_loaded = |exclude: &[String], load: &mut BTreeMap<String, usize>| {
        let to = live
            .iter()
            .filter(|n| !exclude.contains(n))
            .min_by_key(|n| load.get(*n).copied().unwrap_or(0))?;
        *load.entry(to.clone()).or_default() += 1;
        Some(to.clone())
    };
    for (primary, replicas) in out.shards.iter_mut().zip(out.replicas.iter_mut()) {
        replicas.retain(|n| !gone(n));
        // A primary whose node is out of the cluster gives way to a live
        // replica at once (a promotion refills nothing); without one, only
        // once its node is gone for good (a node restarting keeps its shards).
        if !live.contains(primary) {
            match replicas.iter().position(|n| live.contains(n)) {
                Some(at) => *primary = replicas.remove(at),
                None if gone(primary) => *primary = least_loaded(&[], load)?,
                None => {}
            }
        }
        while replicas.len() < wanted {
            let holding: Vec<String> =
                std::iter::once(primary.clone()).chain(replicas.iter().cloned()).collect();
            let Some(to) = least_loaded(&holding, load) else { break };
            replicas.push(to);
        }
        replicas.truncate(wanted);
    }
    if out.replicas.iter().all(Vec::is_empty) {
        out.replicas.clear();
    }
    (out != *index).then_some(out)
}

/// Replicas for shards placed on `primaries`: `wanted` each, on the nodes
/// after its primary's in `nodes` (as many as there are other nodes).
pub fn place_replicas(primaries: &[String], wanted: usize, nodes: &[String]) -> Vec<Vec<String>> {
    if wanted == 0 || nodes.len() < 2 {
        return Vec::new();
    }
    let after = |primary: &String| {
        let at = nodes.iter().position(|n| n == primary).unwrap_or(0);
        (1..nodes.len()).map(move |i| nodes[(at + i) % nodes.len()].clone()).take(wanted).collect()
    };
    primaries.iter().map(after).collect()
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
            replicas: Vec::new(),
            created: Value::Null,
            aliases: Default::default(),
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
    fn a_gone_primary_is_replaced_by_its_replica_and_replicas_are_made_up() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let index = ShardedIndex {
            shards: names(&["n1", "n2", "n3"]),
            replicas: vec![names(&["n2"]), names(&["n3"]), names(&["n1"])],
            created: serde_json::json!({"settings": {"index": {"number_of_replicas": "1"}}}),
            aliases: Default::default(),
        };
        assert_eq!(index.replicas_wanted(), 1);
        let live = names(&["n1", "n2", "n4"]);
        let mut load = BTreeMap::from([("n1".into(), 2), ("n2".into(), 2), ("n3".into(), 2)]);
        let after = moved(&index, &live, |n| n == "n3", &mut load).unwrap();
        // Shard 2's primary (on n3) is gone: its replica on n1 takes over, and
        // replicas are made up on the least loaded node (n4, which joined).
        assert_eq!(after.shards, names(&["n1", "n2", "n1"]));
        assert_eq!(after.replicas[0], names(&["n2"]));
        assert_eq!(after.replicas[1], names(&["n4"]), "n3's replica replaced on the empty node");
        assert!(!after.replicas[2].contains(&after.shards[2]), "never a replica beside its primary");
        assert_eq!(after.replicas[2].len(), 1);
        // A node just out of the cluster (not gone yet): its primaries go to their replicas at once.
        let promoted = moved(&after, &names(&["n2", "n4"]), |_| false, &mut load).unwrap();
        assert_eq!(promoted.shards[0], "n2", "n1's primary replaced by its replica");
        assert_eq!(promoted.shards[1], "n2");
        assert!((0..3).all(|k| promoted.copies_of(k).count() == 2), "{promoted:?}");
        assert!((0..3).all(|k| promoted.replicas_of(k)[0] != promoted.shards[k]), "{promoted:?}");
        assert!(moved(&promoted, &names(&["n2", "n4"]), |n| n == "n1", &mut load).is_none());
        // One node left: primaries only, the replicas wait for nodes to hold them.
        let alone = moved(&promoted, &names(&["n2"]), |n| n == "n4", &mut load).unwrap();
        assert_eq!(alone.shards, names(&["n2", "n2", "n2"]));
        assert!(alone.replicas.is_empty(), "{alone:?}");
    }

    #[test]
    fn replicas_go_on_the_nodes_after_their_primary() {
        let nodes: Vec<String> = ["n1", "n2", "n3"].map(String::from).to_vec();
        let primaries = place("logs", 3, &nodes);
        let replicas = place_replicas(&primaries, 2, &nodes);
        for (primary, replicas) in primaries.iter().zip(&replicas) {
            assert_eq!(replicas.len(), 2);
            assert!(!replicas.contains(primary));
            assert_ne!(replicas[0], replicas[1]);
        }
        assert_eq!(place_replicas(&primaries, 5, &nodes)[0].len(), 2, "one copy a node");
        assert!(place_replicas(&primaries, 1, &nodes[..1]).is_empty());
        assert!(place_replicas(&primaries, 0, &nodes).is_empty());
    }

    #[test]
    fn a_setting_set_replaces_each_of_its_forms() {
        let mut body = serde_json::json!({"settings": {"index": {"number_of_replicas": 2, "x": 1}}});
        set_index_setting(&mut body, "number_of_replicas", serde_json::json!(0));
        assert_eq!(index_setting(&body, "number_of_replicas"), Some(&serde_json::json!(0)));
        assert_eq!(body["settings"]["index"], serde_json::json!({"x": 1}));
        let mut dotted = serde_json::json!({"settings": {"index.number_of_replicas": "1"}});
        set_index_setting(&mut dotted, "number_of_replicas", serde_json::json!(3));
        assert_eq!(dotted, serde_json::json!({"settings": {"number_of_replicas": 3}}));
        let mut bare = serde_json::json!({});
        set_index_setting(&mut bare, "refresh_interval", serde_json::json!("5s"));
        assert_eq!(index_setting(&bare, "refresh_interval"), Some(&serde_json::json!("5s")));
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
