//! The document store: every stored record (see `record.rs`: a head with the
//! document's `_id` and version, then its JSON source) kept on its own, the
//! head as it is and the source compressed with zstd and a dictionary trained
//! on the segment's documents, so showing one hit reads and decompresses one
//! document, and its `_id` or version needs no decompression at all.
//!
//! ```text
//! DocsFile := Dict^DictCount Frame^DocCount Index Runs DictEnds Trailer Footer(kind "DOCS", version 5)
//! Dict     := zstd dictionary bytes (none when the segment is too small to train one)
//! Frame    := Padding? HeadLen:vint Head ZstdFrame
//!                                   the source, compressed at level 3 with its run's Dict (no dictionary
//!                                   id), without the frame's 4-byte magic number (format 5)
//! Index    := bit-packed blocks of (Start, Len, RawLen) per document, as `index.rs` says;
//!             RawLen: the whole record's length
//! Runs     := (FirstDoc:u32 DictNo:u32)^RunCount          the dictionary of each run of documents,
//!                                   the first run starting at document 0, each after the one before
//! DictEnds := End:u64^DictCount                             where each Dict ends (the first starts at 0)
//! Trailer  := RunCount:u32 DictCount:u32 IndexStart:u64 DocCount:u32   (the last two where format 2 has them)
//! ```
//!
//! A store has at least one dictionary; new records are compressed with the
//! first. A merge keeps the dictionaries of its inputs' stores (up to
//! [`MAX_DICTIONARIES`], those of the most documents; equal ones once) and
//! copies the frames compressed with them as they are: recompressing is
//! most of the cost of merging stores. The rest are recompressed with the
//! first dictionary, that of the most documents.
//!
//! Versions 1 to 4 (still read) kept zstd's magic number (`28 B5 2F FD`) at
//! the start of every frame: the same 4 bytes a document, which format 5
//! leaves out and puts back to decompress (a frame copied from an older
//! store loses it). Versions 1 to 3 kept a fixed entry a document,
//! `Index := (Start:u64 Len:u32 RawLen:u32)^DocCount`, 16 bytes where format 4 spends about four.
//! Version 2 (still read) had one dictionary and no runs: `Dict Frame^DocCount
//! Index Trailer2`, `Trailer2 := DictLen:u64 IndexStart:u64 DocCount:u32`.
//! Version 1 (still read) had no head: each frame compressed the whole record.
//! A frame is moved to the next 4 KiB boundary whenever that makes it span
//! fewer 4 KiB blocks than it would where it stands (a 3 KB frame starting 2 KB
//! into a block would span two; aligned, it spans one), so each document costs
//! as few device reads as its size allows; later frames small enough fill
//! the padding left ([`crate::page::PackedWriter`]), so frames are not in
//! document order (the index says where each is; format 4 readers always
//! allowed it). All integers are little-endian.
//! Readers hold the index in memory, bit-packed (see `index.rs`).

mod index;
mod reader;
pub mod record;
mod writer;

pub use reader::DocStoreReader;
pub use writer::{write_doc_store, write_with_dictionaries, write_with_dictionary, StoredDoc};

/// One document's frame as a store of the current version keeps it (its
/// head, then its compressed source), its record's length, and the number
/// of the store's dictionary it was compressed with: what a merge that
/// keeps that dictionary copies as it is.
pub struct Frame {
    pub bytes: Vec<u8>,
    pub raw_len: usize,
    pub dict: usize,
}

/// The most dictionaries a store written by a merge keeps.
pub const MAX_DICTIONARIES: usize = 8;

pub const KIND: &[u8; 4] = b"DOCS";
pub const VERSION: u32 = 5;
/// zstd's frame magic number, which format 5 leaves out of every frame.
pub(crate) const ZSTD_MAGIC: [u8; 4] = 0xFD2F_B528u32.to_le_bytes();
pub(crate) const TRAILER_LEN: usize = 20;
pub(crate) const INDEX_ENTRY_LEN: usize = 16;
