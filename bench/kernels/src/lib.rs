//! Shared set-up for the kernel benchmarks: corpora and indexes built once.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use needle_engine::{ImportOptions, ImportProgress, Index};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shared 138k-document corpus when present, else the bundled State of the Union corpus.
pub fn corpus_path() -> PathBuf {
    let shared = repo_root().join("../shared/data/corpus.jsonl.gz");
    if shared.exists() {
        shared
    } else {
        repo_root().join("examples/data/sotu.jsonl.gz")
    }
}

/// The first `limit` lines of a gzip JSON-lines corpus.
pub fn read_lines(path: &Path, limit: usize) -> Vec<String> {
    let file = std::fs::File::open(path).expect("corpus exists");
    BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .take(limit)
        .map(|l| l.expect("corpus reads"))
        .collect()
}

/// Indexes `lines` into a fresh index in `dir`, merged to one segment.
pub fn build_index(dir: &Path, lines: &[String]) -> Index {
    let mut index = Index::open_or_create(dir, None).expect("index opens");
    let text = lines.join("\n");
    let options = ImportOptions { threads: 2, memory_bytes: 1 << 30, skip_bad: false, bloom: None };
    index
        .import(&mut std::io::Cursor::new(text.into_bytes()), &options, &ImportProgress::default())
        .expect("import");
    index.merge(1).expect("merge");
    index
}
