//! The documents of a sealed segment that a filter matched, kept for the
//! searches that ask the same filter again (Elasticsearch's query cache,
//! Lucene's `LRUQueryCache`): a bit per document, read then in place of the
//! filter's doc values. A filter is kept the second time a segment is asked
//! it among its last [`HISTORY`] filters, so one asked once costs nothing
//! more; at most [`ENTRIES`] are kept a segment, the least recently used
//! dropped first. Only a segment whose documents cannot change holds one (an
//! on-disk segment without doc-value updates): a growing segment's and an
//! updated one's values move under any kept answer.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use needle_core::FieldId;

/// Filters remembered to tell a repeated one.
pub const HISTORY: usize = 64;
/// Filters kept a segment.
pub const ENTRIES: usize = 16;

/// A filter whose matches a segment keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FilterKey {
    /// Documents with a value of a numeric field in `lower..=upper`.
    Range { field: FieldId, lower: i64, upper: i64 },
}

/// A filter's matches: a bit per document of the segment.
#[derive(Debug, Clone)]
pub struct CachedDocs {
    pub words: Vec<u64>,
    pub count: u64,
}

/// What a segment's cache holds and has been asked, for statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FilterCacheStats {
    pub entries: u64,
    pub bytes: u64,
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
}

impl std::ops::AddAssign for FilterCacheStats {
    fn add_assign(&mut self, o: Self) {
        self.entries += o.entries;
        self.bytes += o.bytes;
        self.hits += o.hits;
        self.misses += o.misses;
        self.evictions += o.evictions;
    }
}

#[derive(Default)]
pub struct FilterCache {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The filters last asked, latest at the back.
    asked: VecDeque<FilterKey>,
    /// The kept ones, most recently used at the back.
    kept: Vec<(FilterKey, Arc<CachedDocs>)>,
    stats: FilterCacheStats,
}

impl FilterCache {
    /// The kept matches of `key`, if kept; otherwise whether they are worth
    /// keeping now (`key` was asked before among the last [`HISTORY`]).
    pub fn lookup(&self, key: FilterKey) -> Result<Arc<CachedDocs>, bool> {
        let mut inner = self.inner.lock().expect("filter cache lock");
        if let Some(at) = inner.kept.iter().position(|(k, _)| *k == key) {
            let entry = inner.kept.remove(at);
            let docs = entry.1.clone();
            inner.kept.push(entry);
            inner.stats.hits += 1;
            return Ok(docs);
        }
        inner.stats.misses += 1;
        let repeated = inner.asked.contains(&key);
        if inner.asked.len() == HISTORY {
            inner.asked.pop_front();
        }
        inner.asked.push_back(key);
        Err(repeated)
    }

    /// Keeps `docs` as the matches of `key`, dropping the least recently used beyond [`ENTRIES`].
    pub fn keep(&self, key: FilterKey, docs: Arc<CachedDocs>) {
        let mut inner = self.inner.lock().expect("filter cache lock");
        if inner.kept.iter().any(|(k, _)| *k == key) {
            return; // kept meanwhile by another search
        }
        if inner.kept.len() == ENTRIES {
            inner.kept.remove(0);
            inner.stats.evictions += 1;
        }
        inner.kept.push((key, docs));
    }

    pub fn stats(&self) -> FilterCacheStats {
        let inner = self.inner.lock().expect("filter cache lock");
        let bytes = inner.kept.iter().map(|(_, d)| (d.words.len() * 8) as u64).sum();
        FilterCacheStats { entries: inner.kept.len() as u64, bytes, ..inner.stats }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(lower: i64) -> FilterKey {
        FilterKey::Range { field: 1, lower, upper: 10 }
    }

    fn docs() -> Arc<CachedDocs> {
        Arc::new(CachedDocs { words: vec![0b101], count: 2 })
    }

    #[test]
    fn kept_when_asked_twice_and_dropped_least_recent_first() {
        let cache = FilterCache::default();
        assert!(matches!(cache.lookup(range(0)), Err(false)), "asked once: not worth keeping");
        assert!(matches!(cache.lookup(range(0)), Err(true)), "asked again: worth keeping");
        cache.keep(range(0), docs());
        for lower in 1..ENTRIES as i64 {
            cache.keep(range(lower), docs());
        }
        assert_eq!(cache.lookup(range(0)).unwrap().count, 2, "kept, and now the most recently used");
        cache.keep(range(ENTRIES as i64), docs());
        assert!(cache.lookup(range(1)).is_err(), "the least recently used went first");
        assert!(cache.lookup(range(0)).is_ok());
        let stats = cache.stats();
        assert_eq!((stats.entries, stats.evictions, stats.hits), (ENTRIES as u64, 1, 2));
        assert_eq!(stats.bytes, ENTRIES as u64 * 8);
    }
}
