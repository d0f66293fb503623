//! `needle serve --log nats=URL`: a cluster's shards log every write to NATS
//! JetStream and acknowledge it once the stream holds it. A node killed with
//! SIGKILL whose shards keep nothing on their own disk (`volatile`) finds
//! every acknowledged write again when it comes back, with its version and
//! sequence number; without the log the same node loses them. While JetStream
//! is down, writes are refused with a 503 and change nothing; once it is back,
//! they are taken again. A node whose disk is wiped makes its shards again
//! from their index's record in etcd and fills them from their streams.

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use needle_testkit::etcd::EtcdProcess;
use needle_testkit::http::send;
use needle_testkit::nats::NatsProcess;
use serde_json::{json, Value};

/// A one-node cluster named `name` on the etcd members at `etcd` (client
/// URLs, comma-separated), serving `data` on `bind`, with `args` added.
fn node(etcd: &str, name: &str, data: &Path, bind: &str, args: &[&str]) -> (Child, SocketAddr) {
    let cluster = format!("etcd={etcd}");
    let mut all = vec!["--cluster", &cluster, "--cluster-name", name, "--node-id", "n1"];
    all.extend(args);
    let (child, at) = common::serve_at(data, bind, &all);
    let started = Instant::now();
    while send(at, "GET", "/_cluster/health", None, &[]).json()["number_of_nodes"] != 1 {
        assert!(started.elapsed() < Duration::from_secs(20), "{at} never joined");
        std::thread::sleep(Duration::from_millis(100));
    }
    (child, at)
}

