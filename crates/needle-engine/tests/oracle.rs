//! Random documents and random queries: the engine's top hits and counts must
//! equal those of a naive index scoring every document by brute force, over
//! several segments and again after merging them into one. Failures print the
//! seed; `NEEDLE_TEST_SEED=N cargo test --test oracle` replays one case.

mod common;

use needle_core::FieldId;
use needle_engine::{Index, Verify};
use needle_search::{Query, SearchOptions, TopDocs};
use needle_storage::{Backend, ReadOptions};
use needle_testkit::{random, Oracle, OracleField};
use rand::Rng;

fn seeds() -> Vec<u64> {
    match std::env::var("NEEDLE_TEST_SEED") {
        Ok(s) => vec![s.parse().expect("NEEDLE_TEST_SEED is a number")],
        Err(_) => {
            let fresh =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
            vec![1, 2, 3, 4, 5, fresh]
        }
    }
}

#[test]
fn random_queries_match_the_oracle_across_segments_and_after_merge() {
    for seed in seeds() {
        run_case(seed);
    }
}

fn run_case(seed: u64) {
    let mut rng = random::rng(seed);
    let n_docs = if seed.is_multiple_of(2) { rng.gen_range(300..1500) } else { rng.gen_range(10..300) };
    let docs: Vec<serde_json::Value> = (0..n_docs).map(|i| random::document(&mut rng, i)).collect();
    let tmp = tempfile::tempdir().unwrap();
    let index = common::new_index(tmp.path());
    let lines: Vec<String> = docs.iter().map(|d| d.to_string()).collect();
    let cut = rng.gen_range(0..=lines.len());
    common::import_lines(&index, &lines[..cut], 64 << 10).unwrap();
    common::import_lines(&index, &lines[cut..], 256 << 10).unwrap();
    let schema = index.schema();
    let [title, body, tag] = ["title", "body", "tag"].map(|f| schema.field_id(f).unwrap());
    let oracle = build_oracle(&docs, title, body, tag);
    let queries: Vec<Query> = (0..80).map(|_| random::query(&mut rng, &[title, body], tag, 2)).collect();
    let segments = index.segment_counts().0;
    check_all(&index, &oracle, &queries, seed, &format!("{segments} segments"));
    // Every storage backend reads the same bytes (a 64 KiB cache keeps evicting).
    for (backend, cache) in [(Backend::Pread, 0), (Backend::Direct, 0), (Backend::Direct, 64 << 10)] {
        let reads = ReadOptions::new(backend, cache).unwrap();
        let reopened = Index::options().verify(Verify::Checksums).reads(reads).open(tmp.path()).unwrap();
        check_all(&reopened, &oracle, &queries[..20], seed, &format!("{backend:?}, cache {cache}"));
    }
    common::merge(&index, 1);
    assert_eq!(index.segment_counts().0, 1);
    check_all(&index, &oracle, &queries, seed, "after merge");
}

/// Disjunctions over more documents than one MaxScore window (4,096), so
/// that pruning carries its threshold, clause partition and skipped windows
/// from one window to the next: top hits still equal the oracle's. Also the
/// dis-max of one disjunction per field that a query string over several
/// fields makes (`title:(a b) | body:(a b)`), pruned group by group.
#[test]
fn pruned_disjunctions_over_many_windows_match_the_oracle() {
    let seed = seeds()[0];
    let mut rng = random::rng(seed);
    let docs: Vec<serde_json::Value> = (0..14_000).map(|i| random::document(&mut rng, i)).collect();
    let tmp = tempfile::tempdir().unwrap();
    let index = common::new_index(tmp.path());
    let lines: Vec<String> = docs.iter().map(|d| d.to_string()).collect();
    common::import_lines(&index, &lines, 8 << 20).unwrap();
    common::merge(&index, 1);
    let schema = index.schema();
    let [title, body, tag] = ["title", "body", "tag"].map(|f| schema.field_id(f).unwrap());
    let oracle = build_oracle(&docs, title, body, tag);
    for i in 0..40 {
        let words: Vec<Query> = (0..rng.gen_range(2..8))
            .map(|_| Query::term(if rng.gen_ratio(1, 4) { title } else { body }, random::word(&mut rng)))
            .collect();
        let q = Query::Bool(needle_search::BoolQuery { should: words, ..Default::default() });
        let texts: Vec<&str> = (0..rng.gen_range(1..6)).map(|_| random::word(&mut rng)).collect();
        let in_field = |field| {
            let terms = texts.iter().map(|t| Query::term(field, t)).collect();
            Query::Bool(needle_search::BoolQuery { should: terms, ..Default::default() })
        };
        let tie_breaker = [0.0, 0.0, 0.3, 1.0][i % 4];
        let fields = Query::DisMax { clauses: vec![in_field(title), in_field(body)], tie_breaker };
        for q in [q, fields] {
            let expected = oracle.search(&q);
            for k in [1, 10, 50] {
                let top = index
                    .searcher()
                    .top_docs(&q, SearchOptions { top_k: k, track_total_hits: 0, bloom: true })
                    .unwrap();
                compare(&top, &expected, k, &format!("seed {seed}, query #{i} (k={k}): {q:?}"));
            }
        }
    }
}

