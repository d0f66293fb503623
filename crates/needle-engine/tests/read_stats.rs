//! Read accounting: a query reports the bytes it needed by data kind. A term
//! query needs doc ids and frequencies but no positions; a phrase needs
//! positions; highlighting needs offsets and the document store.

mod common;

use needle_engine::{Index, SearchRequest};

fn needed(index: &Index, query: &str, highlight: bool) -> std::collections::BTreeMap<&'static str, u64> {
    let r = SearchRequest { stats: true, highlight, ..SearchRequest::new(query) };
    index.search(&r).unwrap().stats.unwrap().needed_bytes
}

#[test]
fn each_query_reports_what_it_read_by_kind() {
    let tmp = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(tmp.path(), None).unwrap();
    let lines: Vec<String> = (0..500)
        .map(|i| {
            format!(r#"{{"id":"d{i}","body":"the quick brown fox number {i} jumps over the lazy dog"}}"#)
        })
        .collect();
    common::import_lines(&mut index, &lines, 1 << 20).unwrap();
    let term = needed(&index, "fox", false);
    assert!(term["doc_ids"] > 0 && term["freqs"] > 0 && term["doc_store"] > 0, "{term:?}");
    assert!(!term.contains_key("positions") && !term.contains_key("offsets"), "{term:?}");
    let phrase = needed(&index, "\"brown fox\"", false);
    assert!(phrase["positions"] > 0, "{phrase:?}");
    let highlighted = needed(&index, "fox", true);
    assert!(highlighted["offsets"] > 0, "{highlighted:?}");
    let none = SearchRequest::new("fox");
    assert!(index.search(&none).unwrap().stats.is_none());
}
