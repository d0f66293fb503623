//! The writer's background thread: commits when in-memory segments outgrow
//! their budget, when the write-ahead log has grown by `checkpoint_bytes`
//! since the last commit, or `checkpoint_interval` after it while there are
//! changes (so recovery replays seconds of work, not hours); merges
//! committed segments at a bounded write rate; and folds in-place updates
//! into their segments once they hold a quarter of the memory budget. It
//! runs at a lower priority than searches and writes.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::merge::MergePolicy;
use super::Core;
use crate::segments::SegmentSet;

impl Core {
    pub(super) fn background(&self) {
        lower_thread_priority(self.options.background_nice);
        while !self.stop.load(Ordering::SeqCst) {
            self.sleep(Duration::from_millis(200));
            // Failures poison the index; the error reaches writers from there.
            if self.check_writable().is_err() {
                continue;
            }
            if self.commit_due() {
                let _ = self.commit();
            }
            let policy = MergePolicy::Tiered {
                factor: self.options.merge_factor,
                trigger: self.options.merge_trigger,
            };
            let started = Instant::now();
            let rate = self.options.merge_bytes_per_sec.max(1) as f64;
            let mut pace = |written: u64| {
                let due = Duration::from_secs_f64(written as f64 / rate);
                if let Some(wait) = due.checked_sub(started.elapsed()) {
                    std::thread::sleep(wait.min(Duration::from_millis(100)));
                }
            };
            let _ = self.merge_once(policy, &mut pace);
            // In-place updates stay in memory until a merge folds them into
            // their segment: past a quarter of the budget, the largest are folded.
            if self.index.shared.set.lock().updates_bytes() > self.options.memory_bytes / 4 {
                let _ = self.merge_once(MergePolicy::FoldUpdates, &mut |_| {});
            }
        }
    }

    /// Waits until nudged, or `timeout`.
    fn sleep(&self, timeout: Duration) {
        let (lock, cv) = &self.wake;
        let mut woken = lock.lock().unwrap_or_else(|p| p.into_inner());
        if !*woken {
            woken = cv.wait_timeout(woken, timeout).unwrap_or_else(|p| p.into_inner()).0;
        }
        *woken = false;
    }

    fn commit_due(&self) -> bool {
        let set = self.index.shared.set.lock();
        if self.over_budget(&set) {
            return true;
        }
        let since = self.last_commit.lock().unwrap_or_else(|p| p.into_inner()).elapsed();
        since >= self.options.checkpoint_interval && set.has_changes()
    }

    /// Whether in-memory segments or the write-ahead log outgrew their
    /// budgets: the commits a write must wake the background thread for
    /// (the interval's it finds on its own).
    pub(super) fn over_budget(&self, set: &SegmentSet) -> bool {
        set.memory_bytes() > self.options.memory_bytes
            || self.wal.as_ref().is_some_and(|w| w.file_bytes() >= self.options.checkpoint_bytes)
    }
}

/// Gives the calling thread a nice value (Linux sets it per thread); a failure leaves it as it was.
fn lower_thread_priority(nice: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority takes plain integers; `who` 0 is the calling thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, nice.clamp(0, 19));
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}
