//! `_stats`: what each index holds and what it was asked to do, summed under `_all`.

use serde_json::{json, Value};

use crate::harness::TestServer;

#[test]
fn stats_count_what_each_index_holds_and_was_asked() {
    let s = TestServer::start();
    let mut lines = Vec::new();
    for i in 0..5 {
        lines.push(json!({"index": {"_index": "a", "_id": i.to_string()}}));
        lines.push(json!({"title": format!("red fox {i}")}));
    }
    lines.push(json!({"index": {"_index": "a", "_id": "bad"}}));
    lines.push(json!("not an object"));
    lines.push(json!({"index": {"_index": "b", "_id": "x"}}));
    lines.push(json!({"title": "blue"}));
    let (status, bulk) = s.bulk("/_bulk", &lines);
    assert_eq!((status, &bulk["errors"]), (200, &json!(true)), "{bulk}");
    assert_eq!(s.json("DELETE", "/a/_doc/4", None).0, 200);
    for _ in 0..2 {
        assert_eq!(s.json("POST", "/a/_search", Some(json!({"query": {"match": {"title": "fox"}}}))).0, 200);
    }
    assert_eq!(s.json("POST", "/a/_count", None).0, 200);
    let (_, scroll) = s.json("POST", "/a/_search?scroll=1m&size=2", None);
    let (status, _) = s.json("POST", "/_search/scroll", Some(json!({"scroll_id": scroll["_scroll_id"]})));
    assert_eq!(status, 200);
    for maintenance in ["/a/_refresh", "/a/_flush", "/a/_forcemerge"] {
        assert_eq!(s.json("POST", maintenance, None).0, 200, "{maintenance}");
    }

    let (status, stats) = s.json("GET", "/a/_stats", None);
    assert_eq!(status, 200, "{stats}");
    let a = &stats["indices"]["a"]["primaries"];
    // One segment already: the force merge leaves it, deleted document and all.
    assert_eq!(a["docs"], json!({"count": 4, "deleted": 1}));
    assert!(a["store"]["size_in_bytes"].as_u64().unwrap() > 0, "{a}");
    let indexing = &a["indexing"];
    assert_eq!(
        (&indexing["index_total"], &indexing["index_failed"], &indexing["delete_total"]),
        (&json!(5), &json!(1), &json!(1)),
        "{indexing}"
    );
    let search = &a["search"];
    assert_eq!(
        (&search["query_total"], &search["scroll_total"], &search["open_contexts"]),
        (&json!(4), &json!(1), &json!(1)),
        "two searches, a count and a scroll's first page; {search}"
    );
    assert_eq!(
        (&a["refresh"]["total"], &a["flush"]["total"], &a["merges"]["total"]),
        (&json!(1), &json!(1), &json!(1))
    );
    assert_eq!(a["segments"]["count"], json!(1), "merged to one");
    assert_eq!(a["needle"]["segments_on_disk"], json!(1));
    assert_eq!(stats["indices"]["a"]["total"], *a, "no replicas");
    assert_eq!(stats["_shards"], json!({"total": 1, "successful": 1, "failed": 0}));

    // Chosen sections only, every index summed under `_all`.
    let (status, some) = s.json("GET", "/_stats/docs,indexing", None);
    assert_eq!(status, 200, "{some}");
    let sections: Vec<&String> = some["indices"]["b"]["primaries"].as_object().unwrap().keys().collect();
    assert_eq!(sections, ["docs", "indexing"]);
    assert_eq!(some["_all"]["primaries"]["docs"]["count"], json!(5));
    assert_eq!(some["_all"]["total"]["indexing"]["index_total"], json!(6));

    let (status, bad) = s.json("GET", "/a/_stats/bogus", None);
    assert_eq!(status, 400);
    assert!(bad["error"]["reason"].as_str().unwrap().contains("unrecognized metric: [bogus]"), "{bad}");
    let (status, _): (u16, Value) = s.json("GET", "/nope/_stats", None);
    assert_eq!(status, 404);
}
