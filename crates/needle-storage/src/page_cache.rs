//! The application cache: 4 KiB pages of index files, read by the `pread`
//! and `direct` backends, within one byte budget (S3-FIFO, see
//! [`crate::cache`], so one long scan does not flush what queries share).
//!
//! Index files are written once and never changed, so a page never goes
//! stale: pages of a deleted file are simply never asked for again and age out.

use std::ops::Range;
use std::sync::Mutex;

use crate::cache::{CacheStats, S3Fifo};

pub const PAGE: usize = 4096;

/// What the cache's maps and queues spend on a page besides its bytes,
/// charged to the budget so that a budget given is a budget kept.
const PAGE_OVERHEAD: usize = 128;

/// Page bytes by (file id, page number).
type Pages = S3Fifo<(u64, u64), Box<[u8]>>;

/// Pages by (file id, page number), shared by every file of the directories given it.
pub struct PageCache {
    pages: Mutex<Pages>,
}

impl PageCache {
    pub fn new(budget_bytes: usize) -> Self {
        PageCache { pages: Mutex::new(S3Fifo::new(budget_bytes)) }
    }

    pub fn stats(&self) -> CacheStats {
        self.lock().stats()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pages> {
        // A panic while holding the lock leaves a consistent cache: use it.
        self.pages.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Copies the cached pages of `pages` that overlap `range` (absolute
    /// bytes of file `file`) into `out` (which holds `range`); returns the pages not cached.
    pub(crate) fn copy_cached(&self, file: u64, range: &Range<usize>, out: &mut [u8]) -> Vec<u64> {
        let mut missing = Vec::new();
        let mut cache = self.lock();
        for page in page_span(range) {
            match cache.get(&(file, page)) {
                Some(bytes) => copy_page(page, bytes, range, out),
                None => missing.push(page),
            }
        }
        missing
    }

    /// Keeps page `page` of `file`.
    pub(crate) fn insert(&self, file: u64, page: u64, bytes: &[u8]) {
        self.lock().insert((file, page), bytes.into(), bytes.len() + PAGE_OVERHEAD);
    }

    /// Which of `pages` of `file` are not cached (without counting a hit or miss).
    pub(crate) fn absent(&self, file: u64, pages: Range<u64>) -> Vec<u64> {
        let cache = self.lock();
        pages.filter(|&p| !cache.contains(&(file, p))).collect()
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
        let cache = PageCache::new(1 << 20);
        let page: Vec<u8> = (0..PAGE).map(|i| i as u8).collect();
        cache.insert(7, 1, &page);
        let range = PAGE + 10..3 * PAGE + 5;
        let mut out = vec![0; range.len()];
        assert_eq!(cache.copy_cached(7, &range, &mut out), vec![2, 3]);
        assert_eq!(&out[..PAGE - 10], &page[10..]);
        assert_eq!(cache.copy_cached(8, &range, &mut out), vec![1, 2, 3], "another file's pages");
        assert_eq!(cache.absent(7, 0..3), vec![0, 2]);
    }
}
