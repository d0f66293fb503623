//! Prefix, wildcard and fuzzy queries (and `match` with `fuzziness`, their
//! `query_string` forms, `query_string` over several fields) answered as a
//! real OpenSearch node answers them: `tests/golden/opensearch/queries.json`
//! holds OpenSearch 3.8's answers (recorded by `queries.py` beside it) over
//! the bundled corpus. Needle gets the same documents and requests and must
//! find the same documents with the same scores (within 1e-5, relative), in
//! order of score. Documents with equal scores are compared as sets:
//! OpenSearch orders them by its own internal document order.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::harness::TestServer;

const INDEX: &str = "needle-queries";

fn golden() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/opensearch/queries.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-5 * a.abs().max(b.abs()).max(1e-3)
}

/// The differences between OpenSearch's hits and Needle's, as lines.
fn compare(want: &Value, got: &Value) -> Vec<String> {
    let mut diffs = Vec::new();
    let total = &got["hits"]["total"]["value"];
    if *total != want["total"] {
        diffs.push(format!("total: OpenSearch {}, Needle {total}", want["total"]));
    }
    let wanted: BTreeMap<&str, f64> = want["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h[0].as_str().unwrap(), h[1].as_f64().unwrap()))
        .collect();
    let hits = got["hits"]["hits"].as_array().unwrap();
    let mut last = f64::INFINITY;
    for h in hits {
        let (id, score) = (h["_id"].as_str().unwrap(), h["_score"].as_f64().unwrap());
        match wanted.get(id) {
            None => diffs.push(format!("{id} (score {score}) is not among OpenSearch's hits")),
            Some(&w) if !close(w, score) => {
                diffs.push(format!("{id}: OpenSearch scored {w}, Needle {score}"))
            }
            Some(_) => {}
        }
        if score > last && !close(score, last) {
            diffs.push(format!("{id}: scored {score} after a hit scored {last}"));
        }
        last = score;
    }
    if hits.len() != wanted.len() {
        diffs.push(format!("{} hits from OpenSearch, {} from Needle", wanted.len(), hits.len()));
    }
    diffs
}

#[test]
fn multi_term_queries_answer_as_opensearch_does() {
    let golden = golden();
    let s = TestServer::start();
    s.load_sotu(INDEX, golden["mapping"].clone());
    let mut failures = Vec::new();
    for case in golden["cases"].as_array().unwrap() {
        let (status, answer) = s.json("POST", &format!("/{INDEX}/_search"), Some(case["body"].clone()));
        let query = case["body"]["query"].to_string();
        if status != 200 {
            failures.push(format!("{query}: status {status}: {answer}"));
            continue;
        }
        let diffs = compare(&case["answer"], &answer);
        if !diffs.is_empty() {
            failures.push(format!(
                "{query}:\n    {}",
                diffs.iter().take(5).cloned().collect::<Vec<_>>().join("\n    ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        golden["cases"].as_array().unwrap().len(),
        failures.join("\n")
    );
}
