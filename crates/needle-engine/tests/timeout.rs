//! A search's `timeout`: past it, every way of walking matches (block-max
//! collection, MaxScore disjunctions, sorts by a field) stops and the search
//! answers with what it found, marked as timed out; a partial answer is not
//! cached; a limit that does not pass changes nothing.

mod common;

use std::time::Duration;

use needle_engine::{Index, SearchRequest, SearchResponse, SortBy, SortKey};

fn lines(n: usize) -> Vec<String> {
    let words = ["alpha", "beta", "gamma", "delta"];
    (0..n)
        .map(|i| {
            let body: Vec<&str> = (0..1 + i % 5).map(|j| words[(i + j * j) % words.len()]).collect();
            format!(r#"{{"id":"d{i}","body":"{}","n":{}}}"#, body.join(" "), (i * 7919) % 10_007)
        })
        .collect()
}

fn answer(r: &SearchResponse) -> (u64, &str, Vec<(String, u32)>) {
    (r.total, r.total_relation, r.hits.iter().map(|h| (h.id.clone(), h.score.to_bits())).collect())
}

#[test]
fn past_its_timeout_a_search_answers_with_what_it_found() {
    let tmp = tempfile::tempdir().unwrap();
    let index = common::new_index(tmp.path());
    // A small memory budget: several segments, each stopped at once after the limit.
    common::import_lines(&index, &lines(60_000), 4 << 20).unwrap();
    let index = Index::options().result_cache(1 << 20).open(tmp.path()).unwrap();
    let uncached = Index::open(tmp.path()).unwrap();
    let n = index.schema().field_id("n").unwrap();
    let sorted = vec![SortKey { by: SortBy::Field { field: n, missing: i64::MAX }, descending: false }];
    let requests = [
        SearchRequest { track_total_hits: u64::MAX, ..SearchRequest::new("alpha") },
        SearchRequest { track_total_hits: 100, ..SearchRequest::new("alpha") },
        SearchRequest { track_total_hits: u64::MAX, ..SearchRequest::new("alpha delta") },
        SearchRequest { track_total_hits: u64::MAX, sort: sorted.clone(), ..SearchRequest::new("beta") },
        SearchRequest { track_total_hits: u64::MAX, sort: sorted, ..SearchRequest::new("beta OR gamma") },
    ];
    for request in requests {
        let q = &request.query;
        // First, while nothing is cached (a cached full answer would serve a hurried search too).
        let hurried = SearchRequest { timeout: Some(Duration::ZERO), ..request.clone() };
        let partial = index.searcher().search(&hurried).unwrap();
        // Not cached: the same search, given time, finds everything.
        let full = index.searcher().search(&request).unwrap();
        assert!(!full.timed_out);
        assert!(partial.timed_out, "{q}");
        assert!(partial.total < full.total / 2, "{q}: {} of {}", partial.total, full.total);
        assert_eq!(partial.total_relation, "gte", "{q}: a partial count is a lower bound");
        let unhurried = SearchRequest { timeout: Some(Duration::from_secs(3600)), ..request.clone() };
        let unhurried = uncached.searcher().search(&unhurried).unwrap();
        assert_eq!((answer(&unhurried), unhurried.timed_out), (answer(&full), false), "{q}");
    }
}
