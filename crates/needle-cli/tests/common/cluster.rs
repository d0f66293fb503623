//! A cluster whose writes are logged, for the tests that fail its nodes:
//! an etcd, a NATS server, and nodes started on them with a short lease.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use needle_testkit::etcd::EtcdProcess;
use needle_testkit::http::send;
use needle_testkit::nats::NatsProcess;
use serde_json::json;

pub const LEASE_SECONDS: &str = "2";

pub struct Cluster {
    pub etcd: EtcdProcess,
    pub nats: NatsProcess,
    pub name: String,
}

impl Cluster {
    /// An etcd and a NATS server for test `test`: `None` when either is not installed (and not required).
    pub fn start(test: &str) -> Option<Cluster> {
        let (etcd, nats) = (EtcdProcess::start(test)?, NatsProcess::start(test)?);
        let name = format!("{}-{}", test.replace(' ', "-"), std::process::id());
        Some(Cluster { etcd, nats, name })
    }

    /// Node `id` serving `data` on `bind`; returns once the cluster counts `nodes` nodes.
    pub fn node(&self, id: &str, data: &Path, bind: &str, nodes: u64) -> (Child, SocketAddr) {
        self.node_with(id, data, bind, nodes, &[])
    }

    /// [`Cluster::node`], with `more` arguments.
    pub fn node_with(
        &self,
        id: &str,
        data: &Path,
        bind: &str,
        nodes: u64,
        more: &[&str],
    ) -> (Child, SocketAddr) {
        let (cluster, log) = (format!("etcd={}", self.etcd.url), format!("nats={}", self.nats.url));
        let args = [
            "--cluster",
            &cluster,
            "--cluster-name",
            &self.name,
            "--node-id",
            id,
            "--lease-ttl",
            LEASE_SECONDS,
        ];
        let (child, at) = super::serve_at(data, bind, &[&args[..], &["--log", &log], more].concat());
        let started = Instant::now();
        while send(at, "GET", "/_cluster/health", None, &[]).json()["number_of_nodes"] != nodes {
            assert!(started.elapsed() < Duration::from_secs(30), "{id} never saw {nodes} nodes");
            std::thread::sleep(Duration::from_millis(100));
        }
        (child, at)
    }
}

/// Kills a node (SIGKILL).
pub fn kill(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// `_bulk` of ids `{prefix}{i}`: the ids acknowledged.
pub fn bulk(at: SocketAddr, prefix: &str, ids: std::ops::Range<u32>) -> Vec<String> {
    let lines: String = ids
        .map(|i| format!("{}\n{}\n", json!({"index": {"_id": format!("{prefix}{i}")}}), json!({"n": i})))
        .collect();
    let answer = send(at, "POST", "/logs/_bulk?refresh=true", Some(lines.as_bytes()), &[]).json();
    let items = answer["items"].as_array().cloned().unwrap_or_default();
    let ok = items.iter().filter(|i| i["index"]["status"].as_u64().is_some_and(|s| s < 300));
    ok.map(|i| i["index"]["_id"].as_str().unwrap().to_string()).collect()
}

/// The `_id`s of copy `shard` on the node at `at`, sorted (the local index of that name).
pub fn copy_ids(at: SocketAddr, shard: &str) -> Vec<String> {
    let body = json!({"size": 10000, "_source": false});
    let answer =
        send(at, "POST", &format!("/{shard}/_search"), Some(body.to_string().as_bytes()), &[]).json();
    let hits = answer["hits"]["hits"].as_array().cloned().unwrap_or_default();
    let mut ids: Vec<String> = hits.iter().map(|h| h["_id"].as_str().unwrap().to_string()).collect();
    ids.sort();
    ids
}

/// Every shard's count through `at`, `None` when a shard failed.
pub fn full_count(at: SocketAddr) -> Option<u64> {
    let counted = send(at, "GET", "/logs/_count", None, &[]).json();
    (counted["_shards"]["failed"] == 0).then(|| counted["count"].as_u64()).flatten()
}
