//! Two-way Bloom filters: a phrase whose words occur in the same documents
//! but never in that order reads no positions at all, while it still gives
//! the same (empty) answer as without filters; a true phrase is still found.

mod common;

use needle_engine::{ImportOptions, Index, SearchRequest};

fn positions_read(index: &Index, query: &str, bloom: bool) -> (u64, u64) {
    let r = SearchRequest { stats: true, bloom, track_total_hits: u64::MAX, ..SearchRequest::new(query) };
    let response = index.searcher().search(&r).unwrap();
    (response.total, response.stats.unwrap().needed_bytes.get("positions").copied().unwrap_or(0))
}

fn build(bloom: Option<bool>) -> (tempfile::TempDir, Index) {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    // "fox" and "quick" share every document, several times, but only ever as "fox ... quick".
    let lines: Vec<String> = (0..300)
        .map(|i| format!(r#"{{"id":"d{i}","body":"the fox was quick; a fox is quick, foxes quick {i} fox then quick and brown dogs"}}"#))
        .collect();
    let options = ImportOptions { threads: 1, memory_bytes: 1 << 30, skip_bad: false, bloom };
    common::import_with(&index, &lines, &options).unwrap();
    (tmp, index)
}

#[test]
fn an_absent_phrase_reads_no_positions() {
    let (_tmp, index) = build(None);
    let (hits, positions) = positions_read(&index, "\"quick fox\"", true);
    assert_eq!((hits, positions), (0, 0), "the filters should rule out every document");
    let (hits, positions) = positions_read(&index, "\"quick fox\"", false);
    assert_eq!(hits, 0);
    assert!(positions > 0, "without filters the positions must be read");
    let (hits, _) = positions_read(&index, "\"fox then quick\"", true);
    assert_eq!(hits, 300, "a phrase that occurs is still found");
    let report = index.check();
    assert!(report.ok && report.sizes["bloom"] > 0, "{:?}", report.sizes);
}

#[test]
fn an_index_without_filters_answers_the_same() {
    let (_tmp, index) = build(Some(false));
    assert_eq!(index.check().sizes["bloom"], 0);
    let (hits, positions) = positions_read(&index, "\"quick fox\"", true);
    assert_eq!(hits, 0);
    assert!(positions > 0);
    assert_eq!(positions_read(&index, "\"fox then quick\"", true).0, 300);
}

#[test]
fn filters_survive_a_merge() {
    let (_tmp, index) = build(None);
    let more: Vec<String> = (300..400)
        .map(|i| format!(r#"{{"id":"d{i}","body":"fox and quick fox quick quick fox {i}"}}"#))
        .collect();
    common::import_lines(&index, &more, 1 << 20).unwrap();
    common::merge(&index, 1);
    assert!(index.check().sizes["bloom"] > 0, "the merged segment keeps its filters");
    let (with, read_with) = positions_read(&index, "\"quick fox\"", true);
    let (without, read_without) = positions_read(&index, "\"quick fox\"", false);
    assert_eq!((with, without), (100, 100));
    assert!(
        read_with < read_without,
        "filters skip the 300 documents without the phrase: {read_with} vs {read_without}"
    );
}
