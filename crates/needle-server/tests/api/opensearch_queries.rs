//! Prefix, wildcard and fuzzy queries (and `match` with `fuzziness`, their
//! `query_string` forms, `query_string` over several fields) answered as a
//! real OpenSearch node answers them: `tests/golden/opensearch/queries.json`
//! holds OpenSearch 3.8's answers (recorded by `queries.py` beside it) over
//! the bundled corpus. Needle gets the same documents and requests and must
//! find the same documents with the same scores (within 1e-5, relative), in
//! order of score. Documents with equal scores are compared as sets:
//! OpenSearch orders them by its own internal document order. For the
//! searches with `explain`, the top hits' explanations must be the same
//! trees, description for description, value for value.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::harness::TestServer;

const INDEX: &str = "needle-queries";

/// A real OpenSearch node's recorded answers: `tests/golden/opensearch/NAME.json`.
pub(crate) fn recorded(name: &str) -> Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../tests/golden/opensearch/{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn golden() -> Value {
    recorded("queries")
}

pub(crate) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-5 * a.abs().max(b.abs()).max(1e-3)
}

/// An explanation as (value, description) lines in order, the document
/// number in `weight(... in N)` left out (each engine numbers its own).
fn flatten(e: &Value, out: &mut Vec<(f64, String)>) {
    let description = e["description"].as_str().unwrap();
    let shown = match description.find(" in ") {
        Some(at) if description[at + 4..].starts_with(|c: char| c.is_ascii_digit()) => {
            let rest = description[at + 4..].trim_start_matches(|c: char| c.is_ascii_digit());
            format!("{} in _{rest}", &description[..at])
        }
        _ => description.to_string(),
    };
    out.push((e["value"].as_f64().unwrap(), shown));
    e["details"].as_array().unwrap().iter().for_each(|d| flatten(d, out));
}

