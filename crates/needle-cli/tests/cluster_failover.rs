//! A node killed for good, in a cluster whose writes are logged (`--log`):
//! once it has been gone for a lease's time, the cluster manager moves its
//! shards to the live nodes, which make them again from their streams in
//! NATS JetStream. Searches answer every document again, with errors only in
//! that window; writes go on; and the node, back, drops its stale copies
//! instead of serving or logging them (issue 19's second fault test, on one
//! machine).

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use common::cluster::{kill, Cluster};
use needle_testkit::http::{send, try_send};
use serde_json::json;

/// Two nodes of a new cluster (serving `one` and `two`) that see each other,
/// and their index `logs` of `shards` shards: `None` when etcd or
/// nats-server is not installed (and not required).
struct TwoNodes {
    cluster: Cluster,
    _dir: tempfile::TempDir,
    one: std::path::PathBuf,
    two: std::path::PathBuf,
    n1: (Child, SocketAddr),
    n2: (Child, SocketAddr),
    /// The nodes' arguments besides the cluster's.
    args: Vec<String>,
}

impl TwoNodes {
    /// With `more` arguments for both nodes (`{dir}` in one: the test's folder).
    fn start(test: &str, shards: usize, more: &[&str]) -> Option<TwoNodes> {
        let cluster = Cluster::start(test)?;
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (dir.path().join("n1"), dir.path().join("n2"));
        let folder = dir.path().to_str().unwrap();
        let args: Vec<String> = more.iter().map(|a| a.replace("{dir}", folder)).collect();
        let more: Vec<&str> = args.iter().map(String::as_str).collect();
        let n1 = cluster.node_with("n1", &one, "127.0.0.1:0", 1, &more);
        let n2 = cluster.node_with("n2", &two, "127.0.0.1:0", 2, &more);
        let started = Instant::now();
        while send(n1.1, "GET", "/_cluster/health", None, &[]).json()["number_of_nodes"] != 2 {
            assert!(started.elapsed() < Duration::from_secs(30), "n1 never saw n2");
            std::thread::sleep(Duration::from_millis(100));
        }
        let settings = json!({"settings": {"number_of_shards": shards, "index": {"needle": {"durability": "volatile"}}}});
        let made = send(n1.1, "PUT", "/logs", Some(settings.to_string().as_bytes()), &[]);
        assert_eq!(made.status, 200, "{}", made.text());
        Some(TwoNodes { cluster, _dir: dir, one, two, n1, n2, args })
    }
}

fn bulk(at: SocketAddr, ids: std::ops::Range<u32>) {
    let lines: String =
        ids.map(|i| format!("{}\n{}\n", json!({"index": {"_id": i.to_string()}}), json!({"n": i}))).collect();
    let answer = send(at, "POST", "/logs/_bulk?refresh=true", Some(lines.as_bytes()), &[]).json();
    assert_eq!(answer["errors"], false, "{answer}");
}

/// The count every shard answered, or `None` when a shard failed (or the request did).
fn full_count(at: SocketAddr) -> Option<u64> {
    try_send(at, "POST", "/logs/_refresh", None, &[]).ok()?;
    let counted = try_send(at, "GET", "/logs/_count", None, &[]).ok()?.json();
    (counted["_shards"]["failed"] == 0).then(|| counted["count"].as_u64()).flatten()
}

