//! The fuzzing corpus (`fuzz/corpus/TARGET/`: the seeds, and what `cargo
//! fuzz` kept, minimized) replayed through the same entry points as the
//! fuzzers: every input that ever mattered runs in every `cargo test`, and
//! a reader that panics on one fails here. `cargo test -p needle-engine
//! --test fuzz_corpus -- --ignored` rewrites the seeds.

use std::path::{Path, PathBuf};

use needle_engine::fuzzing;

type Target = fn(&[u8]);

const TARGETS: [(&str, Target); 10] = [
    ("query", fuzzing::query),
    ("document", fuzzing::document),
    ("manifest", fuzzing::manifest),
    ("deletes", fuzzing::deletes),
    ("updates", fuzzing::updates),
    ("wal", fuzzing::wal),
    ("postings", fuzzing::postings),
    ("docstore", fuzzing::docstore),
    ("termmap", fuzzing::termmap),
    ("segment", fuzzing::segment),
];

fn corpus(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target)
}

#[test]
fn every_corpus_input_runs_without_a_panic() {
    for (target, run) in TARGETS {
        let mut inputs: Vec<PathBuf> =
            std::fs::read_dir(corpus(target)).unwrap().map(|e| e.unwrap().path()).collect();
        inputs.sort();
        assert!(!inputs.is_empty(), "{target}: no corpus");
        for input in inputs {
            let bytes = std::fs::read(&input).unwrap();
            let outcome = std::panic::catch_unwind(|| run(&bytes));
            assert!(outcome.is_ok(), "{target}: {} panicked", input.display());
        }
    }
    fuzzing::clean_up();
}

#[test]
fn the_segment_seeds_reach_the_readers() {
    let seeds: Vec<PathBuf> = std::fs::read_dir(corpus("segment"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("seed-"))
        .collect();
    assert_eq!(seeds.len(), 6, "one seed per segment file");
    for seed in seeds {
        let report = fuzzing::segment_report(&std::fs::read(&seed).unwrap());
        let report = report.unwrap_or_else(|| panic!("{}: the index did not open", seed.display()));
        assert!(report.ok && report.docs == 40 && report.terms > 50, "{}: {report:?}", seed.display());
    }
    fuzzing::clean_up();
}

#[test]
#[ignore = "rewrites fuzz/corpus/*/seed-*: run by hand"]
fn write_seeds() {
    let queries = [
        "war peace",
        "+war +peace",
        "war AND peace OR love",
        "NOT war",
        "!war || (peace && love)",
        "title:(quick brown)^2 body:\"lazy dog\"~3",
        "\"war peace\"~1.5",
        "war~2",
        "te?t* [a TO b] /re/",
        "tag:the year:1999 score:1.5 ok:true",
        "*:*",
        "a\\:b \\(c\\)",
        "((((a))))",
        "-a - b + c",
    ];
    let documents = [
        r#"{"id":"1","title":"Hello","year":1999,"score":1.5,"ok":true,"tags":["a","b"],"o":{"k":"v"}}"#,
        r#"{"id":12,"body":["one","two"],"n":null}"#,
        r#"{"dynamic":"strict","properties":{"t":{"type":"text","analyzer":"english","stopwords":["x"]}}}"#,
        r#"{"mappings":{"properties":{"k":{"type":"keyword"},"n":{"type":"long","index":false}}}}"#,
    ];
    let mut seeds: Vec<(&str, String, Vec<u8>)> = Vec::new();
    seeds.extend(
        queries.iter().enumerate().map(|(i, q)| ("query", format!("seed-{i:02}"), q.as_bytes().to_vec())),
    );
    seeds.extend(
        documents
            .iter()
            .enumerate()
            .map(|(i, d)| ("document", format!("seed-{i:02}"), d.as_bytes().to_vec())),
    );
    seeds.push(("deletes", "seed-00".into(), [&[200u8, 0][..], &[0b1010_0001; 32]].concat()));
    let tmp = tempfile::tempdir().unwrap();
    let index = needle_engine::Index::open_or_create(tmp.path(), None).unwrap();
    let writer = index.writer(needle_engine::WriterOptions::default()).unwrap();
    for i in 0..20 {
        writer.add(&format!(r#"{{"id":"w{i}","body":"logged line {i}"}}"#)).unwrap();
    }
    writer.delete("w3").unwrap();
    let log = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("wal-"))
        .unwrap();
    seeds.push(("wal", "seed-00".into(), std::fs::read(log).unwrap()));
    writer.close().unwrap();
    let manifest = std::fs::read(tmp.path().join("needle.manifest")).unwrap();
    seeds.push(("manifest", "seed-00".into(), manifest[..manifest.len() - 24].to_vec()));
    for (name, seed) in fuzzing::segment_seeds() {
        seeds.push(("segment", format!("seed-{name}"), seed));
    }
    for (target, name, seed) in fuzzing::file_seeds() {
        seeds.push((target, name, seed));
    }
    for (target, name, bytes) in seeds {
        std::fs::create_dir_all(corpus(target)).unwrap();
        std::fs::write(corpus(target).join(name), bytes).unwrap();
    }
    fuzzing::clean_up();
}
