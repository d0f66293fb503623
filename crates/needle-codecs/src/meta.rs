//! Segment meta: the small file that makes a segment a segment. It is written
//! last, so a segment whose meta file is missing was never finished.
//!
//! ```text
//! MetaFile := Json Footer(kind "META", version 1)
//! ```
//!
//! The JSON holds `max_doc`, the per-field options and statistics (BM25 needs
//! `doc_count` and `sum_total_term_freq` summed over segments), each
//! field's place in the norms file, and the length and footer checksum of each
//! other file of the segment (`files`, by extension; absent in segments
//! written before it was added): a file from another segment put in one's
//! place is caught at open by its footer alone. A segment whose documents
//! are in the index's sort order (written by a merge of an index with an
//! index sort) says so under `sorted`: the field, the direction and the
//! value that stands in for a missing one; searches sorted the same way stop
//! in it once they have their hits. Example:
//! `{"max_doc":2,"fields":[{"field":0,"positions":true,"offsets":true,"norms_index":0,
//!   "doc_count":2,"sum_total_term_freq":9,"sum_doc_freq":7,"terms":7}],
//!   "files":{"post":{"len":4120,"crc":3735928559}, ...}}`

use std::collections::BTreeMap;

use needle_core::{Error, FieldId, Result};
use serde::{Deserialize, Serialize};

use crate::bloom::BloomParams;
use crate::footer;

pub const KIND: &[u8; 4] = b"META";
pub const VERSION: u32 = 1;

/// Index statistics of one field in one segment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldStats {
    /// Documents with at least one term in the field.
    pub doc_count: u64,
    pub sum_total_term_freq: u64,
    pub sum_doc_freq: u64,
}

impl FieldStats {
    pub fn add(&mut self, other: &FieldStats) {
        self.doc_count += other.doc_count;
        self.sum_total_term_freq += other.sum_total_term_freq;
        self.sum_doc_freq += other.sum_doc_freq;
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldMeta {
    pub field: FieldId,
    pub positions: bool,
    pub offsets: bool,
    /// Position of this field's column in the norms file; `None` for fields without norms.
    pub norms_index: Option<u32>,
    #[serde(flatten)]
    pub stats: FieldStats,
    pub terms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentMeta {
    pub max_doc: u32,
    pub fields: Vec<FieldMeta>,
    /// The Bloom filter parameters of the segment's text fields, when it has filters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bloom: Option<BloomParams>,
    /// Each other file of the segment by extension: what its footer must say.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, FileStamp>,
    /// The order of the segment's documents, when they are sorted by a field's values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sorted: Option<IndexOrder>,
}

/// Documents in the order of one numeric field's values (an index sort):
/// each document's smallest value ascending, its largest descending,
/// `missing` standing in for none; equal values in their earlier order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexOrder {
    pub field: FieldId,
    pub descending: bool,
    pub missing: i64,
}

impl IndexOrder {
    /// A document's key among `values` (ascending): what it is ordered by.
    pub fn key(&self, values: &[i64]) -> i64 {
        let picked = if self.descending { values.last() } else { values.first() };
        picked.copied().unwrap_or(self.missing)
    }

    /// Whether a document keyed `a` comes before (or with) one keyed `b`.
    pub fn in_order(&self, a: i64, b: i64) -> bool {
        if self.descending {
            a >= b
        } else {
            a <= b
        }
    }
}

/// A file's length and the checksum its footer holds: which file it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    pub len: u64,
    pub crc: u32,
}

impl SegmentMeta {
    pub fn field(&self, field: FieldId) -> Option<&FieldMeta> {
        self.fields.iter().find(|f| f.field == field)
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(self).expect("meta serializes");
        footer::append(&mut bytes, KIND, VERSION);
        bytes
    }

    pub fn decode(file: &str, bytes: &[u8]) -> Result<Self> {
        let (len, _) = footer::verify(file, bytes, KIND, VERSION)?;
        let meta: SegmentMeta = serde_json::from_slice(&bytes[..len])
            .map_err(|e| Error::corrupt(file, format!("bad meta JSON: {e}")))?;
        meta.validate().map_err(|what| Error::corrupt(file, what))?;
        Ok(meta)
    }

    /// What readers index by must be in range: each field listed once, and
    /// the norms columns numbered 0.. without gaps or repeats.
    fn validate(&self) -> std::result::Result<(), String> {
        let mut fields: Vec<FieldId> = self.fields.iter().map(|f| f.field).collect();
        fields.sort_unstable();
        if let Some(w) = fields.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("field {} is listed twice", w[0]));
        }
        let mut columns: Vec<u32> = self.fields.iter().filter_map(|f| f.norms_index).collect();
        columns.sort_unstable();
        if let Some((i, &c)) = columns.iter().enumerate().find(|&(i, &c)| c as usize != i) {
            return Err(format!("norms column {c} where column {i} was expected"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(field: FieldId, norms_index: Option<u32>) -> FieldMeta {
        FieldMeta {
            field,
            positions: true,
            offsets: false,
            norms_index,
            stats: FieldStats::default(),
            terms: 1,
        }
    }

    fn decoded(fields: Vec<FieldMeta>) -> Result<SegmentMeta> {
        let meta = SegmentMeta { max_doc: 3, fields, bloom: None, files: BTreeMap::new(), sorted: None };
        SegmentMeta::decode("s.meta", &meta.encode())
    }

    #[test]
    fn a_meta_round_trips() {
        let fields = vec![field(0, Some(1)), field(1, None), field(2, Some(0))];
        assert_eq!(decoded(fields.clone()).unwrap().fields, fields);
    }

    #[test]
    fn norms_columns_past_the_file_or_shared_are_refused() {
        for columns in [[Some(0), Some(2)], [Some(1), Some(1)], [Some(1), None]] {
            let fields = vec![field(0, columns[0]), field(1, columns[1])];
            let err = decoded(fields).unwrap_err();
            assert!(
                matches!(err, Error::Corrupt { .. }) && err.to_string().contains("norms column"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_field_listed_twice_is_refused() {
        let err = decoded(vec![field(3, None), field(3, None)]).unwrap_err();
        assert!(err.to_string().contains("field 3 is listed twice"), "{err}");
    }
}
