//! Single-document APIs: their answers, status codes and conditions.

use serde_json::{json, Value};

use crate::harness::TestServer;

#[test]
fn a_document_through_its_life() {
    let s = TestServer::start();
    let (status, created) =
        s.json("PUT", "/books/_doc/1?refresh=true", Some(json!({"title": "The quick fox", "n": 1})));
    assert_eq!(status, 201, "{created}");
    assert_eq!((created["result"].as_str(), created["_version"].as_u64()), (Some("created"), Some(1)));
    assert_eq!(created["forced_refresh"], json!(true));
    let seq_no = created["_seq_no"].as_u64().unwrap();
    assert_eq!(seq_no, 0, "a new index's first write, as Elasticsearch numbers it");

    // Searchable and readable at once, with its version.
    let (status, got) = s.json("GET", "/books/_doc/1", None);
    assert_eq!(status, 200);
    assert_eq!(got["_source"], json!({"title": "The quick fox", "n": 1}));
    assert_eq!(
        (got["_version"].as_u64(), got["_seq_no"].as_u64(), got["found"].as_bool()),
        (Some(1), Some(seq_no), Some(true))
    );
    assert_eq!(
        s.json("GET", "/books/_doc/1?_source_includes=title", None).1["_source"],
        json!({"title": "The quick fox"})
    );
    assert_eq!(s.json("GET", "/books/_source/1", None).1, json!({"title": "The quick fox", "n": 1}));
    assert_eq!(s.call("HEAD", "/books/_doc/1", None).status, 200);

    // _create refuses an existing _id; a stale if_seq_no is a conflict; both change nothing.
    let (status, err) = s.json("PUT", "/books/_create/1", Some(json!({"title": "other"})));
    assert_eq!(
        (status, err["error"]["type"].as_str()),
        (409, Some("version_conflict_engine_exception")),
        "{err}"
    );
    let stale = format!("/books/_doc/1?if_seq_no={}&if_primary_term=1", seq_no + 100);
    assert_eq!(s.json("PUT", &stale, Some(json!({"title": "other"}))).0, 409);
    assert_eq!(s.json("GET", "/books/_doc/1", None).1["_version"], json!(1));

    // A partial update merges; the same update again is a noop.
    let (status, updated) = s.json("POST", "/books/_update/1", Some(json!({"doc": {"n": 2, "tags": ["a"]}})));
    assert_eq!(
        (status, updated["result"].as_str(), updated["_version"].as_u64()),
        (200, Some("updated"), Some(2))
    );
    let (_, noop) = s.json("POST", "/books/_update/1", Some(json!({"doc": {"n": 2}})));
    assert_eq!((noop["result"].as_str(), noop["_version"].as_u64()), (Some("noop"), Some(2)));
    let source = s.json("GET", "/books/_doc/1", None).1["_source"].clone();
    assert_eq!(source, json!({"title": "The quick fox", "n": 2, "tags": ["a"]}));
    let keys: Vec<&String> = source.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["title", "n", "tags"],
        "the document's order, new keys last, as Elasticsearch keeps it"
    );

    // The right if_seq_no passes.
    let current = s.json("GET", "/books/_doc/1", None).1["_seq_no"].as_u64().unwrap();
    let path = format!("/books/_doc/1?if_seq_no={current}&if_primary_term=1");
    let (status, replaced) = s.json("PUT", &path, Some(json!({"title": "A slow dog"})));
    assert_eq!(
        (status, replaced["result"].as_str(), replaced["_version"].as_u64()),
        (200, Some("updated"), Some(3))
    );

    // Update of a missing document: 404, unless it upserts.
    let (status, err) = s.json("POST", "/books/_update/2", Some(json!({"doc": {"n": 1}})));
    assert_eq!((status, err["error"]["type"].as_str()), (404, Some("document_missing_exception")));
    let (status, upserted) =
        s.json("POST", "/books/_update/2", Some(json!({"doc": {"n": 1}, "doc_as_upsert": true})));
    assert_eq!((status, upserted["result"].as_str()), (201, Some("created")));

    // Delete, then the document is gone everywhere.
    let (status, deleted) = s.json("DELETE", "/books/_doc/1", None);
    assert_eq!(
        (status, deleted["result"].as_str(), deleted["_version"].as_u64()),
        (200, Some("deleted"), Some(4))
    );
    assert_eq!(s.json("DELETE", "/books/_doc/1", None).1["result"], json!("not_found"));
    assert_eq!(
        s.json("GET", "/books/_doc/1", None),
        (404, json!({"_index": "books", "_id": "1", "found": false}))
    );
    assert_eq!(s.call("HEAD", "/books/_doc/1", None).status, 404);
    assert_eq!(s.json("GET", "/books/_source/1", None).0, 404);
    assert_eq!(s.json("GET", "/books/_count", None).1["count"], json!(1));
}

