//! An index's own analyzers (`settings.analysis.analyzer`): its text fields
//! are indexed and searched with them, dynamic ones with its `default`;
//! they are kept across a restart, come with a template, and what Needle
//! cannot make is refused by name, changing nothing. (How they analyze and
//! how the settings show them is checked against OpenSearch in
//! `opensearch_analyze.rs`.)

use serde_json::{json, Value};

use crate::harness::TestServer;

fn ids(found: &Value) -> Vec<&str> {
    let mut ids: Vec<&str> =
        found["hits"]["hits"].as_array().unwrap().iter().map(|h| h["_id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids
}

#[test]
fn fields_are_indexed_and_searched_with_the_index_analyzers() {
    let dir = tempfile::tempdir().unwrap();
    let analysis = json!({"analyzer": {"default": {"type": "english"}, "few": {"type": "standard", "stopwords": ["fox"]}}});
    {
        let s = TestServer::start_with(|c| c, dir.path());
        let body = json!({"settings": {"index": {"analysis": analysis}},
                          "mappings": {"properties": {"named": {"type": "text", "analyzer": "few"}}}});
        let (status, answer) = s.json("PUT", "/a", Some(body));
        assert_eq!(status, 200, "{answer}");
        let doc = json!({"named": "a fox running", "brought": "the foxes were running"});
        assert_eq!(s.json("PUT", "/a/_doc/1?refresh=true", Some(doc)).0, 201);
    }
    let s = TestServer::start_with(|c| c, dir.path());
    let search = |field: &str, text: &str| {
        let (status, found) = s.json("POST", "/a/_search", Some(json!({"query": {"match": {field: text}}})));
        assert_eq!(status, 200, "{found}");
        found
    };
    // `brought` came with the document: the default (english) stems it, after the restart too.
    assert_eq!(ids(&search("brought", "fox run")), ["1"]);
    // `few` removes `fox` and does not stem.
    assert_eq!(ids(&search("named", "running")), ["1"]);
    assert!(ids(&search("named", "run")).is_empty());
    assert!(ids(&search("named", "fox")).is_empty());
    let (_, settings) = s.json("GET", "/a/_settings", None);
    assert_eq!(settings["a"]["settings"]["index"]["analysis"], analysis);
}

#[test]
fn a_template_brings_its_analyzers() {
    let s = TestServer::start();
    let template = json!({"index_patterns": ["logs-*"], "template": {
        "settings": {"analysis": {"analyzer": {"default": {"type": "english"}}}},
        "mappings": {"properties": {"msg": {"type": "text", "analyzer": "default"}}}}});
    let (status, answer) = s.json("PUT", "/_index_template/logs", Some(template));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(s.json("PUT", "/logs-1/_doc/1?refresh=true", Some(json!({"msg": "dogs barking"}))).0, 201);
    let (_, found) =
        s.json("POST", "/logs-1/_search", Some(json!({"query": {"match": {"msg": "dog bark"}}})));
    assert_eq!(ids(&found), ["1"]);
}

#[test]
fn what_cannot_be_made_is_refused_by_name_and_changes_nothing() {
    let s = TestServer::start();
    for (settings, says) in [
        (
            json!({"analysis": {"analyzer": {"x": {"type": "custom", "tokenizer": "classic"}}}}),
            "tokenizer [classic]",
        ),
        (
            json!({"analysis": {"analyzer": {"x": {"tokenizer": "standard", "filter": ["common_grams"]}}}}),
            "[common_grams]",
        ),
        (
            json!({"analysis": {"analyzer": {"x": {"tokenizer": "standard", "filter": ["shingle", "shingle"]}}}}),
            "a second shingle or cjk_bigram filter",
        ),
        (
            json!({"analysis": {"analyzer": {"x": {"type": "klingon"}}}}),
            "Unknown analyzer type [klingon] for [x]",
        ),
        (json!({"analysis": {"tokenizer": {"t": {"type": "classic"}}}}), "tokenizer type [classic]"),
        // OpenSearch answers this one with a 500.
        (
            json!({"analysis": {"tokenizer": {"t": {"type": "char_group", "tokenize_on_chars": ["nope"]}}}}),
            "Invalid escaped char in [nope]",
        ),
        (
            json!({"analysis": {"tokenizer": {"t": {"type": "pattern", "pattern": "(a"}}}}),
            "the pattern cannot be read",
        ),
    ] {
        let (status, answer) = s.json("PUT", "/b", Some(json!({"settings": settings})));
        assert_eq!(
            (status, &answer["error"]["type"]),
            (400, &json!("illegal_argument_exception")),
            "{answer}"
        );
        assert!(answer["error"]["reason"].as_str().unwrap().contains(says), "{answer}");
    }
    let unknown = json!({"mappings": {"properties": {"t": {"type": "text", "analyzer": "mine"}}}});
    let (status, answer) = s.json("PUT", "/b", Some(unknown));
    assert_eq!((status, &answer["error"]["type"]), (400, &json!("mapper_parsing_exception")), "{answer}");
    assert_eq!(s.call("HEAD", "/b", None).status, 404, "a refused creation makes no index");

    assert_eq!(s.json("PUT", "/c", None).0, 200);
    let change = json!({"analysis": {"analyzer": {"default": {"type": "english"}}}});
    let (status, answer) = s.json("PUT", "/c/_settings", Some(change));
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["error"]["reason"].as_str().unwrap().contains("Can't update non dynamic settings"),
        "{answer}"
    );
    let (_, settings) = s.json("GET", "/c/_settings", None);
    assert!(settings["c"]["settings"]["index"].get("analysis").is_none(), "{settings}");
}

/// Synonym rules are kept with the index (through a restart) and searched:
/// several terms at one position of a query (synonyms, an n-gram filter
/// without a search analyzer) are one synonym query, or one place of a
/// phrase that any of them may fill, whose scores `opensearch_multi_fields.rs`
/// checks against OpenSearch's; a rule of several words is searched as a
/// graph, a phrase without slop over it as a span query. A fuzzy match over
/// such a position is refused by name.
#[test]
fn synonyms_are_kept_searched_and_marked_and_what_needle_cannot_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = TestServer::start_with(|c| c, dir.path());
        let settings = json!({"analysis": {
            "filter": {"prefixes": {"type": "edge_ngram", "min_gram": 1, "max_gram": 5},
                       "same": {"type": "synonym", "synonyms": ["quick, fast"]}},
            "analyzer": {"autocomplete": {"tokenizer": "standard", "filter": ["lowercase", "prefixes"]},
                         "alike": {"tokenizer": "standard", "filter": ["lowercase", "same"]}},
        }});
        let mappings = json!({"properties": {"p": {"type": "text", "analyzer": "autocomplete"},
                                             "t": {"type": "text", "analyzer": "alike"}}});
        let (status, answer) = s.json("PUT", "/g", Some(json!({"settings": settings, "mappings": mappings})));
        assert_eq!(status, 200, "{answer}");
        let doc = json!({"p": "Quick fox", "t": "a quick fox"});
        assert_eq!(s.json("PUT", "/g/_doc/1?refresh=true", Some(doc)).0, 201);
    }
    let s = TestServer::start_with(|c| c, dir.path());
    let search = |query: Value| s.json("POST", "/g/_search", Some(json!({"query": query})));
    for query in
        [json!({"match": {"t": "fast"}}), json!({"match": {"p": "qui"}}), json!({"term": {"p": "qui"}})]
    {
        let (status, found) = search(query.clone());
        assert_eq!((status, ids(&found)), (200, vec!["1"]), "{query}: {found}");
    }
    // A phrase over such a position (Lucene's multi-phrase query), marked where it matched.
    let phrase = json!({"query": {"match_phrase": {"t": "fast fox"}}, "highlight": {"fields": {"t": {}}}});
    let (status, found) = s.json("POST", "/g/_search", Some(phrase));
    assert_eq!((status, ids(&found)), (200, vec!["1"]), "{found}");
    let marked = found["hits"]["hits"][0]["highlight"]["t"][0].as_str().unwrap();
    assert!(marked.contains("<em>quick") && marked.contains("fox</em>"), "{found}");
    // Explained as scored: one term for the position, one phrase over it.
    for query in [json!({"match": {"t": "fast"}}), json!({"match_phrase": {"t": "fast fox"}})] {
        let (_, found) = s.json("POST", "/g/_search", Some(json!({"query": query, "explain": true})));
        let hit = &found["hits"]["hits"][0];
        assert_eq!(hit["_explanation"]["value"], hit["_score"], "{query}: {found}");
    }
    let (status, answer) = search(json!({"match": {"t": {"query": "fast", "fuzziness": 1}}}));
    assert_eq!(status, 400, "{answer}");
    let reason = answer["error"]["root_cause"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("[fast] and [quick]") && reason.contains("not supported yet"), "{answer}");
    // A rule of several words: searched as a graph (a phrase of the words or the
    // other side), a phrase over it without slop as Lucene's span query.
    let multi_word = json!({"settings": {"analysis": {
        "filter": {"city": {"type": "synonym_graph", "synonyms": ["new york, ny"]}},
        "analyzer": {"a": {"tokenizer": "standard", "filter": ["lowercase", "city"]}}}},
        "mappings": {"properties": {"c": {"type": "text", "search_analyzer": "a"}}}});
    assert_eq!(s.json("PUT", "/h", Some(multi_word)).0, 200);
    assert_eq!(s.json("PUT", "/h/_doc/1?refresh=true", Some(json!({"c": "New York city"}))).0, 201);
    assert_eq!(s.json("PUT", "/h/_doc/2?refresh=true", Some(json!({"c": "york new"}))).0, 201);
    let found = |query: Value| -> Vec<String> {
        let answer = s.json("POST", "/h/_search", Some(json!({"query": query}))).1;
        ids(&answer).into_iter().map(String::from).collect()
    };
    assert_eq!(found(json!({"match": {"c": "NY"}})), vec!["1"]);
    assert_eq!(found(json!({"match": {"c": {"query": "ny city", "operator": "and"}}})), vec!["1"]);
    assert_eq!(found(json!({"match_phrase": {"c": "ny city"}})), vec!["1"]);
    assert!(found(json!({"match_phrase": {"c": "city ny"}})).is_empty());
    // Explained as scored, and marked where it matched.
    let phrase = json!({"query": {"match_phrase": {"c": "ny city"}}, "explain": true, "highlight": {"fields": {"c": {}}}});
    let (_, answer) = s.json("POST", "/h/_search", Some(phrase));
    let hit = &answer["hits"]["hits"][0];
    assert_eq!(hit["_explanation"]["value"], hit["_score"], "{answer}");
    assert_eq!(hit["highlight"]["c"][0], "<em>New York city</em>", "{answer}");
}

