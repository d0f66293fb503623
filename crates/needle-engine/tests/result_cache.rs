//! The query-result cache: a cached answer equals a fresh one, spellings of
//! one query share an entry, a tiny budget is kept by evicting, and no answer
//! outlives a change to the index (imports, adds, deletes, flushes, merges).

mod common;

use needle_engine::{Durability, Index, SearchRequest, SearchResponse, WriterOptions};

const WORDS: [&str; 12] =
    ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "zeta", "iota", "rho", "tau"];

fn lines(from: usize, to: usize) -> Vec<String> {
    (from..to)
        .map(|i| {
            let body: Vec<&str> = (0..1 + i % 9).map(|j| WORDS[(i * 7 + j * j * 3) % WORDS.len()]).collect();
            format!(r#"{{"id":"d{i}","body":"{}","title":"{}"}}"#, body.join(" "), WORDS[i % 5])
        })
        .collect()
}

fn queries() -> Vec<String> {
    let mut q: Vec<String> = WORDS.iter().map(|w| w.to_string()).collect();
    q.extend(WORDS.windows(2).map(|w| format!("{} {}", w[0], w[1])));
    q.extend(WORDS.windows(2).map(|w| format!("\"{} {}\"", w[0], w[1])));
    q.extend(WORDS.iter().map(|w| format!("title:{w} AND body:alpha")));
    q
}

fn request(q: &str) -> SearchRequest {
    SearchRequest { track_total_hits: u64::MAX, highlight: true, ..SearchRequest::new(q) }
}

/// What a response says, without its timing.
fn answer(r: &SearchResponse) -> (u64, Vec<(String, u32)>, Vec<String>) {
    let hits = r.hits.iter().map(|h| (h.id.clone(), h.score.to_bits())).collect();
    let highlights = r.hits.iter().map(|h| format!("{:?}", h.highlight)).collect();
    (r.total, hits, highlights)
}

#[test]
fn cached_answers_equal_fresh_ones_and_spellings_share_an_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let index = common::new_index(tmp.path());
    common::import_lines(&index, &lines(0, 3000), 64 << 20).unwrap();
    let fresh = Index::open(tmp.path()).unwrap();
    let index = Index::options().result_cache(1 << 20).open(tmp.path()).unwrap();
    let queries = queries();
    for round in 0..2 {
        for q in &queries {
            let want = answer(&fresh.searcher().search(&request(q)).unwrap());
            assert_eq!(answer(&index.searcher().search(&request(q)).unwrap()), want, "round {round}: {q}");
        }
    }
    let stats = index.result_cache_stats().unwrap();
    let n = queries.len() as u64;
    assert_eq!((stats.misses, stats.hits, stats.entries as u64), (n, n, n));
    // The parsed query is the key: other spacing finds the same entry.
    index.searcher().search(&request("  beta   gamma ")).unwrap();
    assert_eq!(index.result_cache_stats().unwrap().hits, n + 1);
    // Another page size is another answer.
    let top3 = SearchRequest { top_k: 3, ..request("beta gamma") };
    assert_eq!(index.searcher().search(&top3).unwrap().hits.len(), 3);
    assert_eq!(index.result_cache_stats().unwrap().misses, n + 1);
}

#[test]
fn a_tiny_budget_is_kept_by_evicting() {
    let tmp = tempfile::tempdir().unwrap();
    let index = common::new_index(tmp.path());
    common::import_lines(&index, &lines(0, 500), 64 << 20).unwrap();
    let fresh = Index::open(tmp.path()).unwrap();
    let index = Index::options().result_cache(4096).open(tmp.path()).unwrap();
    for q in queries().iter().chain(queries().iter()) {
        let want = answer(&fresh.searcher().search(&request(q)).unwrap());
        assert_eq!(answer(&index.searcher().search(&request(q)).unwrap()), want, "{q}");
        assert!(index.result_cache_stats().unwrap().bytes <= 4096);
    }
    let stats = index.result_cache_stats().unwrap();
    assert!(stats.evictions > 0 && stats.entries < queries().len(), "{stats:?}");
}

#[test]
fn an_import_or_a_merge_is_seen_through_the_cache() {
    let tmp = tempfile::tempdir().unwrap();
    drop(common::new_index(tmp.path()));
    let index = Index::options().result_cache(1 << 20).open(tmp.path()).unwrap();
    common::import_lines(&index, &lines(0, 400), 64 << 20).unwrap();
    let before = index.searcher().search(&request("alpha")).unwrap().total;
    common::import_lines(&index, &lines(400, 800), 64 << 20).unwrap();
    let after = index.searcher().search(&request("alpha")).unwrap();
    assert!(after.total > before);
    common::merge(&index, 1);
    let merged = index.searcher().search(&request("alpha")).unwrap();
    assert_eq!(merged.total, after.total);
    assert_eq!(index.result_cache_stats().unwrap().hits, 0);
}

#[test]
fn live_adds_and_deletes_are_never_hidden_by_a_cached_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let options = WriterOptions {
        durability: Durability::Volatile,
        tail_docs: 20,
        memory_bytes: 16 << 10,
        ..WriterOptions::default()
    };
    let index = Index::options()
        .result_cache(1 << 20)
        .open_or_create(tmp.path(), None)
        .unwrap()
        .writer(options)
        .unwrap();
    let total = |q: &str| index.searcher().search(&request(q)).unwrap().total;
    let mut fresh = 0;
    for (i, line) in lines(0, 100).iter().enumerate() {
        index.add(line).unwrap();
        assert_eq!(total("fresh"), fresh);
        if i % 10 == 0 {
            index.add(&format!(r#"{{"id":"f{i}","body":"fresh news {i}"}}"#)).unwrap();
            fresh += 1;
            assert_eq!(total("fresh"), fresh, "after adding f{i}");
        }
    }
    assert_eq!(total("fresh"), 10);
    let hits_before = index.index().result_cache_stats().unwrap().hits;
    assert_eq!(total("fresh"), 10);
    assert_eq!(index.index().result_cache_stats().unwrap().hits, hits_before + 1, "unchanged index: a hit");
    index.delete("f50").unwrap();
    assert_eq!(total("fresh"), 9);
    index.add(r#"{"id":"f60","body":"stale no more"}"#).unwrap();
    assert_eq!(total("fresh"), 8);
    assert_eq!(total("stale"), 1);
    index.commit().unwrap();
    assert_eq!((total("fresh"), total("stale")), (8, 1));
}

#[test]
fn every_field_of_a_request_is_part_of_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    drop(common::new_index(tmp.path()));
    let index = Index::options().result_cache(1 << 20).open(tmp.path()).unwrap();
    common::import_lines(&index, &lines(0, 300), 64 << 20).unwrap();
    let with_filters = request("\"alpha beta\"");
    let without = SearchRequest { bloom: false, ..request("\"alpha beta\"") };
    index.searcher().search(&with_filters).unwrap();
    index.searcher().search(&without).unwrap();
    let stats = index.result_cache_stats().unwrap();
    assert_eq!((stats.misses, stats.hits), (2, 0), "requests that differ in one field are two answers");
}
