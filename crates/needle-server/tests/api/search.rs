//! `_search`, `_count`, `_delete_by_query`: options, paging, several indexes.

use serde_json::{json, Value};

use crate::harness::TestServer;

fn with_docs() -> TestServer {
    let s = TestServer::start();
    let mapping = json!({"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"}}});
    s.json("PUT", "/a", Some(json!({"mappings": mapping.clone()})));
    s.json("PUT", "/b", Some(json!({"mappings": mapping})));
    let titles = ["red fox", "red red fox", "blue fox", "red dog", "green frog", "red fox jumps"];
    let mut lines = Vec::new();
    for (i, t) in titles.iter().enumerate() {
        let index = if i % 2 == 0 { "a" } else { "b" };
        lines.push(json!({"index": {"_index": index, "_id": format!("{index}{i}")}}));
        lines.push(json!({"title": t, "tag": if i < 3 { "x" } else { "y" }, "i": i}));
    }
    assert_eq!(s.bulk("/_bulk", &lines).1["errors"], json!(false));
    s
}

fn ids(answer: &Value) -> Vec<String> {
    answer["hits"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| format!("{}/{}", h["_index"].as_str().unwrap(), h["_id"].as_str().unwrap()))
        .collect()
}

#[test]
fn several_indexes_merge_by_score_and_page() {
    let s = with_docs();
    let query = json!({"query": {"match": {"title": "red"}}, "size": 10});
    let (status, all) = s.json("POST", "/a,b/_search", Some(query.clone()));
    assert_eq!(status, 200, "{all}");
    assert_eq!(all["hits"]["total"], json!({"value": 4, "relation": "eq"}));
    assert_eq!(all["_shards"]["total"], json!(2));
    let scores: Vec<f64> =
        all["hits"]["hits"].as_array().unwrap().iter().map(|h| h["_score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert_eq!(all["hits"]["max_score"].as_f64(), Some(scores[0]));
    assert_eq!(
        ids(&s.json("POST", "/_search", Some(query.clone())).1),
        ids(&all),
        "no index named: all of them"
    );
    assert_eq!(ids(&s.json("POST", "/*/_search", Some(query)).1), ids(&all));
    // Pages, asked for one by one, are the whole list in order.
    let mut paged = Vec::new();
    for from in 0..4 {
        let page = s
            .json(
                "POST",
                "/a,b/_search",
                Some(json!({"query": {"match": {"title": "red"}}, "from": from, "size": 1})),
            )
            .1;
        paged.extend(ids(&page));
    }
    assert_eq!(paged, ids(&all));
    let one_index = s.json("GET", "/b/_search?q=title:red&from=1&size=1", None).1;
    let whole = s.json("GET", "/b/_search?q=title:red", None).1;
    assert_eq!(ids(&one_index), ids(&whole)[1..2].to_vec());
    assert_eq!(
        one_index["hits"]["max_score"], whole["hits"]["max_score"],
        "the best hit counts though skipped"
    );
}

#[test]
fn options_shape_the_hits() {
    let s = with_docs();
    let body = json!({
        "query": {"bool": {"must": {"match": {"title": "fox"}}, "filter": {"term": {"tag": "x"}}}},
        "_source": ["title"],
        "highlight": {"fields": {"title": {}}, "pre_tags": ["<b>"], "post_tags": ["</b>"]},
        "version": true,
        "seq_no_primary_term": true,
        "sort": ["_score"],
    });
    let (status, answer) = s.json("POST", "/a,b/_search", Some(body));
    assert_eq!(status, 200, "{answer}");
    let hits = answer["hits"]["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 3);
    for h in hits {
        assert_eq!(h["_source"].as_object().unwrap().keys().collect::<Vec<_>>(), ["title"]);
        assert!(h["highlight"]["title"][0].as_str().unwrap().contains("<b>fox</b>"), "{h}");
        assert_eq!(h["_version"], json!(1));
        assert_eq!(h["_primary_term"], json!(1));
        assert_eq!(h["sort"][0], h["_score"]);
    }
    let no_total = s.json("POST", "/a/_search", Some(json!({"track_total_hits": false}))).1;
    assert!(no_total["hits"].get("total").is_none(), "{no_total}");
    let capped = s.json("POST", "/a,b/_search", Some(json!({"track_total_hits": 2, "size": 0}))).1;
    assert_eq!(capped["hits"]["total"], json!({"value": 2, "relation": "gte"}));
    let as_int = s.json("GET", "/a,b/_search?rest_total_hits_as_int=true", None).1;
    assert_eq!(as_int["hits"]["total"], json!(6));
}

#[test]
fn highlight_options_given_in_a_field_apply_to_that_field() {
    let s = TestServer::start();
    s.json(
        "PUT",
        "/h",
        Some(json!({"mappings": {"properties": {"title": {"type": "text"}, "body": {"type": "text"}}}})),
    );
    let body = "fox one. ".repeat(30) + &"filler words here. ".repeat(20) + &"fox two. ".repeat(30);
    let doc = json!({"title": "the quick fox", "body": body});
    assert_eq!(s.json("PUT", "/h/_doc/1?refresh=true", Some(doc)).0, 201);
    let search = json!({
        "query": {"multi_match": {"query": "fox", "fields": ["title", "body"]}},
        "highlight": {
            "pre_tags": ["<b>"], "post_tags": ["</b>"], "number_of_fragments": 3, "fragment_size": 40,
            "fields": {"title": {"pre_tags": ["["], "post_tags": ["]"]}, "b*": {"number_of_fragments": 1}},
        },
    });
    let (status, answer) = s.json("POST", "/h/_search", Some(search));
    assert_eq!(status, 200, "{answer}");
    let h = &answer["hits"]["hits"][0]["highlight"];
    assert_eq!(h["title"], json!(["the quick [fox]"]), "{h}");
    let body = h["body"].as_array().unwrap();
    assert_eq!(body.len(), 1, "the field's own count: {h}");
    assert!(body[0].as_str().unwrap().contains("<b>fox</b>"), "the shared tags: {h}");
    assert!(body[0].as_str().unwrap().len() < 120, "the shared size: {h}");
}

#[test]
fn a_search_past_its_timeout_answers_with_what_it_found() {
    let s = TestServer::start();
    let mut lines = Vec::new();
    for i in 0..3000 {
        lines.push(json!({"index": {"_index": "t", "_id": i.to_string()}}));
        lines.push(json!({"title": if i % 3 == 0 { "red fox" } else { "red dog" }, "n": i}));
    }
    assert_eq!(s.bulk("/_bulk?refresh=true", &lines).1["errors"], json!(false));
    let body = |timeout: &str| {
        json!({"query": {"match": {"title": "red"}}, "timeout": timeout, "track_total_hits": true,
               "aggs": {"most": {"max": {"field": "n"}}}})
    };
    let full = s.json("POST", "/t/_search", Some(body("1m"))).1;
    assert_eq!(
        (full["timed_out"].clone(), full["hits"]["total"]["value"].clone()),
        (json!(false), json!(3000))
    );
    assert_eq!(full["aggregations"]["most"]["value"], json!(2999.0));
    let partial = s.json("POST", "/t/_search", Some(body("0nanos"))).1;
    assert_eq!(partial["timed_out"], json!(true), "{partial}");
    assert!(partial["hits"]["total"]["value"].as_u64().unwrap() < 3000, "{partial}");
    let by_param = s.json("POST", "/t/_search?timeout=0nanos", Some(json!({"query": {"match_all": {}}}))).1;
    assert_eq!(by_param["timed_out"], json!(true), "{by_param}");
    let none = s.json("POST", "/t/_search", Some(body("-1"))).1;
    assert_eq!(none["timed_out"], json!(false));
    let (status, bad) = s.json("POST", "/t/_search", Some(body("soon")));
    assert_eq!(status, 400, "{bad}");
    assert!(bad["error"]["reason"].as_str().unwrap().contains("[timeout] with value [soon]"), "{bad}");
}

#[test]
fn msearch_answers_each_search_alone_in_order() {
    let s = with_docs();
    let red = json!({"query": {"match": {"title": "red"}}, "size": 3});
    let lines = [
        json!({"index": "a"}),
        red.clone(),
        json!({"index": ["a", "b"]}),
        json!({"size": 0, "aggs": {"tags": {"terms": {"field": "tag"}}}}),
        json!({"index": "nope"}),
        json!({}),
        json!({}),
        json!({"query": {"matchh": {}}}),
    ];
    let (status, answer) = s.bulk("/_msearch", &lines);
    assert_eq!(status, 200, "{answer}");
    let responses = answer["responses"].as_array().unwrap();
    assert_eq!(responses.len(), 4, "{answer}");
    let alone = s.json("POST", "/a/_search", Some(red)).1;
    assert_eq!(responses[0]["hits"], alone["hits"]);
    assert_eq!(responses[0]["status"], json!(200));
    assert_eq!(responses[1]["aggregations"]["tags"]["buckets"][0], json!({"key": "x", "doc_count": 3}));
    assert_eq!(
        (responses[2]["status"].clone(), responses[2]["error"]["type"].clone()),
        (json!(404), json!("index_not_found_exception"))
    );
    assert_eq!(
        (responses[3]["status"].clone(), responses[3]["error"]["type"].clone()),
        (json!(400), json!("parsing_exception"))
    );
    // The path's index is the default; a header without its body is refused whole.
    let (_, on_b) =
        s.bulk("/b/_msearch?rest_total_hits_as_int=true", &[json!({}), json!({"query": {"match_all": {}}})]);
    assert_eq!(on_b["responses"][0]["hits"]["total"], json!(3));
    let (status, err) = s.bulk("/_msearch", &[json!({}), json!({}), json!({"index": "a"})]);
    assert_eq!(status, 400, "{err}");
    assert!(err["error"]["reason"].as_str().unwrap().contains("has no body"), "{err}");
}

#[test]
fn what_cannot_be_answered_is_refused_clearly() {
    let s = with_docs();
    for (body, status, kind, words) in [
        (json!({"query": {"matchh": {}}}), 400, "parsing_exception", "unknown query [matchh]"),
        (
            json!({"sort": [{"i": {"missing": 0}}]}),
            400,
            "illegal_argument_exception",
            "[missing] 0 is not supported yet",
        ),
        (
            json!({"aggs": {"t": {"percentiles": {"field": "i"}}}}),
            400,
            "parsing_exception",
            "Unknown aggregation type [percentiles]",
        ),
        (
            json!({"aggs": {"t": {"top_hits": {"from": 95, "size": 6}}}}),
            400,
            "illegal_argument_exception",
            "Top hits result window is too large",
        ),
        (
            json!({"aggs": {"t": {"top_hits": {"script_fields": {}}}}}),
            400,
            "parsing_exception",
            "[top_hits] unknown field [script_fields]",
        ),
        (
            json!({"aggs": {"t": {"top_hits": {}, "aggs": {"m": {"max": {"field": "i"}}}}}}),
            400,
            "parsing_exception",
            "of type [top_hits] cannot accept sub-aggregations",
        ),
        (
            json!({"aggs": {"t": {"top_hits": {"sort": [{"title": "asc"}]}}}}),
            400,
            "illegal_argument_exception",
            "Text fields are not optimised",
        ),
        (json!({"qurey": {}}), 400, "parsing_exception", "Unknown key for a START_OBJECT in [qurey]"),
    ] {
        let (got, answer) = s.json("POST", "/b/_search", Some(body.clone()));
        assert_eq!(
            (got, answer["error"]["root_cause"][0]["type"].as_str()),
            (status, Some(kind)),
            "{body}: {answer}"
        );
        assert!(
            answer["error"]["root_cause"][0]["reason"].as_str().unwrap().contains(words),
            "{body}: {answer}"
        );
    }
    s.json("PUT", "/w", Some(json!({"settings": {"index": {"max_result_window": 5}}})));
    let (status, answer) = s.json("POST", "/w/_search", Some(json!({"from": 3, "size": 3})));
    assert_eq!((status, answer["error"]["type"].as_str()), (400, Some("illegal_argument_exception")));
    assert!(answer["error"]["reason"].as_str().unwrap().contains("Result window is too large"), "{answer}");
    assert_eq!(s.json("POST", "/w/_search", Some(json!({"from": 2, "size": 3}))).0, 200);
    let (status, answer) = s.json("GET", "/nope/_search", None);
    assert_eq!((status, answer["error"]["type"].as_str()), (404, Some("index_not_found_exception")));
}

#[test]
fn count_and_delete_by_query() {
    let s = with_docs();
    assert_eq!(s.json("GET", "/a,b/_count", None).1["count"], json!(6));
    let (status, c) = s.json("POST", "/_count", Some(json!({"query": {"term": {"tag": "y"}}})));
    assert_eq!((status, &c["count"]), (200, &json!(3)));
    assert_eq!(s.json("GET", "/a,b/_count?q=title:fox", None).1["count"], json!(4));
    let fox = json!({"query": {"match": {"title": "fox"}}});
    let (status, d) = s.json("POST", "/a,b/_delete_by_query?max_docs=0", Some(fox.clone()));
    assert_eq!((status, &d["error"]["type"]), (400, &json!("illegal_argument_exception")), "{d}");
    let (status, d) = s.json("POST", "/a,b/_delete_by_query?max_docs=1", Some(fox.clone()));
    assert_eq!((status, &d["deleted"], &d["total"]), (200, &json!(1), &json!(1)), "{d}");
    assert_eq!(s.json("GET", "/a,b/_count", None).1["count"], json!(5));
    let (status, d) = s.json("POST", "/a,b/_delete_by_query", Some(fox));
    assert_eq!((status, &d["deleted"]), (200, &json!(3)), "{d}");
    assert_eq!(s.json("GET", "/a,b/_count", None).1["count"], json!(2));
    assert_eq!(s.json("GET", "/a,b/_search?q=title:fox", None).1["hits"]["total"]["value"], json!(0));
}

#[test]
fn profile_reports_what_each_index_read() {
    let s = with_docs();
    let body = json!({"query": {"match": {"title": "red"}}, "profile": true});
    let (status, answer) = s.json("POST", "/a,b/_search", Some(body));
    assert_eq!(status, 200, "{answer}");
    let shards = answer["profile"]["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 2, "one entry an index");
    assert_eq!(shards[0]["id"], json!("[needle][a][0]"));
    assert!(shards.iter().all(|s| s["needle"]["needed_total"].is_u64()), "{answer}");
    let (_, plain) = s.json("POST", "/a/_search", Some(json!({"query": {"match": {"title": "red"}}})));
    assert!(plain.get("profile").is_none());
}

#[test]
fn exists_on_a_text_field_finds_the_documents_with_a_word_in_it() {
    let s = TestServer::start();
    let docs =
        [json!({"note": "red fox"}), json!({"other": 1}), json!({"note": ""}), json!({"note": ["", "dog"]})];
    let mut lines = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        lines.push(json!({"index": {"_index": "n", "_id": i.to_string()}}));
        lines.push(d.clone());
    }
    assert_eq!(s.bulk("/_bulk?refresh=true", &lines).1["errors"], json!(false));
    let (status, answer) =
        s.json("POST", "/n/_search", Some(json!({"query": {"exists": {"field": "note"}}})));
    assert_eq!(status, 200, "{answer}");
    let mut found: Vec<&str> =
        answer["hits"]["hits"].as_array().unwrap().iter().map(|h| h["_id"].as_str().unwrap()).collect();
    found.sort();
    assert_eq!(found, ["0", "3"], "an empty string holds no word");
}

#[test]
fn stored_fields_say_whether_the_source_comes_back() {
    let s = with_docs();
    for (stored, source) in
        [(json!("_none_"), false), (json!(["title"]), false), (json!([]), false), (json!(["_source"]), true)]
    {
        let body = json!({"query": {"match": {"title": "fox"}}, "stored_fields": stored});
        let (status, answer) = s.json("POST", "/a/_search", Some(body));
        assert_eq!(status, 200, "{answer}");
        let hit = &answer["hits"]["hits"][0];
        assert!(hit["_id"].is_string());
        assert_eq!(hit.get("_source").is_some(), source, "{stored}: {hit}");
    }
    let (_, answer) = s.json("GET", "/a/_search?stored_fields=_none_&q=fox", None);
    assert!(answer["hits"]["hits"][0].get("_source").is_none(), "{answer}");
}

#[test]
fn update_by_query_writes_the_matches_again_so_a_new_field_is_indexed() {
    let s = TestServer::start();
    let mapping = json!({"mappings": {"dynamic": false, "properties": {"title": {"type": "text"}}}});
    assert_eq!(s.json("PUT", "/u", Some(mapping)).0, 200);
    for (id, title, n) in [("1", "red fox", 5), ("2", "blue fox", 7), ("3", "red sun", 9)] {
        s.json("PUT", &format!("/u/_doc/{id}"), Some(json!({"title": title, "n": n})));
    }
    let added = json!({"properties": {"n": {"type": "long"}}});
    assert_eq!(s.json("PUT", "/u/_mapping", Some(added)).0, 200);
    let in_range = json!({"query": {"range": {"n": {"gte": 6}}}});
    let count = |s: &TestServer| s.json("POST", "/u/_count", Some(in_range.clone())).1["count"].clone();
    assert_eq!(count(&s), json!(0), "written before the field was mapped");

    let foxes = json!({"query": {"match": {"title": "fox"}}});
    let (status, answer) = s.json("POST", "/u/_update_by_query", Some(foxes));
    assert_eq!((status, &answer["total"], &answer["updated"]), (200, &json!(2), &json!(2)), "{answer}");
    assert_eq!(count(&s), json!(1), "document 2 now has n indexed; 3 was not matched");
    assert_eq!(s.json("GET", "/u/_doc/2", None).1["_version"], json!(2));
    assert_eq!(s.json("GET", "/u/_doc/3", None).1["_version"], json!(1));

    let (status, answer) = s.json("POST", "/u/_update_by_query?conflicts=proceed", None);
    assert_eq!((status, &answer["updated"]), (200, &json!(3)), "no query: every document: {answer}");
    assert_eq!(count(&s), json!(2));

    let (status, answer) =
        s.json("POST", "/u/_update_by_query", Some(json!({"script": {"source": "ctx._source.n++"}})));
    assert_eq!((status, &answer["error"]["type"]), (400, &json!("illegal_argument_exception")), "{answer}");
    let (status, _) = s.json("POST", "/u/_update_by_query?conflicts=maybe", None);
    assert_eq!(status, 400);
    assert_eq!(s.json("GET", "/u/_doc/1", None).1["_version"], json!(3), "refused requests changed nothing");
}

#[test]
fn reindex_refuses_what_it_cannot_do_yet_by_name_and_writes_nothing() {
    let s = with_docs();
    for (extra, words) in [
        (json!({"script": {"source": "ctx._source.i++"}}), "[script] is not supported yet"),
        (json!({"source": {"index": "a", "remote": {"host": "http://x:9200"}}}), "remote cluster"),
        (json!({"source": {"index": "a", "slice": {"id": 0, "max": 2}}}), "[source.slice]"),
        (json!({"dest": {"index": "c", "pipeline": "p"}}), "[dest.pipeline]"),
        (json!({"dest": {"index": "c", "version_type": "external"}}), "[dest.version_type]"),
    ] {
        let mut body = json!({"source": {"index": "a"}, "dest": {"index": "c"}});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let (status, answer) = s.json("POST", "/_reindex", Some(body));
        assert_eq!(
            (status, &answer["error"]["type"]),
            (400, &json!("illegal_argument_exception")),
            "{answer}"
        );
        assert!(answer["error"]["reason"].as_str().unwrap().contains(words), "{answer}");
    }
    let (status, answer) = s.json(
        "POST",
        "/_reindex?wait_for_completion=false",
        Some(json!({"source": {"index": "a"}, "dest": {"index": "c"}})),
    );
    assert_eq!(status, 400, "{answer}");
    assert_eq!(s.json("GET", "/c/_count", None).0, 404, "no refused request made the destination");
    let (status, answer) =
        s.json("POST", "/_reindex", Some(json!({"source": {"index": "a,b"}, "dest": {"index": "c"}})));
    assert_eq!((status, &answer["created"]), (200, &json!(6)), "{answer}");
}

/// `_validate/query?explain=true` lists each index: the query Needle made
/// of the request there, or why it could not; a request it cannot read is
/// invalid with that reason. (Whether each is valid is compared with
/// OpenSearch in `opensearch_shard_failures.rs`; the texts are Needle's own.)
#[test]
fn validating_a_query_explains_each_index() {
    let s = TestServer::start();
    let mapping = |kind: &str| json!({"mappings": {"properties": {"n": {"type": kind}}}});
    assert_eq!(s.json("PUT", "/numbers", Some(mapping("long"))).0, 200);
    assert_eq!(s.json("PUT", "/words", Some(mapping("keyword"))).0, 200);
    let term = json!({"query": {"term": {"n": "abc"}}});
    let (status, answer) = s.json("POST", "/numbers,words/_validate/query?explain=true", Some(term));
    assert_eq!((status, &answer["valid"]), (200, &json!(false)), "{answer}");
    let explained = answer["explanations"].as_array().unwrap();
    assert_eq!(explained.len(), 2, "{answer}");
    assert_eq!((&explained[0]["index"], &explained[0]["valid"]), (&json!("numbers"), &json!(false)));
    assert!(explained[0]["error"].as_str().unwrap().contains("failed to create query"), "{answer}");
    assert_eq!((&explained[1]["index"], &explained[1]["valid"]), (&json!("words"), &json!(true)));
    assert!(explained[1]["explanation"].as_str().unwrap().contains("Term"), "{answer}");
    let bogus = json!({"query": {"bogus": {}}});
    let (status, answer) = s.json("POST", "/numbers/_validate/query?explain=true", Some(bogus));
    assert_eq!((status, &answer["valid"]), (200, &json!(false)), "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("unknown query [bogus]"), "{answer}");
    assert!(answer.get("_shards").is_none(), "{answer}");
}
