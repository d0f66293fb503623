//! Lucene parity: the bundled State of the Union corpus, indexed by Needle,
//! must give Lucene 10's top 10 (same ids, same order, scores within 1e-5)
//! and the same hit counts for the OR, AND and phrase queries recorded in
//! tests/golden/lucene-sotu-top10.jsonl (see tests/golden/README.md for the
//! command that regenerates it with bench/peers/lucene).

mod common;

use std::io::BufReader;

use needle_engine::{ImportOptions, ImportProgress, Index, SearchRequest};
use serde_json::Value;

#[test]
fn top10_and_counts_equal_lucene_on_the_bundled_corpus() {
    let root = common::repo_root();
    let tmp = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(tmp.path(), None).unwrap();
    let file = std::fs::File::open(root.join("examples/data/sotu.jsonl.gz")).unwrap();
    let mut input = BufReader::new(flate2::read::GzDecoder::new(file));
    // A small memory budget splits the corpus into several segments: statistics must still be index-wide.
    let options = ImportOptions { threads: 2, memory_bytes: 16 << 20, skip_bad: false };
    index.import(&mut input, &options, &ImportProgress::default()).unwrap();
    assert!(index.segments().len() > 1);
    let golden = std::fs::read_to_string(root.join("tests/golden/lucene-sotu-top10.jsonl")).unwrap();
    let mut checked = [0usize; 3];
    for line in golden.lines() {
        let g: Value = serde_json::from_str(line).unwrap();
        let query = g["query"].as_str().unwrap();
        let form = g["form"].as_str().unwrap();
        let request = SearchRequest { track_total_hits: u64::MAX, ..SearchRequest::new(query) };
        let got = index.search(&request).unwrap();
        assert_eq!(got.total, g["total"].as_u64().unwrap(), "{form} `{query}`: hit count");
        let want = g["hits"].as_array().unwrap();
        let got_ids: Vec<&str> = got.hits.iter().map(|h| h.id.as_str()).collect();
        let want_ids: Vec<&str> = want.iter().map(|h| h["id"].as_str().unwrap()).collect();
        assert_eq!(got_ids, want_ids, "{form} `{query}`: top-10 ids");
        for (h, w) in got.hits.iter().zip(want) {
            let ws = w["score"].as_f64().unwrap() as f32;
            assert!((h.score - ws).abs() <= 1e-5, "{form} `{query}`: {} scored {} in Needle, {ws} in Lucene", h.id, h.score);
        }
        checked[["or", "and", "phrase"].iter().position(|f| *f == form).unwrap()] += 1;
    }
    assert!(checked.iter().sum::<usize>() >= 300 && checked.iter().all(|&n| n >= 100), "{checked:?}");
}
