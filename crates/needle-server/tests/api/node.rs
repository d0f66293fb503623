//! The node and index administration: headers, authentication, limits,
//! errors, `_cat`, mappings, and indexes surviving a restart.

use serde_json::json;

use crate::harness::{send, TestServer};

#[test]
fn every_answer_names_the_product_and_errors_have_their_shape() {
    let s = TestServer::start();
    let (status, info) = s.json("GET", "/", None);
    assert_eq!(status, 200);
    assert!(info["version"]["number"].as_str().unwrap().starts_with('9'));
    assert_eq!(info["tagline"], json!("You Know, for Search"));
    for (method, path) in
        [("GET", "/"), ("HEAD", "/"), ("GET", "/nope/_doc/1"), ("GET", "/a/b/c/d"), ("DELETE", "/_search")]
    {
        let reply = s.call(method, path, None);
        assert_eq!(reply.header("x-elastic-product"), Some("Elasticsearch"), "{method} {path}");
    }
    assert_eq!(s.call("GET", "/a/b/c/d", None).status, 400);
    assert_eq!(s.call("DELETE", "/_search", None).status, 405);
    let (status, err) = s.json("GET", "/nope/_doc/1", None);
    assert_eq!(status, 404);
    assert_eq!(err["error"]["root_cause"][0]["type"], json!("index_not_found_exception"));
    assert_eq!(err["status"], json!(404));

    // Clients of 8.x and 9.x ask for a compatible media type and get it back.
    let media = "application/vnd.elasticsearch+json; compatible-with=8";
    let reply = s.call_with("GET", "/", None, &[("accept", media)]);
    assert_eq!(reply.header("content-type"), Some("application/vnd.elasticsearch+json;compatible-with=8"));
    let reply =
        s.call_with("GET", "/", None, &[("accept", "application/vnd.elasticsearch+json; compatible-with=5")]);
    assert_eq!(reply.status, 400);
}

#[test]
fn an_api_key_when_set_is_required() {
    let dir = tempfile::tempdir().unwrap();
    let s = TestServer::start_with(
        |c| needle_server::ServerConfig { api_key: Some("s3cret".into()), ..c },
        dir.path(),
    );
    let reply = s.call("GET", "/", None);
    assert_eq!(reply.status, 401);
    assert_eq!(reply.json()["error"]["type"], json!("security_exception"));
    assert_eq!(s.call_with("GET", "/", None, &[("authorization", "ApiKey wrong")]).status, 401);
    assert_eq!(s.call_with("GET", "/", None, &[("authorization", "ApiKey s3cret")]).status, 200);
    assert_eq!(s.call_with("PUT", "/x", None, &[("authorization", "Basic czNjcmV0")]).status, 401);
    assert_eq!(
        s.call_with("GET", "/x", None, &[("authorization", "ApiKey s3cret")]).status,
        404,
        "nothing was created"
    );
    // The search page is static: its API calls carry the key.
    let page = s.call("GET", "/_ui", None);
    assert_eq!(page.status, 200);
    assert!(String::from_utf8_lossy(&page.body).contains("ApiKey "), "the page sends the key it is given");
}

#[test]
fn oversized_bodies_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = TestServer::start_with(|c| needle_server::ServerConfig { max_body: 64 << 10, ..c }, dir.path());
    let big = format!("{{\"t\": \"{}\"}}", "x".repeat(100 << 10));
    let reply = send(s.addr, "PUT", "/i/_doc/1", Some(big.as_bytes()), &[]);
    assert_eq!(reply.status, 413);
    assert_eq!(reply.json()["error"]["type"], json!("content_too_long_exception"));
    assert_eq!(s.call("GET", "/i", None).status, 404, "nothing was created");
}

