//! The vocabulary every Needle layer shares: document and field ids, the
//! [`DocSet`] iteration contract, and the error types that name what went wrong.

pub mod deadline;
mod docset;
mod error;
mod prefetch;
pub mod read_error;
mod size;

pub use docset::{DocSet, TERMINATED};
pub use error::{printable, printable_bytes, Error, Result};
pub use prefetch::prefetch;
pub use size::parse_size;

/// A document's number inside one segment, dense from 0.
pub type DocId = u32;

/// A field's number in an index's schema; stable for the life of the index.
pub type FieldId = u16;

/// The documents of a segment that were deleted after it was written.
pub trait Deletes: Sync {
    fn is_deleted(&self, doc: DocId) -> bool;
}
