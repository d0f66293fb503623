//! Indexing: documents -> an in-memory segment ([`SegmentBuilder`]) -> an
//! on-disk segment ([`SegmentBuilder::flush`]); and [`merge_segments`], which
//! rewrites several on-disk segments as one, keeping document order.

mod builder;
mod merge;

pub use builder::{FieldOptions, SegmentBuilder};
pub use merge::merge_segments;

/// Positions between two values of a multi-valued text field, as
/// Elasticsearch's `position_increment_gap`, so a phrase cannot span values.
pub const POSITION_GAP: u32 = 100;
