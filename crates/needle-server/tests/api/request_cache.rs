//! The request cache: a search asking for no hits is answered from it the
//! second time, never once the index has changed, and not at all where the
//! request or the index turns it off.

use serde_json::{json, Value};

use crate::harness::TestServer;

fn cache_counts(s: &TestServer) -> (u64, u64) {
    let (_, stats) = s.json("GET", "/a/_stats/request_cache", None);
    let cache = &stats["indices"]["a"]["primaries"]["request_cache"];
    (cache["hit_count"].as_u64().unwrap(), cache["miss_count"].as_u64().unwrap())
}

fn add(s: &TestServer, id: u32, color: &str) {
    let doc = json!({"color": color, "n": id, "d": "2020-01-01"});
    let (status, answer) = s.json("PUT", &format!("/a/_doc/{id}?refresh=true"), Some(doc));
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
    let mapping = json!({"mappings": {"properties": {"color": {"type": "keyword"}, "n": {"type": "long"}, "d": {"type": "date"}}}});
    assert_eq!(s.json("PUT", "/a", Some(mapping)).0, 200);
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
    let bad = json!({"index": {"requests.cache.enable": "maybe"}});
    assert_eq!(s.json("PUT", "/a/_settings", Some(bad)).0, 400);
}
