//! Indexing: documents -> an in-memory segment ([`MemSegment`], searchable
//! as it grows) -> an on-disk segment ([`MemSegment::flush`]); and
//! [`merge_segments`], which rewrites several on-disk segments as one,
//! keeping document order.

mod analyzed;
mod arena;
mod flat_postings;
mod grouped;
mod mem_postings;
mod mem_segment;
mod merge;
mod term_table;

pub use analyzed::AnalyzedDoc;
pub use mem_segment::{MemSegment, MemView};
pub use merge::{merge_segments, merge_segments_paced, DocMaps, Merge};

/// Positions between two values of a multi-valued text field, as
/// Elasticsearch's `position_increment_gap`, so a phrase cannot span values.
pub const POSITION_GAP: u32 = 100;
