//! `_bulk`: per-item results, items failing alone, malformed requests failing whole.

use serde_json::json;

use crate::harness::TestServer;

#[test]
fn items_succeed_or_fail_alone() {
    let s = TestServer::start();
    let (status, answer) = s.bulk(
        "/_bulk?refresh=wait_for",
        &[
            json!({"index": {"_index": "a", "_id": "1"}}),
            json!({"t": "one"}),
            json!({"create": {"_index": "a", "_id": "1"}}),
            json!({"t": "again"}),
            json!({"index": {"_index": "b"}}),
            json!({"t": "generated id"}),
            json!({"update": {"_index": "a", "_id": "1"}}),
            json!({"doc": {"more": true}}),
            json!({"update": {"_index": "a", "_id": "missing"}}),
            json!({"doc": {"more": true}}),
            json!({"delete": {"_index": "a", "_id": "nope"}}),
            json!({"delete": {"_index": "none", "_id": "x"}}),
        ],
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["errors"], json!(true));
    let items = answer["items"].as_array().unwrap();
    let statuses: Vec<(String, u64)> = items
        .iter()
        .map(|i| {
            let (kind, item) = i.as_object().unwrap().iter().next().unwrap();
            (kind.clone(), item["status"].as_u64().unwrap())
        })
        .collect();
    let want = [
        ("index", 201),
        ("create", 409),
        ("index", 201),
        ("update", 200),
        ("update", 404),
        ("delete", 404),
        ("delete", 404),
    ];
    assert_eq!(statuses, want.map(|(k, n)| (k.to_string(), n)).to_vec());
    assert_eq!(items[1]["create"]["error"]["type"], json!("version_conflict_engine_exception"));
    assert_eq!(items[4]["update"]["error"]["type"], json!("document_missing_exception"));
    assert_eq!(items[5]["delete"]["result"], json!("not_found"));
    assert_eq!(items[6]["delete"]["error"]["type"], json!("index_not_found_exception"));
    assert_eq!(s.json("GET", "/a/_doc/1", None).1["_source"], json!({"t": "one", "more": true}));
    assert_eq!(s.json("GET", "/b/_count", None).1["count"], json!(1));
}

#[test]
fn a_bad_document_fails_its_item_only() {
    let s = TestServer::start();
    let body = "{\"index\":{\"_index\":\"a\",\"_id\":\"1\"}}\n{\"t\": oops}\n{\"index\":{\"_index\":\"a\",\"_id\":\"2\"}}\n{\"t\":\"fine\"}\n";
    let reply = s.call_with("POST", "/_bulk", Some(body), &[("content-type", "application/x-ndjson")]);
    let answer = reply.json();
    assert_eq!((reply.status, &answer["errors"]), (200, &json!(true)), "{answer}");
    assert_eq!(answer["items"][0]["index"]["status"], json!(400));
    assert_eq!(answer["items"][1]["index"]["status"], json!(201));
    assert_eq!(s.json("GET", "/a/_count", None).1["count"], json!(1));
}

/// A request of 600 actions: each item's outcome is that of the actions run
/// in their order (a create after an index of the same id conflicts, a later
/// index replaces an earlier one), and bad documents fail alone wherever they fall.
#[test]
fn a_large_request_is_written_in_its_order() {
    let s = TestServer::start();
    s.json("PUT", "/p", Some(json!({"mappings": {"properties": {"n": {"type": "long"}}}})));
    let mut lines = Vec::new();
    for i in 0..600u64 {
        let (action, doc) = match i % 100 {
            7 => ("index", json!({"n": "not a number"})),
            8 => ("index", json!(["not", "an", "object"])),
            50 => ("create", json!({"n": i})),
            _ => ("index", json!({"n": i})),
        };
        // Ids repeat every 300 actions: the second half replaces the first, one by one.
        let id = if i % 100 == 50 { (i - 1) % 300 } else { i % 300 };
        lines.push(json!({action: {"_index": "p", "_id": id.to_string()}}));
        lines.push(doc);
    }
    let (status, answer) = s.bulk("/_bulk?refresh=true", &lines);
    assert_eq!(status, 200, "{answer}");
    let items = answer["items"].as_array().unwrap();
    for (i, item) in items.iter().enumerate() {
        let (kind, item) = item.as_object().unwrap().iter().next().unwrap();
        let want = match i % 100 {
            7 | 8 => 400,
            50 => 409, // a create of the id the action before it just indexed
            _ if i >= 300 => 200,
            _ => 201,
        };
        assert_eq!(item["status"], json!(want), "item {i} ({kind}): {item}");
    }
    let seq_nos: Vec<u64> = items.iter().filter_map(|i| i["index"]["_seq_no"].as_u64()).collect();
    assert!(seq_nos.windows(2).all(|w| w[0] < w[1]), "sequence numbers in the order of the actions");
    // Every id was written last by the second half (bad ones left as the first half wrote them).
    let doc = |id: u64| s.json("GET", &format!("/p/_doc/{id}"), None).1;
    assert_eq!(doc(12)["_source"]["n"], json!(312));
    assert_eq!(doc(12)["_version"], json!(2));
    assert_eq!(doc(7)["found"], json!(false), "item 7 and 307 failed: never written");
    assert_eq!(doc(49)["_source"]["n"], json!(349), "the create of 49 (item 350) conflicted");
    // Never written: the ids of the bad documents (7, 8, 107, ...) and 50, 150, 250 (only ever created as 49...).
    assert_eq!(s.json("GET", "/p/_count", None).1["count"], json!(300 - 6 - 3));
}

