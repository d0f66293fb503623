//! What each index has been asked to do since the server started: the
//! operation counts and times `_stats` reports (Elasticsearch's
//! `indexing`, `search`, `refresh`, `flush` and `merges` sections). Kept by
//! the server, per index, as the requests pass; the index's own figures
//! (documents, bytes, segments, caches) are read from the engine when asked.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde_json::{json, Value};

/// A count of operations and the time they took.
#[derive(Default)]
pub struct Timed {
    count: AtomicU64,
    nanos: AtomicU64,
}

impl Timed {
    /// One more operation, begun at `started` and done now.
    pub fn add(&self, started: Instant) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.nanos.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    pub fn millis(&self) -> u64 {
        self.nanos.load(Ordering::Relaxed) / 1_000_000
    }
}

#[derive(Default)]
pub struct IndexCounters {
    /// Documents indexed or updated (a bulk item each).
    pub index: Timed,
    /// Writes refused (a bad document, a version conflict).
    pub index_failed: AtomicU64,
    pub delete: Timed,
    /// Searches and counts over the index.
    pub query: Timed,
    /// Scroll pages after the first.
    pub scroll: Timed,
    pub refresh: AtomicU64,
    pub flush: AtomicU64,
    pub merge: Timed,
}

impl IndexCounters {
    /// `result` of indexing or updating a document, begun at `started`, counted.
    pub fn indexed<T, E>(&self, started: Instant, result: Result<T, E>) -> Result<T, E> {
        match &result {
            Ok(_) => self.index.add(started),
            Err(_) => Self::bump(&self.index_failed),
        }
        result
    }

    /// `result` of a deletion, begun at `started`, counted.
    pub fn deleted<T, E>(&self, started: Instant, result: Result<T, E>) -> Result<T, E> {
        match &result {
            Ok(_) => self.delete.add(started),
            Err(_) => Self::bump(&self.index_failed),
        }
        result
    }

    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The `indexing` section.
    pub fn indexing(&self) -> Value {
        json!({
            "index_total": self.index.count(),
            "index_time_in_millis": self.index.millis(),
            "index_current": 0,
            "index_failed": self.index_failed.load(Ordering::Relaxed),
            "delete_total": self.delete.count(),
            "delete_time_in_millis": self.delete.millis(),
            "delete_current": 0,
            "noop_update_total": 0,
            "is_throttled": false,
            "throttle_time_in_millis": 0,
        })
    }

    /// The `search` section; `open_contexts`: the index's open scrolls.
    pub fn search(&self, open_contexts: usize) -> Value {
        json!({
            "open_contexts": open_contexts,
            "query_total": self.query.count(),
            "query_time_in_millis": self.query.millis(),
            "query_current": 0,
            "fetch_total": self.query.count(),
            "fetch_time_in_millis": 0,
            "fetch_current": 0,
            "scroll_total": self.scroll.count(),
            "scroll_time_in_millis": self.scroll.millis(),
            "scroll_current": open_contexts,
            "suggest_total": 0,
            "suggest_time_in_millis": 0,
            "suggest_current": 0,
        })
    }

    /// The `refresh`, `flush` and `merges` sections.
    pub fn maintenance(&self) -> [(&'static str, Value); 3] {
        let refresh = self.refresh.load(Ordering::Relaxed);
        [
            (
                "refresh",
                json!({"total": refresh, "total_time_in_millis": 0, "external_total": refresh,
                               "external_total_time_in_millis": 0, "listeners": 0}),
            ),
            (
                "flush",
                json!({"total": self.flush.load(Ordering::Relaxed), "periodic": 0, "total_time_in_millis": 0}),
            ),
            (
                "merges",
                json!({"current": 0, "current_docs": 0, "current_size_in_bytes": 0,
                              "total": self.merge.count(), "total_time_in_millis": self.merge.millis(),
                              "total_docs": 0, "total_size_in_bytes": 0}),
            ),
        ]
    }
}
