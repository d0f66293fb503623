//! A cluster whose writes are logged, for the tests that fail its nodes:
//! an etcd, a NATS server, and nodes started on them with a short lease.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use needle_testkit::etcd::EtcdProcess;
use needle_testkit::http::send;
use needle_testkit::nats::NatsProcess;

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
        let (child, at) = super::serve_at(data, bind, &[&args[..], &["--log", &log]].concat());
        let started = Instant::now();
        while send(at, "GET", "/_cluster/health", None, &[]).json()["number_of_nodes"] != nodes {
            assert!(started.elapsed() < Duration::from_secs(30), "{id} never saw {nodes} nodes");
            std::thread::sleep(Duration::from_millis(100));
        }
        (child, at)
    }
}
