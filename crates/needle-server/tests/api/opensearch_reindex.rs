//! `_reindex`, answered as a real OpenSearch node answers it:
//! `tests/golden/opensearch/reindex.json` holds OpenSearch 3.8's answers
//! (recorded by `reindex.py` beside it) to a sequence of reindexes from an
//! index holding the bundled corpus: into new and existing indexes, with a
//! query, `max_docs`, `op_type: create` with and without `conflicts:
//! proceed`, part of each source, two sources, a filtered alias; the counts
//! and searches of what arrived; the errors. Needle gets the same documents
//! and requests in the same order, and each answer must be OpenSearch's: its
//! status, then a reindex's counts and failures, the hits (count, ids,
//! scores, sources), the count or the error type, as `reindex.py` shapes it.

use serde_json::{json, Value};

use crate::harness::TestServer;
use crate::opensearch_queries::{compare, replay_steps};

fn golden() -> Value {
    crate::opensearch_queries::recorded("reindex")
}

/// Needle's answer as `reindex.py` shapes OpenSearch's (see `shaped` there).
/// An acknowledgement alone: Elasticsearch 8 adds `errors` to that of
/// `POST /_aliases`, as Needle does; OpenSearch does not.
pub(crate) fn shaped(answer: &Value) -> Value {
    if let Some(acknowledged) = answer.get("acknowledged") {
        return json!({"acknowledged": acknowledged});
    }
    if let Some(kind) = answer["error"].get("type") {
        return json!({"error": kind});
    }
    if let Some(count) = answer.get("count") {
        return json!({"count": count});
    }
    if let Some(failures) = answer.get("failures").and_then(Value::as_array) {
        let mut listed: Vec<Value> = failures
            .iter()
            .map(|f| json!([f["id"], kind_as_opensearch(&f["cause"]["type"]), f["status"]]))
            .collect();
        listed.sort_by_key(|f| f.to_string());
        let mut shaped = json!({"failures": listed});
        for key in ["total", "created", "updated", "deleted", "batches", "version_conflicts", "noops"] {
            if let Some(value) = answer.get(key) {
                shaped[key] = value.clone();
            }
        }
        return shaped;
    }
    answer.clone()
}

/// An error type as OpenSearch names it: a document its mapping refuses is a
/// `document_parsing_exception` to Needle, as to Elasticsearch 8, and a
/// `mapper_parsing_exception` to OpenSearch.
fn kind_as_opensearch(kind: &Value) -> Value {
    match kind.as_str() {
        Some("document_parsing_exception") => json!("mapper_parsing_exception"),
        _ => kind.clone(),
    }
}

/// The hits' differences: ids and scores ([`compare`]), and the sources
/// where OpenSearch's answer kept them (the hits' third element).
pub(crate) fn hit_diffs(want: &Value, got: &Value) -> Vec<String> {
    let mut diffs = compare(want, got);
    for w in want["hits"].as_array().unwrap().iter().filter(|w| w.get(2).is_some()) {
        let found = got["hits"]["hits"].as_array().unwrap().iter().find(|h| h["_id"] == w[0]);
        if let Some(g) = found.filter(|g| g["_source"] != w[2]) {
            diffs.push(format!("{}: source OpenSearch {}, Needle {}", w[0], w[2], g["_source"]));
        }
    }
    diffs
}

#[test]
fn reindex_answers_as_opensearch() {
    let golden = golden();
    let s = TestServer::start();
    s.load_sotu_share(golden["source"].as_str().unwrap(), golden["mapping"].clone(), (0, 1));
    let failures = replay_steps(&s, &golden["cases"], shaped, hit_diffs);
    assert!(failures.is_empty(), "{} steps differ:\n{}", failures.len(), failures.join("\n"));
}
