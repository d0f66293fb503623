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

use std::collections::HashMap;
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
    /// Frame of each cached page, by (file id, page number): the dynamic part.
    pages: S3Fifo<(u64, u64), Frame>,
    /// The static part: pages pinned, never evicted, taken out of the
    /// dynamic part's budget (at most half the whole).
    pinned: HashMap<(u64, u64), Frame>,
    pinned_hits: u64,
    /// Frames in all.
    frame_count: usize,
    /// Anonymous memory: zero pages the kernel commits only when written.
    frames: MmapMut,
    free: Vec<u32>,
}

impl Pool {
    /// Takes one page's worth of budget from the dynamic part for a page about
    /// to be pinned; what that evicts frees its frames, so one is free after.
    fn make_room_to_pin(&mut self) {
        let budget = (self.frame_count - self.pinned.len() - 1) * (PAGE + PAGE_OVERHEAD);
        let evicted = self.pages.set_budget(budget);
        self.free.extend(evicted.into_iter().map(|f| f.index));
    }

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
        let memory = MmapMut::map_anon(frames.max(1) * PAGE).map_err(|e| Error::Resources {
            what: format!("cannot reserve {budget_bytes} bytes for the page cache: {e}"),
        })?;
        let pool = Pool {
            pages: S3Fifo::new(frames * (PAGE + PAGE_OVERHEAD)),
            pinned: HashMap::new(),
            pinned_hits: 0,
            frame_count: frames,
            frames: memory,
            free: (0..frames as u32).rev().collect(),
        };
        Ok(PageCache { pool: Mutex::new(pool) })
    }

    pub fn stats(&self) -> CacheStats {
        let pool = self.lock();
        let dynamic = pool.pages.stats();
        CacheStats {
            hits: dynamic.hits + pool.pinned_hits,
            budget: pool.frame_count * (PAGE + PAGE_OVERHEAD),
            pinned_bytes: pool.pinned.len() * PAGE,
            ..dynamic
        }
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
            let pinned = pool.pinned.get(&(file, page)).copied();
            pool.pinned_hits += u64::from(pinned.is_some());
            match pinned.or_else(|| pool.pages.get(&(file, page)).copied()) {
                Some(frame) => copy_page(page, pool.frame(&frame), range, out),
                None => missing.push(page),
            }
        }
        missing
    }

    /// Keeps page `page` of `file` (at most [`PAGE`] bytes).
    pub(crate) fn insert(&self, file: u64, page: u64, bytes: &[u8]) {
        let mut pool = self.lock();
        if pool.pages.contains(&(file, page)) || pool.pinned.contains_key(&(file, page)) {
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
        let cached = |p: u64| pool.pages.contains(&(file, p)) || pool.pinned.contains_key(&(file, p));
        pages.iter().copied().filter(|&p| !cached(p)).collect()
    }

    /// Pins page `page` of `file` in the static part, moving it from the
    /// dynamic part when it is there, else storing `bytes` (None: only if
    /// cached). False when it is not pinned: not cached and no bytes given,
    /// or the static part would pass half the budget.
    pub(crate) fn pin(&self, file: u64, page: u64, bytes: Option<&[u8]>) -> bool {
        let mut pool = self.lock();
        let key = (file, page);
        if pool.pinned.contains_key(&key) {
            return true;
        }
        if 2 * (pool.pinned.len() + 1) > pool.frame_count {
            return false;
        }
        let frame = match (pool.pages.remove(&key), bytes) {
            (Some(frame), _) => {
                pool.make_room_to_pin();
                frame
            }
            (None, Some(bytes)) => {
                pool.make_room_to_pin();
                let Some(index) = pool.free.pop() else { return false };
                let at = index as usize * PAGE;
                pool.frames[at..at + bytes.len()].copy_from_slice(bytes);
                Frame { index, len: bytes.len() as u32 }
            }
            (None, None) => return false,
        };
        pool.pinned.insert(key, frame);
        true
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
    fn pinned_pages_stay_while_others_come_and_go() {
        let cache = PageCache::new(8 * (PAGE + PAGE_OVERHEAD)).unwrap();
        cache.insert(1, 0, &[7; PAGE]);
        assert!(cache.pin(1, 0, None), "a cached page moves to the static part");
        assert!(cache.pin(1, 1, Some(&[8; PAGE])));
        assert!(!cache.pin(1, 2, None), "not cached, no bytes");
        assert!(cache.pin(1, 2, Some(&[9; PAGE])) && cache.pin(1, 3, Some(&[9; PAGE])));
        assert!(!cache.pin(1, 4, Some(&[9; PAGE])), "the static part stops at half the budget");
        for page in 100..200u64 {
            cache.insert(1, page, &[1; PAGE]);
        }
        for (page, value) in [(0u64, 7u8), (1, 8), (2, 9), (3, 9)] {
            let mut out = [0u8; 1];
            let at = page as usize * PAGE;
            assert!(cache.copy_cached(1, &(at..at + 1), &mut out).is_empty(), "page {page} still cached");
            assert_eq!(out[0], value);
        }
        let stats = cache.stats();
        assert_eq!((stats.pinned_bytes, stats.entries), (4 * PAGE, 4), "{stats:?}");
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
