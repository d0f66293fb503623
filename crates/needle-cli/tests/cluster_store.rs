//! A segment store (`--store DIR`, or `s3://` on an S3 emulator): each primary's commits are stored and
//! its stream trimmed to the writes after them, so a copy made later (a
//! shard moved to another node, a replica) is made from the stored commit
//! and the rest of the stream: the writes trimmed from the stream are found.

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use common::cluster::{bulk, copy_ids, full_count, kill, Cluster};
use needle_testkit::http::send;
use needle_testkit::s3::S3Process;
use serde_json::json;

const SHARD: &str = "logs.shard-0";

/// Waits for `what` to hold, 30 s at most.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(30), "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The files stored under the store's folder `store`.
fn stored_files(store: &Path) -> usize {
    let walk = |dir: &Path| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default()
    };
    let mut files = 0;
    let mut todo = vec![store.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for path in walk(&dir) {
            match path.is_dir() {
                true => todo.push(path),
                false => files += 1,
            }
        }
    }
    files
}

fn set(at: SocketAddr, path: &str, body: serde_json::Value) -> u16 {
    send(at, "PUT", path, Some(body.to_string().as_bytes()), &[]).status
}

#[test]
fn copies_are_made_from_the_stored_commit_and_the_trimmed_stream() {
    let Some(cluster) = Cluster::start("store test") else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    copies_made_from(&cluster, dir.path(), store.to_str().unwrap(), &|| stored_files(&store));
}

#[test]
fn copies_are_made_from_commits_stored_in_s3() {
    let Some(cluster) = Cluster::start("S3 store test") else { return };
    let Some(s3) = S3Process::start("S3 store test", "needle") else { return };
    // The nodes started next read them (no other test of this binary uses S3).
    for (name, value) in s3.env() {
        std::env::set_var(name, value);
    }
    let dir = tempfile::tempdir().unwrap();
    copies_made_from(&cluster, dir.path(), &s3.url("segments"), &|| s3.keys().len());
}

/// A shard moved to another node, then a replica, made from the store at
/// `store` (`stored` counts the files in it), and the stored files gone
/// with their index.
fn copies_made_from(cluster: &Cluster, dir: &Path, store: &str, stored: &dyn Fn() -> usize) {
    let with_store = ["--store", store];
    let node = |id: &str, nodes| cluster.node_with(id, &dir.join(id), "127.0.0.1:0", nodes, &with_store);
    let (n1, at1) = node("n1", 1);
    let settings = json!({"settings": {"number_of_shards": 1, "number_of_replicas": 0}});
    assert_eq!(set(at1, "/logs", settings), 200);

    // Stored once committed: the stream keeps only what came after.
    let mut acknowledged = bulk(at1, "a", 0..300);
    assert_eq!(send(at1, "POST", "/logs/_flush", None, &[]).status, 200);
    let stream = || cluster.nats.stream_sequences("NEEDLE_");
    wait_until("the stream was never trimmed", || stream().first().is_some_and(|s| s.1 > 1));
    acknowledged.extend(bulk(at1, "b", 0..50));
    assert_eq!(acknowledged.len(), 350);
    let (_, first, last) = stream().remove(0);
    assert!(first > 1 && last >= first, "trimmed to {first}..={last}");

    // n1 killed: the shard is made on n2 from the stored commit and the stream's rest.
    let (n2, at2) = node("n2", 2);
    kill(n1);
    wait_until("the shard never came back whole on n2", || full_count(at2) == Some(350));
    let mut want = acknowledged.clone();
    want.sort();
    assert_eq!(copy_ids(at2, SHARD), want);

    // A replica on a new node: made the same way, here from a stream trimmed whole.
    assert_eq!(send(at2, "POST", "/logs/_flush", None, &[]).status, 200);
    wait_until("the stream was never trimmed whole", || stream().first().is_some_and(|s| s.1 > s.2));
    let (n3, at3) = node("n3", 2);
    assert_eq!(set(at2, "/logs/_settings", json!({"index": {"number_of_replicas": 1}})), 200);
    wait_until("the replica never held every document", || copy_ids(at3, SHARD) == want);
    // It follows the stream from there.
    let more = bulk(at2, "c", 0..20);
    assert_eq!(more.len(), 20);
    wait_until("the replica never followed", || copy_ids(at3, SHARD).len() == 370);

    // A deleted index's stored commits go with it.
    assert!(stored() > 0);
    assert_eq!(send(at2, "DELETE", "/logs", None, &[]).status, 200);
    wait_until("the stored files stayed", || stored() == 0);
    kill(n2);
    kill(n3);
}

/// Copies folder `from` to `to`, files and folders.
fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        match entry.path().is_dir() {
            true => copy_folder(&entry.path(), &target),
            false => drop(std::fs::copy(entry.path(), &target).unwrap()),
        }
    }
}

#[test]
fn a_node_back_on_a_disk_older_than_its_trimmed_stream_makes_its_shard_again() {
    let Some(cluster) = Cluster::start("older disk test") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (data, backup, store) = (dir.path().join("n1"), dir.path().join("backup"), dir.path().join("store"));
    let with_store = ["--store", store.to_str().unwrap()];
    let (n1, at) = cluster.node_with("n1", &data, "127.0.0.1:0", 1, &with_store);
    let settings = json!({"settings": {"number_of_shards": 1, "number_of_replicas": 0}});
    assert_eq!(set(at, "/logs", settings), 200);
    let stream = || cluster.nats.stream_sequences("NEEDLE_").remove(0);
    let flushed_and_trimmed = |at: SocketAddr, past: u64| {
        assert_eq!(send(at, "POST", "/logs/_flush", None, &[]).status, 200);
        wait_until("the stream was never trimmed", || stream().1 > past);
        stream().1
    };
    assert_eq!(bulk(at, "a", 0..100).len(), 100);
    let first = flushed_and_trimmed(at, 1);

    // The node's disk as of then, put back after more writes were stored and trimmed.
    kill(n1);
    copy_folder(&data, &backup);
    let (n1, at) = cluster.node_with("n1", &data, &at.to_string(), 1, &with_store);
    assert_eq!(bulk(at, "b", 0..100).len(), 100);
    flushed_and_trimmed(at, first);
    kill(n1);
    std::fs::remove_dir_all(&data).unwrap();
    std::fs::rename(&backup, &data).unwrap();
    let (n1, at) = cluster.node_with("n1", &data, &at.to_string(), 1, &with_store);
    wait_until("the shard never held every document", || full_count(at) == Some(200));
    kill(n1);
}
