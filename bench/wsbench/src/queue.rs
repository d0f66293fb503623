//! A queue between threads whose taker sleeps at once when it is empty: the
//! engine side's requests waiting for a worker, and the harness's answers
//! waiting for the thread that sent the requests.
//!
//! Why not a channel: crossbeam's (and std's) receivers spin and yield before
//! they sleep. On a 2-core machine a harness thread spinning while the engine
//! answers holds one of the two cores the engine and the harness's reader
//! thread need, which lengthened every closed-loop request (a `match_none`
//! took Needle 78 us at the median); an engine worker spinning would add its
//! spinning to the engine's CPU time. The peers' workers sleep the same way
//! (Java's `LinkedBlockingQueue`, a condition variable in tantivy's server).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

pub struct Queue<T> {
    /// The items, and whether the queue is closed (nothing more will come).
    state: Mutex<(VecDeque<T>, bool)>,
    arrived: Condvar,
}

/// What [`Queue::take_within`] found.
pub enum Taken<T> {
    Item(T),
    /// Closed and empty.
    Closed,
    TimedOut,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue { state: Mutex::new((VecDeque::new(), false)), arrived: Condvar::new() }
    }
}

impl<T> Queue<T> {
    pub fn push(&self, item: T) {
        self.state.lock().unwrap().0.push_back(item);
        self.arrived.notify_one();
    }

    /// Nothing more will come: takers get what is left, then [`Taken::Closed`].
    pub fn close(&self) {
        self.state.lock().unwrap().1 = true;
        self.arrived.notify_all();
    }

    /// The next item, waiting for one; `None` once closed and empty.
    pub fn take(&self) -> Option<T> {
        let mut state = self.state.lock().unwrap();
        loop {
            if let Some(item) = state.0.pop_front() {
                return Some(item);
            }
            if state.1 {
                return None;
            }
            state = self.arrived.wait(state).unwrap();
        }
    }

    /// The next item, waiting for one at most `timeout`.
    pub fn take_within(&self, timeout: Duration) -> Taken<T> {
        let deadline = Instant::now() + timeout;
        let mut state = self.state.lock().unwrap();
        loop {
            if let Some(item) = state.0.pop_front() {
                return Taken::Item(item);
            }
            if state.1 {
                return Taken::Closed;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Taken::TimedOut;
            }
            state = self.arrived.wait_timeout(state, left).unwrap().0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn items_come_in_order_then_closed_once_drained() {
        let q = Queue::default();
        q.push(1);
        q.push(2);
        q.close();
        assert!(matches!(q.take_within(Duration::ZERO), Taken::Item(1)));
        assert_eq!(q.take(), Some(2));
        assert!(matches!(q.take_within(Duration::from_secs(5)), Taken::Closed));
        assert_eq!(q.take(), None);
    }

    #[test]
    fn an_empty_open_queue_times_out_and_a_waiting_taker_wakes_for_an_item() {
        let q = Arc::new(Queue::default());
        assert!(matches!(q.take_within(Duration::from_millis(5)), Taken::<u32>::TimedOut));
        let taker = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || q.take())
        };
        std::thread::sleep(Duration::from_millis(20));
        q.push(7);
        assert_eq!(taker.join().unwrap(), Some(7));
    }
}
