//! Documents spread over three indexes (shards routed by a hash of `_id`),
//! searched with their statistics summed (`Searcher::corpus_stats`, then
//! `SearchRequest::corpus`): every hit scores exactly as in one index holding
//! all of them, and the merged hits are that index's. Searched with their own
//! statistics, the shards score differently: the test would see it.

mod common;

use std::sync::Arc;

use needle_engine::{CorpusStatistics, Index, SearchRequest, SharedCorpus};
use needle_search::Query;
use needle_testkit::random;
use rand::Rng;

const SHARDS: usize = 3;

/// A shard for `id`: FNV-1a of its bytes.
fn shard_of(id: &str) -> usize {
    let hash =
        id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    (hash % SHARDS as u64) as usize
}

/// Every hit of `query` as (score, `_id`), best first, ties by `_id`.
fn hits(index: &Index, query: &Query, corpus: Option<&SharedCorpus>) -> (u64, Vec<(f32, String)>) {
    let request = SearchRequest {
        top_k: 5_000,
        track_total_hits: u64::MAX,
        corpus: corpus.cloned(),
        ..SearchRequest::new("")
    };
    let response = index.searcher().search_query(query, &request).unwrap();
    (response.total, response.hits.into_iter().map(|h| (h.score, h.id)).collect())
}

fn ranked(mut hits: Vec<(f32, String)>) -> Vec<(f32, String)> {
    hits.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    hits
}

#[test]
fn shards_scored_with_summed_statistics_score_as_one_index() {
    for seed in [1u64, 2, 3, 4] {
        let mut rng = random::rng(seed);
        let docs: Vec<serde_json::Value> =
            (0..rng.gen_range(200..900)).map(|i| random::document(&mut rng, i)).collect();
        let tmp = tempfile::tempdir().unwrap();
        let whole = common::new_index(&tmp.path().join("whole"));
        let lines: Vec<String> = docs.iter().map(|d| d.to_string()).collect();
        common::import_lines(&whole, &lines, 64 << 10).unwrap();
        let shards: Vec<Index> = (0..SHARDS)
            .map(|s| {
                let shard = common::new_index(&tmp.path().join(format!("shard-{s}")));
                let mine: Vec<String> = (docs.iter().zip(&lines))
                    .filter(|(d, _)| shard_of(d["id"].as_str().unwrap()) == s)
                    .map(|(_, l)| l.clone())
                    .collect();
                common::import_lines(&shard, &mine, 32 << 10).unwrap();
                shard
            })
            .collect();
        let schema = whole.schema();
        let [title, body, tag] = ["title", "body", "tag"].map(|f| schema.field_id(f).unwrap());
        let mut own_stats_differ = 0;
        let mut checked = 0;
        for _ in 0..60 {
            let query = random::query(&mut rng, &[title, body], tag, 2);
            // Expansions (prefix, fuzzy) pick their terms in each shard: not one index's.
            if format!("{query:?}").contains("MultiTerm") {
                continue;
            }
            let mut summed = CorpusStatistics::default();
            for shard in &shards {
                summed.merge(&shard.searcher().corpus_stats(&query).unwrap());
            }
            let corpus = SharedCorpus(Arc::new(summed));
            let (total, want) = hits(&whole, &query, None);
            let (mut sharded_total, mut sharded, mut own) = (0, Vec::new(), Vec::new());
            for shard in &shards {
                let (n, found) = hits(shard, &query, Some(&corpus));
                sharded_total += n;
                sharded.extend(found);
                own.extend(hits(shard, &query, None).1);
            }
            assert_eq!(sharded_total, total, "seed {seed}: {query:?}");
            let want = ranked(want);
            assert_eq!(ranked(sharded), want, "seed {seed}: {query:?}");
            own_stats_differ += usize::from(ranked(own) != want);
            checked += 1;
        }
        assert!(checked >= 30, "seed {seed}: only {checked} queries without expansions");
        assert!(own_stats_differ > 0, "seed {seed}: shards' own statistics never changed a score");
    }
}
