//! A corpus split over two servers (nodes), searched as one: each node's
//! statistics for the query (`_needle/corpus_stats`), then each node's
//! search with all of them (`needle_corpus`), the hits merged by score. The
//! merged hits equal a third server's holding every document, score for
//! score; with each node's own statistics they do not.

use serde_json::{json, Value};

use crate::harness::TestServer;

const MAPPING: &str =
    r#"{"properties": {"title": {"type": "text"}, "body": {"type": "text"}, "source": {"type": "text"}}}"#;

/// Every hit as (score, `_id`), best first, ties by `_id`; and the total.
fn hits(answer: &Value) -> (u64, Vec<(f64, String)>) {
    let mut hits: Vec<(f64, String)> = answer["hits"]["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .map(|h| (h["_score"].as_f64().unwrap(), h["_id"].as_str().unwrap().to_string()))
        .collect();
    hits.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    (answer["hits"]["total"]["value"].as_u64().unwrap(), hits)
}

#[test]
fn nodes_holding_parts_of_a_corpus_score_as_one_index_with_their_statistics_summed() {
    let mapping: Value = serde_json::from_str(MAPPING).unwrap();
    let whole = TestServer::start();
    whole.load_sotu("sotu", mapping.clone());
    let nodes: Vec<TestServer> = (0..2)
        .map(|k| {
            let node = TestServer::start();
            node.load_sotu_share("sotu", mapping.clone(), (k, 2));
            node
        })
        .collect();
    let queries = [
        json!({"match": {"body": "war peace"}}),
        json!({"match_phrase": {"body": "civil war"}}),
        json!({"multi_match": {"query": "lincoln slavery", "fields": ["title^2", "body"]}}),
        json!({"multi_match": {"query": "freedom liberty", "fields": ["body", "title"], "type": "cross_fields"}}),
        json!({"bool": {"must": {"match": {"body": "economy"}}, "should": {"match": {"title": "roosevelt"}}}}),
    ];
    let mut own_differ = 0;
    for query in queries {
        let body = json!({"query": query, "size": 300, "_source": false});
        let parts: Vec<Value> = nodes
            .iter()
            .map(|n| {
                let (status, stats) =
                    n.json("POST", "/sotu/_needle/corpus_stats", Some(json!({"query": query})));
                assert_eq!(status, 200, "{stats}");
                stats
            })
            .collect();
        let mut with_corpus = body.clone();
        with_corpus["needle_corpus"] = json!(parts);
        let (mut total, mut merged, mut own) = (0, Vec::new(), Vec::new());
        for n in &nodes {
            let (t, found) = hits(&n.json("POST", "/sotu/_search", Some(with_corpus.clone())).1);
            total += t;
            merged.extend(found);
            own.extend(hits(&n.json("POST", "/sotu/_search", Some(body.clone())).1).1);
        }
        let (want_total, want) = hits(&whole.json("POST", "/sotu/_search", Some(body)).1);
        merged.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        own.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        assert_eq!(total, want_total, "{query}");
        assert_eq!(merged, want, "{query}");
        own_differ += usize::from(own != want);
    }
    assert!(own_differ > 0, "the nodes' own statistics never changed a score");

    let bad = json!({"query": {"match": {"body": "war"}}, "needle_corpus": [{"max_doc": "many"}]});
    let (status, err) = nodes[0].json("POST", "/sotu/_search", Some(bad));
    assert_eq!((status, err["error"]["type"].as_str()), (400, Some("parsing_exception")), "{err}");
    assert!(err["error"]["reason"].as_str().unwrap().contains("[needle_corpus]"), "{err}");
}