#[test]
fn indexes_are_administered_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = TestServer::start_with(|c| c, dir.path());
    let mapping = json!({"properties": {"title": {"type": "text"}, "user": {"properties": {"name": {"type": "keyword"}}}}});
    let (status, created) =
        s.json("PUT", "/notes", Some(json!({"mappings": mapping, "settings": {"number_of_shards": 1}})));
    assert_eq!((status, &created["acknowledged"]), (200, &json!(true)), "{created}");
    let (status, again) = s.json("PUT", "/notes", None);
    assert_eq!((status, again["error"]["type"].as_str()), (400, Some("resource_already_exists_exception")));
    assert_eq!(s.json("PUT", "/Bad", None).1["error"]["type"], json!("invalid_index_name_exception"));
    let (status, bad) =
        s.json("PUT", "/other", Some(json!({"mappings": {"properties": {"x": {"type": "hologram"}}}})));
    assert_eq!((status, bad["error"]["type"].as_str()), (400, Some("mapper_parsing_exception")), "{bad}");
    assert_eq!(s.call("HEAD", "/notes", None).status, 200);
    assert_eq!(s.call("HEAD", "/other", None).status, 404);

    // Mappings: nested back as objects; new fields added; a type change refused.
    let (_, got) = s.json("GET", "/notes/_mapping", None);
    assert_eq!(
        got["notes"]["mappings"]["properties"]["user"]["properties"]["name"]["type"],
        json!("keyword")
    );
    assert_eq!(s.json("PUT", "/notes/_mapping", Some(json!({"properties": {"n": {"type": "long"}}}))).0, 200);
    let (status, err) =
        s.json("PUT", "/notes/_mapping", Some(json!({"properties": {"title": {"type": "keyword"}}})));
    assert_eq!((status, err["error"]["type"].as_str()), (400, Some("illegal_argument_exception")), "{err}");

    s.json(
        "PUT",
        "/notes/_doc/1",
        Some(json!({"title": "kept across restarts", "user": {"name": "ann"}, "n": 3})),
    );
    let (_, cat) = s.json("GET", "/_cat/indices?format=json", None);
    assert_eq!(cat[0]["index"], json!("notes"));
    assert_eq!(cat[0]["docs.count"], json!("1"));
    assert!(s.call("GET", "/_cat/indices?v", None).text().starts_with("health status index"));
    assert_eq!(s.json("GET", "/_cluster/health", None).1["status"], json!("green"));
    assert_eq!(s.json("POST", "/notes/_flush", None).0, 200);
    assert_eq!(s.json("POST", "/notes/_forcemerge?max_num_segments=1", None).0, 200);

    s.stop();
    let s = TestServer::start_with(|c| c, dir.path());
    let (status, doc) = s.json("GET", "/notes/_doc/1", None);
    assert_eq!((status, &doc["_source"]["user"]["name"]), (200, &json!("ann")));
    let (_, got) = s.json("GET", "/notes", None);
    assert_eq!(got["notes"]["mappings"]["properties"]["n"]["type"], json!("long"));
    assert_eq!(s.json("GET", "/notes/_search?q=title:restarts", None).1["hits"]["total"]["value"], json!(1));
    assert_eq!(s.json("DELETE", "/notes", None).0, 200);
    assert_eq!(s.call("HEAD", "/notes", None).status, 404);
    assert!(!dir.path().join("indices/notes").exists());
}

#[test]
fn pretty_and_filter_path() {
    let s = TestServer::start();
    s.json("PUT", "/i/_doc/1", Some(json!({"t": "x"})));
    let reply = s.call("GET", "/i/_search?filter_path=hits.hits._id,hits.total.value&pretty", None);
    assert!(reply.text().contains("\n  "), "pretty printed: {}", reply.text());
    assert_eq!(reply.json(), json!({"hits": {"total": {"value": 1}, "hits": [{"_id": "1"}]}}));
}

#[test]
fn a_second_server_on_the_folder_is_refused_and_unserved_indexes_are_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = TestServer::start_with(|c| c, dir.path());
    s.json("PUT", "/kept/_doc/1", Some(json!({"t": "x"})));
    let second = needle_server::Server::bind(needle_server::ServerConfig::new(
        dir.path().to_path_buf(),
        "127.0.0.1:0".parse().unwrap(),
    ));
    let err = second.err().expect("a second server on one folder is refused").to_string();
    assert!(err.contains("locked by another writer"), "{err}");
    s.stop();

    // An index folder the server does not serve (here: its settings file gone) is left alone.
    std::fs::remove_file(dir.path().join("indices/kept/needle-settings.json")).unwrap();
    let s = TestServer::start_with(|c| c, dir.path());
    assert_eq!(s.call("HEAD", "/kept", None).status, 404);
    let (status, err) = s.json("PUT", "/kept", None);
    assert_eq!(
        (status, err["error"]["type"].as_str()),
        (400, Some("resource_already_exists_exception")),
        "{err}"
    );
    assert!(dir.path().join("indices/kept/needle.manifest").exists());
}

