//! Scrolls: pages of one search over the snapshot taken when it started,
//! equal to the whole answer asked for at once, until cleared or expired.

use serde_json::{json, Value};

use crate::harness::TestServer;

const WORDS: [&str; 5] = ["red", "fox", "blue", "dog", "green"];

/// 57 documents with a text field (words repeating, so scores tie) and a number.
fn with_docs() -> TestServer {
    let s = TestServer::start();
    let mapping = json!({"properties": {"title": {"type": "text"}, "n": {"type": "long"}}});
    assert_eq!(s.json("PUT", "/s", Some(json!({"mappings": mapping}))).0, 200);
    let mut lines = Vec::new();
    for i in 0..57 {
        let title: Vec<&str> = (0..1 + i % 4).map(|j| WORDS[(i * 7 + j * 3) % WORDS.len()]).collect();
        lines.push(json!({"index": {"_index": "s", "_id": format!("d{i}")}}));
        lines.push(json!({"title": title.join(" "), "n": (i * 37) % 11}));
    }
    assert_eq!(s.bulk("/_bulk", &lines).1["errors"], json!(false));
    s
}

fn hits(answer: &Value) -> Vec<Value> {
    answer["hits"]["hits"].as_array().unwrap().clone()
}

/// Every page of a scroll started with `body`, concatenated, and its id.
fn scroll_all(s: &TestServer, body: Value) -> (Vec<Value>, String) {
    scroll_all_in(s, "s", body)
}

/// [`scroll_all`] over the indexes `expression` names.
fn scroll_all_in(s: &TestServer, expression: &str, body: Value) -> (Vec<Value>, String) {
    let (status, first) = s.json("POST", &format!("/{expression}/_search?scroll=1m"), Some(body));
    assert_eq!(status, 200, "{first}");
    let id = first["_scroll_id"].as_str().unwrap().to_string();
    let mut all = hits(&first);
    for _ in 0..100 {
        let (status, page) =
            s.json("POST", "/_search/scroll", Some(json!({"scroll": "1m", "scroll_id": id})));
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["_scroll_id"], json!(id));
        assert_eq!(page["hits"]["total"], first["hits"]["total"]);
        if hits(&page).is_empty() {
            return (all, id);
        }
        all.extend(hits(&page));
    }
    panic!("the scroll never ended");
}

#[test]
fn pages_are_the_whole_answer_in_order() {
    let s = with_docs();
    for body in [
        json!({"query": {"match": {"title": "red fox"}}}),
        json!({"query": {"match_all": {}}, "sort": ["_doc"]}),
        json!({"query": {"match": {"title": "dog"}}, "sort": [{"n": "desc"}]}),
    ] {
        let mut whole = body.clone();
        whole["size"] = json!(100);
        let (_, want) = s.json("POST", "/s/_search", Some(whole));
        let mut paged = body.clone();
        paged["size"] = json!(7);
        let (got, _) = scroll_all(&s, paged);
        assert!(hits(&want).len() > 7, "{body}: more than a page");
        assert_eq!(got, hits(&want), "{body}");
    }
}

/// A scroll over several indexes: every match once, in the order of the
/// whole answer asked for at once, each page counting all of them. In
/// index order (a client's scan), one index's documents after another's.
#[test]
fn a_scroll_over_several_indexes_pages_through_their_merged_answer() {
    let s = with_docs();
    let mut lines = Vec::new();
    for i in 0..20 {
        lines.push(json!({"index": {"_index": "t", "_id": format!("t{i}")}}));
        lines.push(json!({"title": WORDS[i % WORDS.len()], "n": i % 11}));
    }
    assert_eq!(s.bulk("/_bulk", &lines).1["errors"], json!(false));
    let ids =
        |hits: &[Value]| hits.iter().map(|h| (h["_index"].clone(), h["_id"].clone())).collect::<Vec<_>>();
    for (query, size) in [(json!({"match_all": {}}), 6), (json!({"match": {"title": "fox"}}), 4)] {
        let mut one_by_one = Vec::new();
        for index in ["s", "t"] {
            let body = json!({"query": query, "sort": "_doc", "size": 100});
            one_by_one.extend(hits(&s.json("POST", &format!("/{index}/_search"), Some(body)).1));
        }
        let (got, _) = scroll_all_in(&s, "s,t", json!({"query": query, "sort": "_doc", "size": size}));
        assert!(one_by_one.len() > 2 * size, "{query}: several pages");
        assert_eq!(ids(&got), ids(&one_by_one), "{query}");
    }
    // Ties on the keys (equal scores, equal numbers) across the two indexes and across pages.
    for (body, size) in [
        (json!({"query": {"match": {"title": "red fox"}}}), 5),
        (json!({"query": {"match_all": {}}, "sort": [{"n": "desc"}]}), 7),
        (json!({"query": {"match_all": {}}, "sort": [{"n": "asc"}, {"_doc": "desc"}]}), 9),
    ] {
        let mut whole = body.clone();
        whole["size"] = json!(200);
        let want = hits(&s.json("POST", "/s,t/_search", Some(whole)).1);
        let mut paged = body.clone();
        paged["size"] = json!(size);
        let (got, _) = scroll_all_in(&s, "s,t", paged);
        assert!(want.len() > 2 * size, "{body}: several pages");
        assert_eq!(ids(&got), ids(&want), "{body}");
    }
}

