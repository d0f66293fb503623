//! Imports are all or nothing: a bad line stops the import with its line
//! number and leaves the index exactly as it was; `skip_bad` skips and reports.

mod common;

use std::collections::BTreeMap;

use needle_engine::{ImportOptions, Index, SearchRequest};

fn lines(n: usize, from: usize) -> Vec<String> {
    (from..from + n)
        .map(|i| format!(r#"{{"id":"d{i}","title":"doc number {i}","body":"needle in a haystack"}}"#))
        .collect()
}

fn snapshot(path: &std::path::Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(path)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != "write.lock")
        .map(|e| (e.file_name().into_string().unwrap(), std::fs::read(e.path()).unwrap()))
        .collect()
}

#[test]
fn a_bad_line_stops_the_import_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    common::import_lines(&index, &lines(20, 0), 1 << 20).unwrap();
    let before = snapshot(tmp.path());
    for (bad, reason) in [
        ("{\"id\":\"x\",\"title\":", "malformed JSON"),
        ("[1,2]", "JSON object"),
        (r#"{"id":"y","title":{"nested":true},"body":7}"#, ""),
    ] {
        let mut input = lines(3000, 100);
        input.insert(2500, bad.to_string());
        let result = common::import_lines(&index, &input, 64 << 10);
        if reason.is_empty() {
            // Numbers in a text field are accepted as text, and objects flatten: not an error.
            assert!(result.is_ok());
            continue;
        }
        let err = result.unwrap_err().to_string();
        assert!(err.contains("line 2501") && err.contains(reason), "{err}");
        assert_eq!(snapshot(tmp.path()), before, "files changed after a failed import");
        assert_eq!(Index::open(tmp.path()).unwrap().num_docs(), 20);
    }
}

#[test]
fn a_value_breaking_the_schema_names_line_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let input = vec![r#"{"id":"a","year":1790}"#.to_string(), r#"{"id":"b","year":"soon"}"#.to_string()];
    let err = common::import_lines(&index, &input, 1 << 20).unwrap_err().to_string();
    assert!(err.contains("line 2") && err.contains("`year`"), "{err}");
    assert_eq!(index.num_docs(), 0);
    assert!(index.schema().field_id("year").is_none(), "a failed import must not change the schema");
}

#[test]
fn skip_bad_imports_the_rest_and_reports_each_bad_line() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let mut input = lines(10, 0);
    input.insert(3, "not json".into());
    input.insert(7, "".into());
    let options = ImportOptions { threads: 2, memory_bytes: 1 << 20, skip_bad: true, bloom: None };
    let summary = common::import_with(&index, &input, &options).unwrap();
    assert_eq!(summary.docs, 10);
    assert_eq!(summary.skipped.len(), 1);
    assert_eq!(summary.skipped[0].0, 4);
    let hits = index.searcher().search(&SearchRequest::new("haystack")).unwrap();
    assert_eq!(hits.total, 10);
}

#[test]
fn adding_to_an_index_adds_segments_and_keeps_statistics_index_wide() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    common::import_lines(&index, &lines(50, 0), 1 << 20).unwrap();
    common::import_lines(&index, &lines(50, 50), 1 << 20).unwrap();
    assert_eq!(index.segment_counts().0, 2);
    let split = index.searcher().search(&SearchRequest::new("number 7 haystack")).unwrap();
    common::merge(&index, 1);
    let merged =
        Index::open(tmp.path()).unwrap().searcher().search(&SearchRequest::new("number 7 haystack")).unwrap();
    let ids = |r: &needle_engine::SearchResponse| {
        r.hits.iter().map(|h| (h.id.clone(), h.score)).collect::<Vec<_>>()
    };
    assert_eq!(ids(&split), ids(&merged));
    assert_eq!(Index::open(tmp.path()).unwrap().searcher().get("d77").unwrap().unwrap(), lines(1, 77)[0]);
}

#[test]
fn check_finds_a_healthy_index_healthy() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let long: Vec<String> = (0..400)
        .map(|i| {
            format!(
                r#"{{"id":"l{i}","body":"{}"}}"#,
                (0..i * 3).map(|j| format!("w{}", j % 97)).collect::<Vec<_>>().join(" ")
            )
        })
        .collect();
    common::import_lines(&index, &long, 1 << 20).unwrap();
    let report = index.check();
    assert!(report.ok, "{:?}", report.problems);
    assert_eq!(report.docs, 400);
    assert!(report.sizes["positions"] > 0 && report.sizes["doc_store"] > 0);
}
