//! `_analyze` answered as a real OpenSearch node answers it:
//! `tests/golden/opensearch/analyze.json` holds OpenSearch 3.8's answers
//! (recorded by `analyze.py` beside it) to named analyzers, an index's
//! fields and several texts at once, and to the errors. Needle gets the
//! same index and requests, and each answer must be OpenSearch's: its
//! status, then every token (term, offsets, type, position) or the error's type.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::harness::TestServer;

fn golden() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/opensearch/analyze.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn analyze_answers_tokens_as_opensearch() {
    let golden = golden();
    let s = TestServer::start();
    let index = golden["index"].as_str().unwrap();
    let (status, answer) = s.json("PUT", &format!("/{index}"), Some(json!({"mappings": golden["mapping"]})));
    assert_eq!(status, 200, "{answer}");
    let mut failures = Vec::new();
    for case in golden["cases"].as_array().unwrap() {
        let path = case["path"].as_str().unwrap();
        let (status, mut answer) = s.json("POST", path, Some(case["body"].clone()));
        if let Some(kind) = answer["error"].get("type") {
            answer = json!({"error": kind});
        }
        if u64::from(status) != case["status"] || answer != case["answer"] {
            failures.push(format!(
                "POST {path} {}:\n    OpenSearch {} {}\n    Needle {status} {answer}",
                case["body"], case["status"], case["answer"]
            ));
        }
    }
    assert!(failures.is_empty(), "{} requests differ:\n{}", failures.len(), failures.join("\n"));
}
