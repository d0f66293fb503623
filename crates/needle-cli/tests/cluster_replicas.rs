//! Replicas (`number_of_replicas`) in a cluster whose writes are logged:
//! each follows its shard's stream, so it holds the primary's documents
//! within moments; it refuses writes of its own; searches answer whole
//! while a primary's node is down (the replica answers for it); the
//! replica becomes the primary once the node drops out of the cluster,
//! and writes go on; the node, back, holds a replica again, made afresh
//! from the stream.

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use common::cluster::{bulk, copy_ids, full_count, kill, Cluster};
use needle_testkit::http::send;
use serde_json::{json, Value};

/// Waits until both nodes' copies of each shard hold the same documents, `total` in all.
fn copies_agree(at: [SocketAddr; 2], total: usize) {
    let started = Instant::now();
    loop {
        let shards = ["logs.shard-0", "logs.shard-1"];
        let agree = shards.iter().all(|s| copy_ids(at[0], s) == copy_ids(at[1], s));
        let count: usize = shards.iter().map(|s| copy_ids(at[0], s).len()).sum();
        if agree && count == total {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "the copies never agreed ({count} of {total})");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// How many shard copies are in data folder `data`.
fn shards_on_disk(data: &Path) -> usize {
    let entries = std::fs::read_dir(data.join("indices")).unwrap().flatten();
    entries.filter(|e| e.file_name().to_string_lossy().starts_with("logs.shard-")).count()
}

fn cat_shards(at: SocketAddr) -> Vec<Value> {
    send(at, "GET", "/_cat/shards/logs?format=json", None, &[]).json().as_array().cloned().unwrap_or_default()
}

#[test]
fn replicas_follow_their_primaries_answer_for_them_and_take_over() {
    let Some(cluster) = Cluster::start("replica test") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (one, two): (&Path, &Path) = (&dir.path().join("n1"), &dir.path().join("n2"));
    let (n1, at1) = cluster.node("n1", one, "127.0.0.1:0", 1);
    let (n2, at2) = cluster.node("n2", two, "127.0.0.1:0", 2);
    let started = Instant::now();
    while send(at1, "GET", "/_cluster/health", None, &[]).json()["number_of_nodes"] != 2 {
        assert!(started.elapsed() < Duration::from_secs(20), "n1 never saw n2");
        std::thread::sleep(Duration::from_millis(100));
    }
    let settings = json!({"settings": {"number_of_shards": 2, "number_of_replicas": 1,
                                       "index": {"needle": {"durability": "volatile"}}}});
    let made = send(at1, "PUT", "/logs", Some(settings.to_string().as_bytes()), &[]);
    assert_eq!(made.status, 200, "{}", made.text());

    // Every copy follows its primary: both nodes hold both shards, alike.
    let mut acknowledged = bulk(at1, "a", 0..150);
    acknowledged.extend(bulk(at2, "b", 0..50));
    assert_eq!(acknowledged.len(), 200);
    copies_agree([at1, at2], 200);
    let rows = cat_shards(at1);
    let states: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (r["shard"].to_string(), r["prirep"].to_string(), r["state"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert!(states.iter().all(|s| s.2 == "STARTED"), "{states:?}");
    let primaries_on = |node: &str| rows.iter().filter(|r| r["prirep"] == "p" && r["node"] == node).count();
    assert_eq!((primaries_on("n1"), primaries_on("n2")), (1, 1), "{rows:?}");
    let health = send(at2, "GET", "/_cluster/health", None, &[]).json();
    assert_eq!(
        (health["status"].as_str(), health["active_shards"].as_u64()),
        (Some("green"), Some(4)),
        "{health}"
    );
    // A replica refuses a write of its own: the primary takes them.
    let replica_on_n2 =
        rows.iter().find(|r| r["prirep"] == "r" && r["node"] == "n2").expect("a replica on n2");
    let shard = format!("logs.shard-{}", replica_on_n2["shard"].as_str().unwrap());
    let refused = send(at2, "PUT", &format!("/{shard}/_doc/own"), Some(b"{}"), &[]);
    assert_eq!(refused.status, 503, "{}", refused.text());
    assert!(refused.text().contains("replica"), "{}", refused.text());
    assert!(!copy_ids(at2, &shard).contains(&"own".to_string()));
    let refreshed = send(at2, "POST", "/logs/_refresh", None, &[]).json();
    assert_eq!(refreshed["_shards"], json!({"total": 4, "successful": 4, "failed": 0}), "every copy");

    // A mapping added, then the replicas dropped and made again: the new
    // copies are made with the mapping the index has now.
    let mapping = json!({"properties": {"tag": {"type": "keyword"}}});
    let put = |path: &str, body: &Value| send(at1, "PUT", path, Some(body.to_string().as_bytes()), &[]);
    assert_eq!(put("/logs/_mapping", &mapping).status, 200);
    let bad = put("/logs/_settings", &json!({"index": {"number_of_replicas": -1}}));
    assert_eq!(bad.status, 400, "{}", bad.text());
    let refused = put("/logs/_settings", &json!({"index": {"number_of_shards": 3}}));
    assert_eq!(refused.status, 400, "{}", refused.text());
    assert_eq!(put("/logs/_settings", &json!({"index": {"number_of_replicas": 0}})).status, 200);
    let started = Instant::now();
    while cat_shards(at1).len() != 2 || [one, two].iter().map(|d| shards_on_disk(d)).sum::<usize>() != 2 {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the replicas never went: {:?}",
            cat_shards(at1)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(send(at2, "GET", "/_cluster/health", None, &[]).json()["status"], "green");
    assert_eq!(put("/logs/_settings", &json!({"number_of_replicas": "1"})).status, 200);
    copies_agree([at1, at2], 200);
    let replica_mapping = send(at2, "GET", &format!("/{shard}/_mapping"), None, &[]).json();
    assert_eq!(
        replica_mapping[&shard]["mappings"]["properties"]["tag"]["type"], "keyword",
        "{replica_mapping}"
    );
    assert_eq!(cat_shards(at2).len(), 4);

    // n2 killed: the replicas on n1 answer for its primaries at once.
    kill(n2);
    let killed = Instant::now();
    assert_eq!(full_count(at1), Some(200), "searched whole while n2's primary is down");
    // Writes to its shard fail until its replica takes over, then go on.
    // (Twelve ids a round: both shards get some.)
    let (mut refused, mut whole_rounds, mut taken_over) = (0, 0, None);
    for round in 0.. {
        let ids = bulk(at1, &format!("m{round}-"), 0..12);
        let whole = ids.len() == 12;
        refused += 12 - ids.len();
        acknowledged.extend(ids);
        let counted = full_count(at1);
        assert_eq!(counted, Some(acknowledged.len() as u64), "round {round}: every acknowledged write found");
        match whole {
            true if refused > 0 => {
                taken_over.get_or_insert(killed.elapsed());
                whole_rounds += 1;
            }
            _ => whole_rounds = 0,
        }
        if whole_rounds == 4 {
            break;
        }
        assert!(killed.elapsed() < Duration::from_secs(30), "the replica never took over");
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("writes whole again {:?} after the kill", taken_over.unwrap());
    let rows = cat_shards(at1);
    let primaries: Vec<&Value> = rows.iter().filter(|r| r["prirep"] == "p").collect();
    assert!(primaries.iter().all(|r| r["node"] == "n1" && r["state"] == "STARTED"), "{rows:?}");
    // The replicas wait for a node to hold them.
    let health = send(at1, "GET", "/_cluster/health", None, &[]).json();
    let shown = (health["status"].as_str(), health["unassigned_shards"].as_u64());
    assert_eq!(shown, (Some("yellow"), Some(2)), "{health}");
    // Waiting for a status: met at once, or a 408 once the timeout runs out.
    let wait = |query: &str| send(at1, "GET", &format!("/_cluster/health?{query}"), None, &[]);
    let yellow = wait("wait_for_status=yellow&timeout=5s");
    assert_eq!((yellow.status, yellow.json()["timed_out"].clone()), (200, json!(false)));
    let started = Instant::now();
    let green = wait("wait_for_status=green&timeout=300ms");
    assert!(started.elapsed() >= Duration::from_millis(300), "it waited");
    let shown = (green.status, green.json()["timed_out"].clone(), green.json()["status"].clone());
    assert_eq!(shown, (408, json!(true), json!("yellow")));
    assert_eq!(wait("wait_for_status=blue").status, 400);

    // n2 back, on its old disk: it holds replicas again, made afresh from the streams.
    let (n2, at2) = cluster.node("n2", two, &at2.to_string(), 2);
    let total = acknowledged.len();
    copies_agree([at1, at2], total);
    let green = send(at1, "GET", "/_cluster/health?wait_for_status=green&timeout=20s", None, &[]);
    assert_eq!(green.status, 200, "never green again: {:?}", cat_shards(at1));
    let mut all: Vec<String> =
        ["logs.shard-0", "logs.shard-1"].iter().flat_map(|s| copy_ids(at2, s)).collect();
    all.sort();
    acknowledged.sort();
    assert_eq!(all, acknowledged, "n2's copies hold every acknowledged write, once");
    // Deleted through n2, the index is gone from both nodes, replicas too.
    assert_eq!(send(at2, "DELETE", "/logs", None, &[]).status, 200);
    for data in [one, two] {
        for shard in ["logs.shard-0", "logs.shard-1"] {
            assert!(!data.join("indices").join(shard).exists(), "{shard} left in {}", data.display());
        }
    }
    kill(n1);
    kill(n2);
}
