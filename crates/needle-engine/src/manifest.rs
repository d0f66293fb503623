//! The manifest: the commit point of an index. It names the live segments in
//! document order and holds the schema. It is replaced atomically (write a
//! temporary file, fsync, rename, fsync the folder), so an index is always
//! either before or after a commit.
//!
//! ```text
//! needle.manifest := Json Footer(kind "MANI", version 2)
//! Json := {"generation": 3, "next_segment": 7, "schema": {...},
//!          "segments": [{"name": "seg_000004", "max_doc": 1200, "deletes": "seg_000004.del.2",
//!                        "updates": "seg_000004.upd.3"}, ...],
//!          "checkpoint_lsn": 5120}
//! ```
//!
//! Version 2 changed what the analyzer name `english` means: Porter's stemmer
//! after Lucene's possessive filter, as Elasticsearch's `english`, where
//! version 1's stemmed with Snowball's English stemmer. A version-1 manifest's
//! `english` fields are read as `snowball` fields, the analyzer that stems as
//! they were indexed (it drops a possessive `'s` first, which changes only
//! words that are stop words without it, such as `it's`, and the two rarer
//! apostrophes' possessives).

use needle_codecs::footer;
use needle_core::{Error, Result};
use needle_storage::Directory;
use serde::{Deserialize, Serialize};

use crate::schema::Schema;

pub const FILE: &str = "needle.manifest";
const KIND: &[u8; 4] = b"MANI";
const VERSION: u32 = 2;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SegmentEntry {
    pub name: String,
    pub max_doc: u32,
    /// The file holding the segment's deletions, if it has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletes: Option<String>,
    /// The file holding the in-place updates of its values, if it has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updates: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub generation: u64,
    pub next_segment: u64,
    pub schema: Schema,
    pub segments: Vec<SegmentEntry>,
    /// Every write-ahead-log record up to this sequence number is in the segments.
    #[serde(default)]
    pub checkpoint_lsn: u64,
}

impl Manifest {
    pub fn new(schema: Schema) -> Self {
        Manifest { generation: 0, next_segment: 0, schema, segments: Vec::new(), checkpoint_lsn: 0 }
    }

    pub fn read(dir: &Directory) -> Result<Self> {
        Manifest::decode(&dir.read_all(FILE)?)
    }

    /// A manifest from its file's bytes, checked: footer, JSON, schema, and
    /// file names that stay inside the index folder.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let (len, version) = footer::verify(FILE, bytes, KIND, VERSION)?;
        let mut m: Manifest = serde_json::from_slice(&bytes[..len])
            .map_err(|e| Error::corrupt(FILE, format!("bad JSON: {e}")))?;
        if version == 1 {
            keep_snowball_stemming(&mut m.schema);
        }
        let schema = m.schema.prepared().map_err(|e| Error::corrupt(FILE, e.to_string()))?;
        for s in &m.segments {
            let generation_ok = |file: &Option<String>, kind: &str| {
                file.as_deref().is_none_or(|f| {
                    f.strip_prefix(&s.name).and_then(|rest| rest.strip_prefix(kind)).is_some_and(is_number)
                })
            };
            let files_ok = generation_ok(&s.deletes, ".del.") && generation_ok(&s.updates, ".upd.");
            if !s.name.strip_prefix("seg_").is_some_and(is_number) || !files_ok {
                let shown = needle_core::printable(&s.name, 64);
                return Err(Error::corrupt(FILE, format!("segment `{shown}`: not a segment's file name")));
            }
        }
        Ok(Manifest { schema, ..m })
    }

    /// Writes this manifest as the index's new commit point.
    pub fn commit(&mut self, dir: &Directory) -> Result<()> {
        self.generation += 1;
        let mut bytes = serde_json::to_vec_pretty(self).expect("manifest serializes");
        footer::append(&mut bytes, KIND, VERSION);
        dir.write_atomic(FILE, &bytes)
    }

    /// A fresh segment name, unique within the index.
    pub fn new_segment_name(&mut self) -> String {
        let name = format!("seg_{:06}", self.next_segment);
        self.next_segment += 1;
        name
    }
}

/// A version-1 manifest's `english` fields stemmed with Snowball (see the module docs).
fn keep_snowball_stemming(schema: &mut Schema) {
    for field in &mut schema.fields {
        if field.analyzer.as_deref() == Some("english") {
            field.analyzer = Some("snowball".to_string());
        }
    }
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use needle_analysis::AnalyzerKind;

    use super::*;

    fn encoded(version: u32) -> Vec<u8> {
        let mapping = r#"{"properties": {"body": {"type": "text", "analyzer": "english"}}}"#;
        let m = Manifest::new(Schema::from_mapping(mapping).unwrap());
        let mut bytes = serde_json::to_vec(&m).unwrap();
        footer::append(&mut bytes, KIND, version);
        bytes
    }

    fn body_analyzer(m: &Manifest) -> (Option<&str>, AnalyzerKind) {
        let body = m.schema.field_id("body").unwrap();
        (m.schema.field(body).analyzer.as_deref(), m.schema.analyzer(body).unwrap().kind())
    }

    #[test]
    fn a_version_1_english_field_keeps_stemming_with_snowball() {
        let old = Manifest::decode(&encoded(1)).unwrap();
        assert_eq!(body_analyzer(&old), (Some("snowball"), AnalyzerKind::Snowball));
        let new = Manifest::decode(&encoded(VERSION)).unwrap();
        assert_eq!(body_analyzer(&new), (Some("english"), AnalyzerKind::English));
    }
}
