//! The time limit of the current search on this thread (Elasticsearch's
//! `timeout`).
//!
//! A search walks its matches in loops deep below the request (block-max
//! collection, MaxScore windows, sorted walks, aggregation batches); rather
//! than thread a limit through each, the search sets it here with [`limit`]
//! and the loops ask [`passed`] now and then. Once the time is up they stop
//! and the search answers with what it found so far, marked as timed out
//! ([`Limit::timed_out`]). Like [`crate::read_error`], the slot is per
//! thread because a walk runs on one thread.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// The clock is read once in this many calls of [`passed`]: a loop asks
/// once a block or a batch, and reading the clock costs more than a block.
const CALLS_PER_READ: u32 = 64;

/// A loop that visits documents one at a time asks once in this many.
pub const CHECK_EVERY: u64 = 1024;

thread_local! {
    static AT: Cell<Option<Instant>> = const { Cell::new(None) };
    static CALLS: Cell<u32> = const { Cell::new(0) };
    static PASSED: Cell<bool> = const { Cell::new(false) };
}

/// The limit of one search, set while it lives (dropping it lifts the limit).
#[must_use = "the limit is lifted when this is dropped"]
pub struct Limit {
    previous: Option<Instant>,
}

/// Limits the searching on this thread to `timeout` from now (`None`: no limit).
pub fn limit(timeout: Option<Duration>) -> Limit {
    let previous = AT.get();
    AT.set(timeout.map(|t| Instant::now() + t));
    CALLS.set(0);
    PASSED.set(false);
    Limit { previous }
}

impl Limit {
    /// Whether a loop stopped because the time was up.
    pub fn timed_out(&self) -> bool {
        PASSED.get()
    }
}

impl Drop for Limit {
    fn drop(&mut self) {
        AT.set(self.previous);
        PASSED.set(false);
    }
}

/// Whether the current search's time is up (always false without a limit).
/// The first call reads the clock, then one call in [`CALLS_PER_READ`];
/// once up, it stays up.
#[inline]
pub fn passed() -> bool {
    let Some(at) = AT.get() else { return false };
    if PASSED.get() {
        return true;
    }
    let calls = CALLS.get();
    CALLS.set(calls.wrapping_add(1));
    if calls % CALLS_PER_READ != 0 {
        return false;
    }
    let up = Instant::now() >= at;
    PASSED.set(up);
    up
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_limit_time_is_never_up() {
        let l = limit(None);
        assert!((0..1000).all(|_| !passed()));
        assert!(!l.timed_out());
    }

    #[test]
    fn a_passed_limit_is_seen_at_the_first_call_and_stays() {
        let l = limit(Some(Duration::ZERO));
        assert!(passed());
        assert!(passed());
        assert!(l.timed_out());
        drop(l);
        assert!(!passed(), "dropping the limit lifts it");
    }

    #[test]
    fn a_distant_limit_is_not_up_and_the_clock_is_read_again() {
        let l = limit(Some(Duration::from_millis(30)));
        assert!((0..CALLS_PER_READ * 4).all(|_| !passed()));
        std::thread::sleep(Duration::from_millis(40));
        assert!((0..CALLS_PER_READ + 1).any(|_| passed()), "read again within CALLS_PER_READ calls");
        assert!(l.timed_out());
    }
}
