//! `_analyze` answered as a real OpenSearch node answers it:
//! `tests/golden/opensearch/analyze.json` holds OpenSearch 3.8's answers
//! (recorded by `analyze.py` beside it) to named analyzers, an index's
//! fields and several texts at once, and to the errors; and to a second
//! index's own analyzers, which its settings define. Needle gets the same
//! indexes and requests, and each answer must be OpenSearch's: its status,
//! then every token (term, offsets, type, position) or the error's type; the
//! second index's settings must show its analyzers as OpenSearch's show them.

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
    let own = golden["own"].as_str().unwrap();
    let body = json!({"settings": {"analysis": golden["analysis"]}, "mappings": golden["own_mapping"]});
    let (status, answer) = s.json("PUT", &format!("/{own}"), Some(body));
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = s.json("PUT", &format!("/{own}/_mapping"), Some(golden["added"].clone()));
    assert_eq!(status, 200, "{answer}");
    let (_, settings) = s.json("GET", &format!("/{own}/_settings"), None);
    assert_eq!(settings[own]["settings"]["index"]["analysis"], golden["analysis_shown"]);
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
