//! An index whose shards are on three nodes of a cluster answers as one
//! index holding every document would: the same hits with the same scores,
//! totals, counts and sort values as a one-node reference server given the same
//! documents, whichever node the requests reach; its documents are written
//! (one by one and in `_bulk`), read (one by one and in `_mget`), updated and
//! deleted through any node;
//! with a node killed, its shard's documents fail alone; what is not
//! coordinated yet is a 400 naming it; a deleted index is gone from every node.

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::process::Child;

use needle_testkit::etcd::EtcdProcess;
use needle_testkit::http::send;
use needle_testkit::random;
use rand::rngs::StdRng;
use rand::Rng;
use serde_json::{json, Value};

/// The servers a test started, killed when it ends, passed or not.
struct Servers(Vec<Child>);

impl Drop for Servers {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

const MAPPINGS: &str = r#"{"mappings": {"properties": {"title": {"type": "text"},
    "body": {"type": "text"}, "tag": {"type": "keyword"}, "n": {"type": "integer"}, "seq": {"type": "long"}}}}"#;

fn put(at: SocketAddr, path: &str, body: &Value) -> Value {
    let reply = send(at, "PUT", path, Some(body.to_string().as_bytes()), &[]);
    assert!(reply.status < 300, "PUT {path}: {}", reply.text());
    reply.json()
}

fn post(at: SocketAddr, path: &str, body: &Value) -> (u16, Value) {
    let reply = send(at, "POST", path, Some(body.to_string().as_bytes()), &[]);
    (reply.status, reply.json())
}

/// A query of the kinds a search sends: matches, phrases, bool with a keyword filter.
fn query(rng: &mut StdRng) -> Value {
    let field = ["title", "body"][rng.gen_range(0..2)];
    let words = |rng: &mut StdRng, n: usize| (0..n).map(|_| random::word(rng)).collect::<Vec<_>>().join(" ");
    let length = rng.gen_range(1..4);
    match rng.gen_range(0..4) {
        0 => json!({"match": {field: words(rng, length)}}),
        1 => json!({"match_phrase": {field: words(rng, 2)}}),
        2 => json!({"bool": {"must": [{"match": {field: words(rng, 1)}}],
                             "should": [{"match": {"title": words(rng, 2)}}]}}),
        _ => json!({"bool": {"must": [{"match": {field: words(rng, 2)}}],
                             "filter": [{"term": {"tag": random::WORDS[rng.gen_range(0..6)]}}]}}),
    }
}

/// Every hit as (score, id), best first, ties by id: the order both servers agree on.
/// The `_id`s of an answer's hits, in order.
fn ids_of(answer: &Value) -> Vec<String> {
    let hits = answer["hits"]["hits"].as_array().cloned().unwrap_or_default();
    hits.iter().map(|h| h["_id"].as_str().unwrap().to_string()).collect()
}

fn ranked(answer: &Value) -> Vec<(f64, String)> {
    let hits = answer["hits"]["hits"].as_array().unwrap_or_else(|| panic!("no hits: {answer}"));
    let mut out: Vec<(f64, String)> = hits
        .iter()
        .map(|h| (h["_score"].as_f64().unwrap(), h["_id"].as_str().unwrap().to_string()))
        .collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    out
}

