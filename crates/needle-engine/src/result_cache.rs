//! The query-result cache (SPIRIT): whole responses, kept within a byte
//! budget by S3-FIFO ([`needle_storage::cache`]).
//!
//! A response is keyed by the whole request, its query string replaced by the
//! query as parsed (so spacing and other spellings of one query share an
//! entry, and any field a request gains is part of the key without a word
//! here), and the index's generation, a number that every change to what a
//! search sees (an add, a delete, a flush, a merge) moves on. An entry made before a
//! change can so never be found after it: a stale answer is impossible, and
//! old entries age out of the budget as they stop being read. Requests that
//! count their reads (`stats`) bypass the cache: they measure the engine.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use needle_core::Result;
use needle_search::Query;
use needle_storage::cache::{CacheStats, S3Fifo};

use crate::search::{SearchRequest, SearchResponse};

#[derive(Debug, Hash, PartialEq, Eq)]
struct Key {
    generation: u64,
    request: SearchRequest,
}

/// A cache of search responses; shared by the searches of one index.
pub struct ResultCache {
    cache: Mutex<S3Fifo<Key, Arc<SearchResponse>>>,
}

impl ResultCache {
    pub fn new(budget_bytes: usize) -> Self {
        ResultCache { cache: Mutex::new(S3Fifo::new(budget_bytes)) }
    }

    /// The cached response to `request` (parsed as `query`) at `generation`,
    /// or `run`'s, which is then kept.
    pub fn get_or_run(
        &self,
        generation: u64,
        query: &Query,
        request: &SearchRequest,
        run: impl FnOnce() -> Result<SearchResponse>,
    ) -> Result<SearchResponse> {
        let started = Instant::now();
        let key = Key {
            generation,
            request: SearchRequest { query: format!("{query:?}"), timeout: None, ..request.clone() },
        };
        if let Some(hit) = self.cache.lock().unwrap().get(&key).cloned() {
            let mut response = SearchResponse::clone(&hit);
            response.took_ms = started.elapsed().as_secs_f64() * 1e3;
            return Ok(response);
        }
        let response = run()?;
        if response.timed_out {
            // A partial answer: the same search given time may find more.
            return Ok(response);
        }
        let bytes = key.request.query.len() + response_bytes(&response);
        self.cache.lock().unwrap().insert(key, Arc::new(response.clone()), bytes);
        Ok(response)
    }

    pub fn stats(&self) -> CacheStats {
        self.cache.lock().unwrap().stats()
    }
}

/// About what a response and its entry take in memory.
fn response_bytes(r: &SearchResponse) -> usize {
    const ENTRY: usize = 160;
    const HIT: usize = 64;
    let highlights = |h: &crate::search::Hit| -> usize {
        h.highlight.iter().map(|(f, v)| f.len() + v.iter().map(|s| s.len() + 24).sum::<usize>()).sum()
    };
    ENTRY + r.hits.iter().map(|h| HIT + h.id.len() + highlights(h)).sum::<usize>()
}