/// `index.max_ngram_diff` is kept with the index (through a restart), shown
/// with its settings, bounds what `_analyze` defines in place, and an update
/// of it is refused by name, changing nothing.
#[test]
fn the_ngram_bound_is_kept_shown_and_not_updated_in_place() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = TestServer::start_with(|c| c, dir.path());
        let (status, answer) =
            s.json("PUT", "/n", Some(json!({"settings": {"index": {"max_ngram_diff": 3}}})));
        assert_eq!(status, 200, "{answer}");
    }
    let s = TestServer::start_with(|c| c, dir.path());
    let (_, settings) = s.json("GET", "/n/_settings", None);
    assert_eq!(settings["n"]["settings"]["index"]["max_ngram_diff"], "3", "{settings}");
    assert!(settings["n"]["settings"]["index"].get("analysis").is_none(), "{settings}");
    let wide = json!({"tokenizer": "keyword", "filter": [{"type": "ngram", "min_gram": 1, "max_gram": 4}], "text": "ab"});
    let (status, answer) = s.json("POST", "/n/_analyze", Some(wide.clone()));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["tokens"].as_array().unwrap().len(), 3, "{answer}");
    assert_eq!(s.json("POST", "/_analyze", Some(wide)).0, 400, "one apart without an index");
    let (status, answer) = s.json("PUT", "/n/_settings", Some(json!({"index": {"max_ngram_diff": 5}})));
    assert_eq!((status, &answer["error"]["type"]), (400, &json!("illegal_argument_exception")), "{answer}");
    let (_, settings) = s.json("GET", "/n/_settings", None);
    assert_eq!(settings["n"]["settings"]["index"]["max_ngram_diff"], "3");
}

