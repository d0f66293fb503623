//! The request cache: a search asking for no hits is answered from it the
//! second time, never once the index has changed, and not at all where the
//! request or the index turns it off. Counts are kept per index; a search
//! over several indexes is kept until any of them changes or is cleared.

use serde_json::{json, Value};

use crate::harness::TestServer;

fn cache_counts(s: &TestServer) -> (u64, u64) {
    counts_of(s, "a")
}

fn counts_of(s: &TestServer, index: &str) -> (u64, u64) {
    let (_, stats) = s.json("GET", &format!("/{index}/_stats/request_cache"), None);
    let cache = &stats["indices"][index]["primaries"]["request_cache"];
    (cache["hit_count"].as_u64().unwrap(), cache["miss_count"].as_u64().unwrap())
}

fn colors() -> Value {
    json!({"mappings": {"properties": {"color": {"type": "keyword"}, "n": {"type": "long"}, "d": {"type": "date"}}}})
}

fn add(s: &TestServer, id: u32, color: &str) {
    add_to(s, "a", id, color);
}

fn add_to(s: &TestServer, index: &str, id: u32, color: &str) {
    let doc = json!({"color": color, "n": id, "d": "2020-01-01"});
    let (status, answer) = s.json("PUT", &format!("/{index}/_doc/{id}?refresh=true"), Some(doc));
    assert!(status == 200 || status == 201, "{answer}");
}

fn terms(s: &TestServer, path: &str, body: &Value) -> Value {
    let (status, answer) = s.json("POST", path, Some(body.clone()));
    assert_eq!(status, 200, "{answer}");
    answer["aggregations"]["c"]["buckets"].clone()
}

#[test]
fn answers_asking_for_no_hits_are_kept_until_the_index_changes() {
    let s = TestServer::start();
    assert_eq!(s.json("PUT", "/a", Some(colors())).0, 200);
    add(&s, 1, "red");
    add(&s, 2, "blue");
    let body = json!({"size": 0, "aggs": {"c": {"terms": {"field": "color"}}}});

    let first = terms(&s, "/a/_search", &body);
    assert_eq!(cache_counts(&s), (0, 1), "a miss, kept");
    let (status, again) = s.json("POST", "/a/_search", Some(body.clone()));
    assert_eq!(status, 200);
    assert_eq!(again["aggregations"]["c"]["buckets"], first);
    assert!(again["took"].is_u64() && again["timed_out"] == json!(false), "{again}");
    assert_eq!(cache_counts(&s), (1, 1), "the same request: a hit");

    // A change: the kept answer is never given again.
    add(&s, 3, "red");
    let changed = terms(&s, "/a/_search", &body);
    assert_eq!(changed[0], json!({"key": "red", "doc_count": 2}), "{changed}");
    assert_eq!(cache_counts(&s), (1, 2));

    // Not kept: hits asked for, `request_cache=false`, `now`, or the index's setting off.
    let with_hits = json!({"size": 1, "aggs": {"c": {"terms": {"field": "color"}}}});
    let now = json!({"size": 0, "query": {"range": {"d": {"lte": "now"}}}, "aggs": {"c": {"terms": {"field": "color"}}}});
    for _ in 0..2 {
        terms(&s, "/a/_search", &with_hits);
        terms(&s, "/a/_search?request_cache=false", &body);
        terms(&s, "/a/_search", &now);
    }
    assert_eq!(cache_counts(&s), (1, 2), "none of these looked in the cache");
    // `request_cache=true` keeps an answer with hits.
    terms(&s, "/a/_search?request_cache=true", &with_hits);
    terms(&s, "/a/_search?request_cache=true", &with_hits);
    assert_eq!(cache_counts(&s), (2, 3));

    let off = json!({"index": {"requests.cache.enable": false}});
    assert_eq!(s.json("PUT", "/a/_settings", Some(off)).0, 200);
    let (_, settings) = s.json("GET", "/a/_settings", None);
    assert_eq!(settings["a"]["settings"]["index"]["requests"]["cache"]["enable"], json!("false"));
    terms(&s, "/a/_search", &body);
    assert_eq!(cache_counts(&s), (2, 3), "the index's setting turns it off");
    let on = json!({"index": {"requests.cache.enable": true}});
    assert_eq!(s.json("PUT", "/a/_settings", Some(on)).0, 200);
    terms(&s, "/a/_search", &body);
    assert_eq!(cache_counts(&s), (3, 3), "kept before the setting went off, and the index unchanged");

    assert_eq!(s.json("POST", "/a/_cache/clear?request=true", None).0, 200);
    let (_, stats) = s.json("GET", "/a/_stats/request_cache", None);
    assert_eq!(stats["indices"]["a"]["primaries"]["request_cache"]["memory_size_in_bytes"], json!(0));
    assert_eq!(cache_counts(&s), (3, 3), "a clear keeps the counts, as Elasticsearch's does");
    terms(&s, "/a/_search", &body);
    assert_eq!(cache_counts(&s), (3, 4), "cleared: a miss");
    let bad = json!({"index": {"requests.cache.enable": "maybe"}});
    assert_eq!(s.json("PUT", "/a/_settings", Some(bad)).0, 400);
}

