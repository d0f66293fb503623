//! A search over indexes one of which cannot read its files (a read fault
//! injected): a test binary of its own, as faults are injected process-wide
//! by file name and would reach other tests' reads beside it.

#[allow(dead_code)]
#[path = "api/harness.rs"]
mod harness;

use needle_storage::faults::{self, Op};
use serde_json::{json, Value};

use crate::harness::TestServer;

fn ids(answer: &Value) -> Vec<String> {
    let hits = answer["hits"]["hits"].as_array().expect("hits");
    hits.iter().map(|h| format!("{}/{}", h["_index"].as_str().unwrap(), h["_id"].as_str().unwrap())).collect()
}

/// An index that fails while it runs a search (here its files cannot be
/// read) is that search's shard failure: over several indexes the others
/// answer, `_shards` listing it; over it alone, every shard failed. Nothing
/// of the failing index reaches the answer, and once it reads again it answers.
#[test]
fn an_index_failing_as_it_runs_fails_alone() {
    let s = TestServer::start();
    let (healthy, failing) = ("needle-runs-fine", "needle-read-fault");
    // One segment in the healthy index, two in the failing one: only it has a second segment's files.
    for (index, id, title) in [(healthy, 1, "red fox"), (failing, 1, "red fox red"), (failing, 2, "red")] {
        s.json("PUT", &format!("/{index}/_doc/{id}?refresh=true"), Some(json!({"title": title})));
        assert_eq!(s.json("POST", &format!("/{index}/_flush"), None).0, 200);
    }
    let both = format!("/{healthy},{failing}/_search?request_cache=false");
    let query = json!({"query": {"match": {"title": "red"}}, "aggs": {"n": {"filter": {"match_all": {}}}}});
    let (status, before) = s.json("POST", &both, Some(query.clone()));
    assert_eq!((status, ids(&before).len()), (200, 3), "{before}");
    assert_eq!(before["aggregations"]["n"]["doc_count"], 3, "{before}");

    faults::inject(Op::Read, "seg_000001.post", 0, true, std::io::ErrorKind::Other);
    let (status, answer) = s.json("POST", &both, Some(query.clone()));
    // A count alone is an answer the request cache keeps: not one with a failure in it.
    let counted = json!({"size": 0, "query": {"match": {"title": "red"}}});
    let cached = format!("/{healthy},{failing}/_search");
    let (_, partial) = s.json("POST", &cached, Some(counted.clone()));
    let (alone_status, alone) =
        s.json("POST", &format!("/{failing}/_search?request_cache=false"), Some(query.clone()));
    faults::clear();

    assert_eq!(status, 200, "{answer}");
    assert_eq!(ids(&answer), [format!("{healthy}/1")]);
    assert_eq!(answer["hits"]["total"]["value"], 1);
    assert_eq!(answer["aggregations"]["n"]["doc_count"], 1, "{answer}");
    let shards = &answer["_shards"];
    assert_eq!(
        (&shards["total"], &shards["successful"], &shards["failed"]),
        (&json!(2), &json!(1), &json!(1))
    );
    assert_eq!(shards["failures"][0]["index"], failing, "{answer}");
    assert!(shards["failures"][0]["reason"]["reason"].as_str().unwrap().contains("injected"), "{answer}");

    assert!(alone_status >= 500, "{alone}");
    assert_eq!(alone["error"]["type"], "search_phase_execution_exception", "{alone}");
    assert_eq!(alone["error"]["failed_shards"][0]["index"], failing, "{alone}");

    let (status, after) = s.json("POST", &both, Some(query));
    assert_eq!((status, ids(&after).len()), (200, 3), "{after}");
    assert_eq!(partial["hits"]["total"]["value"], 1, "{partial}");
    let (_, whole) = s.json("POST", &cached, Some(counted));
    assert_eq!(
        (&whole["hits"]["total"]["value"], &whole["_shards"]["failed"]),
        (&json!(3), &json!(0)),
        "{whole}"
    );
}
