//! The request cache of an index, Elasticsearch's shard request cache: whole
//! answers to searches that ask for no hits (`size` 0: counts and
//! aggregations, what a dashboard asks again and again), or that ask for the
//! cache by `request_cache=true`.
//!
//! An answer is keyed by the request as sent (path, parameters, body) and the
//! generation of the index's snapshot it was computed on, a number every
//! change a search can see moves on: an answer is never found once the index
//! has changed, and old ones age out of the byte budget (S3-FIFO, as every
//! cache here). As Elasticsearch does, a request that mentions `now` is not
//! kept (its answer changes with the clock), nor one that timed out or asks
//! for a profile; `request_cache=false` or the index setting
//! `index.requests.cache.enable: false` turns the cache off.
//!
//! An entry is the answer's JSON after its `took`, which a hit writes anew;
//! a `_count`'s entry is the index's count alone, so a count over several
//! indexes is answered from each one's cache. A search over several indexes
//! is kept in its first index's cache, its key naming every other index's
//! generation and the clears of its cache (its *epoch*): a change or a clear
//! of any of them makes the answer unreachable, to age out like any other.
//! Clearing the cache keeps its counters (hits, misses, evictions), as
//! Elasticsearch's `_stats` does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use needle_storage::cache::{CacheStats, S3Fifo};

use crate::call::Call;

/// The bytes of answers kept per index (Elasticsearch keeps 1% of its heap
/// for all indexes).
pub const BUDGET: usize = 16 << 20;

#[derive(Debug, Hash, PartialEq, Eq)]
struct Key {
    generation: u64,
    request: String,
}

pub struct RequestCache {
    cache: Mutex<S3Fifo<Key, Arc<[u8]>>>,
    /// How many times the cache was cleared.
    epoch: AtomicU64,
}

impl Default for RequestCache {
    fn default() -> Self {
        RequestCache { cache: Mutex::new(S3Fifo::new(BUDGET)), epoch: AtomicU64::new(0) }
    }
}

/// `call` as the request cache knows it (`path`, its parameters, its
/// body), or none when it mentions `now`: its answer changes with the clock.
pub fn request_text(call: &Call, path: &str) -> Option<String> {
    let params = call.params.text();
    let body = String::from_utf8_lossy(&call.body);
    let timeless = !params.contains("now") && !body.contains("now");
    timeless.then(|| format!("{path}?{params}\n{body}"))
}

/// What a cached answer starts with, before its first field after `took`.
const TOOK: &[u8] = b"{\"took\":";

impl RequestCache {
    /// The answer to `request` at `generation`, as JSON with `took` set to `took_ms`.
    pub fn get(&self, generation: u64, request: &str, took_ms: u64) -> Option<Vec<u8>> {
        let rest = self.get_bytes(generation, request)?;
        let mut answer = format!("{{\"took\":{took_ms},").into_bytes();
        answer.extend_from_slice(&rest);
        Some(answer)
    }

    /// Keeps `answer` (JSON starting with its `took`) to `request` at `generation`.
    pub fn put(&self, generation: u64, request: String, answer: &[u8]) {
        let Some(after) = answer.strip_prefix(TOOK) else { return };
        let Some(comma) = after.iter().position(|&b| b == b',') else { return };
        self.put_bytes(generation, request, &after[comma + 1..]);
    }

    /// What was kept for `request` at `generation`, as kept.
    pub fn get_bytes(&self, generation: u64, request: &str) -> Option<Arc<[u8]>> {
        let key = Key { generation, request: request.to_string() };
        self.cache.lock().unwrap().get(&key).cloned()
    }

    /// Keeps `value` for `request` at `generation`.
    pub fn put_bytes(&self, generation: u64, request: String, value: &[u8]) {
        let value: Arc<[u8]> = Arc::from(value);
        let bytes = value.len() + request.len() + 64;
        self.cache.lock().unwrap().insert(Key { generation, request }, value, bytes);
    }

    /// Empties the cache, its counters kept, and moves its epoch on.
    pub fn clear(&self) {
        let gone = {
            let mut cache = self.cache.lock().unwrap();
            self.epoch.fetch_add(1, Ordering::Relaxed);
            cache.clear()
        };
        drop(gone); // freed outside the lock
    }

    /// How many times the cache was cleared.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Relaxed)
    }

    pub fn stats(&self) -> CacheStats {
        self.cache.lock().unwrap().stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_found_at_its_generation_only_with_took_written_anew() {
        let cache = RequestCache::default();
        cache.put(3, "/i/_search {}".into(), br#"{"took":17,"timed_out":false,"hits":{}}"#);
        let got = cache.get(3, "/i/_search {}", 1).expect("kept");
        assert_eq!(got, br#"{"took":1,"timed_out":false,"hits":{}}"#);
        assert!(cache.get(4, "/i/_search {}", 1).is_none(), "another generation");
        assert!(cache.get(3, "/i/_search {\"size\":0}", 1).is_none(), "another request");
        let before = cache.stats();
        cache.clear();
        assert!(cache.get(3, "/i/_search {}", 1).is_none(), "cleared");
        let after = cache.stats();
        assert_eq!((before.hits, before.misses, after.hits, after.misses), (1, 2, 1, 3), "counters kept");
        assert_eq!((after.entries, after.bytes, cache.epoch()), (0, 0, 1));
    }
}
