//! Searches an index cannot run, answered as a real OpenSearch node answers
//! them: `tests/golden/opensearch/shard_failures.json` holds OpenSearch
//! 3.8's answers (recorded by `shard_failures.py` beside it). One index
//! failing is all shards failing (`search_phase_execution_exception`, the
//! index's failure its root cause); one of two failing leaves the other's
//! hits and counts, the failure listed in `_shards`; a query the request
//! itself gets wrong is the request's `parsing_exception`. Query strings
//! searching every field are lenient, those naming fields are not, unless
//! `lenient` says otherwise. Each answer must be OpenSearch's as
//! `shaped_failures` shapes it: status, error type, root causes' types and
//! failed shards, or hits, scores and failed shards.

use serde_json::{json, Value};

use crate::harness::TestServer;
use crate::opensearch_multi_fields::shaped;
use crate::opensearch_queries::{recorded, replay_steps};

/// Each failure listed as its index and its reason's type.
fn failures_of(listed: &Value) -> Value {
    let pairs = listed.as_array().into_iter().flatten().map(|f| json!([f["index"], f["reason"]["type"]]));
    Value::Array(pairs.collect())
}

/// Needle's answer as `shard_failures.py` shapes OpenSearch's.
fn shaped_failures(answer: &Value) -> Value {
    if let Some(error) = answer["error"].as_object() {
        let roots = error.get("root_cause").and_then(Value::as_array).into_iter().flatten();
        return json!({
            "error": error["type"],
            "root_causes": roots.map(|c| c["type"].clone()).collect::<Vec<_>>(),
            "failed_shards": failures_of(error.get("failed_shards").unwrap_or(&Value::Null)),
        });
    }
    let failed = failures_of(&answer["_shards"]["failures"]);
    if let Some(count) = answer.get("count") {
        return json!({"count": count, "failed": failed});
    }
    let mut out = shaped(answer);
    if answer.get("_shards").is_some() {
        out["failed"] = failed;
    }
    out
}

fn shaped_diffs(want: &Value, got: &Value) -> Vec<String> {
    match shaped_failures(got) == *want {
        true => Vec::new(),
        false => vec![format!("OpenSearch {want}\n    Needle {}", shaped_failures(got))],
    }
}

#[test]
fn searches_an_index_cannot_run_fail_as_opensearchs_shards_fail() {
    let golden = recorded("shard_failures");
    let s = TestServer::start();
    let failures = replay_steps(&s, &golden["cases"], shaped_failures, shaped_diffs);
    assert!(failures.is_empty(), "{} steps differ:\n{}", failures.len(), failures.join("\n"));
}

/// A failure an index's query raised names that index's UUID (as the index's
/// settings show it), in the root causes and the failed shards, as
/// Elasticsearch's do: one index failing, and one of two.
#[test]
fn an_index_failure_names_the_index_uuid() {
    let s = TestServer::start();
    let mut uuids = Vec::new();
    for name in ["u1", "u2"] {
        assert_eq!(s.json("PUT", &format!("/{name}"), Some(json!({}))).0, 200);
        let (_, settings) = s.json("GET", &format!("/{name}/_settings"), None);
        uuids.push(settings[name]["settings"]["index"]["uuid"].as_str().unwrap().to_string());
    }
    let bad = json!({"query": {"match": {"a": {"query": "x", "analyzer": "nope"}}}});
    let (status, answer) = s.json("POST", "/u1/_search", Some(bad.clone()));
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["root_cause"][0]["index_uuid"], json!(uuids[0]), "{answer}");
    assert_eq!(answer["error"]["failed_shards"][0]["reason"]["index_uuid"], json!(uuids[0]), "{answer}");
    let (_, answer) = s.json("POST", "/u1,u2/_search", Some(bad));
    let named: Vec<Value> = ["u1", "u2"]
        .iter()
        .map(|n| {
            let failed = answer["error"]["failed_shards"].as_array().unwrap();
            let f = failed.iter().find(|f| f["index"] == *n).expect("each index failed");
            f["reason"]["index_uuid"].clone()
        })
        .collect();
    assert_eq!(named, [json!(uuids[0]), json!(uuids[1])], "{answer}");
}
