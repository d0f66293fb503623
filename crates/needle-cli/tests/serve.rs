//! `needle serve` killed with SIGKILL while clients write to it: every
//! write it acknowledged (durable mode, the default) is there after a restart.

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use needle_testkit::http::{send, try_send};
use serde_json::{json, Value};

/// Writes until the server stops answering; returns the `_id`s it acknowledged.
fn write_until_killed(addr: SocketAddr, name: &str, bulk: bool) -> Vec<String> {
    let mut acked = Vec::new();
    for n in 0.. {
        let ids: Vec<String> = (0..if bulk { 20 } else { 1 }).map(|k| format!("{name}-{n}-{k}")).collect();
        let reply = if bulk {
            let mut body = String::new();
            for id in &ids {
                body.push_str(&format!(
                    "{}\n{}\n",
                    json!({"index": {"_index": "i", "_id": id}}),
                    json!({"t": id})
                ));
            }
            try_send(
                addr,
                "POST",
                "/_bulk",
                Some(body.as_bytes()),
                &[("content-type", "application/x-ndjson")],
            )
        } else {
            let path = format!("/i/_doc/{}", ids[0]);
            try_send(addr, "PUT", &path, Some(json!({"t": ids[0]}).to_string().as_bytes()), &[])
        };
        match reply {
            Ok(r) if r.status == 200 || r.status == 201 => {
                if bulk {
                    assert_eq!(r.json()["errors"], json!(false));
                }
                acked.extend(ids);
            }
            Ok(r) => panic!("a write failed: {} {}", r.status, r.text()),
            Err(_) => return acked,
        }
    }
    unreachable!()
}

#[test]
fn sigkill_of_the_server_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let acked = Arc::new(Mutex::new(Vec::new()));
    for round in 0..4 {
        let (mut child, addr) = common::serve(dir.path(), &[]);
        let writers: Vec<_> = [("one", false), ("two", false), ("bulk", true)]
            .into_iter()
            .map(|(who, bulk)| {
                let acked = acked.clone();
                let name = format!("r{round}-{who}");
                std::thread::spawn(move || {
                    let ids = write_until_killed(addr, &name, bulk);
                    acked.lock().unwrap().extend(ids);
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(300 + 150 * round));
        child.kill().unwrap();
        child.wait().unwrap();
        for w in writers {
            w.join().unwrap();
        }
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() > 100, "only {} writes acknowledged: the test wrote too little", acked.len());

    let (mut child, addr) = common::serve(dir.path(), &[]);
    for chunk in acked.chunks(500) {
        let body = json!({"ids": chunk}).to_string();
        let reply = send(addr, "POST", "/i/_mget", Some(body.as_bytes()), &[]);
        let docs = reply.json()["docs"].as_array().unwrap().clone();
        let missing: Vec<&Value> =
            docs.iter().filter(|d| d["found"] != json!(true)).map(|d| &d["_id"]).collect();
        assert!(missing.is_empty(), "acknowledged but lost: {missing:?}");
    }
    let count = send(addr, "GET", "/i/_count", None, &[]).json()["count"].as_u64().unwrap();
    assert!(count >= acked.len() as u64, "{count} documents for {} acknowledged writes", acked.len());
    child.kill().unwrap();
    child.wait().unwrap();
}
