//! Admission of searches and writes, as Elasticsearch's `search` and `write`
//! thread pools: at most `threads` requests of a kind run at once and at most
//! `queue` more wait for a turn; one more is refused at once with 429
//! `es_rejected_execution_exception`, having changed nothing, so that clients
//! back off (the official ones retry a 429) instead of piling up work the
//! server cannot finish in time. Other requests (index administration, stats,
//! gets) are not limited.
//!
//! A light search (a page of hits, see `routes/search.rs`) runs on the
//! runtime's thread that read its request: handing it to a blocking thread
//! and its answer back cost two thread wake-ups, a sixth of the server's CPU
//! for such a search. The rest run on blocking threads, so a long one does
//! not hold up the connections that thread serves.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::Response;
use tokio::sync::Semaphore;

use crate::error::{ApiError, ApiResult};
use crate::server::{answer, blocking, Shared};

/// Runs a search (`_search`, `_count`, a scroll's next page) in the search
/// pool; a `light` one on the thread at hand.
pub async fn search(
    app: Shared,
    light: bool,
    work: impl FnOnce(&Shared) -> ApiResult<Response> + Send + 'static,
) -> Response {
    let pool = app.clone();
    pool.searches.run(light, move || work(&app)).await
}

/// Runs a write (a document's index, create, update or delete, `_bulk`,
/// `_delete_by_query`) in the write pool.
pub async fn write(
    app: Shared,
    work: impl FnOnce(&Shared) -> ApiResult<Response> + Send + 'static,
) -> Response {
    let pool = app.clone();
    pool.writes.run(false, move || work(&app)).await
}

/// A pool's size: requests running at once, and waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSize {
    pub threads: usize,
    pub queue: usize,
}

impl PoolSize {
    /// Elasticsearch's `search` pool on `cores` cores: `cores * 3 / 2 + 1` threads, 1,000 queued.
    pub fn search(cores: usize) -> PoolSize {
        PoolSize { threads: cores * 3 / 2 + 1, queue: 1000 }
    }

    /// Elasticsearch's `write` pool on `cores` cores: one thread a core, 10,000 queued.
    pub fn write(cores: usize) -> PoolSize {
        PoolSize { threads: cores.max(1), queue: 10_000 }
    }
}

pub struct Pool {
    name: &'static str,
    size: PoolSize,
    running: Arc<Semaphore>,
    /// Requests running or waiting.
    admitted: AtomicUsize,
}

/// Counts a request out of its pool however it ends (a client that hangs up
/// drops the handler's future while it waits).
struct Admitted<'a>(&'a AtomicUsize);

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Pool {
    pub fn new(name: &'static str, size: PoolSize) -> Pool {
        let threads = size.threads.max(1);
        Pool {
            name,
            size: PoolSize { threads, ..size },
            running: Arc::new(Semaphore::new(threads)),
            admitted: AtomicUsize::new(0),
        }
    }

    /// Runs `work` when its turn comes, on a blocking thread or (`here`) on
    /// this one, or refuses it with 429 when the pool's threads and queue
    /// are all taken.
    pub async fn run(
        &self,
        here: bool,
        work: impl FnOnce() -> ApiResult<Response> + Send + 'static,
    ) -> Response {
        let _admitted = match self.admit() {
            Ok(a) => a,
            Err(e) => return axum::response::IntoResponse::into_response(e),
        };
        // The semaphore is never closed.
        let Ok(turn) = self.running.clone().acquire_owned().await else {
            unreachable!("pools are never closed")
        };
        if here {
            let _turn = turn;
            let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            return answer(handled.map_err(|_| "it panicked"));
        }
        blocking(move || {
            let _turn = turn;
            work()
        })
        .await
    }

    fn admit(&self) -> Result<Admitted<'_>, ApiError> {
        let before = self.admitted.fetch_add(1, Ordering::SeqCst);
        let admitted = Admitted(&self.admitted);
        if before >= self.size.threads + self.size.queue {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "es_rejected_execution_exception",
                format!(
                    "rejected execution of a {} request: the {} pool's {} threads are busy and its queue of {} is full",
                    self.name, self.name, self.size.threads, self.size.queue
                ),
            ));
        }
        Ok(admitted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_pool_refuses_and_takes_again_once_a_request_ends() {
        let pool = Pool::new("write", PoolSize { threads: 1, queue: 1 });
        let first = pool.admit().unwrap();
        let second = pool.admit().unwrap();
        let refused = pool.admit().err().expect("two admitted fill one thread and one queued");
        assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(refused.kind, "es_rejected_execution_exception");
        drop(first);
        let third = pool.admit().expect("a request ended: room again");
        drop((second, third));
        assert_eq!(pool.admitted.load(Ordering::SeqCst), 0, "a refusal leaves no count behind");
    }
}
