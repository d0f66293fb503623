//! The application cache's static part: term records pinned from a query
//! log stay cached through a flood of other queries that evicts everything
//! else, and answers do not change.

mod common;

use needle_engine::{Backend, Index, ReadOptions, SearchRequest, Verify};

fn storage_requests(index: &Index, query: &str) -> (u64, Vec<String>) {
    let request = SearchRequest { stats: true, top_k: 0, ..SearchRequest::new(query) };
    let response = index.searcher().search(&request).unwrap();
    let ids =
        index.searcher().search(&SearchRequest::new(query)).unwrap().hits.into_iter().map(|h| h.id).collect();
    (response.stats.unwrap().storage_requests, ids)
}

#[test]
fn pinned_records_survive_a_flood_of_other_queries() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let lines: Vec<String> =
        (0..8000).map(|i| format!(r#"{{"id":"d{i}","body":"hot{} rare{i} filler words"}}"#, i % 5)).collect();
    common::import_lines(&index, &lines, 8 << 20).unwrap();
    common::merge(&index, 1);
    drop(index);
    let open = || {
        let reads = ReadOptions::new(Backend::Direct, 256 << 10).unwrap();
        Index::options().verify(Verify::Footers).reads(reads).open(tmp.path()).unwrap()
    };
    let (pinned, plain) = (open(), open());
    let summary = pinned.pin_hot_terms(["hot1", "hot1 hot2", "rare7"], 64 << 10).unwrap();
    assert_eq!(summary.log_terms, 3);
    assert!(summary.terms_pinned >= 2 && summary.pages_pinned >= 2, "{summary:?}");
    let pinned_bytes = pinned.page_cache_stats().unwrap().pinned_bytes;
    assert!(pinned_bytes > 0 && pinned_bytes <= 64 << 10, "{pinned_bytes} pinned, 64 KiB given");
    assert_eq!(pinned_bytes, summary.pages_pinned * 4096);
    for index in [&pinned, &plain] {
        for i in (0..8000).step_by(7) {
            storage_requests(index, &format!("rare{i}"));
        }
    }
    let (with_pin, pinned_ids) = storage_requests(&pinned, "hot1");
    let (without, plain_ids) = storage_requests(&plain, "hot1");
    assert_eq!(with_pin, 0, "hot1's record stayed pinned");
    assert!(without > 0, "the flood evicted hot1's record from the unpinned cache");
    assert_eq!(pinned_ids, plain_ids);
}