fn kill(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Writes 60 documents (`_bulk`), updates one, deletes another, all
/// acknowledged; returns what one document answered.
fn write(at: SocketAddr) -> Value {
    let made = send(at, "PUT", "/logs", Some(SETTINGS.as_bytes()), &[]);
    assert_eq!(made.status, 200, "{}", made.text());
    let lines: String = (0..60)
        .map(|i| format!("{}\n{}\n", json!({"index": {"_id": i.to_string()}}), json!({"n": i})))
        .collect();
    let bulk = send(at, "POST", "/logs/_bulk", Some(lines.as_bytes()), &[]).json();
    assert_eq!(bulk["errors"], false, "{bulk}");
    let updated = send(at, "POST", "/logs/_update/7", Some(br#"{"doc": {"n": 700}}"#), &[]);
    assert_eq!(updated.status, 200, "{}", updated.text());
    assert_eq!(send(at, "DELETE", "/logs/_doc/8", None, &[]).status, 200);
    send(at, "GET", "/logs/_doc/7", None, &[]).json()
}

fn count(at: SocketAddr) -> u64 {
    send(at, "POST", "/logs/_refresh", None, &[]);
    let counted = send(at, "GET", "/logs/_count", None, &[]).json();
    counted["count"].as_u64().unwrap_or_else(|| panic!("{counted}"))
}

/// Two shards that persist nothing of their own until a commit (30 s away).
const SETTINGS: &str =
    r#"{"settings": {"number_of_shards": 2, "index": {"needle": {"durability": "volatile"}}}}"#;

#[test]
fn acknowledged_writes_come_back_from_the_log_and_an_outage_refuses_writes() {
    let Some(etcd) = EtcdProcess::start("ingest log test") else { return };
    let Some(mut nats) = NatsProcess::start("ingest log test") else { return };
    let dir = tempfile::tempdir().unwrap();
    let name = format!("log-{}", std::process::id());
    let log = format!("nats={}", nats.url);

    // Without the log, a volatile node killed loses what it acknowledged.
    let plain = dir.path().join("plain");
    let (child, at) = node(&etcd.url, &format!("{name}-plain"), &plain, "127.0.0.1:0", &[]);
    write(at);
    assert_eq!(count(at), 59);
    kill(child);
    let (child, at) = node(&etcd.url, &format!("{name}-plain"), &plain, &at.to_string(), &[]);
    assert!(count(at) < 59, "nothing committed, nothing kept");
    kill(child);

    // With it, every acknowledged write comes back, as it was.
    let logged = dir.path().join("logged");
    let (child, at) = node(&etcd.url, &name, &logged, "127.0.0.1:0", &["--log", &log]);
    let before = write(at);
    assert_eq!((before["_source"]["n"].clone(), before["_version"].clone()), (json!(700), json!(2)));
    kill(child);
    let (child, at) = node(&etcd.url, &name, &logged, &at.to_string(), &["--log", &log]);
    assert_eq!(count(at), 59);
    assert_eq!(send(at, "GET", "/logs/_doc/7", None, &[]).json(), before);
    assert_eq!(send(at, "GET", "/logs/_doc/8", None, &[]).status, 404);
    let next = send(at, "PUT", "/logs/_doc/60", Some(br#"{"n": 60}"#), &[]);
    assert_eq!(next.status, 201, "{}", next.text());
    // Larger than a NATS message may be: logged in pieces.
    let big = json!({"n": 64, "text": "word ".repeat(300_000)}).to_string();
    let stored = send(at, "PUT", "/logs/_doc/big", Some(big.as_bytes()), &[]);
    assert_eq!(stored.status, 201, "{}", stored.text());

    // JetStream down: a write is not acknowledged, and the next is refused before it changes anything.
    nats.kill();
    let started = Instant::now();
    let lost = send(at, "PUT", "/logs/_doc/61", Some(br#"{"n": 61}"#), &[]);
    assert_eq!(lost.status, 503, "{}", lost.text());
    assert!(started.elapsed() < Duration::from_secs(20));
    let refused = send(at, "PUT", "/logs/_doc/62", Some(br#"{"n": 62}"#), &[]);
    assert_eq!(refused.status, 503, "{}", refused.text());
    assert_eq!(refused.json()["error"]["type"], "unavailable_shards_exception");
    assert_eq!(send(at, "GET", "/logs/_doc/62", None, &[]).status, 404, "a refused write changes nothing");

    // Back: writes are taken again once the log holds what it was sent.
    nats.resume();
    let started = Instant::now();
    loop {
        let again = send(at, "PUT", "/logs/_doc/63", Some(br#"{"n": 63}"#), &[]);
        if again.status == 201 || again.status == 200 {
            break;
        }
        assert_eq!(again.status, 503, "{}", again.text());
        assert!(started.elapsed() < Duration::from_secs(30), "writes never taken again");
        std::thread::sleep(Duration::from_millis(200));
    }
    kill(child);
    let (child, at) = node(&etcd.url, &name, &logged, &at.to_string(), &["--log", &log]);
    assert_eq!(send(at, "GET", "/logs/_doc/63", None, &[]).status, 200, "held by the log");
    assert_eq!(send(at, "GET", "/logs/_doc/62", None, &[]).status, 404);

    // The node's disk lost whole: its shards are made again from the index's record and their streams.
    let (total, seven) = (count(at), send(at, "GET", "/logs/_doc/7", None, &[]).json());
    assert!(total >= 62, "59 written first, then 60, big and 63 (and 61, sent again once the log was back)");
    kill(child);
    std::fs::remove_dir_all(&logged).unwrap();
    let (child, at) = node(&etcd.url, &name, &logged, &at.to_string(), &["--log", &log]);
    assert_eq!(count(at), total);
    assert_eq!(send(at, "GET", "/logs/_doc/7", None, &[]).json(), seven);
    let source = send(at, "GET", "/logs/_source/big", None, &[]).json();
    assert_eq!(
        source["text"].as_str().map(str::len),
        Some(1_500_000),
        "the record in pieces came back whole"
    );
    let mapping = send(at, "GET", "/logs/_mapping", None, &[]).json();
    assert_eq!(mapping["logs"]["mappings"]["properties"]["n"]["type"], "long", "{mapping}");
    kill(child);
}

/// Issue 19's first fault test on one node: `_bulk` requests keep coming
/// while the node is killed with SIGKILL midway; every document a request
/// acknowledged before the kill is found once the node is back (its shards
/// keep nothing on their own disk: the stream is all that brings them back).
#[test]
fn no_acknowledged_write_is_lost_to_a_kill_midway() {
    let Some(etcd) = EtcdProcess::start("ingest log kill test") else { return };
    let Some(nats) = NatsProcess::start("ingest log kill test") else { return };
    let dir = tempfile::tempdir().unwrap();
    let name = format!("kill-{}", std::process::id());
    let log = format!("nats={}", nats.url);
    let (child, at) = node(&etcd.url, &name, dir.path(), "127.0.0.1:0", &["--log", &log]);
    assert_eq!(send(at, "PUT", "/logs", Some(SETTINGS.as_bytes()), &[]).status, 200);

    let feeding = std::thread::spawn(move || {
        let mut acknowledged = Vec::new();
        // Until the node is gone (a bound all the same: 5 minutes of requests at most).
        for batch in 0..200_000 {
            let ids: Vec<String> = (0..25).map(|i| format!("{batch}-{i}")).collect();
            let lines: String = ids
                .iter()
                .map(|id| format!("{}\n{}\n", json!({"index": {"_id": id}}), json!({"b": batch})))
                .collect();
            let Ok(reply) =
                needle_testkit::http::try_send(at, "POST", "/logs/_bulk", Some(lines.as_bytes()), &[])
            else {
                return (acknowledged, true);
            };
            let items = reply.json()["items"].as_array().cloned().unwrap_or_default();
            for (id, item) in ids.into_iter().zip(items) {
                if item["index"]["status"].as_u64().is_some_and(|s| s < 300) {
                    acknowledged.push(id);
                }
            }
        }
        (acknowledged, false)
    });
    std::thread::sleep(Duration::from_millis(700));
    kill(child);
    let (acknowledged, cut_off) = feeding.join().unwrap();
    assert!(cut_off && !acknowledged.is_empty(), "the kill came while writes were acknowledged");

    let (child, at) = node(&etcd.url, &name, dir.path(), &at.to_string(), &["--log", &log]);
    let found =
        send(at, "POST", "/logs/_mget", Some(json!({"ids": acknowledged}).to_string().as_bytes()), &[]);
    let docs = found.json()["docs"].as_array().cloned().unwrap_or_default();
    let missing: Vec<&Value> = docs.iter().filter(|d| d["found"] != true).map(|d| &d["_id"]).collect();
    assert!(
        missing.is_empty(),
        "{} of {} acknowledged writes lost: {missing:?}",
        missing.len(),
        acknowledged.len()
    );
    assert!(count(at) >= acknowledged.len() as u64);
    kill(child);
}

/// A write a node took but could not log (JetStream down), the node killed
/// before it could: its own disk keeps the write, its stream does not. Back,
/// the node marks the write in the stream as a gap, so the writes it
/// acknowledges after it come back too when its disk is lost whole.
#[test]
fn writes_after_one_never_logged_survive_a_wiped_disk() {
    let Some(etcd) = EtcdProcess::start("ingest log gap test") else { return };
    let Some(mut nats) = NatsProcess::start("ingest log gap test") else { return };
    let dir = tempfile::tempdir().unwrap();
    let name = format!("gap-{}", std::process::id());
    let log = format!("nats={}", nats.url);
    let durable = r#"{"settings": {"number_of_shards": 1, "index": {"needle": {"durability": "durable"}}}}"#;
    let (child, at) = node(&etcd.url, &name, dir.path(), "127.0.0.1:0", &["--log", &log]);
    assert_eq!(send(at, "PUT", "/logs", Some(durable.as_bytes()), &[]).status, 200);
    assert_eq!(send(at, "PUT", "/logs/_doc/first", Some(br#"{"n": 1}"#), &[]).status, 201);

    nats.kill();
    let lost = send(at, "PUT", "/logs/_doc/lost", Some(br#"{"n": 2}"#), &[]);
    assert_eq!(lost.status, 503, "{}", lost.text());
    kill(child);
    nats.resume();
    let (child, at) = node(&etcd.url, &name, dir.path(), &at.to_string(), &["--log", &log]);
    assert_eq!(send(at, "GET", "/logs/_doc/lost", None, &[]).status, 200, "on the node's own disk");
    let after = send(at, "PUT", "/logs/_doc/after", Some(br#"{"n": 3}"#), &[]);
    assert_eq!(after.status, 201, "{}", after.text());
    let seq_no = after.json()["_seq_no"].clone();
    assert_eq!(seq_no, 2, "numbered after the write never logged");
    kill(child);

    std::fs::remove_dir_all(dir.path()).unwrap();
    let (child, at) = node(&etcd.url, &name, dir.path(), &at.to_string(), &["--log", &log]);
    assert_eq!(send(at, "GET", "/logs/_doc/first", None, &[]).status, 200);
    let back = send(at, "GET", "/logs/_doc/after", None, &[]).json();
    assert_eq!((back["found"].clone(), back["_seq_no"].clone()), (json!(true), seq_no), "{back}");
    assert_eq!(send(at, "GET", "/logs/_doc/lost", None, &[]).status, 404, "never acknowledged, never logged");
    let next = send(at, "PUT", "/logs/_doc/next", Some(br#"{"n": 4}"#), &[]);
    assert_eq!(next.json()["_seq_no"], 3, "{}", next.text());
    kill(child);
}

/// `_bulk` of `ids` (each `{"n": i}`): the HTTP status and the ids acknowledged.
fn bulk_acknowledged(at: SocketAddr, ids: std::ops::Range<u32>) -> (u16, Vec<String>) {
    let ids: Vec<String> = ids.map(|i| i.to_string()).collect();
    let lines: String =
        ids.iter().map(|id| format!("{}\n{}\n", json!({"index": {"_id": id}}), json!({"n": id}))).collect();
    let answer = send(at, "POST", "/logs/_bulk", Some(lines.as_bytes()), &[]);
    let items = answer.json()["items"].as_array().cloned().unwrap_or_default();
    let ok = items.iter().map(|item| item["index"]["status"].as_u64().is_some_and(|s| s < 300));
    (answer.status, ids.into_iter().zip(ok).filter(|(_, ok)| *ok).map(|(id, _)| id).collect())
}

/// Retries `_bulk` of `ids` until every one is acknowledged (within 60 s).
fn bulk_until_acknowledged(at: SocketAddr, ids: std::ops::Range<u32>, what: &str) {
    let started = Instant::now();
    while bulk_acknowledged(at, ids.clone()).1.len() < ids.len() {
        assert!(started.elapsed() < Duration::from_secs(60), "{what}: writes never acknowledged");
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Issue 19's infrastructure quorum test: three etcd members and three NATS
/// servers (each shard's stream has a copy on each); with one of each
/// killed, writes are still acknowledged; with two NATS servers killed, a
/// `_bulk` acknowledges nothing; with them back, writes are taken again and
/// none acknowledged is lost.
#[test]
fn writes_go_on_with_quorums_of_etcd_and_nats_and_stop_without() {
    let Some(mut etcd) = EtcdProcess::cluster("quorum test", 3) else { return };
    let Some(mut nats) = NatsProcess::cluster("quorum test", 3) else { return };
    let dir = tempfile::tempdir().unwrap();
    let urls = |all: Vec<&str>| all.join(",");
    let log = format!("nats={}", urls(nats.iter().map(|n| n.url.as_str()).collect()));
    let members = urls(etcd.iter().map(|e| e.url.as_str()).collect());
    let name = format!("quorum-{}", std::process::id());
    let (child, at) = node(&members, &name, dir.path(), "127.0.0.1:0", &["--log", &log]);
    // The JetStream cluster elects its leaders first: the shards' streams are made once it has.
    let started = Instant::now();
    while send(at, "PUT", "/logs", Some(SETTINGS.as_bytes()), &[]).status != 200 {
        assert!(started.elapsed() < Duration::from_secs(60), "the index was never made");
        std::thread::sleep(Duration::from_millis(500));
    }
    bulk_until_acknowledged(at, 0..20, "three servers");

    etcd[0].kill();
    nats[0].kill();
    bulk_until_acknowledged(at, 20..40, "two of three etcd members and NATS servers");
    assert_eq!(send(at, "GET", "/_cluster/health", None, &[]).json()["number_of_nodes"], 1);

    nats[1].kill();
    for ids in [40..60, 60..80] {
        let (status, acknowledged) = bulk_acknowledged(at, ids);
        assert!(acknowledged.is_empty(), "one server of three acknowledged {acknowledged:?} (HTTP {status})");
    }

    nats[0].resume();
    nats[1].resume();
    bulk_until_acknowledged(at, 80..100, "the servers back");
    let wanted: Vec<String> = (0..40).chain(80..100).map(|i| i.to_string()).collect();
    let found = send(at, "POST", "/logs/_mget", Some(json!({"ids": wanted}).to_string().as_bytes()), &[]);
    let docs = found.json()["docs"].as_array().cloned().unwrap_or_default();
    assert_eq!(docs.iter().filter(|d| d["found"] == true).count(), wanted.len(), "{}", found.text());
    kill(child);
}