/// The differences between OpenSearch's explanations of its hits and Needle's.
fn compare_explanations(want: &Value, got: &Value) -> Vec<String> {
    let mut diffs = Vec::new();
    for w in want["hits"].as_array().unwrap() {
        let id = w[0].as_str().unwrap();
        let Some(g) = got["hits"]["hits"].as_array().unwrap().iter().find(|h| h["_id"] == id) else {
            diffs.push(format!("{id}: not among Needle's hits"));
            continue;
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        flatten(&w[2], &mut a);
        flatten(&g["_explanation"], &mut b);
        if a.len() != b.len() || a.iter().zip(&b).any(|(x, y)| x.1 != y.1 || !close(x.0, y.0)) {
            let show = |v: &[(f64, String)]| {
                v.iter().map(|(x, d)| format!("{x} | {d}")).collect::<Vec<_>>().join("\n      ")
            };
            diffs.push(format!("{id}: OpenSearch\n      {}\n    Needle\n      {}", show(&a), show(&b)));
        }
    }
    diffs
}

/// Sends Needle each recorded step of `cases` (method, path, body) in turn and
/// lists the steps whose answer is not OpenSearch's: a different status, hits
/// that differ (as `hits` compares them: [`compare`], or more), or another
/// answer that `shaped` does not make equal to the recorded one.
pub(crate) fn replay_steps(
    s: &crate::harness::TestServer,
    cases: &Value,
    shaped: fn(&Value) -> Value,
    hits: fn(&Value, &Value) -> Vec<String>,
) -> Vec<String> {
    let mut failures = Vec::new();
    for case in cases.as_array().unwrap() {
        let (method, path) = (case["method"].as_str().unwrap(), case["path"].as_str().unwrap());
        let (status, answer) = match &case["body"] {
            // NDJSON (a `_bulk` request's body), sent as it is.
            Value::String(lines) => {
                let reply =
                    s.call_with(method, path, Some(lines), &[("content-type", "application/x-ndjson")]);
                (reply.status, reply.json())
            }
            // A HEAD request's answer has no body, recorded as null.
            Value::Null if method == "HEAD" => (s.call(method, path, None).status, Value::Null),
            Value::Null => s.json(method, path, None),
            body => s.json(method, path, Some(body.clone())),
        };
        let what = format!("{method} {path} {}", case["body"]);
        if u64::from(status) != case["status"] {
            failures.push(format!("{what}: status {status} (OpenSearch {}): {answer}", case["status"]));
            continue;
        }
        let want = &case["answer"];
        let diffs = match answer.get("hits") {
            Some(_) => hits(want, &answer),
            None if shaped(&answer) == *want => Vec::new(),
            None => vec![format!("OpenSearch {want}\n    Needle {}", shaped(&answer))],
        };
        if !diffs.is_empty() {
            failures.push(format!("{what}:\n    {}", diffs[..diffs.len().min(5)].join("\n    ")));
        }
    }
    failures
}

/// The differences between OpenSearch's hits and Needle's, as lines.
pub(crate) fn compare(want: &Value, got: &Value) -> Vec<String> {
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
        let explained = case["body"]["explain"] == json!(true);
        let mut body = case["body"].clone();
        if explained {
            // Every hit, so that OpenSearch's top hits are among them when
            // they tie with others (each engine orders ties its own way).
            body["size"] = json!(1000);
        }
        let (status, answer) = s.json("POST", &format!("/{INDEX}/_search"), Some(body));
        let query = case["body"]["query"].to_string();
        if status != 200 {
            failures.push(format!("{query}: status {status}: {answer}"));
            continue;
        }
        let diffs = match explained {
            true => compare_explanations(&case["answer"], &answer),
            false => compare(&case["answer"], &answer),
        };
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

/// `_explain/{id}` explains a document as a search with `explain` explains
/// its hits: OpenSearch's recorded explanations of the top hits, asked for
/// one document at a time.
#[test]
fn explain_of_one_document_is_opensearchs_explanation_of_that_hit() {
    let golden = golden();
    let s = TestServer::start();
    s.load_sotu(INDEX, golden["mapping"].clone());
    let mut failures = Vec::new();
    let mut explained = 0;
    for case in golden["cases"].as_array().unwrap().iter().filter(|c| c["body"]["explain"] == json!(true)) {
        let query = json!({"query": case["body"]["query"]});
        for want in case["answer"]["hits"].as_array().unwrap() {
            let id = want[0].as_str().unwrap();
            let (status, answer) = s.json("POST", &format!("/{INDEX}/_explain/{id}"), Some(query.clone()));
            let got = json!({"hits": {"hits": [{"_id": id, "_explanation": answer["explanation"]}]}});
            let one = json!({"hits": [want]});
            let diffs = compare_explanations(&one, &got);
            if status != 200 || answer["matched"] != json!(true) || !diffs.is_empty() {
                failures.push(format!("{id} for {}: status {status}, {diffs:?}: {answer}", query["query"]));
            }
            explained += 1;
        }
    }
    assert!(explained > 0, "the golden file holds explained hits");
    assert!(failures.is_empty(), "{} explanations differ:\n{}", failures.len(), failures.join("\n"));

    let unmatched = json!({"query": {"match": {"body": "zzzznothing"}}});
    let (status, answer) =
        s.json("POST", &format!("/{INDEX}/_explain/sotu-1790_george_washington_n"), Some(unmatched));
    assert_eq!(
        (status, &answer["matched"], &answer["explanation"]["value"]),
        (200, &json!(false), &json!(0.0)),
        "{answer}"
    );
    let (status, answer) = s.json("GET", &format!("/{INDEX}/_explain/no-such-document?q=body:war"), None);
    assert_eq!((status, &answer["matched"]), (404, &json!(false)), "{answer}");
    let (status, answer) = s.json("POST", &format!("/{INDEX}/_explain/sotu-1790_george_washington_n"), None);
    assert_eq!(
        (status, &answer["error"]["type"]),
        (400, &json!("action_request_validation_exception")),
        "{answer}"
    );
}
