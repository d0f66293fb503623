//! The document store: every stored record (see `record.rs`: a head with the
//! document's `_id` and version, then its JSON source) kept on its own, the
//! head as it is and the source compressed with zstd and a dictionary trained
//! on the segment's documents, so showing one hit reads and decompresses one
//! document, and its `_id` or version needs no decompression at all.
//!
//! ```text
//! DocsFile := Dict Frame^DocCount Index Trailer Footer(kind "DOCS", version 2)
//! Dict     := zstd dictionary bytes (DictLen of them; none when the segment is too small to train one)
//! Frame    := Padding? HeadLen:vint Head ZstdFrame
//!                                   the source, compressed at level 3 with Dict (no dictionary id)
//! Index    := (Start:u64 Len:u32 RawLen:u32)^DocCount     RawLen: the whole record's length
//! Trailer  := DictLen:u64 IndexStart:u64 DocCount:u32
//! ```
//!
//! A merge writes its store with the dictionary of the input holding the most
//! of its documents and copies that input's frames as they are (any trained
//! dictionary serves the format; only the others' sources are recompressed).
//!
//! Version 1 (still read) had no head: each frame compressed the whole record.
//! A frame is moved to the next 4 KiB boundary whenever that makes it span
//! fewer 4 KiB blocks than it would where it stands (a 3 KB frame starting 2 KB
//! into a block would span two; aligned, it spans one), so each document costs
//! as few device reads as its size allows. All integers are little-endian.
//! Readers hold the index in memory, bit-packed (see `index.rs`).

mod index;
mod reader;
pub mod record;
mod writer;

pub use reader::DocStoreReader;
pub use writer::{write_doc_store, write_with_dictionary, StoredDoc};

/// One document's frame as a store of the current version keeps it (its
/// head, then its compressed source), and its record's length: what a merge
/// that keeps the store's dictionary copies as it is.
pub struct Frame {
    pub bytes: Vec<u8>,
    pub raw_len: usize,
}

pub const KIND: &[u8; 4] = b"DOCS";
pub const VERSION: u32 = 2;
pub(crate) const TRAILER_LEN: usize = 20;
pub(crate) const INDEX_ENTRY_LEN: usize = 16;