#[test]
fn put_settings_changes_dynamic_settings_persists_them_and_refuses_the_rest_whole() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = TestServer::start_with(|c| c, dir.path());
        assert_eq!(s.json("PUT", "/a", Some(json!({"settings": {"number_of_replicas": 0}}))).0, 200);
        let change = json!({"index": {"refresh_interval": "-1", "number_of_replicas": 2}});
        let (status, body) = s.json("PUT", "/a/_settings", Some(change));
        assert_eq!((status, &body["acknowledged"]), (200, &json!(true)), "{body}");
        let index = |s: &TestServer| s.json("GET", "/a/_settings", None).1["a"]["settings"]["index"].clone();
        assert_eq!(index(&s)["refresh_interval"], "-1");
        assert_eq!(index(&s)["number_of_replicas"], "2");
        for refused in [
            json!({"number_of_shards": 3, "refresh_interval": "5s"}),
            json!({"index.translog.durability": "async", "refresh_interval": "5s"}),
            json!({"index": {"no_such_setting": 1, "refresh_interval": "5s"}}),
        ] {
            let (status, body) = s.json("PUT", "/a/_settings", Some(refused.clone()));
            assert_eq!(status, 400, "{refused}: {body}");
            assert_eq!(body["error"]["type"], "illegal_argument_exception", "{body}");
            assert_eq!(index(&s)["refresh_interval"], "-1", "a refused change changes nothing: {refused}");
        }
        let (status, body) = s.json("PUT", "/missing/_settings", Some(json!({"refresh_interval": "1s"})));
        assert_eq!((status, &body["error"]["type"]), (404, &json!("index_not_found_exception")));
    }
    let s = TestServer::start_with(|c| c, dir.path());
    let (_, got) = s.json("GET", "/a/_settings", None);
    assert_eq!(got["a"]["settings"]["index"]["refresh_interval"], "-1", "kept across a restart: {got}");
}

#[test]
fn cat_shards_count_health_and_nodes_describe_this_node() {
    let s = TestServer::start();
    for (index, docs) in [("b-logs", 2), ("a-notes", 1)] {
        for i in 0..docs {
            s.json("PUT", &format!("/{index}/_doc/{i}"), Some(json!({"title": "one shard"})));
        }
    }
    let (status, shards) = s.json("GET", "/_cat/shards?format=json&bytes=b", None);
    assert_eq!(status, 200, "{shards}");
    let rows = shards.as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["index"].as_str().unwrap()).collect();
    assert_eq!(names, ["a-notes", "b-logs"]);
    assert_eq!(
        (&rows[1]["docs"], &rows[1]["prirep"], &rows[1]["state"]),
        (&json!("2"), &json!("p"), &json!("STARTED"))
    );
    assert!(rows[1]["store"].as_str().unwrap().parse::<u64>().unwrap() > 0, "{shards}");
    assert_eq!(rows[0]["ip"], json!("127.0.0.1"));
    let one = s.call("GET", "/_cat/shards/b-logs?v&h=index,shard,docs", None).text();
    // Numbers right-aligned, as Elasticsearch's tables show them.
    assert_eq!(one, "index  shard docs\nb-logs 0        2\n");
    assert_eq!(s.json("GET", "/_cat/shards/none", None).0, 404);

    let (_, count) = s.json("GET", "/_cat/count/b-logs?format=json", None);
    assert_eq!(count[0]["count"], json!("2"), "{count}");
    s.json("DELETE", "/b-logs/_doc/0", None);
    let (_, count) = s.json("GET", "/_cat/count?format=json", None);
    assert_eq!(count[0]["count"], json!("2"), "every index's live documents: {count}");
    let epoch: u64 = count[0]["epoch"].as_str().unwrap().parse().unwrap();
    assert!(epoch > 1_700_000_000, "{count}");
    assert_eq!(s.call("GET", "/_cat/count/a-notes?ts=false", None).text(), "1\n");
    assert_eq!(s.json("GET", "/_cat/count/none", None).0, 404);
    let (_, health) = s.json("GET", "/_cat/health?format=json", None);
    let h = &health[0];
    assert_eq!(
        (&h["status"], &h["node.total"], &h["pri"], &h["active_shards_percent"]),
        (&json!("green"), &json!("1"), &json!("2"), &json!("100.0%")),
        "{health}"
    );
    let table = s.call("GET", "/_cat/health?v&ts=false&h=status,shards,unassign", None).text();
    assert_eq!(table, "status shards unassign\ngreen       2        0\n");

    let (status, nodes) = s.json("GET", "/_cat/nodes?format=json", None);
    assert_eq!(status, 200, "{nodes}");
    let node = &nodes[0];
    assert_eq!((&node["ip"], &node["master"]), (&json!("127.0.0.1"), &json!("*")));
    for percent in ["heap.percent", "ram.percent", "cpu"] {
        let value: u64 =
            node[percent].as_str().unwrap().parse().unwrap_or_else(|_| panic!("{percent}: {node}"));
        assert!(value <= 100, "{percent}: {node}");
    }
    assert!(node["load_1m"].as_str().unwrap().parse::<f64>().is_ok(), "{node}");
    assert!(s.call("GET", "/_cat/nodes?v", None).text().starts_with("ip "));
}
