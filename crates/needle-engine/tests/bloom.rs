//! Two-way Bloom filters: a phrase whose words occur in the same documents
//! but never in that order reads no positions at all, while it still gives
//! the same (empty) answer as without filters; a true phrase is still found.
//! Lists of more than a sixteenth of a segment's documents keep no filters.

mod common;

use needle_engine::{ImportOptions, Index, SearchRequest};

fn positions_read(index: &Index, query: &str, bloom: bool) -> (u64, u64) {
    let r = SearchRequest { stats: true, bloom, track_total_hits: u64::MAX, ..SearchRequest::new(query) };
    let response = index.searcher().search(&r).unwrap();
    (response.total, response.stats.unwrap().needed_bytes.get("positions").copied().unwrap_or(0))
}

/// 300 documents where "fox" and "quick" meet several times, but only ever
/// as "fox ... quick", then `filler` documents of other words.
fn build(bloom: Option<bool>, filler: usize) -> (tempfile::TempDir, Index) {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let mut lines: Vec<String> = (0..300)
        .map(|i| format!(r#"{{"id":"d{i}","body":"the fox was quick; a fox is quick, foxes quick {i} fox then quick and brown dogs"}}"#))
        .collect();
    lines.extend(fillers(0, filler));
    let options = ImportOptions { threads: 1, memory_bytes: 1 << 30, skip_bad: false, bloom };
    common::import_with(&index, &lines, &options).unwrap();
    (tmp, index)
}

/// Documents `from..from + n` of other words.
fn fillers(from: usize, n: usize) -> impl Iterator<Item = String> {
    (from..from + n).map(|i| format!(r#"{{"id":"f{i}","body":"other words {i}"}}"#))
}

#[test]
fn an_absent_phrase_reads_no_positions() {
    // The lists of "fox" and "quick" hold a sixteenth of the documents: they keep filters.
    let (_tmp, index) = build(None, 15 * 300);
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

/// Lists in every document keep no filters on disk: their phrases read
/// positions, and answer the same.
#[test]
fn common_lists_keep_no_filters() {
    let (_tmp, index) = build(None, 0);
    let (hits, positions) = positions_read(&index, "\"quick fox\"", true);
    assert_eq!(hits, 0);
    assert!(positions > 0, "no filters to rule the documents out");
    assert_eq!(positions_read(&index, "\"fox then quick\"", true).0, 300);
}

#[test]
fn an_index_without_filters_answers_the_same() {
    let (_tmp, index) = build(Some(false), 0);
    assert_eq!(index.check().sizes["bloom"], 0);
    let (hits, positions) = positions_read(&index, "\"quick fox\"", true);
    assert_eq!(hits, 0);
    assert!(positions > 0);
    assert_eq!(positions_read(&index, "\"fox then quick\"", true).0, 300);
}

#[test]
fn filters_survive_a_merge() {
    let (_tmp, index) = build(None, 15 * 300);
    let mut more: Vec<String> = (300..400)
        .map(|i| format!(r#"{{"id":"d{i}","body":"fox and quick fox quick quick fox {i}"}}"#))
        .collect();
    more.extend(fillers(15 * 300, 15 * 100));
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