#[test]
fn generated_ids_and_mget() {
    let s = TestServer::start();
    let (status, a) = s.json("POST", "/logs/_doc", Some(json!({"msg": "first"})));
    assert_eq!(status, 201);
    let id = a["_id"].as_str().unwrap().to_string();
    assert!(id.len() >= 16, "{id}");
    s.json("PUT", "/logs/_doc/b", Some(json!({"msg": "second"})));
    let (status, got) = s.json("POST", "/logs/_mget", Some(json!({"ids": [id, "b", "nope"]})));
    assert_eq!(status, 200);
    let docs = got["docs"].as_array().unwrap();
    assert_eq!(docs[0]["_source"], json!({"msg": "first"}));
    assert_eq!(docs[1]["_source"], json!({"msg": "second"}));
    assert_eq!(docs[2]["found"], json!(false));
    let (_, got) = s.json(
        "POST",
        "/_mget",
        Some(json!({"docs": [{"_index": "logs", "_id": "b"}, {"_index": "none", "_id": "b"}]})),
    );
    assert_eq!(got["docs"][0]["found"], json!(true));
    assert_eq!(got["docs"][1]["error"]["type"], json!("index_not_found_exception"));
}

#[test]
fn bad_writes_change_nothing() {
    let s = TestServer::start();
    s.json("PUT", "/i", Some(json!({"mappings": {"properties": {"n": {"type": "long"}}}})));
    // As Elasticsearch's document parser: malformed JSON is a failure to
    // parse the document, caused by the JSON error (OpenSearch 3.8 answers
    // the same shape as `mapper_parsing_exception`).
    for (body, reason, cause) in [
        ("{\"n\": ", "[1:6] failed to parse: EOF while parsing a value", Some("x_content_parse_exception")),
        ("{\"n\": 1} x", "[1:10] failed to parse: trailing characters", Some("x_content_parse_exception")),
        ("[1, 2]", "Malformed content, must start with an object", None),
        ("{\"n\": \"not a number\"}", "", None),
    ] {
        let reply = s.call("PUT", "/i/_doc/1", Some(body));
        assert_eq!(reply.status, 400, "{body}");
        let error = &reply.json()["error"];
        assert_eq!(error["type"], json!("document_parsing_exception"), "{body}: {}", reply.text());
        assert!(error["reason"].as_str().unwrap().starts_with(reason), "{body}: {error}");
        assert_eq!(error["caused_by"]["type"].as_str(), cause, "{body}: {error}");
        assert_eq!(error["root_cause"][0]["caused_by"], Value::Null, "{error}");
    }
    let (status, err) = s.json("PUT", "/i/_doc/1?refrsh=true", Some(json!({"n": 1})));
    assert_eq!(status, 400);
    assert!(err["error"]["reason"].as_str().unwrap().contains("unrecognized parameter: [refrsh]"), "{err}");
    assert_eq!(s.json("GET", "/i/_count", None).1["count"], json!(0));
}