fn build_oracle(docs: &[serde_json::Value], title: FieldId, body: FieldId, tag: FieldId) -> Oracle {
    let mut oracle =
        Oracle::new(&[(title, OracleField::Text), (body, OracleField::Text), (tag, OracleField::Keyword)]);
    for d in docs {
        let mut values = Vec::new();
        for (name, field) in [("title", title), ("body", body), ("tag", tag)] {
            match &d[name] {
                serde_json::Value::String(s) => values.push((field, vec![s.clone()])),
                serde_json::Value::Array(a) => {
                    values.push((field, a.iter().map(|v| v.as_str().unwrap().to_string()).collect()))
                }
                _ => {}
            }
        }
        oracle.add(&values);
    }
    oracle
}

fn check_all(index: &Index, oracle: &Oracle, queries: &[Query], seed: u64, stage: &str) {
    for (i, q) in queries.iter().enumerate() {
        let expected = oracle.search(q);
        for (k, track) in [(10, u64::MAX), (3, 0), (25, 0)] {
            let top = index
                .searcher()
                .top_docs(q, SearchOptions { top_k: k, track_total_hits: track, bloom: true })
                .unwrap();
            let ctx = format!("seed {seed}, {stage}, query #{i} (k={k}, track={track}): {q:?}");
            compare(&top, &expected, k, &ctx);
            if track == u64::MAX {
                assert_eq!(top.total, expected.len() as u64, "total hits differ; {ctx}");
            }
            let no_bloom = index
                .searcher()
                .top_docs(q, SearchOptions { top_k: k, track_total_hits: track, bloom: false })
                .unwrap();
            // Past `track`, a total is a lower bound that depends on what pruning skipped.
            let key = |t: &TopDocs| {
                (
                    t.total_is_exact.then_some(t.total),
                    t.hits.iter().map(|h| (h.global, h.score)).collect::<Vec<_>>(),
                )
            };
            assert_eq!(key(&top), key(&no_bloom), "Bloom filters changed the result; {ctx}");
        }
        // The count alone (no hits) is counted without scoring: exactly, or up to a limit.
        for track in [u64::MAX, 3] {
            let count = index
                .searcher()
                .top_docs(q, SearchOptions { top_k: 0, track_total_hits: track, bloom: true })
                .unwrap();
            let all = expected.len() as u64;
            let ctx = format!("seed {seed}, {stage}, query #{i} (count, track={track}): {q:?}");
            assert!(count.hits.is_empty(), "{ctx}");
            match all < track || track == u64::MAX {
                true => assert_eq!((count.total, count.total_is_exact), (all, true), "count differs; {ctx}"),
                // Past the limit, a lower bound at least the limit.
                false => assert!((track..=all).contains(&count.total) && !count.total_is_exact, "{ctx}"),
            }
        }
    }
}

fn compare(top: &TopDocs, expected: &[(u64, f32)], k: usize, ctx: &str) {
    let tol = |s: f32| 1e-5 * s.abs().max(1.0);
    assert_eq!(top.hits.len(), expected.len().min(k), "hit count differs; {ctx}");
    for (rank, hit) in top.hits.iter().enumerate() {
        let (want_doc, want_score) = expected[rank];
        assert!(
            (hit.score - want_score).abs() <= tol(want_score),
            "rank {rank}: engine doc {} score {} but oracle doc {want_doc} score {want_score}; {ctx}",
            hit.global,
            hit.score
        );
        let own = expected.iter().find(|(d, _)| *d == hit.global).map(|e| e.1);
        assert!(
            own.is_some_and(|s| (s - hit.score).abs() <= tol(s)),
            "doc {} should not rank {rank}; {ctx}",
            hit.global
        );
        if rank + 1 < expected.len() && (expected[rank + 1].1 - want_score).abs() > tol(want_score) {
            assert_eq!(hit.global, want_doc, "rank {rank} holds another document; {ctx}");
        }
    }
}
