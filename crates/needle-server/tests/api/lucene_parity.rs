//! The server answers as Lucene does: the bundled corpus sent with `_bulk`,
//! then every recorded query of tests/golden/lucene-sotu-top10.jsonl as a
//! `query_string` (`most_fields`) over the fields Lucene searched; same hit counts, same
//! top 10, scores within 1e-5.

use serde_json::{json, Value};

use crate::harness::TestServer;

#[test]
fn search_answers_equal_lucene_on_the_bundled_corpus() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let s = TestServer::start();
    let mapping = json!({"properties": {"title": {"type": "text"}, "body": {"type": "text"}, "source": {"type": "text"}}});
    s.load_sotu("sotu", mapping);

    let golden = std::fs::read_to_string(root.join("tests/golden/lucene-sotu-top10.jsonl")).unwrap();
    let mut checked = 0;
    for line in golden.lines() {
        let g: Value = serde_json::from_str(line).unwrap();
        let query = g["query"].as_str().unwrap();
        let body = json!({
            // `most_fields`: a term's scores in each field summed, as Lucene's MultiFieldQueryParser does.
            "query": {"query_string": {"query": query, "fields": ["body", "source", "title"], "type": "most_fields"}},
            "track_total_hits": true,
            "_source": false,
        });
        let (status, answer) = s.json("POST", "/sotu/_search", Some(body));
        assert_eq!(status, 200, "`{query}`: {answer}");
        assert_eq!(answer["hits"]["total"]["value"], g["total"], "`{query}`: hit count");
        let got: Vec<(&str, f64)> = answer["hits"]["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h["_id"].as_str().unwrap(), h["_score"].as_f64().unwrap()))
            .collect();
        let want: Vec<(&str, f64)> = g["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h["id"].as_str().unwrap(), h["score"].as_f64().unwrap()))
            .collect();
        assert_eq!(
            got.iter().map(|h| h.0).collect::<Vec<_>>(),
            want.iter().map(|h| h.0).collect::<Vec<_>>(),
            "`{query}`"
        );
        for (g, w) in got.iter().zip(&want) {
            assert!((g.1 - w.1).abs() <= 1e-5, "`{query}`: {} scored {} here, {} in Lucene", g.0, g.1, w.1);
        }
        checked += 1;
    }
    assert_eq!(checked, 350);
}
