//! Multi-fields (a mapping's `fields`, `ignore_above`, and the keyword a
//! dynamic mapping puts beside every string), answered as a real OpenSearch
//! node answers them: `tests/golden/opensearch/multi_fields.json` holds
//! OpenSearch 3.8's answers (recorded by `multi_fields.py` beside it) to the
//! mappings shown, term queries, `exists`, sorts and `terms` aggregations on
//! sub-fields, an update of a field that has one, the errors, and a field
//! named `id` beside the `_id`. Needle gets
//! the same requests in the same order, and each answer must be OpenSearch's:
//! its status, then its hits (ids, scores, sort values) and buckets, the
//! mapping whole or the error type, as `multi_fields.py` shapes them.
//! Keyword fields with a normalizer (`normalizers.json`, recorded by
//! `normalizers.py`), and text fields with a search analyzer apart from
//! their analyzer (`search_analyzers.json`: n-grams, a folded term beside its
//! original, an index's `default_search`) and text fields analyzed with
//! synonym filters (`synonyms.json`: tokens, settings, scores of several
//! terms at one position; `synonym_graphs.json`: rules of several words,
//! graphs of tokens at index and search time), and analyzers and normalizers with char filters
//! (`char_filters.json`: tokens and their offsets into the original text;
//! `html_strip.json`: markup stripped, entities decoded, offsets into the markup;
//! `analyze_explain.json`: `_analyze` with `explain`, part by part)
//! and the `pattern`, `char_group` and `path_hierarchy` tokenizers, `elision`,
//! `decimal_digit`, `keyword_marker`, `stemmer_override`, `unique` and `limit`
//! filters (`tokenizers.json`), the `kstem` stemmer beside Porter's and
//! Snowball's in fifteen languages (`stemmers.json`) and the `word_delimiter_graph` filter
//! (`word_delimiter.json`: parts, positions, position lengths, offsets) and
//! the older `word_delimiter` (`word_delimiter_plain.json`), and
//! `match` and `multi_match` queries whose text the search analyzer makes a
//! graph of terms (`graph_queries.json`: parts joined or kept whole at search
//! time, hits and scores), the `shingle` filter (`shingles.json`: tokens,
//! positions, position lengths and types, searches, the sizes refused), and
//! the `cjk` analyzer with the `cjk_width` and `cjk_bigram` filters
//! (`cjk.json`), and the `arabic` analyzer with its normalization and
//! stemmer (`arabic.json`) are replayed and compared the same way.

use serde_json::{json, Value};

use crate::harness::TestServer;
use crate::opensearch_queries::replay_steps;

/// Needle's answer as `multi_fields.py` shapes OpenSearch's (see `shaped` there).
pub(crate) fn shaped(answer: &Value) -> Value {
    if let Some(hits) = answer["hits"]["hits"].as_array() {
        let ids: Vec<Value> = hits.iter().map(|h| json!([h["_id"], h["_score"]])).collect();
        let sorts: Vec<Value> = hits.iter().map(|h| h.get("sort").cloned().unwrap_or(Value::Null)).collect();
        let aggs: serde_json::Map<String, Value> = answer["aggregations"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| {
                let buckets =
                    v["buckets"].as_array().unwrap().iter().map(|b| json!([b["key"], b["doc_count"]]));
                (k.clone(), Value::Array(buckets.collect()))
            })
            .collect();
        return json!({"total": answer["hits"]["total"]["value"], "hits": ids, "sorts": sorts, "aggs": aggs});
    }
    if let Some(kind) = answer["error"].get("type") {
        return json!({"error": kind});
    }
    if let Some(errors) = answer.get("errors").filter(|_| answer.get("items").is_some()) {
        return json!({"errors": errors});
    }
    for key in ["result", "acknowledged"] {
        if let Some(v) = answer.get(key) {
            return json!({key: v});
        }
    }
    answer.clone()
}

/// Hits compared whole, as shaped: ids in order, scores, sort values, buckets.
fn shaped_diffs(want: &Value, got: &Value) -> Vec<String> {
    match shaped(got) == *want {
        true => Vec::new(),
        false => vec![format!("OpenSearch {want}\n    Needle {}", shaped(got))],
    }
}

#[test]
fn multi_fields_answer_as_opensearch() {
    replay("multi_fields");
}

#[test]
fn keyword_fields_with_a_normalizer_answer_as_opensearch() {
    replay("normalizers");
}

#[test]
fn search_analyzers_answer_as_opensearch() {
    replay("search_analyzers");
}

#[test]
fn synonym_filters_answer_as_opensearch() {
    replay("synonyms");
}

#[test]
fn synonym_rules_of_several_words_answer_as_opensearch() {
    replay("synonym_graphs");
}

#[test]
fn arabic_analysis_answers_as_opensearch() {
    replay("arabic");
}

#[test]
fn phrase_prefix_queries_answer_as_opensearch() {
    replay("phrase_prefix");
}

#[test]
fn char_filters_answer_as_opensearch() {
    replay("char_filters");
}

#[test]
fn analyze_explained_answers_as_opensearch() {
    replay("analyze_explain");
}

#[test]
fn html_strip_answers_as_opensearch() {
    replay("html_strip");
}

#[test]
fn word_delimiter_graph_answers_as_opensearch() {
    replay("word_delimiter");
}

#[test]
fn queries_over_a_graph_of_terms_answer_as_opensearch() {
    replay("graph_queries");
}

#[test]
fn shingles_answer_as_opensearch() {
    replay("shingles");
}

#[test]
fn the_older_word_delimiter_answers_as_opensearch() {
    replay("word_delimiter_plain");
}

#[test]
fn cjk_analysis_answers_as_opensearch() {
    replay("cjk");
}

#[test]
fn kstem_and_snowball_stemmers_answer_as_opensearch() {
    replay("stemmers");
}

#[test]
fn pattern_and_char_group_tokenizers_and_more_filters_answer_as_opensearch() {
    replay("tokenizers");
}

fn replay(recorded: &str) {
    let golden = crate::opensearch_queries::recorded(recorded);
    let s = TestServer::start();
    let failures = replay_steps(&s, &golden["cases"], shaped, shaped_diffs);
    assert!(failures.is_empty(), "{} steps differ:\n{}", failures.len(), failures.join("\n"));
}
