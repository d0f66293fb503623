//! Helpers shared by the engine's scenario tests.

#![allow(dead_code)]

use std::io::Cursor;
use std::path::Path;

use needle_engine::{
    Durability, ImportOptions, ImportProgress, ImportSummary, Index, IndexWriter, Schema, WriterOptions,
};

/// Mapping of the random test documents: two text fields and a keyword.
pub const MAPPING: &str =
    r#"{"properties":{"title":{"type":"text"},"body":{"type":"text"},"tag":{"type":"keyword"}}}"#;

/// A writer for a one-off change: no write-ahead log, everything committed at close.
pub fn writer(index: &Index) -> IndexWriter {
    index.writer(WriterOptions { durability: Durability::Graceful, ..WriterOptions::default() }).unwrap()
}

/// Imports `lines` (two threads, `memory` for in-memory segments) with a writer of its own.
pub fn import_lines(index: &Index, lines: &[String], memory: u64) -> needle_core::Result<ImportSummary> {
    let options = ImportOptions { threads: 2, memory_bytes: memory, skip_bad: false, bloom: None };
    import_with(index, lines, &options)
}

pub fn import_with(
    index: &Index,
    lines: &[String],
    options: &ImportOptions,
) -> needle_core::Result<ImportSummary> {
    let writer = writer(index);
    let text = lines.join("\n");
    let summary = writer.import(&mut Cursor::new(text.into_bytes()), options, &ImportProgress::default());
    writer.close()?;
    summary
}

/// Merges down to at most `max` segments.
pub fn merge(index: &Index, max: usize) -> usize {
    let writer = writer(index);
    let rewritten = writer.merge(max).unwrap();
    writer.close().unwrap();
    rewritten
}

pub fn new_index(path: &Path) -> Index {
    Index::open_or_create(path, Some(Schema::from_mapping(MAPPING).unwrap())).unwrap()
}

/// The repository's root (tests run from the crate's folder).
pub fn repo_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
