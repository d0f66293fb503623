//! Field values over HTTP: `sort` (with `missing`, `search_after`, several
//! indexes), `range` and `exists` on numeric, date and boolean fields, and
//! the errors for what they cannot do.

use serde_json::{json, Value};

use crate::harness::TestServer;

/// A document's year, rating, date and flag; `None` where the field is absent.
type Values = (Option<i64>, Option<f64>, Option<&'static str>, Option<bool>);

const DOCS: [Values; 8] = [
    (Some(1999), Some(4.5), Some("1999-12-31T23:59:59Z"), Some(true)),
    (Some(2001), Some(-0.5), Some("2001-03-04"), Some(false)),
    (None, Some(3.0), Some("2020-03-15T08:00:00+02:00"), None),
    (Some(2020), None, Some("2020-03-31"), Some(true)),
    (Some(1999), Some(4.5), None, Some(false)),
    (Some(2024), Some(10.25), Some("2024-02-29"), Some(true)),
    (Some(-50), Some(0.0), Some("2020-04-01"), None),
    (Some(2001), Some(7.0), Some("1970-01-01"), Some(true)),
];

fn server() -> TestServer {
    let s = TestServer::start();
    let mapping = json!({"properties": {"title": {"type": "text"}, "year": {"type": "long"},
        "rating": {"type": "double"}, "when": {"type": "date"}, "ok": {"type": "boolean"}}});
    for index in ["v1", "v2"] {
        assert_eq!(s.json("PUT", &format!("/{index}"), Some(json!({"mappings": mapping.clone()}))).0, 200);
    }
    let mut lines = Vec::new();
    for (i, (year, rating, when, ok)) in DOCS.iter().enumerate() {
        let index = if i % 2 == 0 { "v1" } else { "v2" };
        lines.push(json!({"index": {"_index": index, "_id": i.to_string()}}));
        let mut doc = json!({"title": if i % 3 == 0 { "red fox" } else { "blue fox" }});
        if let Some(y) = year {
            doc["year"] = json!(y);
        }
        if let Some(r) = rating {
            doc["rating"] = json!(r);
        }
        if let Some(w) = when {
            doc["when"] = json!(w);
        }
        if let Some(o) = ok {
            doc["ok"] = json!(o);
        }
        lines.push(doc);
        if i == 3 {
            // Half the documents in on-disk segments, half in memory.
            assert_eq!(s.bulk("/_bulk?refresh=true", &lines).1["errors"], json!(false));
            assert_eq!(s.json("POST", "/_flush", None).0, 200);
            lines.clear();
        }
    }
    assert_eq!(s.bulk("/_bulk?refresh=true", &lines).1["errors"], json!(false));
    s
}

fn ids(answer: &Value) -> Vec<String> {
    let hits = answer["hits"]["hits"].as_array().unwrap_or_else(|| panic!("{answer}"));
    hits.iter().map(|h| h["_id"].as_str().unwrap().to_string()).collect()
}

fn search(s: &TestServer, body: Value) -> Value {
    let (status, answer) = s.json("POST", "/v1,v2/_search", Some(body.clone()));
    assert_eq!(status, 200, "{body}: {answer}");
    answer
}

#[test]
fn sorts_by_field_values_across_indexes() {
    let s = server();
    let answer = search(&s, json!({"sort": [{"year": "desc"}, {"rating": {"order": "asc"}}], "size": 20}));
    assert_eq!(ids(&answer), ["5", "3", "1", "7", "0", "4", "6", "2"], "ties in index order");
    let hits = answer["hits"]["hits"].as_array().unwrap();
    assert_eq!(hits[0]["sort"], json!([2024, 10.25]));
    assert_eq!(hits[2]["sort"], json!([2001, -0.5]));
    assert_eq!(hits[7]["sort"], json!([i64::MIN, 3.0]), "missing sorts last: the lowest long, descending");
    assert_eq!(hits[0]["_score"], Value::Null, "no score unless asked for");
    assert_eq!(answer["hits"]["max_score"], Value::Null);
    let first = search(&s, json!({"sort": [{"rating": {"order": "asc", "missing": "_first"}}], "size": 2}));
    assert_eq!(ids(&first), ["3", "1"]);
    let dates = search(&s, json!({"sort": ["when"], "size": 3, "track_scores": true}));
    assert_eq!(ids(&dates), ["7", "0", "1"]);
    assert_eq!(dates["hits"]["hits"][0]["sort"], json!([0]));
    assert!(dates["hits"]["hits"][0]["_score"].is_number(), "{dates}");
    let by_param = s.json("GET", "/v1,v2/_search?sort=year:asc&size=1", None).1;
    assert_eq!(ids(&by_param), ["6"]);
}

#[test]
fn search_after_pages_through_a_sort() {
    let s = server();
    let sort = json!([{"when": "asc"}, {"_doc": "asc"}]);
    let full = ids(&s.json("POST", "/v1/_search", Some(json!({"sort": sort, "size": 20}))).1);
    let mut paged = Vec::new();
    let mut after: Option<Value> = None;
    loop {
        let mut body = json!({"sort": sort, "size": 1});
        if let Some(a) = &after {
            body["search_after"] = a.clone();
        }
        let page = s.json("POST", "/v1/_search", Some(body)).1;
        let hits = page["hits"]["hits"].as_array().unwrap();
        let Some(last) = hits.last() else { break };
        after = Some(last["sort"].clone());
        paged.extend(ids(&page));
    }
    assert_eq!(paged, full);
    assert_eq!(full.len(), 4);
}

#[test]
fn ranges_and_exists_filter_by_values() {
    let s = server();
    let count = |query: Value| -> Vec<String> {
        let mut got = ids(&search(&s, json!({"query": query, "size": 20})));
        got.sort();
        got
    };
    assert_eq!(count(json!({"range": {"year": {"gte": 1999, "lt": 2020}}})), ["0", "1", "4", "7"]);
    assert_eq!(count(json!({"range": {"year": {"gt": 1999.5}}})), ["1", "3", "5", "7"]);
    assert_eq!(
        count(json!({"range": {"rating": {"gte": 0, "lte": 4.5}}})),
        ["0", "2", "4", "6"],
        "-0.5 out, 0 in"
    );
    // A date without a time of day: its last millisecond for `lte`, its first for `gte`.
    assert_eq!(count(json!({"range": {"when": {"gte": "2020-03-15", "lte": "2020-03-31"}}})), ["2", "3"]);
    assert_eq!(count(json!({"range": {"when": {"gte": "2020-03", "lte": "2020-03"}}})), Vec::<String>::new());
    assert_eq!(count(json!({"range": {"when": {"gt": "2020-03-31"}}})), ["5", "6"]);
    assert_eq!(count(json!({"range": {"ok": {"gte": true}}})), ["0", "3", "5", "7"]);
    assert_eq!(count(json!({"exists": {"field": "year"}})).len(), 7);
    assert_eq!(count(json!({"range": {"nope": {"gte": 1}}})), Vec::<String>::new(), "unmapped: nothing");
    let filtered =
        json!({"bool": {"must": {"match": {"title": "red"}}, "filter": {"range": {"year": {"lte": 2001}}}}});
    assert_eq!(count(filtered), ["0", "6"]);
    let scored = search(&s, json!({"query": {"range": {"year": {"gte": 2024, "boost": 2.5}}}}));
    assert_eq!(scored["hits"]["hits"][0]["_score"], json!(2.5));
}

#[test]
fn what_values_cannot_do_is_refused_clearly() {
    let s = server();
    for (body, kind, words) in [
        (json!({"sort": [{"title": "asc"}]}), "illegal_argument_exception", "Text fields are not optimised"),
        (json!({"sort": [{"nope": "asc"}]}), "query_shard_exception", "No mapping found for [nope]"),
        (
            json!({"sort": ["year"], "search_after": [1, 2]}),
            "illegal_argument_exception",
            "search_after has 2 value(s)",
        ),
        (
            json!({"sort": ["year"], "search_after": [1], "from": 1}),
            "illegal_argument_exception",
            "[from] parameter must be set to 0",
        ),
        (json!({"sort": [{"year": "up"}]}), "illegal_argument_exception", "Unknown SortOrder [up]"),
        (
            json!({"aggs": {"h": {"histogram": {"field": "year", "interval": 5, "extended_bounds": {"min": 9, "max": 1}}}}}),
            "illegal_argument_exception",
            "[extended_bounds.min][9] cannot be greater than [extended_bounds.max][1]",
        ),
        (
            json!({"aggs": {"h": {"date_histogram": {"field": "when", "calendar_interval": "day", "extended_bounds": {"min": "x"}}}}}),
            "parsing_exception",
            "[extended_bounds] of [h] takes a [min] and a [max]",
        ),
        (
            json!({"aggs": {"h": {"histogram": {"field": "year", "interval": 5, "extended_bounds": {"min": 1, "max": 9},
                                                 "hard_bounds": {"min": 2, "max": 9}}}}}),
            "illegal_argument_exception",
            "Extended bounds have to be inside hard bounds",
        ),
        (
            json!({"aggs": {"h": {"date_histogram": {"field": "when", "calendar_interval": "day", "offset": "+6x"}}}}),
            "illegal_argument_exception",
            "[offset] of [h] must be a time value like +6h or -1d, not \"+6x\"",
        ),
        (
            json!({"aggs": {"h": {"histogram": {"field": "year", "interval": 5, "hard_bounds": {"low": 2}}}}}),
            "parsing_exception",
            "[hard_bounds] of [h] takes a [min], a [max] or both",
        ),
        (
            json!({"aggs": {"t": {"terms": {"field": "year", "include": "19.*"}}}}),
            "illegal_argument_exception",
            "[terms] [include] of [t] cannot be a regular expression",
        ),
        (
            json!({"aggs": {"t": {"terms": {"field": "tag", "exclude": {"partition": 0, "num_partitions": 4}}}}}),
            "illegal_argument_exception",
            "[terms] [exclude] of [t] must be a regular expression or a list of values",
        ),
        (
            json!({"aggs": {"t": {"terms": {"field": "tag", "include": {"partition": 4, "num_partitions": 4}}}}}),
            "illegal_argument_exception",
            "[terms] [include] of [t] by partition takes an integer [num_partitions] of at least 1",
        ),
        (
            json!({"aggs": {"t": {"terms": {"field": "year", "include": {"partition": 0}}}}}),
            "illegal_argument_exception",
            "by partition takes",
        ),
        (
            json!({"aggs": {"t": {"terms": {"field": "tag", "include": {"partition": 0, "num_partitions": 2, "x": 1}}}}}),
            "illegal_argument_exception",
            "and nothing else",
        ),
        (
            json!({"aggs": {"t": {"terms": {"field": "year", "include": {"partition": 0, "num_partitions": 2},
                                             "exclude": [1]}}}}),
            "illegal_argument_exception",
            "cannot take an [exclude] with an [include] by partition",
        ),
        (
            json!({"aggs": {"y": {"avg": {"field": "year", "format": "#.#.#"}}}}),
            "illegal_argument_exception",
            "Multiple decimal separators in pattern \"#.#.#\"",
        ),
        (
            json!({"aggs": {"y": {"max": {"field": "year", "format": "0.##E"}}}}),
            "illegal_argument_exception",
            "Malformed exponential pattern in pattern \"0.##E\"",
        ),
        (
            json!({"aggs": {"y": {"cardinality": {"field": "year", "format": "0.0"}}}}),
            "illegal_argument_exception",
            "[y] [format] [0.0] on a long field is not supported by [cardinality]",
        ),
        (
            json!({"aggs": {"y": {"avg": {"field": "year", "missing": "many"}}}}),
            "illegal_argument_exception",
            "[avg] [missing] of [y] is not a value of a long field: \"many\"",
        ),
        (
            json!({"aggs": {"d": {"date_histogram": {"field": "when", "calendar_interval": "day", "missing": "someday"}}}}),
            "illegal_argument_exception",
            "[date_histogram] [missing] of [d] is not a value of a date field",
        ),
        (
            json!({"query": {"range": {"when": {"gte": "someday"}}}}),
            "parse_exception",
            "failed to parse date field [someday]",
        ),
        (
            json!({"query": {"range": {"year": {"gte": 1, "lte": 2, "foo": 3}}}}),
            "parsing_exception",
            "does not support [foo]",
        ),
    ] {
        let (status, answer) = s.json("POST", "/v1/_search", Some(body.clone()));
        assert_eq!(
            (status, answer["error"]["root_cause"][0]["type"].as_str()),
            (400, Some(kind)),
            "{body}: {answer}"
        );
        assert!(
            answer["error"]["root_cause"][0]["reason"].as_str().unwrap().contains(words),
            "{body}: {answer}"
        );
    }
    // The one with no sort values unmapped in one index is missing there, not an error.
    let answer =
        search(&s, json!({"sort": [{"nope": {"order": "asc", "unmapped_type": "long"}}], "size": 1}));
    assert_eq!(answer["hits"]["hits"][0]["sort"], json!([i64::MAX]));
}

/// Scientific and engineering `DecimalFormat` patterns show metrics (doubles)
/// and a long field's keys (exact) as Java shows them (the strings below are
/// what `java.text.DecimalFormat` gives; see tests/golden/java/).
#[test]
fn scientific_formats_show_metrics_and_keys() {
    let s = server();
    let body = json!({"size": 0, "aggs": {
        "years": {"stats": {"field": "year", "format": "##0.##E0"}},
        "keys": {"terms": {"field": "year", "format": "0.0E00"}},
    }});
    let (status, answer) = s.json("POST", "/v1/_search", Some(body));
    assert_eq!(status, 200, "{answer}");
    let years = &answer["aggregations"]["years"];
    let shown: Vec<&str> = ["min_as_string", "max_as_string", "avg_as_string", "sum_as_string"]
        .map(|k| years[k].as_str().unwrap())
        .to_vec();
    assert_eq!(shown, ["-50E0", "1.999E3", "1.316E3", "3.948E3"], "{years}");
    let keys: Vec<&str> = answer["aggregations"]["keys"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["key_as_string"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["2.0E03", "-5.0E01"]);
}

#[test]
fn aggregations_answer_in_elasticsearch_shapes() {
    let s = server();
    let body = json!({"size": 0, "aggs": {
        "years": {"stats": {"field": "year"}},
        "flags": {"terms": {"field": "ok"}},
        "months": {"date_histogram": {"field": "when", "calendar_interval": "month", "min_doc_count": 1},
                   "aggs": {"rating": {"avg": {"field": "rating"}}}},
        "bands": {"range": {"field": "rating", "ranges": [{"to": 3}, {"from": 3}]}},
        "steps": {"histogram": {"field": "rating", "interval": 2}},
        "none": {"max": {"field": "nope"}},
    }});
    let (status, answer) = s.json("POST", "/v1/_search", Some(body));
    assert_eq!(status, 200, "{answer}");
    let aggs = &answer["aggregations"];
    assert_eq!(aggs["years"], json!({"count": 3, "min": -50.0, "max": 1999.0, "avg": 1316.0, "sum": 3948.0}));
    assert_eq!(
        aggs["flags"],
        json!({"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
            {"key": 0, "key_as_string": "false", "doc_count": 1},
            {"key": 1, "key_as_string": "true", "doc_count": 1}]})
    );
    assert_eq!(
        aggs["months"]["buckets"],
        json!([
            {"key": 944006400000i64, "key_as_string": "1999-12-01T00:00:00.000Z", "doc_count": 1, "rating": {"value": 4.5}},
            {"key": 1583020800000i64, "key_as_string": "2020-03-01T00:00:00.000Z", "doc_count": 1, "rating": {"value": 3.0}},
            {"key": 1585699200000i64, "key_as_string": "2020-04-01T00:00:00.000Z", "doc_count": 1, "rating": {"value": 0.0}},
        ])
    );
    assert_eq!(
        aggs["bands"]["buckets"],
        json!([{"key": "*-3.0", "to": 3.0, "doc_count": 1}, {"key": "3.0-*", "from": 3.0, "doc_count": 3}])
    );
    assert_eq!(
        aggs["steps"]["buckets"],
        json!([{"key": 0.0, "doc_count": 1}, {"key": 2.0, "doc_count": 1}, {"key": 4.0, "doc_count": 2}])
    );
    assert_eq!(aggs["none"], json!({"value": null}), "an unmapped field has no values");
    for (aggs, words) in [
        (json!({"t": {"terms": {"field": "title"}}}), "Text fields are not optimised"),
        (json!({"t": {"percentiles": {"field": "year"}}}), "Unknown aggregation type [percentiles]"),
        (json!({"t": {"histogram": {"field": "year", "interval": 0}}}), "[interval] must be >0"),
        (
            json!({"t": {"date_histogram": {"field": "when", "calendar_interval": "2M"}}}),
            "could not be parsed",
        ),
        (json!({"t": {"avg": {"field": "year", "script": "x"}}}), "unknown field [script]"),
        (
            json!({"t": {"histogram": {"field": "rating", "interval": 0.00001}}}),
            "Trying to create too many buckets",
        ),
    ] {
        let (status, answer) = s.json("POST", "/v1/_search", Some(json!({"aggs": aggs})));
        assert_eq!(status, 400, "{aggs}: {answer}");
        assert!(
            answer["error"]["root_cause"][0]["reason"].as_str().unwrap().contains(words),
            "{aggs}: {answer}"
        );
    }
}

#[test]
fn aggregations_over_several_indexes_merge_what_each_gathers() {
    let s = TestServer::start();
    let mapping = json!({"properties": {"tag": {"type": "keyword"}, "n": {"type": "long"},
        "when": {"type": "date"}, "x": {"type": "double"}}});
    for index in ["k1", "k2", "kall"] {
        assert_eq!(s.json("PUT", &format!("/{index}"), Some(json!({"mappings": mapping.clone()}))).0, 200);
    }
    // An index mapping none of the fields, and one mapping `n` as another type.
    let other = json!({"mappings": {"properties": {"other": {"type": "keyword"}}}});
    assert_eq!(s.json("PUT", "/k3", Some(other)).0, 200);
    let conflict = json!({"mappings": {"properties": {"n": {"type": "keyword"}}}});
    assert_eq!(s.json("PUT", "/kconf", Some(conflict)).0, 200);
    let tags = ["red", "blue", "green", "red", "blue", "red"];
    let (mut split, mut all) = (Vec::new(), Vec::new());
    for i in 0..60usize {
        let doc = json!({"tag": tags[i % 6], "n": (i * 7 % 23) as i64,
            "when": format!("2020-{:02}-15", i % 12 + 1), "x": (i % 5) as f64 * 1.5});
        split.push(json!({"index": {"_index": if i % 3 == 0 { "k1" } else { "k2" }, "_id": i.to_string()}}));
        split.push(doc.clone());
        all.push(json!({"index": {"_index": "kall", "_id": i.to_string()}}));
        all.push(doc);
        if i == 30 {
            // Part of k1 and k2 in on-disk segments.
            assert_eq!(s.bulk("/_bulk?refresh=true", &split).1["errors"], json!(false));
            assert_eq!(s.json("POST", "/k1,k2/_flush", None).0, 200);
            split.clear();
        }
    }
    split.push(json!({"index": {"_index": "k3", "_id": "z"}}));
    split.push(json!({"other": "zzz"}));
    assert_eq!(s.bulk("/_bulk?refresh=true", &split).1["errors"], json!(false));
    assert_eq!(s.bulk("/_bulk?refresh=true", &all).1["errors"], json!(false));
    let body = json!({"size": 0, "aggs": {
        "tags": {"terms": {"field": "tag"}, "aggs": {"n": {"stats": {"field": "n"}}}},
        "quarters": {"date_histogram": {"field": "when", "calendar_interval": "quarter"},
                     "aggs": {"x": {"avg": {"field": "x"}}}},
        "steps": {"histogram": {"field": "x", "interval": 2}},
        "bands": {"range": {"field": "n", "ranges": [{"to": 10}, {"from": 10}]}},
        "distinct": {"cardinality": {"field": "tag"}},
        "reds": {"filter": {"term": {"tag": "red"}}, "aggs": {"top": {"max": {"field": "n"}}}},
    }});
    let (status, one) = s.json("POST", "/kall/_search", Some(body.clone()));
    assert_eq!(status, 200, "{one}");
    let (status, several) = s.json("POST", "/k1,k2,k3/_search", Some(body));
    assert_eq!(status, 200, "{several}");
    assert_eq!(several["aggregations"], one["aggregations"], "one index holding them all answers the same");
    assert_eq!(several["aggregations"]["tags"]["buckets"][0]["doc_count"], json!(30));
    assert_eq!(several["hits"]["total"]["value"], json!(61));
    for (body, words) in [
        (json!({"aggs": {"s": {"terms": {"field": "n"}}}}), "mapped as"),
        (json!({"aggs": {"s": {"terms": {"field": "tag"}, "aggs": {"h": {"top_hits": {}}}}}}), "[top_hits]"),
    ] {
        let (status, answer) = s.json("POST", "/k1,kconf/_search", Some(body.clone()));
        assert_eq!(status, 400, "{body}: {answer}");
        assert!(answer["error"]["reason"].as_str().unwrap().contains(words), "{body}: {answer}");
    }
}

#[test]
fn the_bundled_corpus_sorts_filters_and_aggregates_by_year() {
    let s = TestServer::start_demo();
    let body = json!({"size": 1, "sort": [{"year": "desc"}], "_source": ["title", "year", "president"],
        "query": {"range": {"year": {"gte": 1900, "lt": 2000}}},
        "aggs": {"by_century": {"histogram": {"field": "year", "interval": 100},
                                "aggs": {"longest": {"max": {"field": "words"}}}}}});
    let (status, answer) = s.json("POST", "/sotu/_search", Some(body));
    assert_eq!(status, 200, "{answer}");
    let top = &answer["hits"]["hits"][0]["_source"];
    assert_eq!(top["year"], json!(1999), "{answer}");
    assert_eq!(top["president"], json!("William J Clinton"), "{answer}");
    let buckets = answer["aggregations"]["by_century"]["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 1, "the 1900s only: {answer}");
    assert_eq!(buckets[0]["doc_count"], answer["hits"]["total"]["value"]);
    assert!(buckets[0]["longest"]["value"].as_f64().unwrap() > 1000.0, "{answer}");
}

/// `_update` of numeric fields only sets their values in place (no copy of
/// the document is deleted and re-added); searches, sorts, term and range
/// queries, `_source` and versions see the new values at once.
#[test]
fn numeric_updates_are_made_in_place() {
    let s = server();
    let deleted = |s: &TestServer| {
        let (_, cat) = s.json("GET", "/_cat/indices/v1?format=json", None);
        cat[0]["docs.deleted"].as_str().unwrap().parse::<u64>().unwrap()
    };
    let before = s.json("GET", "/v1/_doc/0", None).1;
    let body = json!({"doc": {"year": 3000, "rating": "1.25", "when": "2030-01-02"}});
    let (status, done) = s.json("POST", "/v1/_update/0?refresh=true", Some(body));
    assert_eq!((status, done["result"].as_str()), (200, Some("updated")), "{done}");
    assert_eq!(done["_version"], json!(before["_version"].as_u64().unwrap() + 1));
    assert_eq!(deleted(&s), 0, "no copy was deleted: the values changed in place");
    let got = s.json("GET", "/v1/_doc/0", None).1;
    assert_eq!(got["_source"]["year"], json!(3000));
    assert_eq!(got["_source"]["rating"], json!("1.25"), "the value as given");
    assert_eq!(got["_source"]["title"], before["_source"]["title"]);
    for query in [
        json!({"term": {"year": 3000}}),
        json!({"range": {"rating": {"gte": 1, "lte": 1.5}}}),
        json!({"range": {"when": {"gte": "2030-01-01"}}}),
        json!({"bool": {"filter": [{"term": {"ok": true}}, {"term": {"year": "3000"}}]}}),
    ] {
        let (_, found) = s.json("POST", "/v1/_search", Some(json!({"query": query.clone()})));
        let ids: Vec<&Value> = found["hits"]["hits"].as_array().unwrap().iter().map(|h| &h["_id"]).collect();
        assert_eq!(ids, [&json!("0")], "{query}: {found}");
    }
    let (_, old) = s.json("POST", "/v1/_search", Some(json!({"query": {"term": {"year": 1999}}})));
    assert!(old["hits"]["hits"].as_array().unwrap().iter().all(|h| h["_id"] != "0"), "{old}");
    let (_, top) = s.json("POST", "/v1/_search", Some(json!({"sort": [{"year": "desc"}], "size": 1})));
    assert_eq!(top["hits"]["hits"][0]["sort"], json!([3000]));
    // A text field in the change: the document is indexed again.
    let (_, done) =
        s.json("POST", "/v1/_update/0?refresh=true", Some(json!({"doc": {"title": "green", "year": 1}})));
    assert_eq!(done["result"], json!("updated"));
    assert_eq!(deleted(&s), 1);
    let got = s.json("GET", "/v1/_doc/0", None).1["_source"].clone();
    assert_eq!(
        (got["title"].clone(), got["year"].clone(), got["rating"].clone()),
        (json!("green"), json!(1), json!("1.25"))
    );
}

/// A binary field over HTTP: its base64 values are kept as doc values,
/// shown by `docvalue_fields` (unpadded, as OpenSearch shows them), found by
/// `exists`, updated in place by `_update`, and refused where Elasticsearch
/// refuses them (search, sort, text fields' doc values).
#[test]
fn binary_values_are_kept_shown_and_updated_in_place() {
    let s = TestServer::start();
    let mapping =
        json!({"properties": {"title": {"type": "text"}, "blob": {"type": "binary", "doc_values": true}}});
    assert_eq!(s.json("PUT", "/b", Some(json!({"mappings": mapping}))).0, 200);
    let lines = [
        json!({"index": {"_index": "b", "_id": "1"}}),
        json!({"title": "one", "blob": "AAEC"}),
        json!({"index": {"_index": "b", "_id": "2"}}),
        json!({"title": "two"}),
        json!({"index": {"_index": "b", "_id": "3"}}),
        json!({"title": "three", "blob": ["AA==", "AQ=="]}),
    ];
    let (_, bulk) = s.bulk("/_bulk?refresh=true", &lines);
    assert_eq!(bulk["items"][2]["index"]["status"], json!(400), "{bulk}");
    assert!(bulk["items"][2]["index"]["error"]["reason"].as_str().unwrap().contains("one value a document"));
    let shown = |s: &TestServer| {
        let body = json!({"sort": [{"_doc": "asc"}], "docvalue_fields": ["blob"], "_source": false});
        let (status, found) = s.json("POST", "/b/_search", Some(body));
        assert_eq!(status, 200, "{found}");
        found["hits"]["hits"].as_array().unwrap().iter().map(|h| h.get("fields").cloned()).collect::<Vec<_>>()
    };
    assert_eq!(shown(&s), [Some(json!({"blob": ["AAEC"]})), None]);
    let (_, with) = s.json("POST", "/b/_search", Some(json!({"query": {"exists": {"field": "blob"}}})));
    assert_eq!(ids(&with), ["1"]);
    let (status, done) = s.json("POST", "/b/_update/2?refresh=true", Some(json!({"doc": {"blob": "/w=="}})));
    assert_eq!((status, done["result"].as_str()), (200, Some("updated")), "{done}");
    let (_, cat) = s.json("GET", "/_cat/indices/b?format=json", None);
    assert_eq!(cat[0]["docs.deleted"], json!("0"), "the value changed in place");
    assert_eq!(shown(&s), [Some(json!({"blob": ["AAEC"]})), Some(json!({"blob": ["/w"]}))]);
    assert_eq!(s.json("GET", "/b/_doc/2", None).1["_source"], json!({"title": "two", "blob": "/w=="}));
    for (body, want) in [
        (json!({"query": {"term": {"blob": "AA=="}}}), "Binary fields do not support searching"),
        (json!({"sort": ["blob"]}), "can't sort on binary field"),
        (json!({"docvalue_fields": ["title"]}), "Text fields are not optimised"),
        (json!({"docvalue_fields": [{"field": "blob", "format": "hex"}]}), "format [hex] is not supported"),
    ] {
        let (status, err) = s.json("POST", "/b/_search", Some(body.clone()));
        assert_eq!(status, 400, "{body}: {err}");
        assert!(err["error"]["root_cause"][0]["reason"].as_str().unwrap().contains(want), "{body}: {err}");
    }
    let (status, err) = s.json("POST", "/b/_update/1", Some(json!({"doc": {"blob": "%%"}})));
    assert_eq!(status, 400, "{err}");
    assert_eq!(shown(&s)[0], Some(json!({"blob": ["AAEC"]})), "a refused update changes nothing");
}

/// An index created with `index.sort.*` settings: shown back, its sort's
/// field not updated in place (`_update` re-indexes the document), searches
/// sorted by it answer as the unsorted index does after a force-merge wrote
/// its segment in order; settings it cannot honour are refused.
#[test]
fn index_sort_settings() {
    let s = server();
    let mapping = json!({"properties": {"title": {"type": "text"}, "year": {"type": "long"}}});
    let settings = json!({"index": {"sort.field": "year", "sort.order": "desc"}});
    let (status, body) = s.json("PUT", "/sorted", Some(json!({"settings": settings, "mappings": mapping})));
    assert_eq!(status, 200, "{body}");
    let (_, shown) = s.json("GET", "/sorted/_settings", None);
    assert_eq!(shown["sorted"]["settings"]["index"]["sort"]["field"], json!(["year"]), "{shown}");
    assert_eq!(shown["sorted"]["settings"]["index"]["sort"]["order"], json!(["desc"]), "{shown}");
    let mut lines = Vec::new();
    for (i, (year, ..)) in DOCS.iter().enumerate() {
        lines.push(json!({"index": {"_index": "sorted", "_id": i.to_string()}}));
        lines.push(match year {
            Some(y) => json!({"title": "fox", "year": y}),
            None => json!({"title": "fox"}),
        });
    }
    assert_eq!(s.bulk("/_bulk?refresh=true", &lines).1["errors"], json!(false));
    let (status, body) = s.json("POST", "/sorted/_update/1", Some(json!({"doc": {"year": 2030}})));
    assert_eq!(status, 200, "{body}");
    assert_eq!(s.json("POST", "/sorted/_forcemerge?max_num_segments=1", None).0, 200);
    let by_year = json!({"sort": [{"year": "desc"}, {"_id": "asc"}], "size": 3});
    let (_, found) = s.json("POST", "/sorted/_search", Some(by_year.clone()));
    assert_eq!(ids(&found), ["1", "5", "3"], "{found}");
    let (_, all) = s.json("POST", "/v1,v2/_search", Some(by_year));
    assert_eq!(ids(&all), ["5", "3", "1"], "the same documents without the update, unsorted");
    for (settings, says) in [
        (json!({"index.sort.field": "title"}), "of type [text]"),
        (json!({"index.sort.field": "nope"}), "unknown index sort field:[nope]"),
    ] {
        let (status, body) = s.json("PUT", "/bad", Some(json!({"settings": settings, "mappings": mapping})));
        assert_eq!(status, 400, "{body}");
        assert!(body["error"]["reason"].as_str().unwrap().contains(says), "{body}");
    }
}

/// Fields other than text mapped with `index: false` are doc values only:
/// sorted by, filtered by a numeric range and aggregated over HTTP; a term
/// query on such a keyword is refused as Elasticsearch refused it.
#[test]
fn fields_not_indexed_are_doc_values() {
    let s = TestServer::start();
    let mapping = json!({"properties": {"year": {"type": "long", "index": false}, "tag": {"type": "keyword", "index": false}}});
    assert_eq!(s.json("PUT", "/dv", Some(json!({"mappings": mapping}))).0, 200);
    let lines: Vec<Value> = (0..6)
        .flat_map(|i| {
            let tag = ["x", "y"][i % 2];
            [json!({"index": {"_index": "dv", "_id": i.to_string()}}), json!({"year": 2000 + i, "tag": tag})]
        })
        .collect();
    assert_eq!(s.bulk("/_bulk?refresh=true", &lines).1["errors"], json!(false));
    let (_, sorted) = s.json("POST", "/dv/_search", Some(json!({"sort": [{"year": "desc"}], "size": 2})));
    assert_eq!(ids(&sorted), ["5", "4"]);
    let (_, ranged) =
        s.json("POST", "/dv/_count", Some(json!({"query": {"range": {"year": {"gte": 2003}}}})));
    assert_eq!(ranged["count"], 3, "{ranged}");
    let aggs = json!({"size": 0, "aggs": {"t": {"terms": {"field": "tag"}}}});
    let (_, tags) = s.json("POST", "/dv/_search", Some(aggs));
    assert_eq!(tags["aggregations"]["t"]["buckets"][0], json!({"key": "x", "doc_count": 3}), "{tags}");
    let (status, refused) = s.json("POST", "/dv/_search", Some(json!({"query": {"term": {"tag": "x"}}})));
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused["error"]["root_cause"][0]["reason"].as_str().unwrap().contains("not indexed"),
        "{refused}"
    );
}

#[test]
fn a_date_fields_mapped_format_reads_and_shows_its_dates() {
    let s = TestServer::start();
    let mapping = json!({"properties": {"day": {"type": "date", "format": "dd/MM/yyyy||epoch_millis"}}});
    assert_eq!(s.json("PUT", "/d", Some(json!({"mappings": mapping}))).0, 200);
    let shown = s.json("GET", "/d/_mapping", None).1;
    assert_eq!(shown["d"]["mappings"]["properties"]["day"]["format"], json!("dd/MM/yyyy||epoch_millis"));
    for (id, day) in
        [("a", json!("05/03/2024")), ("b", json!("29/02/2024")), ("c", json!(1_709_856_000_000i64))]
    {
        assert_eq!(s.json("PUT", &format!("/d/_doc/{id}?refresh=true"), Some(json!({"day": day}))).0, 201);
    }
    // Not in the mapping's format: refused, naming the format, and nothing written.
    let (status, err) = s.json("PUT", "/d/_doc/x", Some(json!({"day": "2024-03-05"})));
    assert_eq!(status, 400, "{err}");
    assert!(err["error"]["reason"].as_str().unwrap().contains("dd/MM/yyyy||epoch_millis"), "{err}");
    // A range reads its bounds in the mapping's format; the hits show it.
    let body = json!({"query": {"range": {"day": {"gte": "01/03/2024", "lte": "06/03/2024"}}},
                      "sort": [{"day": "asc"}], "docvalue_fields": ["day"], "_source": false});
    let answer = s.json("POST", "/d/_search", Some(body)).1;
    assert_eq!(ids(&answer), ["a"]);
    assert_eq!(answer["hits"]["hits"][0]["fields"]["day"], json!(["05/03/2024"]));
    let histogram = json!({"size": 0, "aggs": {"days": {"date_histogram": {"field": "day", "calendar_interval": "month"}}}});
    let buckets = s.json("POST", "/d/_search", Some(histogram)).1["aggregations"]["days"]["buckets"].clone();
    assert_eq!(buckets[0]["key_as_string"], json!("01/02/2024"));
    assert_eq!(buckets[1]["key_as_string"], json!("01/03/2024"));
    for (range, words) in [
        (json!({"gte": "2024", "format": "yyyy-ww"}), "[ww]"),
        (json!({"gte": "2024", "time_zone": "Mars/Base"}), "unknown time zone [Mars/Base]"),
        (json!({"gte": "2024-03-05"}), "with format [dd/MM/yyyy||epoch_millis]"),
        (json!({"gte": "now-1x"}), "failed to parse date field [now-1x]"),
    ] {
        let (status, err) = s.json("POST", "/d/_search", Some(json!({"query": {"range": {"day": range}}})));
        assert_eq!(status, 400, "{err}");
        assert!(err["error"]["root_cause"][0]["reason"].as_str().unwrap().contains(words), "{words}: {err}");
    }
    let (status, err) = s.json(
        "PUT",
        "/bad",
        Some(json!({"mappings": {"properties": {"t": {"type": "date", "format": "yyyy-ww"}}}})),
    );
    assert_eq!(status, 400, "{err}");
    assert!(err["error"]["reason"].as_str().unwrap().contains("[ww]"), "{err}");
}
