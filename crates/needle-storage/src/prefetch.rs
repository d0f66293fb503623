//! Adaptive prefetch (WiSER). Index files are mapped with MADV_RANDOM, so a
//! long record read page by page costs one synchronous device read per 4 KiB
//! page once memory is short. The part of a term's record that every query on
//! the term reads (its prefetch zone) is known from the term map before the
//! record is touched; when it is at least [`min_bytes`], the reader asks the
//! kernel for exactly that range at once (MADV_WILLNEED, one batch of
//! asynchronous reads, issued for every term of a query before any is
//! iterated), and for nothing otherwise. The setting is process-wide: it
//! depends on the machine's memory and device, not on a query.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `usize::MAX`: off.
static MIN_BYTES: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Prefetch zones of at least `min` bytes (`None`: never prefetch).
pub fn set_min_bytes(min: Option<usize>) {
    MIN_BYTES.store(min.unwrap_or(usize::MAX), Ordering::Relaxed);
}

/// The smallest zone prefetched, if prefetching is on.
pub fn min_bytes() -> Option<usize> {
    match MIN_BYTES.load(Ordering::Relaxed) {
        usize::MAX => None,
        n => Some(n),
    }
}
