//! `needle serve --cluster etcd=URL`: nodes find each other through etcd.
//! Three nodes join and every one lists all three with one cluster manager; a
//! fourth with a taken node id is refused; the manager killed with SIGKILL
//! drops out when its lease runs out and another node takes its role; a node
//! killed comes back under its id on its address at once; a node stopped
//! with SIGTERM leaves at once, long before its lease would run out.

mod common;

use std::net::SocketAddr;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use needle_testkit::etcd::EtcdProcess;
use needle_testkit::http::send;
use serde_json::Value;

/// The (name, is manager) of each node `at` lists, in the order they joined.
fn listed(at: SocketAddr) -> Vec<(String, bool)> {
    let rows = send(at, "GET", "/_cat/nodes?format=json&h=name,master", None, &[]).json();
    let rows = rows.as_array().cloned().unwrap_or_default();
    rows.iter().map(|r| (r["name"].as_str().unwrap().to_string(), r["master"] == "*")).collect()
}

/// Waits (20 s at most) until `at` lists exactly the nodes `names`, in any
/// order, one of them the manager; returns the manager's name.
fn wait_for(at: SocketAddr, names: &[&str]) -> String {
    let started = Instant::now();
    loop {
        let rows = listed(at);
        let mut seen: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
        seen.sort_unstable();
        let managers: Vec<&String> = rows.iter().filter(|(_, m)| *m).map(|(n, _)| n).collect();
        if seen == names && managers.len() == 1 {
            return managers[0].clone();
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{at} lists {rows:?}, not {names:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What a node started with id `id` on another address says as it is
/// refused (exit status 2).
fn refused(data: &std::path::Path, cluster: &str, name: &str, id: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_needle"))
        .args(["serve", "--bind", "127.0.0.1:0", "--cluster", cluster, "--cluster-name", name])
        .args(["--node-id", id, "--data"])
        .arg(data)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{said}");
    said
}

fn stop(mut child: Child, signal: &str) {
    let done = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
    assert!(done.success());
    child.wait().unwrap();
}

#[test]
fn nodes_join_leave_and_pass_on_the_manager_role_through_etcd() {
    let Some(etcd) = EtcdProcess::start("cluster test") else { return };
    let dir = tempfile::tempdir().unwrap();
    let cluster = format!("etcd={}", etcd.url);
    let name = format!("test-{}", std::process::id());
    let node = |id: &str, ttl: &str| {
        let args = ["--cluster", &cluster, "--cluster-name", &name, "--node-id", id, "--lease-ttl", ttl];
        common::serve(&dir.path().join(id), &args)
    };
    // n1 alone first, so it is the manager; n3's lease is long: only leaving removes it in time.
    let (n1, a1) = node("n1", "2");
    assert_eq!(wait_for(a1, &["n1"]), "n1");
    let (_n2, a2) = node("n2", "2");
    let (n3, a3) = node("n3", "60");
    for at in [a1, a2, a3] {
        assert_eq!(wait_for(at, &["n1", "n2", "n3"]), "n1");
    }
    let health = send(a2, "GET", "/_cluster/health", None, &[]).json();
    assert_eq!(health["number_of_nodes"], 3);
    assert_eq!(health["cluster_name"], Value::String(name.clone()));

    // A taken id is refused, naming the node that holds it.
    let said = refused(&dir.path().join("n2-again"), &cluster, &name, "n2");
    assert!(said.contains("node id [n2]") && said.contains(&a2.to_string()), "{said}");
    assert_eq!(wait_for(a2, &["n1", "n2", "n3"]), "n1");

    // The manager killed: it drops out when its 2 s lease runs out, and another takes the role.
    stop(n1, "-KILL");
    let manager = wait_for(a2, &["n2", "n3"]);
    assert!(manager == "n2" || manager == "n3");
    assert_eq!(wait_for(a3, &["n2", "n3"]), manager);

    // Killed, n3 comes back at once under its id on its address: its key
    // names the address the new process holds, so its old lease is ended
    // (it would last 60 s more). A node elsewhere still may not take the id.
    stop(n3, "-KILL");
    let args = ["--cluster", &cluster, "--cluster-name", &name, "--node-id", "n3", "--lease-ttl", "60"];
    let (n3, again) = common::serve_at(&dir.path().join("n3"), &a3.to_string(), &args);
    assert_eq!(again, a3);
    assert_eq!(wait_for(a3, &["n2", "n3"]), manager);
    refused(&dir.path().join("n3-elsewhere"), &cluster, &name, "n3");

    // Stopped cleanly, n3 leaves at once (its lease would last 60 s).
    let stopped = Instant::now();
    stop(n3, "-TERM");
    assert_eq!(wait_for(a2, &["n2"]), "n2");
    assert!(stopped.elapsed() < Duration::from_secs(30));
}

#[test]
fn an_unreachable_etcd_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_needle"))
        .args(["serve", "--bind", "127.0.0.1:0", "--node-id", "n1", "--data"])
        .arg(dir.path())
        .arg(format!("--cluster=etcd=http://{closed}"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("joining the cluster") && said.contains(&closed.to_string()), "{said}");
    let bad = Command::new(env!("CARGO_BIN_EXE_needle"))
        .args(["serve", "--cluster", "http://127.0.0.1:2379", "--node-id", "n1"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected etcd=URL"));
    let no_id = Command::new(env!("CARGO_BIN_EXE_needle"))
        .args(["serve", "--cluster", "etcd=http://127.0.0.1:2379"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&no_id.stderr).contains("--node-id"));
}