#[test]
fn a_malformed_action_fails_the_whole_request() {
    let s = TestServer::start();
    s.json("PUT", "/a", None);
    for body in [
        "{\"index\":{\"_index\":\"a\",\"_id\":\"1\"}}\n{\"t\":1}\n{\"indx\":{}}\n{\"t\":2}\n",
        "{\"index\":{\"_index\":\"a\",\"_id\":\"1\"}}\n{\"t\":1}\nnot json\n",
        "{\"index\":{\"_index\":\"a\",\"_id\":\"1\"}}\n{\"t\":1}",
    ] {
        let reply = s.call_with("POST", "/_bulk", Some(body), &[("content-type", "application/x-ndjson")]);
        assert_eq!(reply.status, 400, "{body:?}: {}", reply.text());
        assert_eq!(reply.json()["error"]["type"], json!("illegal_argument_exception"));
    }
    assert_eq!(
        s.json("GET", "/a/_count", None).1["count"],
        json!(0),
        "nothing of a refused request is written"
    );
}

/// With one write running at a time and none waiting, bulks sent at once are
/// refused with 429 `es_rejected_execution_exception` while one runs, and a
/// refused bulk leaves no document behind.
#[test]
fn a_saturated_write_pool_refuses_with_429_and_applies_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let one_at_a_time = needle_server::PoolSize { threads: 1, queue: 0 };
    let s = TestServer::start_with(
        |c| needle_server::ServerConfig { write_pool: one_at_a_time, ..c },
        dir.path(),
    );
    let (senders, docs) = (6, 3000);
    let body = |t: usize| {
        let mut body = String::new();
        for d in 0..docs {
            body.push_str(&json!({"index": {"_index": "w", "_id": format!("{t}-{d}")}}).to_string());
            body.push('\n');
            body.push_str(
                &json!({"text": format!("document {d} of sender {t} with some words to index")}).to_string(),
            );
            body.push('\n');
        }
        body
    };
    let bodies: Vec<String> = (0..senders).map(body).collect();
    let start = std::sync::Barrier::new(senders);
    let replies: Vec<(u16, serde_json::Value)> = std::thread::scope(|scope| {
        let sent: Vec<_> = bodies
            .iter()
            .map(|b| {
                let (s, start) = (&s, &start);
                scope.spawn(move || {
                    start.wait();
                    let reply =
                        s.call_with("POST", "/_bulk", Some(b), &[("content-type", "application/x-ndjson")]);
                    (reply.status, reply.json())
                })
            })
            .collect();
        sent.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let refused: Vec<usize> = (0..senders).filter(|&t| replies[t].0 == 429).collect();
    assert!(!refused.is_empty(), "{senders} bulks at once into one write slot: some must be refused");
    for (t, (status, answer)) in replies.iter().enumerate() {
        match status {
            429 => assert_eq!(answer["error"]["type"], "es_rejected_execution_exception", "{answer}"),
            200 => assert_eq!(answer["errors"], false, "sender {t}: {answer}"),
            other => panic!("sender {t}: status {other}: {answer}"),
        }
    }
    s.json("POST", "/w/_refresh", None);
    let (_, count) = s.json("GET", "/w/_count", None);
    assert_eq!(count["count"], json!((senders - refused.len()) * docs), "only the accepted bulks' documents");
    for t in refused {
        assert_eq!(s.call("GET", &format!("/w/_doc/{t}-0"), None).status, 404);
    }
}
