//! Index and component templates, answered as a real OpenSearch node
//! answers them: `tests/golden/opensearch/templates.json` holds OpenSearch
//! 3.8's answers (recorded by `templates.py` beside it) to a sequence of
//! template requests and of indexes made from them, by `PUT` and by a first
//! write; Needle gets the same requests in the same order, and each answer
//! must be OpenSearch's: its status, then the whole answer of a template,
//! mapping or alias `GET`, the kept settings of a `_settings` `GET`, an
//! acknowledgement, a write's index and result or the error type, as `templates.py` shapes it.

use serde_json::{json, Value};

use crate::harness::TestServer;
use crate::opensearch_queries::{compare, replay_steps};

fn golden() -> Value {
    crate::opensearch_queries::recorded("templates")
}

/// Needle's answer as `templates.py` shapes OpenSearch's (see `shaped` there).
fn shaped(answer: &Value) -> Value {
    if let Some(kind) = answer["error"].get("type") {
        return json!({"error": kind});
    }
    if let Some(result) = answer.get("result") {
        return json!({"_index": answer["_index"], "result": result});
    }
    if let Some(acknowledged) = answer.get("acknowledged") {
        return json!({"acknowledged": acknowledged});
    }
    for listing in ["index_templates", "component_templates"] {
        if let Some(list) = answer.get(listing).and_then(Value::as_array) {
            let mut list = list.clone();
            list.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
            return json!({listing: list});
        }
    }
    if let Some((name, inner)) = answer.as_object().filter(|a| a.len() == 1).and_then(|a| a.iter().next()) {
        if let Some(kept) = inner.get("settings").map(|s| &s["index"]) {
            let pick = |k: &str| kept.get(k).cloned().unwrap_or(Value::Null);
            return json!({name: {"number_of_shards": pick("number_of_shards"), "refresh_interval": pick("refresh_interval")}});
        }
    }
    answer.clone()
}

#[test]
fn templates_answer_as_opensearch() {
    let golden = golden();
    let s = TestServer::start();
    let failures = replay_steps(&s, &golden["cases"], shaped, compare);
    assert!(failures.is_empty(), "{} steps differ:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn templates_outlive_a_restart_and_head_tells_which_exist() {
    let dir = tempfile::tempdir().unwrap();
    let s = TestServer::start_with(|c| c, dir.path());
    let t = json!({"index_patterns": ["kept-*"], "template": {"mappings": {"properties": {"n": {"type": "long"}}}}});
    assert_eq!(s.json("PUT", "/_index_template/kept", Some(t)).0, 200);
    assert_eq!(s.call("HEAD", "/_index_template/kept", None).status, 200);
    assert_eq!(s.call("HEAD", "/_index_template/other", None).status, 404);
    let legacy = json!({"index_patterns": "old-*", "mappings": {"properties": {"d": {"type": "date"}}}});
    assert_eq!(s.json("PUT", "/_template/old", Some(legacy)).0, 200);
    drop(s);
    let s = TestServer::start_with(|c| c, dir.path());
    assert_eq!(s.json("PUT", "/kept-1/_doc/1", Some(json!({"n": "7"}))).0, 201);
    let (_, mapping) = s.json("GET", "/kept-1/_mapping", None);
    assert_eq!(mapping["kept-1"]["mappings"]["properties"]["n"], json!({"type": "long"}), "{mapping}");
    assert_eq!(s.json("PUT", "/old-1/_doc/1", Some(json!({"d": "2020-01-02"}))).0, 201);
    let (_, mapping) = s.json("GET", "/old-1/_mapping", None);
    assert_eq!(mapping["old-1"]["mappings"]["properties"]["d"], json!({"type": "date"}), "{mapping}");
}