/// Char filters are kept with the index (through a restart): a field
/// analyzed through them is found by the filtered words, and its highlight
/// marks the original text, the offsets walked back through the filters.
/// What Needle refuses when the filter is made (a rule without `=>`, which
/// OpenSearch answers with a 500; a pattern it cannot read; a group the
/// pattern lacks, which Java finds only when text matches; a parameter
/// Needle does not know) is refused by name and creates nothing. Markup
/// stripped by `html_strip` is not found, and the highlight marks the word
/// inside the original markup.
#[test]
fn char_filters_are_kept_and_mark_the_original_text_and_bad_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = TestServer::start_with(|c| c, dir.path());
        let settings = json!({"analysis": {
            "char_filter": {"spell": {"type": "mapping", "mappings": ["ph => f", "& => \\u0020and\\u0020"]}},
            "analyzer": {"spelled": {"tokenizer": "standard", "char_filter": ["spell"], "filter": ["lowercase"]}},
        }});
        let mappings = json!({"properties": {"t": {"type": "text", "analyzer": "spelled"}}});
        let (status, answer) = s.json("PUT", "/c", Some(json!({"settings": settings, "mappings": mappings})));
        assert_eq!(status, 200, "{answer}");
        assert_eq!(s.json("PUT", "/c/_doc/1?refresh=true", Some(json!({"t": "phone home & garden"}))).0, 201);
    }
    let s = TestServer::start_with(|c| c, dir.path());
    let query = json!({"query": {"match": {"t": "fone"}}, "highlight": {"fields": {"t": {}}}});
    let (status, found) = s.json("POST", "/c/_search", Some(query));
    assert_eq!((status, ids(&found)), (200, vec!["1"]), "{found}");
    assert_eq!(found["hits"]["hits"][0]["highlight"]["t"][0], "<em>phone</em> home & garden", "{found}");
    let (_, found) = s.json("POST", "/c/_search", Some(json!({"query": {"match": {"t": "and"}}})));
    assert_eq!(ids(&found), ["1"], "`&` was indexed as `and`");
    let settings =
        json!({"analysis": {"analyzer": {"web": {"tokenizer": "standard", "char_filter": ["html_strip"]}}}});
    let mappings = json!({"properties": {"t": {"type": "text", "analyzer": "web"}}});
    assert_eq!(s.json("PUT", "/h", Some(json!({"settings": settings, "mappings": mappings}))).0, 200);
    let page = "<p class=\"lead\">The <b>caf&eacute;</b> is open</p>";
    assert_eq!(s.json("PUT", "/h/_doc/1?refresh=true", Some(json!({"t": page}))).0, 201);
    for (word, found) in [("café", true), ("lead", false), ("eacute", false), ("b", false)] {
        let (_, answer) = s.json("POST", "/h/_search", Some(json!({"query": {"match": {"t": word}}})));
        assert_eq!(!ids(&answer).is_empty(), found, "{word}: {answer}");
    }
    let query = json!({"query": {"match": {"t": "café"}}, "highlight": {"fields": {"t": {}}}});
    let (_, found) = s.json("POST", "/h/_search", Some(query));
    // The token's end is past the `</b>` stripped after it, as Lucene's offsets go: OpenSearch marks the same.
    let marked = "<p class=\"lead\">The <b><em>caf&eacute;</b></em> is open</p>";
    assert_eq!(found["hits"]["hits"][0]["highlight"]["t"][0], marked, "{found}");
    for (filter, says) in [
        (json!({"type": "mapping", "mappings": ["no arrow"]}), "Invalid Mapping Rule : [no arrow]"),
        (json!({"type": "pattern_replace", "pattern": "(a"}), "the pattern cannot be read"),
        (json!({"type": "pattern_replace", "pattern": "(a)", "replacement": "$2"}), "No group 2"),
        (json!({"type": "html_strip", "read_tags": ["b"]}), "[index.analysis.char_filter.f.read_tags]"),
    ] {
        let settings = json!({"analysis": {"char_filter": {"f": filter}}});
        let (status, answer) = s.json("PUT", "/d", Some(json!({"settings": settings})));
        assert_eq!(
            (status, &answer["error"]["type"]),
            (400, &json!("illegal_argument_exception")),
            "{answer}"
        );
        assert!(answer["error"]["reason"].as_str().unwrap().contains(says), "{says}: {answer}");
        assert_eq!(s.call("HEAD", "/d", None).status, 404, "a refused creation makes no index");
    }
}

