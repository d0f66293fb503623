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

/// Aggregations over a corpus split over two nodes: each node's search with
/// `needle_gathered` answers what its aggregations gathered, and
/// `_needle/aggregate` on either node merges them into the answer of one
/// index holding every document. Damaged or mismatched parts are a 400.
#[test]
fn aggregations_gathered_on_nodes_merge_as_one_index_answers_them() {
    let mapping =
        json!({"properties": {"tag": {"type": "keyword"}, "n": {"type": "long"}, "x": {"type": "double"}}});
    let whole = TestServer::start();
    let nodes = [TestServer::start(), TestServer::start()];
    for server in nodes.iter().chain([&whole]) {
        assert_eq!(server.json("PUT", "/parts", Some(json!({"mappings": mapping}))).0, 200);
    }
    for i in 0..300u64 {
        let doc = json!({"tag": format!("t{}", i % 7), "n": i % 23, "x": (i as f64) / 7.0});
        let lines = [json!({"index": {"_index": "parts", "_id": i.to_string()}}), doc];
        assert_eq!(nodes[(i % 2) as usize].bulk("/_bulk?refresh=true", &lines).0, 200);
        assert_eq!(whole.bulk("/_bulk?refresh=true", &lines).0, 200);
    }
    let aggs = json!({
        "tags": {"terms": {"field": "tag", "size": 3}, "aggs": {"x": {"stats": {"field": "x"}}}},
        "n": {"histogram": {"field": "n", "interval": 5}, "aggs": {"distinct": {"cardinality": {"field": "tag"}}}},
        "x": {"range": {"field": "x", "ranges": [{"to": 10}, {"from": 10}]}},
        "mean": {"avg": {"field": "n"}}
    });
    let query = json!({"range": {"n": {"gte": 3}}});
    let search = json!({"query": query, "size": 0, "aggs": aggs, "needle_gathered": true});
    let gathered: Vec<Value> = nodes
        .iter()
        .map(|node| {
            let (status, answer) = node.json("POST", "/parts/_search", Some(search.clone()));
            assert_eq!(status, 200, "{answer}");
            assert!(answer.get("aggregations").is_none(), "gathered, not answered: {answer}");
            answer["needle_gathered"].clone()
        })
        .collect();
    let (status, merged) =
        nodes[1].json("POST", "/parts/_needle/aggregate", Some(json!({"aggs": aggs, "gathered": gathered})));
    assert_eq!(status, 200, "{merged}");
    let (_, want) =
        whole.json("POST", "/parts/_search", Some(json!({"query": query, "size": 0, "aggs": aggs})));
    // Sums of doubles added in another order may differ in their last bits.
    assert!(close(&merged["aggregations"], &want["aggregations"]), "{merged}\n{want}");

    let other_aggs = json!({"mean": {"avg": {"field": "n"}}});
    for (bad_aggs, bad_part) in [(aggs.clone(), json!("not base64 !")), (other_aggs, gathered[0].clone())] {
        let body = json!({"aggs": bad_aggs, "gathered": [bad_part]});
        let (status, err) = nodes[0].json("POST", "/parts/_needle/aggregate", Some(body));
        assert_eq!(status, 400, "{err}");
    }
    let top = json!({"size": 0, "aggs": {"best": {"top_hits": {}}}, "needle_gathered": true});
    assert_eq!(nodes[0].json("POST", "/parts/_search", Some(top)).0, 400);
}

/// Equal JSON, numbers within a relative 1e-12.
fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| close(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| close(v, w)))
        }
        _ => a == b,
    }
}
