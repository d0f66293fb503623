//! Field-value searches answered as a real OpenSearch node answers them:
//! `tests/golden/opensearch/values.json` holds OpenSearch 3.8's answers
//! (recorded by `record.py` beside it) to sorts, ranges, `exists`,
//! `search_after`, aggregations and `docvalue_fields` over generated
//! documents; the same documents and requests go to Needle, and the hits (ids,
//! order, sort values, scores, fields), totals and aggregations must be
//! equal, numbers within 1e-6.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::harness::TestServer;

const INDEX: &str = "needle-values";

/// Where OpenSearch disagrees with itself, and so with Needle, in the
/// aggregations asked for without a query: (path, why).
const KNOWN_WITHOUT_QUERY: [(&str, &str); 1] = [(
    "aggregations.rating_ranges",
    "without a query, OpenSearch runs a range aggregation as point queries, which put -0.0 below 0.0; \
     with one it compares values as doubles, -0.0 equal to 0.0, as Needle always does",
)];

fn golden() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/opensearch/values.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Whether two answers agree: the same keys, numbers within 1e-6 (relative).
fn same(want: &Value, got: &Value, at: &str, diffs: &mut Vec<String>) {
    match (want, got) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            if (a - b).abs() > 1e-6 * a.abs().max(b.abs()).max(1.0) {
                diffs.push(format!("{at}: OpenSearch {a}, Needle {b}"));
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => same(x, y, &format!("{at}.{key}"), diffs),
                    (x, y) => diffs.push(format!("{at}.{key}: OpenSearch {x:?}, Needle {y:?}")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                same(x, y, &format!("{at}[{i}]"), diffs);
            }
        }
        (a, b) if a == b => {}
        (a, b) => diffs.push(format!("{at}: OpenSearch {a}, Needle {b}")),
    }
}

/// The parts of a search answer compared: totals, hits as (id, score, sort,
/// doc values, highlights), aggregations.
fn comparable(answer: &Value) -> Value {
    let hits: Vec<Value> = answer["hits"]["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("no hits in {answer}"))
        .iter()
        .map(|h| {
            json!({"_id": h["_id"], "_score": h["_score"], "sort": h.get("sort"), "fields": h.get("fields"),
                                  "highlight": h.get("highlight")})
        })
        .collect();
    json!({
        "total": answer["hits"]["total"],
        "max_score": answer["hits"]["max_score"],
        "hits": hits,
        "aggregations": answer.get("aggregations"),
    })
}

#[test]
fn sorts_ranges_and_aggregations_answer_as_opensearch_does() {
    let golden = golden();
    let s = TestServer::start();
    let (status, created) = s.json("PUT", &format!("/{INDEX}"), Some(json!({"mappings": golden["mapping"]})));
    assert_eq!(status, 200, "{created}");
    let mut lines = Vec::new();
    for d in golden["docs"].as_array().unwrap() {
        lines.push(json!({"index": {"_index": INDEX, "_id": d["id"]}}));
        lines.push(d["source"].clone());
    }
    assert_eq!(s.bulk("/_bulk?refresh=true", &lines).1["errors"], json!(false));
    let mut diffs = Vec::new();
    let cases = golden["cases"].as_array().unwrap();
    for (i, case) in cases.iter().enumerate() {
        let (status, answer) = s.json("POST", &format!("/{INDEX}/_search"), Some(case["body"].clone()));
        assert_eq!(status, 200, "case {i} {}: {answer}", case["body"]);
        let before = diffs.len();
        let (mut want, mut got) = (comparable(&case["answer"]), comparable(&answer));
        let without_query = case["body"].get("query").is_none();
        for (path, _) in KNOWN_WITHOUT_QUERY.iter().filter(|_| without_query) {
            let pointer = format!("/{}", path.replace('.', "/"));
            want.pointer_mut(&pointer).map(Value::take);
            got.pointer_mut(&pointer).map(Value::take);
        }
        same(&want, &got, &format!("case {i}"), &mut diffs);
        if diffs.len() > before {
            diffs.insert(before, format!("case {i}: {}", case["body"]));
        }
    }
    assert!(diffs.is_empty(), "{} differences from {}:\n{}", diffs.len(), golden["node"], diffs.join("\n"));
}
