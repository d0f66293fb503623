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
