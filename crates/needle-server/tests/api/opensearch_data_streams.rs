//! Data streams and rollovers, answered as a real OpenSearch node answers
//! them: `tests/golden/opensearch/data_streams.json` holds OpenSearch 3.8's
//! answers (recorded by `data_streams.py` beside it) to a sequence of
//! requests: templates that make streams, streams made by `PUT
//! _data_stream` and by a first write, `create`-only writes that must hold
//! a timestamp, searches, counts and `_bulk` through a stream, rollovers,
//! listings, `_stats` and deletions; rollovers of aliases. Needle gets the
//! same requests in the same order, and each answer must be OpenSearch's as
//! `data_streams.py` shapes it (no uuids, generated ids, sizes or timings).

use serde_json::{json, Map, Value};

use crate::harness::TestServer;
use crate::opensearch_queries::{recorded, replay_steps};

/// Needle's answer as `data_streams.py` shapes OpenSearch's (see `shaped` there).
fn shaped(answer: &Value) -> Value {
    let Some(a) = answer.as_object() else { return answer.clone() };
    if let Some(kind) = a.get("error").and_then(|e| e.get("type")) {
        return json!({"error": kind});
    }
    if let Some(result) = a.get("result") {
        return json!({"_index": a["_index"], "result": result});
    }
    if a.contains_key("old_index") {
        return answer.clone();
    }
    if let Some(acknowledged) = a.get("acknowledged") {
        return json!({"acknowledged": acknowledged});
    }
    if a.contains_key("data_stream_count") {
        let mut kept = a.clone();
        kept.remove("total_store_size_bytes");
        kept.remove("_shards");
        for s in kept["data_streams"].as_array_mut().unwrap() {
            s.as_object_mut().unwrap().remove("store_size_bytes");
        }
        return Value::Object(kept);
    }
    if let Some(streams) = a.get("data_streams").and_then(Value::as_array) {
        let streams: Vec<Value> = streams
            .iter()
            .map(|s| {
                let mut s = s.clone();
                let names: Vec<Value> =
                    s["indices"].as_array().unwrap().iter().map(|i| i["index_name"].clone()).collect();
                s["indices"] = json!(names);
                s
            })
            .collect();
        return json!({"data_streams": streams});
    }
    if let Some(hits) = a.get("hits") {
        let hits: Vec<Value> = hits["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| json!([h["_index"], h["sort"], h["_source"]]))
            .collect();
        return json!({"total": a["hits"]["total"]["value"], "hits": hits});
    }
    if let Some(count) = a.get("count") {
        return json!({"count": count});
    }
    if let Some(items) = a.get("items").and_then(Value::as_array) {
        let items: Vec<Value> = items
            .iter()
            .map(|item| {
                let (kind, r) = item.as_object().unwrap().iter().next().unwrap();
                let outcome = r.get("error").map_or_else(|| r["result"].clone(), |e| e["type"].clone());
                json!([kind, r["status"], outcome])
            })
            .collect();
        return json!({"errors": a["errors"], "items": items});
    }
    if !a.is_empty() && a.values().all(Value::is_object) {
        let out: Map<String, Value> = a
            .iter()
            .map(|(name, inner)| {
                let mut inner = inner.as_object().unwrap().clone();
                if let Some(settings) = inner.remove("settings") {
                    inner.insert(
                        "hidden".into(),
                        settings["index"].get("hidden").cloned().unwrap_or(Value::Null),
                    );
                }
                (name.clone(), Value::Object(inner))
            })
            .collect();
        return Value::Object(out);
    }
    answer.clone()
}

/// Hits compared in order: index, sort values and source.
fn hits(want: &Value, got: &Value) -> Vec<String> {
    match shaped(got) {
        got if got == *want => Vec::new(),
        got => vec![format!("OpenSearch {want}\n    Needle {got}")],
    }
}

#[test]
fn data_streams_answer_as_opensearch() {
    let golden = recorded("data_streams");
    let s = TestServer::start();
    let failures = replay_steps(&s, &golden["cases"], shaped, hits);
    assert!(failures.is_empty(), "{} steps differ:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn streams_outlive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let s = TestServer::start_with(|c| c, dir.path());
    let t = json!({"index_patterns": ["kept-*"], "data_stream": {}});
    assert_eq!(s.json("PUT", "/_index_template/kept", Some(t)).0, 200);
    let doc = json!({"@timestamp": "2026-01-01", "msg": "first"});
    assert_eq!(s.json("POST", "/kept-a/_doc", Some(doc)).0, 201);
    assert_eq!(s.json("POST", "/kept-a/_rollover", None).0, 200);
    drop(s);
    let s = TestServer::start_with(|c| c, dir.path());
    let (status, listed) = s.json("GET", "/_data_stream/kept-a", None);
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["data_streams"][0]["indices"].as_array().unwrap().len(), 2, "{listed}");
    let doc = json!({"@timestamp": "2026-01-02", "msg": "second"});
    let (_, made) = s.json("POST", "/kept-a/_doc?refresh=true", Some(doc));
    assert_eq!(made["_index"], ".ds-kept-a-000002", "{made}");
    assert_eq!(s.json("GET", "/kept-a/_count", None).1["count"], 2);
    assert_eq!(s.json("DELETE", "/_data_stream/kept-a", None).0, 200);
    assert_eq!(s.json("GET", "/_cat/indices?format=json", None).1, json!([]));
}
