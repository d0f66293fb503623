//! `_field_caps` answered as a real OpenSearch node answers it:
//! `tests/golden/opensearch/field_caps.json` holds OpenSearch 3.8's answers
//! (recorded by `field_caps.py` beside it) over two indexes whose mappings
//! agree on some fields and not on others. Needle gets the same indexes and
//! requests, and each answer must be OpenSearch's: its status, then its
//! indexes and every mapped field's entry (metadata fields left out: each
//! engine has its own), or the error's type.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::harness::TestServer;

fn golden() -> Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/opensearch/field_caps.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Needle's answer as `field_caps.py` shapes OpenSearch's.
fn shaped(answer: Value) -> Value {
    if let Some(kind) = answer["error"].get("type") {
        return json!({"error": kind});
    }
    let fields = answer["fields"].as_object().unwrap().iter().filter(|(k, _)| !k.starts_with('_'));
    let fields: serde_json::Map<String, Value> = fields.map(|(k, v)| (k.clone(), v.clone())).collect();
    json!({"indices": answer["indices"], "fields": fields})
}

#[test]
fn field_caps_answer_as_opensearch() {
    let golden = golden();
    let s = TestServer::start();
    for (index, mapping) in golden["mappings"].as_object().unwrap() {
        let (status, answer) = s.json("PUT", &format!("/{index}"), Some(json!({"mappings": mapping})));
        assert_eq!(status, 200, "{answer}");
    }
    let mut failures = Vec::new();
    for case in golden["cases"].as_array().unwrap() {
        let (method, path) = (case["method"].as_str().unwrap(), case["path"].as_str().unwrap());
        let (status, answer) = s.json(method, path, Some(case["body"].clone()).filter(|b| !b.is_null()));
        let answer = shaped(answer);
        if u64::from(status) != case["status"] || answer != case["answer"] {
            failures.push(format!(
                "{method} {path}:\n    OpenSearch {} {}\n    Needle {status} {answer}",
                case["status"], case["answer"]
            ));
        }
    }
    assert!(failures.is_empty(), "{} requests differ:\n{}", failures.len(), failures.join("\n"));
}