#[test]
fn a_dead_nodes_shards_move_to_the_live_ones_and_searches_answer_whole_again() {
    let Some(TwoNodes { cluster, _dir, one: _, two, n1: (n1, at1), n2: (n2, at2), .. }) =
        TwoNodes::start("failover test", 2, &[])
    else {
        return;
    };
    bulk(at1, 0..40);
    assert_eq!(full_count(at1), Some(40));
    assert_eq!(shards_in(&two), 1, "one shard a node");
    // A shard's name answers only on its node; a name of that form that is no shard's is an index's.
    let elsewhere = send(at1, "PUT", "/logs.shard-7/_doc/a", Some(b"{}"), &[]);
    assert_eq!(
        (elsewhere.status, elsewhere.json()["error"]["type"].clone()),
        (503, json!("unavailable_shards_exception"))
    );
    assert_eq!(send(at1, "PUT", "/other.shard-1", None, &[]).status, 200);
    assert_eq!(send(at2, "PUT", "/other.shard-1/_doc/a", Some(b"{}"), &[]).status, 201);

    // n2 killed for good: n1 answers for every document again once its shard moved.
    // Writes keep coming meanwhile (those to the moved shard fail until it is made).
    kill(n2);
    let killed = Instant::now();
    let (mut partial, mut acknowledged) = (0, Vec::new());
    for round in 0.. {
        let ids: Vec<String> = (0..6).map(|i| format!("meanwhile-{round}-{i}")).collect();
        let lines: String = ids
            .iter()
            .map(|id| {
                format!(
                    "{}
{{}}
",
                    json!({"index": {"_id": id}})
                )
            })
            .collect();
        if let Ok(answer) = try_send(at1, "POST", "/logs/_bulk", Some(lines.as_bytes()), &[]) {
            let items = answer.json()["items"].as_array().cloned().unwrap_or_default();
            let ok = items.iter().map(|item| item["index"]["status"].as_u64().is_some_and(|s| s < 300));
            acknowledged.extend(ids.into_iter().zip(ok).filter(|(_, ok)| *ok).map(|(id, _)| id));
        }
        let want = 40 + acknowledged.len() as u64;
        match full_count(at1) {
            Some(n) if n == want => break,
            Some(n) => panic!("a count of {n} with no shard failing, {want} acknowledged"),
            None => partial += 1,
        }
        assert!(killed.elapsed() < Duration::from_secs(60), "the shard never moved");
        std::thread::sleep(Duration::from_millis(100));
    }
    let window = killed.elapsed();
    eprintln!("failover: every shard answering {window:?} after the kill ({partial} partial answers)");
    assert!(partial > 0, "searches failed in the window (the node was gone for a lease's time first)");
    let base = 40 + acknowledged.len() as u64;
    for _ in 0..10 {
        assert_eq!(full_count(at1), Some(base), "no error once moved");
    }
    let seven = send(at1, "GET", "/logs/_doc/7", None, &[]).json();
    assert_eq!((seven["found"].clone(), seven["_source"]["n"].clone()), (json!(true), json!(7)));
    bulk(at1, 40..50);
    assert_eq!(full_count(at1), Some(base + 10));

    // n2 back on its old folder: it drops its stale copy, and holds nothing.
    let (n2, at2) = cluster.node("n2", &two, &at2.to_string(), 2);
    let started = Instant::now();
    while shards_in(&two) > 0 {
        assert!(started.elapsed() < Duration::from_secs(10), "the stale copy was kept");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(full_count(at2), Some(base + 10));
    let put = send(at2, "PUT", "/logs/_doc/late?refresh=true", Some(br#"{"n": 99}"#), &[]);
    assert_eq!(put.status, 201, "{}", put.text());
    assert_eq!(full_count(at1), Some(base + 11));
    kill(n2);
    kill(n1);
}

fn signal(child: &Child, which: &str) {
    let sent = std::process::Command::new("kill").args([which, &child.id().to_string()]).status().unwrap();
    assert!(sent.success(), "kill {which}");
}

/// The shard numbers of the copies of `logs` on the node serving `data`.
fn shard_numbers(data: &Path) -> Vec<usize> {
    let names = std::fs::read_dir(data.join("indices")).unwrap().map(|e| e.unwrap().file_name());
    let names = names.map(|n| n.into_string().unwrap());
    names.filter_map(|n| n.strip_prefix("logs.shard-").map(|k| k.parse().unwrap())).collect()
}

fn shards_in(data: &Path) -> usize {
    shard_numbers(data).len()
}

/// Issue 19's fencing test: a node paused past its lease (SIGSTOP) while
/// the cluster moves its shard away, then resumed (SIGCONT) with its stale
/// copy still open, acknowledges none of the writes sent to that copy: the
/// new holder's mark in the shard's stream refuses its publishes. Nothing
/// the new holder acknowledged is lost or doubled.
#[test]
fn a_paused_node_resumed_after_its_shard_moved_acknowledges_no_write() {
    let Some(TwoNodes { cluster: _cluster, _dir, one, two, n1: (n1, at1), n2: (n2, at2), .. }) =
        TwoNodes::start("fencing test", 2, &["--store", "{dir}/store"])
    else {
        return;
    };
    bulk(at1, 0..40);
    let [moved] = shard_numbers(&two)[..] else { panic!("one shard a node") };

    signal(&n2, "-STOP");
    // Searched only once n1 makes the shard (before, a search sent to the paused node hangs).
    let started = Instant::now();
    while shards_in(&one) < 2 || full_count(at1) != Some(40) {
        assert!(started.elapsed() < Duration::from_secs(60), "the shard never moved");
        std::thread::sleep(Duration::from_millis(200));
    }
    // The new holder writes on in the moved shard.
    bulk(at1, 40..60);
    signal(&n2, "-CONT");
    let mut acknowledged = Vec::new();
    for i in 0..20 {
        let path = format!("/logs.shard-{moved}/_doc/zombie-{i}");
        let answer = send(at2, "PUT", &path, Some(br#"{"n": -1}"#), &[]);
        if answer.status < 300 {
            acknowledged.push(format!("zombie-{i}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for id in &acknowledged {
        let found = send(at1, "GET", &format!("/logs/_doc/{id}"), None, &[]).json();
        assert_eq!(found["found"], true, "{id} acknowledged by the paused node, then lost: {found}");
    }
    assert_eq!(full_count(at1), Some(60 + acknowledged.len() as u64));
    bulk(at1, 60..70);
    assert_eq!(full_count(at1), Some(70 + acknowledged.len() as u64));
    kill(n2);
    kill(n1);
}

/// Issue 19's cold restart: every node's disk wiped, the nodes started
/// again make their shards from etcd and the streams, with the same
/// documents, versions, counts and scores.
#[test]
fn every_disk_wiped_the_cluster_comes_back_from_its_streams() {
    cold_restart("cold restart test", &[]);
}

/// The same with a segment store: the shards' commits stored and their
/// streams trimmed before the wipe, the nodes fetch the commits and read the
/// rest of the streams (a write made after the commits among them).
#[test]
fn every_disk_wiped_the_cluster_comes_back_from_its_stored_commits() {
    cold_restart("cold store test", &["--store", "{dir}/store"]);
}

fn cold_restart(test: &str, more: &[&str]) {
    let Some(TwoNodes { cluster, _dir, one, two, n1: (n1, at1), n2: (n2, at2), args }) =
        TwoNodes::start(test, 3, more)
    else {
        return;
    };
    let words = ["river", "stone", "lamp", "river stone", "lamp lamp river"];
    let lines: String = (0..90)
        .map(|i| {
            let doc = json!({"text": format!("{} {i}", words[i % words.len()]), "n": i});
            format!("{}\n{doc}\n", json!({"index": {"_id": i.to_string()}}))
        })
        .collect();
    let answer = send(at2, "POST", "/logs/_bulk?refresh=true", Some(lines.as_bytes()), &[]).json();
    assert_eq!(answer["errors"], false, "{answer}");
    if !more.is_empty() {
        assert_eq!(send(at1, "POST", "/logs/_flush", None, &[]).status, 200);
        let started = Instant::now();
        let trimmed = || {
            let streams = cluster.nats.stream_sequences("NEEDLE_");
            streams.len() == 3 && streams.iter().all(|s| s.1 > 1)
        };
        while !trimmed() {
            assert!(started.elapsed() < Duration::from_secs(30), "the streams were never trimmed");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let updated = send(at1, "POST", "/logs/_update/4", Some(br#"{"doc": {"n": 400}}"#), &[]);
    assert_eq!(updated.status, 200, "{}", updated.text());
    let query = br#"{"query": {"match": {"text": "river lamp"}}, "size": 10}"#;
    let hits = |at: SocketAddr| {
        send(at, "POST", "/logs/_refresh", None, &[]);
        let found = send(at, "POST", "/logs/_search", Some(query), &[]).json();
        let hits = found["hits"]["hits"].as_array().cloned().unwrap_or_default();
        let top: Vec<(String, f64)> = hits
            .iter()
            .map(|h| (h["_id"].as_str().unwrap().to_string(), h["_score"].as_f64().unwrap()))
            .collect();
        (found["hits"]["total"]["value"].clone(), top)
    };
    let before = (hits(at1), full_count(at1), send(at1, "GET", "/logs/_doc/4", None, &[]).json());
    assert_eq!(before.1, Some(90));

    kill(n1);
    kill(n2);
    std::fs::remove_dir_all(&one).unwrap();
    std::fs::remove_dir_all(&two).unwrap();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (n1, at1) = cluster.node_with("n1", &one, &at1.to_string(), 1, &args);
    let (n2, at2) = cluster.node_with("n2", &two, &at2.to_string(), 2, &args);
    for at in [at1, at2] {
        let started = Instant::now();
        while full_count(at) != before.1 {
            assert!(started.elapsed() < Duration::from_secs(30), "{at} never counted every document");
            std::thread::sleep(Duration::from_millis(100));
        }
        let after = (hits(at), full_count(at), send(at, "GET", "/logs/_doc/4", None, &[]).json());
        assert_eq!(after.0 .0, before.0 .0, "total hits");
        assert_eq!(after.1, before.1, "count");
        assert_eq!(after.2, before.2, "the updated document, its version and sequence number");
        assert_eq!(after.0 .1.len(), 10);
        for ((id, score), (was_id, was)) in after.0 .1.iter().zip(&before.0 .1) {
            assert_eq!(id, was_id);
            assert!((score - was).abs() < 1e-6, "{id}: {score} against {was}");
        }
    }
    kill(n2);
    kill(n1);
}
