//! Immutable segment formats. A segment is five or six files, each specified at the
//! top of the module that writes and reads it, each ending in a checked
//! [`footer`]:
//!
//! | file          | module        | holds                                                    |
//! |---------------|---------------|----------------------------------------------------------|
//! | `NAME.terms`  | [`termmap`]   | (field, term) -> offset of its grouped record + prefetch zone size |
//! | `NAME.post`   | [`postings`]  | one grouped record per term: header, skips, doc/freq blocks, positions, offsets |
//! | `NAME.norms`  | [`norms`]     | one byte per document per text field: Lucene's quantized length |
//! | `NAME.docs`   | [`docstore`]  | each stored record on its own: `_id` and version as they are, the source compressed (zstd + trained dictionary) |
//! | `NAME.dv`     | [`doc_values`] | numeric fields' values by document, in blocks with min/max (only when there are such fields) |
//! | `NAME.meta`   | [`meta`]      | document count, per-field statistics and options; written last |
//!
//! Search reads segments only through the [`SegmentRead`] and [`Postings`]
//! traits, so an in-memory segment can stand in for an on-disk one.

pub mod bitpack;
pub mod bloom;
pub mod bytes;
mod checksummed;
pub mod doc_values;
pub mod docstore;
pub mod filter_cache;
pub mod footer;
pub mod meta;
pub mod norms;
pub mod page;
pub mod postings;
mod segment;
mod segment_reader;
mod segment_writer;
pub mod term_matcher;
pub mod termmap;

pub use checksummed::ChecksummedWriter;
pub use meta::{FieldMeta, FieldStats, IndexOrder, SegmentMeta};
pub use postings::{BlockImpact, Part, Postings, TermPostings};
pub use segment::SegmentRead;
pub use segment_reader::{segment_files, SegmentReader, TermEntry, Verify};
pub use segment_writer::{EncodedRecord, RecordEncoder, SegmentWriter};
pub use term_matcher::{MatchState, TermMatcher};

/// Documents per block of doc ids, frequencies and skip entries.
pub const BLOCK_LEN: usize = 128;