#[test]
fn a_query_naming_an_analyzer_the_index_lacks_is_refused_by_name() {
    let s = TestServer::start();
    let mapping = json!({"mappings": {"properties": {"t": {"type": "text"}}}});
    assert_eq!(s.json("PUT", "/a", Some(mapping)).0, 200);
    for (kind, query) in [
        ("match", json!({"match": {"t": {"query": "x", "analyzer": "nope"}}})),
        ("match_phrase", json!({"match_phrase": {"t": {"query": "x y", "analyzer": "nope"}}})),
        ("query_string", json!({"query_string": {"query": "x", "quote_analyzer": "nope"}})),
        ("simple_query_string", json!({"simple_query_string": {"query": "x", "analyzer": "nope"}})),
    ] {
        let (status, answer) = s.json("POST", "/a/_search", Some(json!({"query": query})));
        assert_eq!(status, 400, "{answer}");
        assert_eq!(answer["error"]["type"], "search_phase_execution_exception", "{answer}");
        assert_eq!(answer["error"]["root_cause"][0]["type"], "query_shard_exception", "{answer}");
        assert_eq!(
            answer["error"]["root_cause"][0]["reason"],
            format!("[{kind}] analyzer [nope] not found"),
            "{answer}"
        );
    }
    // A phrase prefix needs positions: a keyword field has none.
    assert_eq!(s.json("PUT", "/a/_mapping", Some(json!({"properties": {"k": {"type": "keyword"}}}))).0, 200);
    let query = json!({"query": {"match_phrase_prefix": {"k": "ab"}}});
    let (status, answer) = s.json("POST", "/a/_search", Some(query));
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["error"]["root_cause"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("[k] which is of type [keyword]"),
        "{answer}"
    );
}

