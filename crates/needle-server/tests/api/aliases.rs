//! Aliases: named at creation or added later, listed, searched and written
//! through, removed, refused where they would be ambiguous, kept across a restart.

use serde_json::json;

use crate::harness::TestServer;

#[test]
fn aliases_name_indexes_for_searches_and_single_index_requests() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = TestServer::start_with(|c| c, dir.path());
        let (status, body) = s.json("PUT", "/a", Some(json!({"aliases": {"both": {}, "only-a": {}}})));
        assert_eq!(status, 200, "{body}");
        assert_eq!(s.json("PUT", "/b", None).0, 200);
        let add = json!({"actions": [{"add": {"index": "b", "alias": "both"}}]});
        assert_eq!(s.json("POST", "/_aliases", Some(add)).0, 200);

        let (status, body) = s.json("PUT", "/only-a/_doc/1", Some(json!({"t": "red fox"})));
        assert_eq!(
            (status, &body["_index"]),
            (201, &json!("a")),
            "a write through a one-index alias: {body}"
        );
        assert_eq!(s.json("PUT", "/b/_doc/2", Some(json!({"t": "red sun"}))).0, 201);
        let (status, body) = s.json("PUT", "/both/_doc/3", Some(json!({"t": "red"})));
        assert_eq!((status, &body["error"]["type"]), (400, &json!("illegal_argument_exception")), "{body}");

        let (_, found) = s.json("POST", "/both/_search", Some(json!({"query": {"match": {"t": "red"}}})));
        let mut indexes: Vec<&str> =
            found["hits"]["hits"].as_array().unwrap().iter().map(|h| h["_index"].as_str().unwrap()).collect();
        indexes.sort();
        assert_eq!(indexes, ["a", "b"], "a search through an alias searches every index it names: {found}");
        let (_, found) = s.json("POST", "/only-*/_search", Some(json!({"query": {"match_all": {}}})));
        assert_eq!(found["hits"]["total"]["value"], 1, "wildcards match aliases too");

        let (_, cat) = s.json("GET", "/_cat/aliases?format=json&h=alias,index", None);
        let want = json!([{"alias": "both", "index": "a"}, {"alias": "both", "index": "b"}, {"alias": "only-a", "index": "a"}]);
        assert_eq!(cat, want);
        let table = s.call("GET", "/_cat/aliases/only*?v", None).text();
        assert_eq!(table, "alias  index filter routing.index routing.search is_write_index\nonly-a a     -      -             -              -\n");
        let (status, body) = s.json("GET", "/_cat/aliases?s=nope", None);
        assert_eq!((status, &body["error"]["type"]), (400, &json!("illegal_argument_exception")), "{body}");

        let (status, listed) = s.json("GET", "/_alias/both", None);
        assert_eq!(status, 200);
        assert_eq!(listed, json!({"a": {"aliases": {"both": {}}}, "b": {"aliases": {"both": {}}}}));
        assert_eq!(s.json("GET", "/a", None).1["a"]["aliases"], json!({"both": {}, "only-a": {}}));
        let (status, body) = s.json("GET", "/_alias/nope", None);
        assert_eq!((status, body), (404, json!({"error": "alias [nope] missing", "status": 404})));

        let (status, body) = s.json("PUT", "/a/_alias/b", None);
        assert_eq!((status, &body["error"]["type"]), (400, &json!("invalid_alias_name_exception")), "{body}");
        let (status, body) = s.json("PUT", "/only-a", None);
        assert_eq!((status, &body["error"]["type"]), (400, &json!("invalid_index_name_exception")), "{body}");
        // One bad action: none of them is applied.
        let mixed = json!({"actions": [
            {"remove": {"index": "b", "alias": "both"}},
            {"add": {"index": "missing", "alias": "x"}},
        ]});
        assert_eq!(s.json("POST", "/_aliases", Some(mixed)).0, 404);
        assert_eq!(s.json("GET", "/_alias/both", None).1.as_object().unwrap().len(), 2, "nothing removed");

        assert_eq!(s.json("DELETE", "/b/_alias/both", None).0, 200);
        assert_eq!(s.json("GET", "/_alias/both", None).1, json!({"a": {"aliases": {"both": {}}}}));
        let (status, body) = s.json("DELETE", "/b/_alias/both", None);
        assert_eq!((status, &body["error"]["type"]), (404, &json!("aliases_not_found_exception")), "{body}");
        let options = json!({"filter": {"match": {"t": "sun"}}, "is_write_index": true});
        assert_eq!(s.json("PUT", "/a/_alias/filtered", Some(options)).0, 200);
        let (_, found) = s.json("POST", "/filtered/_search", Some(json!({"query": {"match_all": {}}})));
        assert_eq!(found["hits"]["total"]["value"], 0, "the filter leaves out a's one document: {found}");
    }
    let s = TestServer::start_with(|c| c, dir.path());
    let kept = json!({"a": {"aliases": {"both": {}, "filtered": {"filter": {"match": {"t": "sun"}}, "is_write_index": true}, "only-a": {}}}});
    assert_eq!(s.json("GET", "/a/_alias", None).1, kept, "options kept across a restart");
    assert_eq!(s.json("GET", "/only-a/_doc/1", None).1["found"], true, "kept across a restart");
}
