//! Aliases with options, answered as a real OpenSearch node answers them:
//! `tests/golden/opensearch/aliases.json` holds OpenSearch 3.8's answers
//! (recorded by `aliases.py` beside it) to a sequence of requests over two
//! indexes that split the bundled corpus between them: aliases added with
//! filters, routing, a write index and a hidden one; searches, counts,
//! writes and a delete-by-query through them; the listings; the errors.
//! Needle gets the same documents and the same requests in the same order,
//! and each answer must be OpenSearch's: its status, then its hits (count,
//! ids, scores), count, error type or whole answer, as `aliases.py` shapes it.

use serde_json::{json, Value};

use crate::harness::TestServer;
use crate::opensearch_queries::{compare, replay_steps};

fn golden() -> Value {
    crate::opensearch_queries::recorded("aliases")
}

/// Needle's answer as `aliases.py` shapes OpenSearch's (see `shaped` there).
/// An acknowledgement alone: Elasticsearch 8 adds `errors` to that of
/// `POST /_aliases`, as Needle does; OpenSearch does not.
fn shaped(answer: &Value) -> Value {
    if let Some(acknowledged) = answer.get("acknowledged") {
        return json!({"acknowledged": acknowledged});
    }
    if answer.get("hits").is_some() {
        return answer.clone();
    }
    if let Some(kind) = answer["error"].get("type") {
        return json!({"error": kind});
    }
    if let Some(count) = answer.get("count") {
        return json!({"count": count});
    }
    if let Some(found) = answer.get("found") {
        return json!({"_index": answer["_index"], "found": found});
    }
    if let Some(result) = answer.get("result") {
        return json!({"_index": answer["_index"], "result": result});
    }
    if let Some(deleted) = answer.get("deleted") {
        return json!({"total": answer["total"], "deleted": deleted});
    }
    answer.clone()
}

#[test]
fn aliases_with_filters_routing_and_a_write_index_answer_as_opensearch() {
    let golden = golden();
    let s = TestServer::start();
    let names = golden["indexes"].as_array().unwrap();
    for (k, name) in names.iter().enumerate() {
        s.load_sotu_share(name.as_str().unwrap(), golden["mapping"].clone(), (k, names.len()));
    }
    let failures = replay_steps(&s, &golden["cases"], shaped, compare);
    assert!(failures.is_empty(), "{} steps differ:\n{}", failures.len(), failures.join("\n"));
}
