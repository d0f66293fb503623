//! Searches over three indexes that split the bundled corpus between them,
//! answered as a real OpenSearch node answers them:
//! `tests/golden/opensearch/dfs.json` holds OpenSearch 3.8's answers
//! (recorded by `dfs.py` beside it) with each index's own statistics
//! (`query_then_fetch`) and with their statistics summed
//! (`search_type=dfs_query_then_fetch`, whose scores are those of one index
//! holding every document). Needle gets the same documents and requests and
//! must find the same documents with the same scores (see `compare`).

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::harness::TestServer;
use crate::opensearch_queries::compare;

fn golden() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/opensearch/dfs.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A server holding the three indexes of `golden`, the corpus's line `i` in index `i % 3`.
fn split_corpus(golden: &Value) -> (TestServer, String) {
    let s = TestServer::start();
    let names = golden["indexes"].as_array().unwrap();
    for (k, name) in names.iter().enumerate() {
        s.load_sotu_share(name.as_str().unwrap(), golden["mapping"].clone(), (k, names.len()));
    }
    let expression = names.iter().map(|n| n.as_str().unwrap()).collect::<Vec<_>>().join(",");
    (s, expression)
}

#[test]
fn searches_over_several_indexes_score_as_opensearch_with_and_without_summed_statistics() {
    let golden = golden();
    let (s, expression) = split_corpus(&golden);
    let mut failures = Vec::new();
    for case in golden["cases"].as_array().unwrap() {
        let search_type = case["search_type"].as_str().unwrap();
        let path = format!("/{expression}/_search?search_type={search_type}");
        let (status, answer) = s.json("POST", &path, Some(case["body"].clone()));
        let what = format!("{search_type} {}", case["body"]["query"]);
        match status {
            200 => {
                let diffs = compare(&case["answer"], &answer);
                if !diffs.is_empty() {
                    failures.push(format!("{what}:\n    {}", diffs[..diffs.len().min(5)].join("\n    ")));
                }
            }
            _ => failures.push(format!("{what}: status {status}: {answer}")),
        }
    }
    assert!(failures.is_empty(), "{} cases differ:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn msearch_headers_choose_the_search_type_and_an_unknown_one_is_refused() {
    let golden = golden();
    let (s, expression) = split_corpus(&golden);
    let case =
        golden["cases"].as_array().unwrap().iter().find(|c| c["search_type"] == "dfs_query_then_fetch");
    let case = case.unwrap();
    let lines = [json!({"index": expression, "search_type": "dfs_query_then_fetch"}), case["body"].clone()];
    let (status, answer) = s.bulk("/_msearch", &lines);
    assert_eq!(status, 200, "{answer}");
    assert!(compare(&case["answer"], &answer["responses"][0]).is_empty(), "{answer}");

    let (status, answer) = s.json("POST", &format!("/{expression}/_search?search_type=scan"), None);
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["type"], "illegal_argument_exception");
    assert_eq!(answer["error"]["reason"], "No search type for [scan]");
}
