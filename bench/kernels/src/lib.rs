//! Shared set-up for the kernel benchmarks: corpora and indexes built once.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use needle_engine::{Durability, ImportOptions, ImportProgress, Index, Schema, WriterOptions};

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
    build_index_with(dir, lines, None)
}

/// [`build_index`] with the fields of `mapping`.
pub fn build_index_with(dir: &Path, lines: &[String], mapping: Option<Schema>) -> Index {
    let index = Index::open_or_create(dir, mapping).expect("index opens");
    let writer = index.writer(graceful()).expect("writer");
    let text = lines.join("\n");
    let options = ImportOptions { threads: 2, memory_bytes: 1 << 30, skip_bad: false, bloom: None };
    writer
        .import(&mut std::io::Cursor::new(text.into_bytes()), &options, &ImportProgress::default())
        .expect("import");
    writer.merge(1).expect("merge");
    writer.close().expect("close");
    index
}

/// A writer for a one-off import: no write-ahead log, everything committed at close.
pub fn graceful() -> WriterOptions {
    WriterOptions { durability: Durability::Graceful, ..WriterOptions::default() }
}