#[test]
fn a_scroll_reads_its_snapshot_until_cleared() {
    let s = with_docs();
    let (status, first) =
        s.json("POST", "/s/_search?scroll=30s&size=10", Some(json!({"query": {"match_all": {}}})));
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["hits"]["total"]["value"], json!(57));
    assert!(hits(&first)[0].get("sort").is_none(), "no sort asked for, none shown");
    let id = first["_scroll_id"].as_str().unwrap().to_string();
    // Writes after the start are not seen by the scroll.
    s.json("DELETE", "/s/_doc/d3", None);
    s.json("PUT", "/s/_doc/late", Some(json!({"title": "red"})));
    let mut seen: Vec<String> = hits(&first).iter().map(|h| h["_id"].as_str().unwrap().to_string()).collect();
    loop {
        let (status, page) = s.json("GET", &format!("/_search/scroll?scroll_id={id}&scroll=30s"), None);
        assert_eq!(status, 200, "{page}");
        if hits(&page).is_empty() {
            break;
        }
        seen.extend(hits(&page).iter().map(|h| h["_id"].as_str().unwrap().to_string()));
    }
    seen.sort();
    let mut want: Vec<String> = (0..57).map(|i| format!("d{i}")).collect();
    want.sort();
    assert_eq!(seen, want);

    let (status, cleared) = s.json("DELETE", "/_search/scroll", Some(json!({"scroll_id": [id]})));
    assert_eq!((status, cleared), (200, json!({"succeeded": true, "num_freed": 1})));
    let (status, gone) = s.json("POST", "/_search/scroll", Some(json!({"scroll_id": id})));
    assert_eq!(status, 404);
    assert_eq!(gone["error"]["type"], json!("search_context_missing_exception"));
    let (status, again) = s.json("DELETE", &format!("/_search/scroll/{id}"), None);
    assert_eq!((status, again["num_freed"].clone()), (404, json!(0)));
}

#[test]
fn scrolls_expire_and_clear_all() {
    let s = with_docs();
    let (_, short) = s.json("POST", "/s/_search?scroll=1ms&size=5", Some(json!({})));
    let (_, long) = s.json("POST", "/s/_search?scroll=1m&size=5", Some(json!({})));
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (status, _) = s.json("POST", "/_search/scroll", Some(json!({"scroll_id": short["_scroll_id"]})));
    assert_eq!(status, 404, "expired");
    let (status, cleared) = s.json("DELETE", "/_search/scroll/_all", None);
    assert_eq!((status, cleared["num_freed"].clone()), (200, json!(1)));
    let (status, _) = s.json("POST", "/_search/scroll", Some(json!({"scroll_id": long["_scroll_id"]})));
    assert_eq!(status, 404, "cleared");
}

#[test]
fn scroll_errors_name_the_problem() {
    let s = with_docs();
    for (path, body, want) in [
        ("/s/_search?scroll=1x", json!({}), "as a time value"),
        ("/s/_search?scroll=2d", json!({}), "too large"),
        ("/s/_search?scroll=1m", json!({"from": 5}), "[from] is not allowed in a scroll context"),
        (
            "/s/_search?scroll=1m",
            json!({"sort": ["n"], "search_after": [3]}),
            "cannot be used in a scroll context",
        ),
        ("/_search/scroll", json!({"scroll_id": 5}), "[scroll_id] must be a string"),
        ("/_search/scroll", json!({"scroll_id": "x", "size": 3}), "Unknown key"),
    ] {
        let (status, answer) = s.json("POST", path, Some(body.clone()));
        assert_eq!(status, 400, "{path} {body}: {answer}");
        assert!(answer["error"]["reason"].as_str().unwrap().contains(want), "{path} {body}: {answer}");
    }
}