/// A mapping update that changes what the index holds is refused naming each
/// parameter, on every index it names before any changes: one refused leaves
/// the others as they were.
#[test]
fn a_mapping_update_refused_on_one_index_changes_none() {
    let s = TestServer::start();
    let text = |analyzer: &str| json!({"properties": {"t": {"type": "text", "analyzer": analyzer}}});
    assert_eq!(s.json("PUT", "/a", Some(json!({"mappings": text("standard")}))).0, 200);
    assert_eq!(s.json("PUT", "/b", Some(json!({"mappings": text("english")}))).0, 200);
    let update = json!({"properties": {"t": {"type": "text", "analyzer": "standard", "search_analyzer": "simple"},
                                      "added": {"type": "keyword"}}});
    let (status, answer) = s.json("PUT", "/a,b/_mapping", Some(update));
    assert_eq!(status, 400, "{answer}");
    let reason = answer["error"]["reason"].as_str().unwrap();
    assert!(reason.contains("Cannot update parameter [analyzer] from [english] to [standard]"), "{reason}");
    for index in ["a", "b"] {
        let (_, mapping) = s.json("GET", &format!("/{index}/_mapping"), None);
        let properties = &mapping[index]["mappings"]["properties"];
        assert!(properties.get("added").is_none(), "{mapping}");
        assert!(properties["t"].get("search_analyzer").is_none(), "{mapping}");
    }
}

/// A field indexed with `word_delimiter_graph` joining parts finds its
/// documents by any part or the joined word, a `match` or `query_string`
/// query too when its own terms span several positions (a graph of terms),
/// and a phrase over such a graph (in quotes too); the queries that do not
/// take such a graph yet refuse it naming the term.
#[test]
fn word_delimiter_graph_parts_are_searched_and_a_query_graph_is_refused_by_name() {
    let s = TestServer::start();
    let analysis = json!({"filter": {"joined": {"type": "word_delimiter_graph", "catenate_words": true}},
                          "analyzer": {"joined": {"tokenizer": "whitespace", "filter": ["joined", "lowercase"]}}});
    let mapping = json!({"properties": {"t": {"type": "text", "analyzer": "joined"},
                                        "s": {"type": "text", "analyzer": "joined", "search_analyzer": "standard"}}});
    let (status, answer) =
        s.json("PUT", "/w", Some(json!({"settings": {"analysis": analysis}, "mappings": mapping})));
    assert_eq!(status, 200, "{answer}");
    s.json("PUT", "/w/_doc/1?refresh=true", Some(json!({"t": "Wi-Fi router", "s": "Wi-Fi router"})));
    let found = [
        (json!({"match": {"t": "router"}}), 1),
        (json!({"match": {"s": "wifi"}}), 1),
        (json!({"match": {"t": "wi-fi"}}), 1),
        (json!({"match": {"t": {"query": "wi-fi modem", "operator": "and"}}}), 0),
        (json!({"query_string": {"query": "wi-fi", "default_field": "t"}}), 1),
        (json!({"match_phrase": {"t": "wi-fi router"}}), 1),
        (json!({"match_phrase": {"t": "router wi-fi"}}), 0),
        (json!({"query_string": {"query": "\"wi-fi router\"", "default_field": "t"}}), 1),
    ];
    for (query, found) in found {
        let (status, answer) = s.json("POST", "/w/_search", Some(json!({ "query": query })));
        assert_eq!((status, &answer["hits"]["total"]["value"]), (200, &json!(found)), "{query}: {answer}");
    }
    let refused = [
        json!({"match_bool_prefix": {"t": "wi-fi rou"}}),
        json!({"match_phrase_prefix": {"t": "wi-fi rou"}}),
    ];
    for query in refused {
        let (status, answer) = s.json("POST", "/w/_search", Some(json!({ "query": query })));
        assert_eq!(status, 400, "{answer}");
        let reason = answer["error"]["root_cause"][0]["reason"].as_str().unwrap();
        assert!(reason.contains("[wifi] spans several positions"), "{reason}");
    }
}
