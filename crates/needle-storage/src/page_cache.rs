//! The application cache: 4 KiB pages of index files, read by the `pread`
//! and `direct` backends, within one byte budget (S3-FIFO, see
//! [`crate::cache`], so one long scan does not flush what queries share).
//!
//! Pages live in one pool of page frames mapped up front (anonymous memory:
//! a frame costs nothing until a page is first written to it), so the budget is what the cache holds
//! in memory: no allocator slack per page. The S3-FIFO index maps a page to
//! its frame and hands frames back as it evicts.
//!
//! Index files are written once and never changed, so a page never goes
//! stale: pages of a deleted file are simply never asked for again and age out.

use std::ops::Range;
use std::sync::Mutex;

use memmap2::MmapMut;
use needle_core::{Error, Result};

use crate::cache::{CacheStats, S3Fifo};

pub const PAGE: usize = 4096;

/// What the index spends on a page besides its frame (map slot, queue
/// entries, ghost), counted against the budget.
const PAGE_OVERHEAD: usize = 192;

#[derive(Clone, Copy)]
struct Frame {
    index: u32,
    len: u32,
}

struct Pool {
    /// Frame of each cached page, by (file id, page number).
    pages: S3Fifo<(u64, u64), Frame>,
    /// Anonymous memory: zero pages the kernel commits only when written.
    frames: MmapMut,
    free: Vec<u32>,
}

impl Pool {
    fn frame(&self, f: &Frame) -> &[u8] {
        let at = f.index as usize * PAGE;
        &self.frames[at..at + f.len as usize]
    }
}

/// Pages by (file id, page number), shared by every file of the directories given it.
pub struct PageCache {
    pool: Mutex<Pool>,
}

impl PageCache {
    /// A cache of `budget_bytes`; an error when the address space cannot be reserved.
    pub fn new(budget_bytes: usize) -> Result<Self> {
        let frames = budget_bytes / (PAGE + PAGE_OVERHEAD);
        let memory = MmapMut::map_anon(frames.max(1) * PAGE).map_err(|e| {
            Error::Index(format!("cannot reserve {budget_bytes} bytes for the page cache: {e}"))
        })?;
        let pool = Pool {
            pages: S3Fifo::new(frames * (PAGE + PAGE_OVERHEAD)),
            frames: memory,
            free: (0..frames as u32).rev().collect(),
        };
        Ok(PageCache { pool: Mutex::new(pool) })
    }

    pub fn stats(&self) -> CacheStats {
        self.lock().pages.stats()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pool> {
        // A panic while holding the lock leaves a consistent cache: use it.
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Copies the cached pages that overlap `range` (absolute bytes of file
    /// `file`) into `out` (which holds `range`); returns the pages not cached.
    pub(crate) fn copy_cached(&self, file: u64, range: &Range<usize>, out: &mut [u8]) -> Vec<u64> {
        let mut missing = Vec::new();
        let mut pool = self.lock();
        for page in page_span(range) {
            match pool.pages.get(&(file, page)).copied() {
                Some(frame) => copy_page(page, pool.frame(&frame), range, out),
                None => missing.push(page),
            }
        }
        missing
    }

    /// Keeps page `page` of `file` (at most [`PAGE`] bytes).
    pub(crate) fn insert(&self, file: u64, page: u64, bytes: &[u8]) {
        let mut pool = self.lock();
        if pool.pages.contains(&(file, page)) {
            return;
        }
        // Make room first, so that a frame is free: each page evicted frees one.
        let evicted = pool.pages.make_room(PAGE + PAGE_OVERHEAD);
        pool.free.extend(evicted.into_iter().map(|f| f.index));
        let Some(index) = pool.free.pop() else { return };
        let at = index as usize * PAGE;
        pool.frames[at..at + bytes.len()].copy_from_slice(bytes);
        let frame = Frame { index, len: bytes.len() as u32 };
        let gone = pool.pages.insert((file, page), frame, PAGE + PAGE_OVERHEAD);
        pool.free.extend(gone.into_iter().map(|f| f.index));
    }

    /// Which of `pages` of `file` are not cached (without counting a hit or miss).
    pub(crate) fn absent(&self, file: u64, pages: &[u64]) -> Vec<u64> {
        let pool = self.lock();
        pages.iter().copied().filter(|&p| !pool.pages.contains(&(file, p))).collect()
    }
}

/// The pages `range` lies on.
pub(crate) fn page_span(range: &Range<usize>) -> Range<u64> {
    if range.is_empty() {
        return 0..0;
    }
    (range.start / PAGE) as u64..range.end.div_ceil(PAGE) as u64
}

/// Copies the part of page `page` (its bytes `bytes`) that lies in `range` into `out`.
pub(crate) fn copy_page(page: u64, bytes: &[u8], range: &Range<usize>, out: &mut [u8]) {
    let page_start = page as usize * PAGE;
    let from = range.start.max(page_start);
    let to = range.end.min(page_start + bytes.len());
    if from < to {
        out[from - range.start..to - range.start].copy_from_slice(&bytes[from - page_start..to - page_start]);
    }
}

/// Consecutive runs of `pages` (sorted), for one read each.
pub(crate) fn runs(pages: &[u64]) -> Vec<Range<u64>> {
    let mut out: Vec<Range<u64>> = Vec::new();
    for &p in pages {
        match out.last_mut() {
            Some(run) if run.end == p => run.end += 1,
            _ => out.push(p..p + 1),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_join_consecutive_pages() {
        assert_eq!(runs(&[1, 2, 3, 7, 9, 10]), vec![1..4, 7..8, 9..11]);
        assert!(runs(&[]).is_empty());
    }

    #[test]
    fn cached_pages_are_copied_and_missing_ones_named() {
        let cache = PageCache::new(1 << 20).unwrap();
        let page: Vec<u8> = (0..PAGE).map(|i| i as u8).collect();
        cache.insert(7, 1, &page);
        let range = PAGE + 10..3 * PAGE + 5;
        let mut out = vec![0; range.len()];
        assert_eq!(cache.copy_cached(7, &range, &mut out), vec![2, 3]);
        assert_eq!(&out[..PAGE - 10], &page[10..]);
        assert_eq!(cache.copy_cached(8, &range, &mut out), vec![1, 2, 3], "another file's pages");
        assert_eq!(cache.absent(7, &[0, 1, 2]), vec![0, 2]);
    }

    #[test]
    fn frames_are_reused_as_pages_are_evicted() {
        let cache = PageCache::new(3 * (PAGE + PAGE_OVERHEAD)).unwrap();
        for page in 0..50u64 {
            cache.insert(1, page, &[page as u8; PAGE]);
            let mut out = [0u8; 1];
            assert!(cache
                .copy_cached(1, &(page as usize * PAGE..page as usize * PAGE + 1), &mut out)
                .is_empty());
            assert_eq!(out[0], page as u8, "page {page} reads back from its frame");
        }
        let stats = cache.stats();
        assert_eq!((stats.entries, stats.evictions), (3, 47));
    }
}