fn count(s: &TestServer, path: &str, body: Option<Value>) -> u64 {
    let (status, answer) = s.json("POST", path, body);
    assert_eq!(status, 200, "{answer}");
    answer["count"].as_u64().unwrap()
}

#[test]
fn counts_are_kept_per_index_and_searches_over_several_until_any_changes() {
    let s = TestServer::start();
    for index in ["a", "b"] {
        assert_eq!(s.json("PUT", &format!("/{index}"), Some(colors())).0, 200);
    }
    for (index, id, color) in [("a", 1, "red"), ("a", 2, "blue"), ("b", 1, "red")] {
        add_to(&s, index, id, color);
    }
    let reds = json!({"query": {"term": {"color": "red"}}});
    assert_eq!(count(&s, "/a,b/_count", Some(reds.clone())), 2);
    assert_eq!((counts_of(&s, "a"), counts_of(&s, "b")), ((0, 1), (0, 1)));
    // Each index's count is its own: `a` alone is answered from what the count over both kept.
    assert_eq!(count(&s, "/a/_count", Some(reds.clone())), 1);
    assert_eq!(count(&s, "/a,b/_count", Some(reds.clone())), 2);
    assert_eq!((counts_of(&s, "a"), counts_of(&s, "b")), ((2, 1), (1, 1)));
    add_to(&s, "b", 2, "red");
    assert_eq!(count(&s, "/a,b/_count", Some(reds.clone())), 3, "b changed: counted again");
    assert_eq!((counts_of(&s, "a"), counts_of(&s, "b")), ((3, 1), (1, 2)));
    assert_eq!(count(&s, "/a/_count?q=color:blue", None), 1);
    assert_eq!(count(&s, "/a/_count?q=color:red", None), 1, "another query, another entry");

    // A search over both: kept in the first index's cache until either changes or is cleared.
    let body = json!({"size": 0, "aggs": {"c": {"terms": {"field": "color"}}}});
    let first = terms(&s, "/a,b/_search", &body);
    assert_eq!(first[0], json!({"key": "red", "doc_count": 3}), "{first}");
    let (a, b) = (counts_of(&s, "a"), counts_of(&s, "b"));
    assert_eq!(terms(&s, "/a,b/_search", &body), first);
    assert_eq!((counts_of(&s, "a"), counts_of(&s, "b")), ((a.0 + 1, a.1), b), "a hit, in a's cache");
    add_to(&s, "b", 3, "blue");
    let changed = terms(&s, "/a,b/_search", &body);
    assert_eq!(changed[1], json!({"key": "blue", "doc_count": 2}), "b changed: {changed}");
    assert_eq!(counts_of(&s, "a"), (a.0 + 1, a.1 + 1));
    assert_eq!(s.json("POST", "/b/_cache/clear", None).0, 200);
    assert_eq!(terms(&s, "/a,b/_search", &body), changed);
    assert_eq!(counts_of(&s, "a"), (a.0 + 1, a.1 + 2), "b's cache cleared: searched again");
    assert_eq!(terms(&s, "/a,b/_search", &body), changed);
    assert_eq!(counts_of(&s, "a"), (a.0 + 2, a.1 + 2));
}
