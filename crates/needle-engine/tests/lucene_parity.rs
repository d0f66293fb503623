//! Lucene parity: a corpus indexed by Needle must give Lucene 10's top 10
//! (same ids, same order, scores within 1e-5) and the same hit counts for the
//! OR, AND and phrase queries recorded in tests/golden/ (see its README for
//! the commands that regenerate them with bench/peers/lucene): the bundled
//! State of the Union corpus, and the shared 138k-document corpus when the
//! shared data folder is present.

mod common;

use std::io::BufReader;

use needle_engine::{ImportOptions, ImportProgress, Index, SearchRequest};
use serde_json::Value;

#[test]
fn top10_and_counts_equal_lucene_on_the_bundled_corpus() {
    let root = common::repo_root();
    // A small memory budget splits the corpus into several segments: statistics must still be index-wide.
    let index = index_corpus(&root.join("examples/data/sotu.jsonl.gz"), 16 << 20);
    assert!(index.1.segment_counts().0 > 1);
    compare_with_golden(&index.1, &root.join("tests/golden/lucene-sotu-top10.jsonl"), [150, 100, 100]);
}

#[test]
fn top10_and_counts_equal_lucene_on_the_shared_corpus() {
    let root = common::repo_root();
    let corpus = root.join("../shared/data/corpus.jsonl.gz");
    if !corpus.exists() {
        eprintln!("skipped: {} is absent", corpus.display());
        return;
    }
    let index = index_corpus(&corpus, 256 << 20);
    compare_with_golden(&index.1, &root.join("tests/golden/lucene-corpus-top10.jsonl"), [60, 40, 40]);
}

fn index_corpus(path: &std::path::Path, memory: u64) -> (tempfile::TempDir, Index) {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let file = std::fs::File::open(path).unwrap();
    let mut input = BufReader::new(flate2::read::GzDecoder::new(file));
    let options = ImportOptions { threads: 2, memory_bytes: memory, skip_bad: false, bloom: None };
    let writer = common::writer(&index);
    writer.import(&mut input, &options, &ImportProgress::default()).unwrap();
    writer.close().unwrap();
    (tmp, index)
}

fn compare_with_golden(index: &Index, golden: &std::path::Path, quotas: [usize; 3]) {
    let golden = std::fs::read_to_string(golden).unwrap();
    let mut checked = [0usize; 3];
    for line in golden.lines() {
        let g: Value = serde_json::from_str(line).unwrap();
        let query = g["query"].as_str().unwrap();
        let form = g["form"].as_str().unwrap();
        let request = SearchRequest { track_total_hits: u64::MAX, ..SearchRequest::new(query) };
        let got = index.searcher().search(&request).unwrap();
        assert_eq!(got.total, g["total"].as_u64().unwrap(), "{form} `{query}`: hit count");
        let want = g["hits"].as_array().unwrap();
        let got_ids: Vec<&str> = got.hits.iter().map(|h| h.id.as_str()).collect();
        let want_ids: Vec<&str> = want.iter().map(|h| h["id"].as_str().unwrap()).collect();
        assert_eq!(got_ids, want_ids, "{form} `{query}`: top-10 ids");
        for (h, w) in got.hits.iter().zip(want) {
            let ws = w["score"].as_f64().unwrap() as f32;
            assert!(
                (h.score - ws).abs() <= 1e-5,
                "{form} `{query}`: {} scored {} in Needle, {ws} in Lucene",
                h.id,
                h.score
            );
        }
        checked[["or", "and", "phrase"].iter().position(|f| *f == form).unwrap()] += 1;
    }
    assert_eq!(checked, quotas);
}
