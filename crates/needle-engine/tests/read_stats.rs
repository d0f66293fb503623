//! Read accounting: a query reports the bytes it needed by data kind. A term
//! query needs doc ids and frequencies but no positions; a phrase needs
//! positions; highlighting needs offsets and the document store.

mod common;

use needle_engine::{Index, SearchRequest};

fn needed(index: &Index, query: &str, highlight: bool) -> std::collections::BTreeMap<&'static str, u64> {
    let r = SearchRequest { stats: true, highlight, ..SearchRequest::new(query) };
    index.searcher().search(&r).unwrap().stats.unwrap().needed_bytes
}

#[test]
fn each_query_reports_what_it_read_by_kind() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let lines: Vec<String> = (0..500)
        .map(|i| {
            format!(r#"{{"id":"d{i}","body":"the quick brown fox number {i} jumps over the lazy dog"}}"#)
        })
        .collect();
    common::import_lines(&index, &lines, 1 << 20).unwrap();
    let term = needed(&index, "fox", false);
    assert!(term["doc_ids"] > 0 && term["freqs"] > 0 && term["doc_store"] > 0, "{term:?}");
    assert!(!term.contains_key("positions") && !term.contains_key("offsets"), "{term:?}");
    let phrase = needed(&index, "\"brown fox\"", false);
    assert!(phrase["positions"] > 0, "{phrase:?}");
    let highlighted = needed(&index, "fox", true);
    assert!(highlighted["offsets"] > 0, "{highlighted:?}");
    let none = SearchRequest::new("fox");
    assert!(index.searcher().search(&none).unwrap().stats.is_none());
}

/// Read through the direct backend and an application cache, a query's
/// reads go to the file the first time and come from the cache the second,
/// and the statistics say so, with the cache's size within its budget.
#[test]
fn direct_reads_are_counted_and_cached() {
    use needle_engine::{Backend, ReadOptions, Verify};
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let lines: Vec<String> = (0..3000)
        .map(|i| format!(r#"{{"id":"d{i}","body":"word{} common text of document {i}"}}"#, i % 97))
        .collect();
    common::import_lines(&index, &lines, 1 << 20).unwrap();
    drop(index);
    let reads = ReadOptions::new(Backend::Direct, 4 << 20).unwrap();
    let index = Index::options().verify(Verify::Footers).reads(reads).open(tmp.path()).unwrap();
    let ask = || {
        index.searcher().search(&SearchRequest { stats: true, ..SearchRequest::new("word7 common") }).unwrap()
    };
    let (first, second) = (ask(), ask());
    assert_eq!(
        first.hits.iter().map(|h| &h.id).collect::<Vec<_>>(),
        second.hits.iter().map(|h| &h.id).collect::<Vec<_>>()
    );
    let (a, b) = (first.stats.unwrap(), second.stats.unwrap());
    // (The first query's pages arrive through its batched prefetch, so its reads hit the cache too.)
    assert!(a.storage_requests > 0 && a.requested_bytes > 0, "{a:?}");
    assert_eq!((b.storage_requests, b.cache_misses), (0, 0), "{b:?}");
    assert!(b.cache_hits > 0, "{b:?}");
    let cache = b.page_cache.expect("the page cache is reported");
    assert!(cache.bytes > 0 && cache.bytes <= cache.budget, "{cache:?}");
}

/// A rare term's record fits a page and lies on one: its query asks storage
/// for that one page, once (the goal: one 4 KiB read for a rare term's
/// postings, plus one per document shown).
#[test]
fn a_rare_term_reads_one_page_of_postings() {
    use needle_engine::{Backend, ReadOptions, Verify};
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let lines: Vec<String> = (0..3000)
        .map(|i| format!(r#"{{"id":"d{i}","body":"rare{i} and common words of document {i}"}}"#))
        .collect();
    common::import_lines(&index, &lines, 64 << 20).unwrap();
    drop(index);
    let reads = ReadOptions::new(Backend::Pread, 4 << 20).unwrap();
    let index = Index::options().verify(Verify::Footers).reads(reads).open(tmp.path()).unwrap();
    for i in (0..3000).step_by(150) {
        let request = SearchRequest { stats: true, top_k: 0, ..SearchRequest::new(&format!("rare{i}")) };
        let response = index.searcher().search(&request).unwrap();
        assert_eq!(response.total, 1);
        let stats = response.stats.unwrap();
        assert!(stats.requested_bytes <= 4096 && stats.storage_waits <= 1, "rare{i}: {stats:?}");
    }
}
