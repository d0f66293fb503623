//! The I/O layer. Everything above it sees a [`Directory`] of write-once
//! files and reads them as [`FileSlice`]s: byte ranges of an open file.
//!
//! Files are written once (through [`FileWriter`], fsynced on `finish`) and
//! never modified; a commit replaces a small manifest atomically. Reading maps
//! the file with `mmap` and tells the kernel not to read ahead (MADV_RANDOM):
//! queries touch a few small ranges, and the device's readahead would pull in
//! megabytes per query when memory is short.

pub mod cache;
pub mod counters;
mod directory;
pub mod faults;
mod file_slice;
pub mod prefetch;

pub use directory::{Directory, FileWriter};
pub use file_slice::FileSlice;
