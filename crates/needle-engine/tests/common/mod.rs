//! Helpers shared by the engine's scenario tests.

#![allow(dead_code)]

use std::io::Cursor;
use std::path::Path;

use needle_engine::{ImportOptions, ImportProgress, ImportSummary, Index, Schema};

/// Mapping of the random test documents: two text fields and a keyword.
pub const MAPPING: &str =
    r#"{"properties":{"title":{"type":"text"},"body":{"type":"text"},"tag":{"type":"keyword"}}}"#;

pub fn import_lines(index: &mut Index, lines: &[String], memory: u64) -> needle_core::Result<ImportSummary> {
    let text = lines.join("\n");
    let options = ImportOptions { threads: 2, memory_bytes: memory, skip_bad: false, bloom: None };
    index.import(&mut Cursor::new(text.into_bytes()), &options, &ImportProgress::default())
}

pub fn new_index(path: &Path) -> Index {
    Index::open_or_create(path, Some(Schema::from_mapping(MAPPING).unwrap())).unwrap()
}

/// The repository's root (tests run from the crate's folder).
pub fn repo_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
