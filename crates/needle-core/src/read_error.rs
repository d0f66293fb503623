//! The read error of the current query (or merge, or check) on this thread.
//!
//! A [`crate::DocSet`] walks documents through methods that return document
//! ids, not `Result`s, so a reader whose read fails mid-walk (an I/O error,
//! corrupt bytes) records the error here and ends its list. Whoever drives
//! the walk calls [`clear`] before it and [`check`] after each stretch (a
//! searcher after each segment): a failed read makes the whole operation
//! fail with the reader's error, never return a shorter answer. The slot is
//! per thread because a walk runs on one thread.

use std::cell::RefCell;

use crate::{Error, Result};

thread_local! {
    static SLOT: RefCell<Option<Error>> = const { RefCell::new(None) };
}

/// Records a reader's error (the first one is kept).
pub fn record(e: Error) {
    SLOT.with(|s| {
        s.borrow_mut().get_or_insert(e);
    });
}

/// Forgets any error recorded so far on this thread.
pub fn clear() {
    SLOT.with(|s| s.borrow_mut().take());
}

/// The error recorded since the last [`clear`] or `check`, if any (and forgets it).
pub fn check() -> Result<()> {
    match SLOT.with(|s| s.borrow_mut().take()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_error_is_kept_until_checked() {
        clear();
        assert!(check().is_ok());
        record(Error::corrupt("a", "first"));
        record(Error::corrupt("b", "second"));
        assert!(check().unwrap_err().to_string().contains("first"));
        assert!(check().is_ok(), "checking forgets it");
        std::thread::spawn(|| record(Error::corrupt("c", "elsewhere"))).join().unwrap();
        assert!(check().is_ok(), "another thread's error is its own");
    }
}
