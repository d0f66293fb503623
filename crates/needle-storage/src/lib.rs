//! The I/O layer. Everything above it sees a [`Directory`] of write-once
//! files and reads them as [`FileSlice`]s: byte ranges of an open file.
//!
//! Files are written once (through [`FileWriter`], fsynced on `finish`) and
//! never modified; a commit replaces a small manifest atomically. Readers ask
//! for the byte ranges they decode; a [`backend`] serves them from a mapping
//! (MADV_RANDOM: queries touch a few small ranges, and the device's readahead
//! would pull in megabytes per query when memory is short), with `pread`, or
//! with direct I/O through io_uring into the application cache.

pub mod backend;
pub mod cache;
pub mod counters;
mod directory;
pub mod faults;
mod file_slice;
mod log_file;
pub mod page_cache;
pub mod powerloss;
pub mod prefetch;
mod uring;

pub use backend::{Backend, ReadOptions};
pub use directory::{Directory, FileWriter};
pub use file_slice::{FileSlice, ReadBytes};
pub use log_file::LogFile;
pub use page_cache::PageCache;