/// Nodes `ids` of a cluster on `etcd`, with `args` added, each in its own
/// folder under `dir`; returned once every node sees them all, so shards
/// are placed on every one.
fn start_cluster(etcd: &EtcdProcess, dir: &Path, ids: &[&str], args: &[&str]) -> (Servers, Vec<SocketAddr>) {
    let cluster = format!("etcd={}", etcd.url);
    let name = format!("{}-{}", ids[0], std::process::id());
    let mut servers = Servers(Vec::new());
    let mut at: Vec<SocketAddr> = Vec::new();
    for id in ids {
        let mut all = vec!["--cluster", &cluster, "--cluster-name", &name, "--node-id", id];
        all.extend(args);
        let (child, addr) = common::serve(&dir.join(id), &all);
        servers.0.push(child);
        at.push(addr);
    }
    // The key, when the nodes want one: the health check passes with it.
    let key = args.iter().position(|a| *a == "--api-key").map(|i| format!("ApiKey {}", args[i + 1]));
    let headers: Vec<(&str, &str)> = key.iter().map(|k| ("authorization", k.as_str())).collect();
    for node in &at {
        let started = std::time::Instant::now();
        while send(*node, "GET", "/_cluster/health", None, &headers).json()["number_of_nodes"] != ids.len() {
            assert!(started.elapsed().as_secs() < 20, "{node} does not see {} nodes", ids.len());
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
    (servers, at)
}

#[test]
fn a_sharded_index_answers_as_one_index_would() {
    let Some(etcd) = EtcdProcess::start("cluster index test") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (mut servers, at) = start_cluster(&etcd, dir.path(), &["n1", "n2", "n3"], &[]);
    let (reference, one) = common::serve(&dir.path().join("reference"), &[]);
    servers.0.push(reference);

    let mut with_shards: Value = serde_json::from_str(MAPPINGS).unwrap();
    with_shards["settings"] = json!({"number_of_shards": 3});
    assert_eq!(put(at[0], "/docs", &with_shards)["acknowledged"], true);
    put(one, "/docs", &serde_json::from_str(MAPPINGS).unwrap());
    let again = send(at[1], "PUT", "/docs", Some(b"{}"), &[]);
    assert_eq!(again.status, 400);
    assert_eq!(again.json()["error"]["type"], "resource_already_exists_exception");

    // Documents written through every node, one shard each by id; half of them in one `_bulk`.
    let mut rng = random::rng(19);
    let n = 240;
    let mut lines = String::new();
    for i in 0..n {
        let mut doc = random::document(&mut rng, i);
        if i % 11 != 0 {
            doc["n"] = json!((i * 7) % 50);
        }
        doc["seq"] = json!(i);
        if i % 2 == 0 {
            put(at[i % 3], &format!("/docs/_doc/{i}"), &doc);
            put(one, &format!("/docs/_doc/{i}"), &doc);
        } else {
            lines.push_str(&format!("{}\n{doc}\n", json!({"index": {"_id": i.to_string()}})));
        }
    }
    for server in [at[1], one] {
        let reply = send(server, "POST", "/docs/_bulk", Some(lines.as_bytes()), &[]).json();
        assert_eq!(reply["errors"], false, "{reply}");
        let ids: Vec<&str> =
            reply["items"].as_array().unwrap().iter().map(|i| i["index"]["_id"].as_str().unwrap()).collect();
        let sent: Vec<String> = (1..n).step_by(2).map(|i| i.to_string()).collect();
        assert_eq!(ids, sent, "items in the request's order");
        assert_eq!(reply["items"][0]["index"]["_index"], "docs");
    }
    let refreshed = post(at[2], "/docs/_refresh", &json!({}));
    assert_eq!(refreshed.1["_shards"]["successful"], 3, "{refreshed:?}");
    post(one, "/docs/_refresh", &json!({}));
    // `_cat` lists the cluster's index and its shards, one on each node, from any node.
    let listed = send(at[1], "GET", "/_cat/indices?format=json", None, &[]).json();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    let row = &listed[0];
    assert_eq!((&row["index"], &row["pri"], &row["health"]), (&json!("docs"), &json!("3"), &json!("green")));
    assert_eq!(row["docs.count"], json!(n.to_string()));
    let rows = send(at[2], "GET", "/_cat/shards/docs?format=json", None, &[]).json();
    let rows = rows.as_array().unwrap();
    let counts: Vec<u64> = rows.iter().map(|r| r["docs"].as_str().unwrap().parse().unwrap()).collect();
    assert_eq!(counts.iter().sum::<u64>(), n as u64, "{rows:?}");
    assert!(counts.iter().all(|&c| c > 40), "every node holds a shard's share: {rows:?}");
    let mut nodes: Vec<&str> = rows.iter().map(|r| r["node"].as_str().unwrap()).collect();
    nodes.sort_unstable();
    assert_eq!(nodes, ["n1", "n2", "n3"]);
    assert_eq!(send(at[0], "GET", "/_cat/indices/nothing", None, &[]).status, 404);
    // `_stats`: every shard's figures summed, as one index's.
    let stats = send(at[2], "GET", "/docs/_stats/docs,store", None, &[]).json();
    let whole = send(one, "GET", "/docs/_stats/docs,store", None, &[]).json();
    for path in ["/_all/primaries/docs/count", "/indices/docs/primaries/docs/count", "/_shards/successful"] {
        let got = stats.pointer(path).unwrap_or_else(|| panic!("{path} in {stats}"));
        assert_eq!(got.as_u64().unwrap(), if path.starts_with("/_shards") { 3 } else { n as u64 }, "{path}");
    }
    assert!(
        whole.pointer("/_all/primaries/store/size_in_bytes").is_some()
            && stats.pointer("/_all/primaries/store/size_in_bytes").is_some()
    );

    for q in 0..40 {
        let query = query(&mut rng);
        let all = json!({"query": query, "size": n});
        let node = at[q % 3];
        let (status, cluster) = post(node, "/docs/_search", &all);
        assert_eq!(status, 200, "{query}: {cluster}");
        let (_, reference) = post(one, "/docs/_search", &all);
        assert_eq!(cluster["hits"]["total"], reference["hits"]["total"], "{query}");
        assert_eq!(cluster["_shards"]["successful"], 3);
        let expected = ranked(&reference);
        assert_eq!(ranked(&cluster), expected, "{query}");
        assert_eq!(cluster["hits"]["max_score"], reference["hits"]["max_score"], "{query}");
        // A total counted up to a bound, as one index bounds it.
        let bounded = json!({"query": query, "size": 0, "track_total_hits": 40});
        let (_, cluster_total) = post(at[(q + 2) % 3], "/docs/_search", &bounded);
        let (_, reference_total) = post(one, "/docs/_search", &bounded);
        assert_eq!(cluster_total["hits"]["total"], reference_total["hits"]["total"], "{query}");
        // A page is the same stretch of the merged list, from any node.
        let (_, page) = post(at[(q + 1) % 3], "/docs/_search?from=3&size=5", &json!({"query": query}));
        let (_, whole) = post(at[(q + 2) % 3], "/docs/_search", &json!({"query": query, "size": 8}));
        assert_eq!(
            page["hits"]["hits"].as_array().unwrap()[..],
            whole["hits"]["hits"].as_array().unwrap()[3.min(expected.len())..]
        );
        let scores: Vec<f64> =
            page["hits"]["hits"].as_array().unwrap().iter().map(|h| h["_score"].as_f64().unwrap()).collect();
        let expected_scores: Vec<f64> = expected.iter().skip(3).take(5).map(|h| h.0).collect();
        assert_eq!(scores, expected_scores, "{query}");
        // Sorted by field values: the same values in the same order, the same documents.
        let keys = [
            json!([{"tag": "asc"}, {"n": "desc"}]),
            json!({"n": {"order": "asc", "missing": "_first"}}),
            json!([{"tag": {"order": "desc", "missing": "_first"}}, "_score"]),
        ][q % 3]
            .clone();
        let sorted = json!({"query": query, "size": n, "sort": keys});
        let (status, cluster) = post(node, "/docs/_search", &sorted);
        assert_eq!(status, 200, "{cluster}");
        let (_, reference) = post(one, "/docs/_search", &sorted);
        let values = |a: &Value| {
            a["hits"]["hits"].as_array().unwrap().iter().map(|h| h["sort"].clone()).collect::<Vec<_>>()
        };
        assert_eq!(values(&cluster), values(&reference), "{sorted}");
        let ids = |a: &Value| {
            let mut ids = ids_of(a);
            ids.sort();
            ids
        };
        assert_eq!(ids(&cluster), ids(&reference), "{sorted}");
        let paged = json!({"query": query, "from": 3, "size": 5, "sort": keys});
        let (_, page) = post(at[(q + 1) % 3], "/docs/_search", &paged);
        assert_eq!(
            values(&page)[..],
            values(&reference)[3.min(expected.len())..(3 + 5).min(expected.len())],
            "{paged}"
        );

        // Aggregations: merged from every shard, answered as one index answers them.
        let aggs = json!({
            "tags": {"terms": {"field": "tag", "size": 4}, "aggs": {"n": {"stats": {"field": "n"}}}},
            "spread": {"histogram": {"field": "n", "interval": 10}, "aggs": {"tags": {"cardinality": {"field": "tag"}}}},
            "mean": {"avg": {"field": "n"}},
            "low": {"range": {"field": "n", "ranges": [{"to": 10}, {"from": 10, "to": 30}, {"from": 30}]}},
            "numbers": {"terms": {"field": "n", "size": 3, "order": {"_key": "desc"}}}
        });
        let aggregated = json!({"query": query, "size": 2, "aggs": aggs});
        let (status, cluster) = post(node, "/docs/_search", &aggregated);
        assert_eq!(status, 200, "{cluster}");
        let (_, reference) = post(one, "/docs/_search", &aggregated);
        assert_eq!(cluster["aggregations"], reference["aggregations"], "{query}");
        assert_eq!(cluster["hits"]["total"], reference["hits"]["total"], "{query}");

        // Paged with search_after on keys that tell every document apart.
        let keys = json!([{"n": "desc"}, {"seq": "asc"}]);
        let (_, reference) = post(one, "/docs/_search", &json!({"query": query, "size": n, "sort": keys}));
        let mut paged = Vec::new();
        let mut after: Option<Value> = None;
        loop {
            let mut page = json!({"query": query, "size": 7, "sort": keys});
            if let Some(after) = &after {
                page["search_after"] = after.clone();
            }
            let (status, got) = post(at[(q + paged.len()) % 3], "/docs/_search", &page);
            assert_eq!(status, 200, "{got}");
            let hits = got["hits"]["hits"].as_array().unwrap().clone();
            let Some(last) = hits.last() else { break };
            after = Some(last["sort"].clone());
            paged.extend(hits.iter().map(|h| h["_id"].clone()));
        }
        let want: Vec<Value> =
            reference["hits"]["hits"].as_array().unwrap().iter().map(|h| h["_id"].clone()).collect();
        assert_eq!(paged, want, "{query}");

        let (_, counted) = post(node, "/docs/_count", &json!({"query": query}));
        let (_, counted_one) = post(one, "/docs/_count", &json!({"query": query}));
        assert_eq!(counted["count"], counted_one["count"], "{query}");
    }

    several_indexes(&at, one, &mut rng);

    // `_mget` of documents on every shard, in the order asked, as one node answers it.
    let wanted = json!({"docs": [{"_id": "5"}, {"_id": "12", "_source": ["title"]}, {"_id": "nope"},
                                 {"_index": "missing", "_id": "1"}, {"_id": "200"}], "ids": ["33", "34"]});
    // Sequence numbers count each shard's writes: the rest is the same.
    let without_seq_no = |mut answer: Value| {
        answer["docs"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .for_each(|d| drop(d.as_object_mut().unwrap().remove("_seq_no")));
        answer
    };
    let (status, got) = post(at[1], "/docs/_mget", &wanted);
    assert_eq!(status, 200, "{got}");
    let (_, expected) = post(one, "/docs/_mget", &wanted);
    assert_eq!(without_seq_no(got), without_seq_no(expected));
    let (status, refused) = post(at[0], "/docs/_mget", &json!({"docs": [{"_id": "1", "colour": "red"}]}));
    assert_eq!((status, refused["error"]["type"].clone()), (400, json!("parsing_exception")), "{refused}");

    // A query string in the URL, as one node reads it.
    for q in ["title:needle", "body:(quick OR fox) AND tag:the", "n:[10 TO 20]"] {
        let path = format!("/docs/_search?size=50&q={}", q.replace(' ', "%20"));
        let (status, cluster) = post(at[1], &path, &json!({}));
        assert_eq!(status, 200, "{cluster}");
        let (_, reference) = post(one, &path, &json!({}));
        assert_eq!(ranked(&cluster), ranked(&reference), "{q}");
    }

    // A scroll, continued through every node in turn: every matching document
    // once, pages of at most `size`, the total of one index; then cleared.
    for (query, sort) in
        [(json!({"match_all": {}}), json!(["seq"])), (json!({"match": {"body": "fox quick"}}), Value::Null)]
    {
        let mut body = json!({"query": query, "size": 7});
        if !sort.is_null() {
            body["sort"] = sort.clone();
        }
        let (status, mut page) = post(at[0], "/docs/_search?scroll=1m", &body);
        assert_eq!(status, 200, "{page}");
        let (_, reference) = post(one, "/docs/_search", &json!({"query": query, "size": 1000}));
        assert_eq!(page["hits"]["total"], reference["hits"]["total"], "{query}");
        let mut want: Vec<String> = ids_of(&reference);
        let mut seen = Vec::new();
        for turn in 1.. {
            let hits = page["hits"]["hits"].as_array().unwrap().clone();
            assert!(hits.len() <= 7, "a page of {}", hits.len());
            if hits.is_empty() {
                break;
            }
            assert!(hits.iter().all(|h| h["_index"] == "docs"));
            if !sort.is_null() {
                let seqs: Vec<u64> = hits.iter().map(|h| h["sort"][0].as_u64().unwrap()).collect();
                assert!(seqs.windows(2).all(|w| w[0] < w[1]), "a page in the sort's order: {seqs:?}");
            }
            seen.extend(ids_of(&page));
            let id = page["_scroll_id"].clone();
            let next = post(at[turn % 3], "/_search/scroll", &json!({"scroll": "1m", "scroll_id": id}));
            assert_eq!(next.0, 200, "{}", next.1);
            page = next.1;
            assert!(turn < 200, "the scroll never ended");
        }
        seen.sort();
        want.sort();
        assert_eq!(seen, want, "{query}");
        let id = page["_scroll_id"].clone();
        let cleared = send(
            at[1],
            "DELETE",
            "/_search/scroll",
            Some(json!({"scroll_id": id}).to_string().as_bytes()),
            &[],
        );
        // Every shard's scroll was freed as it ran out.
        assert_eq!((cleared.status, cleared.json()["num_freed"].clone()), (404, json!(0)));
    }
    // Aggregations in a scroll: on its first page only, as one index answers them.
    let aggs = json!({"tags": {"terms": {"field": "tag"}}, "mean": {"avg": {"field": "n"}}});
    let body = json!({"query": {"match_all": {}}, "size": 5, "aggs": aggs});
    let (status, first) = post(at[1], "/docs/_search?scroll=1m", &body);
    assert_eq!(status, 200, "{first}");
    let (_, reference) = post(one, "/docs/_search", &body);
    assert!(reference["aggregations"]["tags"]["buckets"].as_array().is_some_and(|b| !b.is_empty()));
    assert_eq!(first["aggregations"], reference["aggregations"]);
    let (status, second) =
        post(at[2], "/_search/scroll", &json!({"scroll": "1m", "scroll_id": first["_scroll_id"]}));
    assert_eq!(status, 200, "{second}");
    assert!(second["hits"]["hits"].as_array().is_some_and(|h| !h.is_empty()), "{second}");
    assert!(second.get("aggregations").is_none(), "{second}");
    let cleared = json!({"scroll_id": second["_scroll_id"]}).to_string();
    assert_eq!(send(at[0], "DELETE", "/_search/scroll", Some(cleared.as_bytes()), &[]).status, 200);
    // A scroll cleared early is gone on every node.
    let (_, page) = post(at[2], "/docs/_search?scroll=1m", &json!({"size": 5}));
    let id = page["_scroll_id"].as_str().unwrap().to_string();
    let cleared = send(at[0], "DELETE", &format!("/_search/scroll/{id}"), None, &[]).json();
    assert_eq!(cleared["num_freed"], 3, "{cleared}");
    let (status, gone) = post(at[1], "/_search/scroll", &json!({"scroll_id": id}));
    assert_eq!(status, 404, "{gone}");
    let (status, refused) = post(at[0], "/docs/_search?scroll=1m", &json!({"from": 3}));
    assert_eq!(status, 400, "{refused}");

    // Sorted by `_doc` (alone, or after a field): hits go shard by shard, and
    // pages by `search_after` through any node give the whole list, each hit once.
    for sort in [json!(["_doc"]), json!([{"tag": "asc"}, "_doc"]), json!([{"tag": "desc"}, {"_doc": "desc"}])]
    {
        let (status, whole) = post(at[0], "/docs/_search", &json!({"sort": sort, "size": n}));
        assert_eq!(status, 200, "{whole}");
        let all = ids_of(&whole);
        let mut sorted = all.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), n, "every document once: {sort}");
        let mut paged = Vec::new();
        let mut after: Option<Value> = None;
        for turn in 0.. {
            let mut body = json!({"sort": sort, "size": 17});
            if let Some(after) = &after {
                body["search_after"] = after.clone();
            }
            let (status, page) = post(at[turn % 3], "/docs/_search", &body);
            assert_eq!(status, 200, "{page}");
            let hits = page["hits"]["hits"].as_array().unwrap();
            if hits.is_empty() {
                break;
            }
            paged.extend(ids_of(&page));
            after = Some(hits.last().unwrap()["sort"].clone());
            assert!(turn < 100);
        }
        assert_eq!(paged, all, "{sort}");
    }

    // A document through any node: read, updated, deleted.
    let got = send(at[2], "GET", "/docs/_doc/7", None, &[]).json();
    assert_eq!((got["found"].clone(), got["_index"].clone()), (json!(true), json!("docs")));
    let (status, _) = post(at[0], "/docs/_update/7", &json!({"doc": {"tag": "renamed"}}));
    assert_eq!(status, 200);
    assert_eq!(send(at[1], "GET", "/docs/_source/7", None, &[]).json()["tag"], "renamed");
    assert_eq!(send(at[1], "DELETE", "/docs/_doc/7", None, &[]).status, 200);
    assert_eq!(send(at[0], "GET", "/docs/_doc/7", None, &[]).status, 404);
    let (status, made) = post(at[1], "/docs/_doc?refresh=true", &json!({"title": "quick brown fox"}));
    assert_eq!(status, 201, "{made}");
    let id = made["_id"].as_str().unwrap();
    assert_eq!(send(at[2], "GET", &format!("/docs/_doc/{id}"), None, &[]).json()["found"], true);
    post(at[0], "/docs/_refresh", &json!({}));
    assert_eq!(post(at[1], "/docs/_count", &json!({})).1["count"], n);

    // Deleted by query through any node: each shard deletes its own matches,
    // as many as one index holding every document deletes.
    let low = json!({"query": {"range": {"n": {"lt": 10}}}});
    let (status, cluster) = post(at[2], "/docs/_delete_by_query?refresh=true", &low);
    assert_eq!(status, 200, "{cluster}");
    let (_, reference) = post(one, "/docs/_delete_by_query?refresh=true", &low);
    assert!(cluster["deleted"].as_u64().unwrap() > 0, "{cluster}");
    assert_eq!((&cluster["deleted"], &cluster["total"]), (&reference["deleted"], &reference["total"]));
    assert_eq!(cluster["failures"], json!([]));
    let count = |server| post(server, "/docs/_count", &json!({})).1["count"].clone();
    assert_eq!(count(at[0]), count(one));
    assert_eq!(post(at[1], "/docs/_count", &low).1["count"], 0);
    let (status, refused) = post(at[0], "/docs/_delete_by_query", &json!({}));
    assert_eq!((status, &refused["error"]["type"]), (400, &json!("action_request_validation_exception")));
    let (status, refused) = post(at[0], "/docs/_delete_by_query?max_docs=2", &low);
    assert_eq!(status, 400, "{refused}");
    assert!(refused.to_string().contains("[max_docs] not supported yet"), "{refused}");

    // Not coordinated yet: a 400 naming it; the index's mapping through any node.
    let top = json!({"aggs": {"tags": {"terms": {"field": "tag"}, "aggs": {"best": {"top_hits": {}}}}}});
    let (status, refused) = post(at[0], "/docs/_search", &top);
    assert_eq!(status, 400, "{refused}");
    assert!(refused.to_string().contains("[top_hits] over several"), "{refused}");
    let mapping = send(at[2], "GET", "/docs/_mapping", None, &[]).json();
    assert_eq!(mapping["docs"]["mappings"]["properties"]["tag"]["type"], "keyword", "{mapping}");

    // A write to a missing index makes a cluster index of it, one by `_bulk` too; in a
    // `_bulk`, a delete from a missing index fails its item alone; a malformed line fails all.
    put(at[1], "/auto/_doc/a?refresh=true", &json!({"title": "made by a write"}));
    assert_eq!(post(at[2], "/auto/_count", &json!({})).1["count"], 1);
    let mixed = concat!(
        "{\"create\": {\"_index\": \"docs\"}}\n{\"title\": \"no id given\"}\n",
        "{\"delete\": {\"_index\": \"missing\", \"_id\": \"1\"}}\n",
        "{\"index\": {\"_index\": \"auto\", \"_id\": \"b\"}}\n{\"title\": \"second\"}\n",
        "{\"index\": {\"_index\": \"bulked\", \"_id\": \"c\"}}\n{\"title\": \"third\"}\n"
    );
    let reply = send(at[0], "POST", "/_bulk?refresh=true", Some(mixed.as_bytes()), &[]).json();
    assert_eq!(reply["errors"], true, "{reply}");
    assert_eq!(reply["items"][0]["create"]["status"], 201, "{reply}");
    assert_eq!(reply["items"][1]["delete"]["status"], 404, "{reply}");
    assert_eq!(reply["items"][1]["delete"]["error"]["type"], "index_not_found_exception");
    assert_eq!(reply["items"][2]["index"]["_index"], "auto");
    assert_eq!(post(at[1], "/bulked/_count", &json!({})).1["count"], 1);
    let drawn = reply["items"][0]["create"]["_id"].as_str().unwrap();
    assert_eq!(send(at[2], "GET", &format!("/docs/_doc/{drawn}"), None, &[]).json()["found"], true);
    assert_eq!(post(at[2], "/auto/_count", &json!({})).1["count"], 2);
    let malformed = send(at[2], "POST", "/auto/_bulk", Some(b"{\"index\": {}}\n{\"t\": 1}\n[1]\n"), &[]);
    assert_eq!(malformed.status, 400, "{}", malformed.text());
    assert_eq!(post(at[2], "/auto/_count", &json!({})).1["count"], 2);

    // A node killed: its shard's documents are unavailable, the other shards answer.
    let total = post(at[0], "/docs/_count", &json!({})).1["count"].as_u64().unwrap();
    let _ = servers.0[2].kill();
    let _ = servers.0[2].wait();
    let row = &send(at[0], "GET", "/_cat/indices/docs?format=json", None, &[]).json()[0];
    assert_eq!(row["health"], "red", "{row}");
    let states = send(at[1], "GET", "/_cat/shards/docs?h=state", None, &[]).text();
    assert_eq!((states.matches("STARTED").count(), states.matches("UNASSIGNED").count()), (2, 1), "{states}");
    let (status, partial) = post(at[0], "/docs/_search", &json!({"size": 0}));
    assert_eq!(status, 200, "{partial}");
    assert_eq!(partial["_shards"]["failed"], 1, "{partial}");
    assert_eq!(partial["_shards"]["failures"][0]["reason"]["type"], "unavailable_shards_exception");
    let answered = partial["hits"]["total"]["value"].as_u64().unwrap();
    assert!(answered > 0 && answered < total, "{answered} of {total}");
    let statuses: Vec<u16> =
        (0..30).map(|i| send(at[1], "GET", &format!("/docs/_doc/{i}"), None, &[]).status).collect();
    assert!(statuses.contains(&503) && statuses.iter().all(|s| [200, 404, 503].contains(s)), "{statuses:?}");
    let lines: String = (0..12)
        .map(|i| format!("{{\"index\": {{\"_id\": \"late-{i}\"}}}}\n{{\"title\": \"late\"}}\n"))
        .collect();
    let reply = send(at[1], "POST", "/docs/_bulk", Some(lines.as_bytes()), &[]).json();
    let statuses: Vec<u64> =
        reply["items"].as_array().unwrap().iter().map(|i| i["index"]["status"].as_u64().unwrap()).collect();
    assert_eq!(reply["errors"], true);
    assert!(statuses.contains(&201) && statuses.contains(&503), "{statuses:?}");

    // Deleted through one node, the index is gone from every live node at once.
    assert_eq!(send(at[0], "DELETE", "/docs", None, &[]).status, 200);
    for node in &at[..2] {
        let gone = send(*node, "GET", "/docs/_search", None, &[]);
        assert_eq!(gone.status, 404, "{}", gone.text());
        assert_eq!(gone.json()["error"]["type"], "index_not_found_exception");
    }
}

/// Searches over several indexes (`docs` and a second, `more`, of two
/// shards), named by a list, a wildcard or none: the hits, scores and totals
/// of the reference server given the same indexes, each index scored with its
/// own statistics, or all with theirs summed (`dfs_query_then_fetch`); a
/// scroll over both, through every node; a name that names nothing is a 404,
/// a wildcard matching nothing an empty answer.
fn several_indexes(at: &[SocketAddr], one: SocketAddr, rng: &mut StdRng) {
    let mut with_shards: Value = serde_json::from_str(MAPPINGS).unwrap();
    with_shards["settings"] = json!({"number_of_shards": 2});
    put(at[2], "/more", &with_shards);
    put(one, "/more", &serde_json::from_str(MAPPINGS).unwrap());
    for i in 0..60 {
        let doc = random::document(rng, 1000 + i);
        put(at[i % 3], &format!("/more/_doc/m{i}"), &doc);
        put(one, &format!("/more/_doc/m{i}"), &doc);
    }
    post(at[0], "/more/_refresh", &json!({}));
    post(one, "/more/_refresh", &json!({}));
    let by_index = |answer: &Value| {
        let hits = answer["hits"]["hits"].as_array().unwrap_or_else(|| panic!("no hits: {answer}"));
        let mut out: Vec<(String, String, String)> = hits
            .iter()
            .map(|h| {
                let (index, id) = (h["_index"].as_str().unwrap(), h["_id"].as_str().unwrap());
                (format!("{:.6}", h["_score"].as_f64().unwrap_or(0.0)), index.to_string(), id.to_string())
            })
            .collect();
        out.sort();
        out
    };
    for q in 0..12 {
        let body = json!({"query": query(rng), "size": 400});
        let path =
            ["/docs,more/_search", "/_search", "/mo*,docs/_search?search_type=dfs_query_then_fetch"][q % 3];
        let (status, cluster) = post(at[q % 3], path, &body);
        assert_eq!(status, 200, "{path}: {cluster}");
        let (_, reference) = post(one, path, &body);
        assert_eq!(cluster["_shards"]["total"], 5, "{path}: {cluster}");
        assert_eq!(cluster["hits"]["total"], reference["hits"]["total"], "{path} {body}");
        assert_eq!(by_index(&cluster), by_index(&reference), "{path} {body}");
        let count =
            |server| post(server, "/more,docs/_count", &json!({"query": body["query"]})).1["count"].clone();
        assert_eq!(count(at[(q + 1) % 3]), count(one), "{body}");
    }
    let (status, both) = post(at[1], "/_all/_search", &json!({"size": 0}));
    assert_eq!((status, both["hits"]["total"]["value"].as_u64()), (200, Some(300)), "{both}");
    // A scroll over both indexes, continued through every node: each document once.
    let (status, mut page) = post(at[0], "/docs,more/_search?scroll=1m", &json!({"size": 9}));
    assert_eq!(status, 200, "{page}");
    let mut seen = Vec::new();
    for turn in 1..100 {
        let hits = page["hits"]["hits"].as_array().unwrap().clone();
        if hits.is_empty() {
            break;
        }
        seen.extend(
            hits.iter().map(|h| format!("{}/{}", h["_index"].as_str().unwrap(), h["_id"].as_str().unwrap())),
        );
        page =
            post(at[turn % 3], "/_search/scroll", &json!({"scroll": "1m", "scroll_id": page["_scroll_id"]}))
                .1;
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 300, "every document of both indexes once");
    assert_eq!(seen.iter().filter(|s| s.starts_with("more/")).count(), 60);
    // What names nothing.
    let (status, none) = post(at[1], "/nothing*/_search", &json!({}));
    assert_eq!((status, none["hits"]["total"]["value"].as_u64()), (200, Some(0)), "{none}");
    let (status, missing) = post(at[2], "/docs,nothing/_search", &json!({}));
    assert_eq!(
        (status, missing["error"]["type"].as_str()),
        (404, Some("index_not_found_exception")),
        "{missing}"
    );
    // `_msearch`: each search as `_search` answers it, one failing alone.
    let searches = [
        json!({"index": "docs,more"}),
        json!({"query": query(rng), "size": 50}),
        json!({}),
        json!({"query": query(rng), "size": 50}),
        json!({"index": ["more"], "search_type": "dfs_query_then_fetch"}),
        json!({"query": query(rng), "size": 50, "aggs": {"tags": {"terms": {"field": "tag"}}}}),
        json!({"index": "nothing"}),
        json!({}),
    ];
    let ndjson: String = searches.iter().map(|line| format!("{line}\n")).collect();
    let msearch = |server: SocketAddr, path: &str| {
        let reply = send(server, "POST", path, Some(ndjson.as_bytes()), &[]);
        assert_eq!(reply.status, 200, "{}", reply.text());
        reply.json()["responses"].as_array().unwrap().clone()
    };
    let (cluster, reference) = (msearch(at[2], "/_msearch"), msearch(one, "/_msearch"));
    assert_eq!(cluster.len(), 4);
    for (got, want) in cluster.iter().zip(&reference) {
        assert_eq!(got["status"], want["status"], "{got}");
        assert_eq!(got["hits"]["total"], want["hits"]["total"], "{got}");
        assert_eq!(got["aggregations"], want["aggregations"], "{got}");
        if want["status"] == 200 {
            assert_eq!(by_index(got), by_index(want));
        }
    }
    assert_eq!(cluster[3]["error"]["type"], "index_not_found_exception", "{}", cluster[3]);
    let (cluster, reference) = (msearch(at[0], "/more/_msearch"), msearch(one, "/more/_msearch"));
    assert_eq!(by_index(&cluster[1]), by_index(&reference[1]), "the header names none: the path's index");
    assert_eq!(cluster[1]["_shards"]["total"], 2);
    let bad = send(at[1], "POST", "/_msearch", Some(b"{}\n"), &[]);
    assert_eq!(bad.status, 400, "{}", bad.text());

    // Deleted by query over an expression, as one node deletes.
    let needle = json!({"query": {"match": {"body": "needle"}}});
    let (status, cluster) = post(at[1], "/mo*/_delete_by_query?refresh=true", &needle);
    assert_eq!(status, 200, "{cluster}");
    let (_, reference) = post(one, "/mo*/_delete_by_query?refresh=true", &needle);
    assert!(cluster["deleted"].as_u64().unwrap() > 0, "{cluster}");
    assert_eq!(cluster["deleted"], reference["deleted"], "{cluster}");
    let count = |server| post(server, "/more/_count", &json!({})).1["count"].clone();
    assert_eq!(count(at[0]), count(one));

    assert_eq!(send(at[0], "DELETE", "/more", None, &[]).status, 200);
    send(one, "DELETE", "/more", None, &[]);
}

/// Nodes started with one `--api-key` show it to each other: every
/// coordinated request (writes, searches, `_bulk`, `_cat`) answers as without
/// a key, and a request without it is refused.
#[test]
fn the_nodes_of_a_cluster_with_an_api_key_show_it_to_each_other() {
    let Some(etcd) = EtcdProcess::start("cluster api key test") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_servers, at) = start_cluster(&etcd, dir.path(), &["k1", "k2"], &["--api-key", "s3cret"]);
    let key = [("authorization", "ApiKey s3cret")];
    let call = |to: SocketAddr, method: &str, path: &str, body: &str| {
        let reply = send(to, method, path, Some(body.as_bytes()), &key);
        assert!(reply.status < 300, "{method} {path}: {}", reply.text());
        reply.json()
    };
    call(at[0], "PUT", "/keyed", r#"{"settings": {"number_of_shards": 2}}"#);
    for i in 0..10 {
        call(at[i % 2], "PUT", &format!("/keyed/_doc/{i}"), r#"{"title": "kept behind a key"}"#);
    }
    call(
        at[1],
        "POST",
        "/keyed/_bulk?refresh=true",
        "{\"index\": {\"_id\": \"b\"}}\n{\"title\": \"bulked\"}\n",
    );
    let found = call(at[1], "POST", "/keyed/_search", r#"{"query": {"match": {"title": "key"}}}"#);
    assert_eq!(found["hits"]["total"]["value"], 10, "{found}");
    assert_eq!(found["_shards"]["successful"], 2, "{found}");
    let listed = call(at[0], "GET", "/_cat/indices?format=json", "");
    assert_eq!(listed[0]["docs.count"], "11", "{listed}");
    assert_eq!(send(at[1], "POST", "/keyed/_search", Some(b"{}"), &[]).status, 401);
}

/// Aliases of the cluster's indexes live in their records, not in their
/// shards: given at creation or by `_aliases`, they name the same documents
/// through every node (an alias a shard kept would name that shard alone),
/// one index for document requests and several for searches, and they go
/// with `DELETE`; names that clash are refused.
#[test]
fn aliases_name_cluster_indexes_through_every_node() {
    let Some(etcd) = EtcdProcess::start("cluster alias test") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_servers, at) = start_cluster(&etcd, dir.path(), &["a1", "a2", "a3"], &[]);
    let status = |to: SocketAddr, method: &str, path: &str, body: &str| {
        let reply = send(to, method, path, Some(body.as_bytes()), &[]);
        (reply.status, reply.json())
    };
    put(at[0], "/red", &json!({"settings": {"number_of_shards": 3}, "aliases": {"colors": {}, "warm": {}}}));
    put(at[1], "/blue", &json!({"settings": {"number_of_shards": 2}}));
    let (code, added) =
        post(at[2], "/_aliases", &json!({"actions": [{"add": {"index": "blue", "alias": "colors"}}]}));
    assert_eq!(code, 200, "{added}");
    let mut lines = String::new();
    for i in 0..30 {
        let index = ["red", "blue"][i % 2];
        let doc = json!({"title": format!("shade {i}"), "n": i});
        lines.push_str(&format!("{}\n{doc}\n", json!({"index": {"_index": index, "_id": i.to_string()}})));
    }
    let reply = send(at[0], "POST", "/_bulk?refresh=true", Some(lines.as_bytes()), &[]).json();
    assert_eq!(reply["errors"], false, "{reply}");
    for node in &at {
        let count = |path: &str| status(*node, "GET", path, "").1["count"].clone();
        assert_eq!(count("/warm/_count"), 15, "an alias given at creation names the whole index on {node}");
        // An alias added on another node is seen through the node's view, a second old at most.
        let started = std::time::Instant::now();
        while count("/colors/_count") != 30 || count("/col*/_count") != 30 {
            assert!(
                started.elapsed().as_secs() < 5,
                "both indexes through the alias and a pattern on {node}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let (code, doc) = status(*node, "GET", "/warm/_doc/4", "");
        assert_eq!((code, &doc["_index"], &doc["_source"]["n"]), (200, &json!("red"), &json!(4)), "{doc}");
    }
    // Writes through an alias of one index reach it; of several, none.
    let (code, written) =
        status(at[1], "PUT", "/warm/_doc/new?refresh=true", r#"{"title": "written through"}"#);
    assert_eq!((code, &written["_index"]), (201, &json!("red")), "{written}");
    let (code, refused) = status(at[2], "PUT", "/colors/_doc/x", r#"{"title": "which one?"}"#);
    assert_eq!(code, 400, "{refused}");
    assert!(refused["error"]["reason"].as_str().unwrap().contains("no write index"), "{refused}");
    // A cluster index's alias takes no options yet: refused, not ignored.
    let filtered =
        r#"{"actions": [{"add": {"index": "red", "alias": "some", "filter": {"match_all": {}}}}]}"#;
    let (code, refused) = status(at[0], "POST", "/_aliases", filtered);
    assert_eq!(code, 400, "{refused}");
    assert!(refused["error"]["reason"].as_str().unwrap().contains("[filter]"), "{refused}");
    let items = "{\"index\": {\"_index\": \"warm\", \"_id\": \"b\"}}\n{\"n\": 1}\n";
    let reply = send(at[2], "POST", "/_bulk?refresh=true", Some(items.as_bytes()), &[]).json();
    assert_eq!(reply["items"][0]["index"]["_index"], "red", "{reply}");
    assert_eq!(status(at[0], "GET", "/red/_count", "").1["count"], 17);
    assert_eq!(
        status(at[0], "GET", "/_cat/indices/warm?h=index&format=json", "").1,
        json!([{"index": "red"}])
    );
    let mget = status(at[0], "POST", "/_mget", r#"{"docs": [{"_index": "warm", "_id": "b"}]}"#).1;
    assert_eq!(mget["docs"][0]["found"], true, "{mget}");

    // Listed from any node, as Elasticsearch lists them.
    let listed = status(at[1], "GET", "/_alias/colors", "").1;
    assert_eq!(listed, json!({"red": {"aliases": {"colors": {}}}, "blue": {"aliases": {"colors": {}}}}));
    assert_eq!(
        status(at[2], "GET", "/red/_alias", "").1["red"]["aliases"],
        json!({"colors": {}, "warm": {}})
    );
    assert_eq!(status(at[0], "GET", "/red", "").1["red"]["aliases"], json!({"colors": {}, "warm": {}}));
    assert_eq!(status(at[0], "GET", "/_alias/nothing", "").0, 404);
    assert_eq!(send(at[0], "HEAD", "/_alias/warm", None, &[]).status, 200);
    assert_eq!(send(at[0], "HEAD", "/_alias/nothing", None, &[]).status, 404);
    let rows = status(at[2], "GET", "/_cat/aliases/colors?h=alias,index&format=json", "").1;
    assert_eq!(rows, json!([{"alias": "colors", "index": "blue"}, {"alias": "colors", "index": "red"}]));

    // Clashing names are refused and change nothing.
    let (code, clash) =
        post(at[0], "/_aliases", &json!({"actions": [{"add": {"index": "red", "alias": "blue"}}]}));
    assert_eq!((code, &clash["error"]["type"]), (400, &json!("invalid_alias_name_exception")), "{clash}");
    let (code, clash) = status(at[1], "PUT", "/warm", "{}");
    assert_eq!((code, &clash["error"]["type"]), (400, &json!("invalid_index_name_exception")), "{clash}");

    // Removed: the alias names nothing; removing it again is a 404.
    assert_eq!(status(at[2], "DELETE", "/red/_alias/warm", "").0, 200);
    assert_eq!(status(at[2], "GET", "/warm/_count", "").0, 404, "gone at once on the node that removed it");
    // Other nodes route by a view a second old at most.
    let started = std::time::Instant::now();
    while status(at[0], "GET", "/warm/_count", "").0 != 404 {
        assert!(started.elapsed().as_secs() < 5, "the alias is still routed by another node");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let (code, gone) = status(at[1], "DELETE", "/red/_alias/warm", "");
    assert_eq!((code, &gone["error"]["type"]), (404, &json!("aliases_not_found_exception")), "{gone}");
    assert_eq!(status(at[1], "GET", "/colors/_count", "").1["count"], 32);
}
