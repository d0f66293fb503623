//! Read accounting: the bytes a query needed from each kind of data, and the
//! distinct 4 KiB pages they lie on. Readers report every range they use
//! through [`record`]; a caller that wants the figures for one query wraps it
//! in [`start`] / [`finish`] on the same thread. When no one is counting,
//! recording is one thread-local flag test.
//!
//! Read amplification is computed against the storage bytes the kernel
//! actually read (`/proc/self/io`), see [`process_read_bytes`].

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use crate::FileSlice;

/// What a range of bytes holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataKind {
    TermMap,
    Skip,
    DocIds,
    Freqs,
    Positions,
    Offsets,
    Bloom,
    Norms,
    DocStore,
    DocValues,
}

impl DataKind {
    pub const ALL: [DataKind; 10] = [
        DataKind::TermMap,
        DataKind::Skip,
        DataKind::DocIds,
        DataKind::Freqs,
        DataKind::Positions,
        DataKind::Offsets,
        DataKind::Bloom,
        DataKind::Norms,
        DataKind::DocStore,
        DataKind::DocValues,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DataKind::TermMap => "term_map",
            DataKind::Skip => "skip",
            DataKind::DocIds => "doc_ids",
            DataKind::Freqs => "freqs",
            DataKind::Positions => "positions",
            DataKind::Offsets => "offsets",
            DataKind::Bloom => "bloom",
            DataKind::Norms => "norms",
            DataKind::DocStore => "doc_store",
            DataKind::DocValues => "doc_values",
        }
    }
}

/// What one query read.
#[derive(Debug, Clone, Default)]
pub struct ReadStats {
    /// Bytes needed, by [`DataKind`] (in `DataKind::ALL` order).
    pub needed: [u64; 10],
    /// Distinct 4 KiB pages touched (file, page), each with the kind of data
    /// first used from it.
    pub pages: HashMap<(usize, u64), DataKind>,
    /// Bytes asked for ahead of use ([`crate::prefetch`]).
    pub prefetched: u64,
    /// Requests the `pread` and `direct` backends sent to the file, and the bytes they asked for.
    pub storage_reads: u64,
    pub storage_bytes: u64,
    /// Times the query waited for the device: each batch of requests sent
    /// together counts once, so reads made one after another count each.
    pub storage_waits: u64,
    /// Pages the application cache had, and did not have, when asked.
    pub cache_hits: u64,
    pub cache_misses: u64,
}

impl ReadStats {
    pub fn needed(&self, kind: DataKind) -> u64 {
        self.needed[kind as usize]
    }

    pub fn total_needed(&self) -> u64 {
        self.needed.iter().sum()
    }

    /// Pages first touched for `kind`: which kinds of data cost the pages.
    pub fn pages_of(&self, kind: DataKind) -> u64 {
        self.pages.values().filter(|&&k| k == kind).count() as u64
    }
}

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static STATS: RefCell<ReadStats> = RefCell::new(ReadStats::default());
}

/// Starts counting this thread's reads (from zero).
pub fn start() {
    STATS.with(|s| *s.borrow_mut() = ReadStats::default());
    ON.with(|on| on.set(true));
}

/// Stops counting and returns what was read since [`start`].
pub fn finish() -> ReadStats {
    ON.with(|on| on.set(false));
    STATS.with(|s| std::mem::take(&mut *s.borrow_mut()))
}

/// Whether this thread is counting.
#[inline]
pub fn counting() -> bool {
    ON.with(Cell::get)
}

/// Records that `len` bytes at `offset` of `file` were used as `kind`.
#[inline]
pub fn record(kind: DataKind, file: &FileSlice, offset: usize, len: usize) {
    if !counting() || len == 0 {
        return;
    }
    let (id, start) = file.position(offset);
    STATS.with(|s| {
        let mut s = s.borrow_mut();
        s.needed[kind as usize] += len as u64;
        for page in start / 4096..=(start + len as u64 - 1) / 4096 {
            s.pages.entry((id, page)).or_insert(kind);
        }
    });
}

/// Applies `update` to this thread's figures when it is counting.
#[inline]
fn add(update: impl FnOnce(&mut ReadStats)) {
    if counting() {
        STATS.with(|s| update(&mut s.borrow_mut()));
    }
}

/// Records a prefetch of `len` bytes.
#[inline]
pub fn record_prefetch(len: usize) {
    add(|s| s.prefetched += len as u64);
}

/// Records one batch of `reads` requests for `bytes`, sent to a file together by a backend.
#[inline]
pub fn record_storage(reads: usize, bytes: usize) {
    add(|s| {
        s.storage_waits += 1;
        s.storage_reads += reads as u64;
        s.storage_bytes += bytes as u64;
    });
}

/// Records `reads` requests for `bytes` sent ahead, not waited for when sent.
#[inline]
pub fn record_storage_ahead(reads: usize, bytes: usize) {
    if reads > 0 {
        add(|s| {
            s.storage_reads += reads as u64;
            s.storage_bytes += bytes as u64;
        });
    }
}

/// Records a wait for reads sent ahead that had not arrived when wanted.
#[inline]
pub fn record_wait() {
    add(|s| s.storage_waits += 1);
}

/// Records pages found in, and missing from, the application cache.
#[inline]
pub fn record_cache(hits: usize, misses: usize) {
    add(|s| {
        s.cache_hits += hits as u64;
        s.cache_misses += misses as u64;
    });
}

/// Records bytes used from memory that belongs to no file (in-memory segments).
#[inline]
pub fn record_memory(kind: DataKind, len: usize) {
    add(|s| s.needed[kind as usize] += len as u64);
}

/// Bytes this process has caused to be read from storage (`read_bytes` of
/// `/proc/self/io`), when the kernel reports it.
pub fn process_read_bytes() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines().find_map(|l| l.strip_prefix("read_bytes: ")).and_then(|v| v.trim().parse().ok())
}

/// Resident memory of this process in bytes (`VmRSS` of `/proc/self/status`).
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_bytes_and_pages_only_while_started() {
        let f = FileSlice::from_vec("f", vec![0; 10_000]);
        record(DataKind::DocIds, &f, 0, 10);
        start();
        record(DataKind::DocIds, &f, 4090, 10);
        record(DataKind::Positions, &f.slice(8192..9000), 0, 5);
        let s = finish();
        assert_eq!(s.needed(DataKind::DocIds), 10);
        assert_eq!(s.needed(DataKind::Positions), 5);
        assert_eq!(s.pages.len(), 3, "pages 0, 1 and 2");
        assert_eq!((s.pages_of(DataKind::DocIds), s.pages_of(DataKind::Positions)), (2, 1));
        assert_eq!(s.total_needed(), 15);
    }
}
