//! Adaptive prefetch: a term whose record zone reaches the threshold is asked
//! for ahead (exactly its zone), a shorter one only for its first page (as every
//! record and the top hits' documents are, in one batch), and answers do not
//! change. (Its own test binary: the setting is process-wide.)

mod common;

use needle_engine::{Index, SearchRequest};
use needle_storage::prefetch;

fn search(index: &Index, query: &str) -> (Vec<String>, u64) {
    let r = SearchRequest { stats: true, ..SearchRequest::new(query) };
    let response = index.searcher().search(&r).unwrap();
    (response.hits.into_iter().map(|h| h.id).collect(), response.stats.unwrap().prefetched_bytes)
}

#[test]
fn long_records_are_prefetched_and_short_ones_are_not() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    // "common" is in every document, 1 to 8 times (a record of several pages), "rare" in one.
    let lines: Vec<String> = (0..50_000)
        .map(|i| {
            let rare = if i == 7 { " rare" } else { "" };
            let common = "common ".repeat(1 + i % 8);
            format!(r#"{{"id":"d{i}","body":"{common}words of document {i}{rare}"}}"#)
        })
        .collect();
    common::import_lines(&index, &lines, 64 << 20).unwrap();
    common::merge(&index, 1);
    prefetch::set_min_bytes(None);
    let (common_hits, off) = search(&index, "common");
    let rare_off = search(&index, "rare").1;
    assert!(off > 4096 && rare_off > 0, "first pages and documents are asked for: {off}, {rare_off}");
    prefetch::set_min_bytes(Some(8192));
    let (prefetched_hits, on) = search(&index, "common");
    let zone_beyond_first_page = on - off;
    assert!(zone_beyond_first_page >= 4096 && zone_beyond_first_page % 4096 == 0, "{on} vs {off}");
    assert_eq!(prefetched_hits, common_hits);
    assert_eq!(search(&index, "rare").1, rare_off, "a one-page record is below the threshold");
    prefetch::set_min_bytes(None);
}
