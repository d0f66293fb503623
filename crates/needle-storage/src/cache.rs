//! S3-FIFO (Yang et al., SOSP 2023): a cache with a byte budget that a scan
//! cannot flush.
//!
//! A new entry goes to a small FIFO (a tenth of the budget). Leaving it, an
//! entry read meanwhile moves to the main FIFO; one never read is dropped and
//! its key remembered in a ghost FIFO, so that if it comes back soon it goes
//! straight to main. Main evicts from its head, but an entry read since it
//! last got there goes round once more (reads counted up to 3). Keys of a
//! scan, each read once, so pass through the small FIFO without pushing out
//! what queries read again and again, which LRU would do.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::Arc;

use serde::Serialize;

const MAX_FREQ: u8 = 3;

/// What a cache did since it was made, and what it holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub inserts: u64,
    pub evictions: u64,
    /// Entries too large for the budget, not kept.
    pub rejected: u64,
    pub entries: usize,
    pub bytes: usize,
    pub budget: usize,
    /// Bytes held outside eviction (the page cache's static part).
    pub pinned_bytes: usize,
}

struct Slot<V> {
    value: V,
    bytes: usize,
    freq: u8,
    in_main: bool,
}

/// A cache of `V` by `K` holding at most `budget` bytes, as each entry's
/// size is given at insertion. Not synchronized: callers wrap it in a lock.
pub struct S3Fifo<K, V> {
    budget: usize,
    small_budget: usize,
    map: HashMap<Arc<K>, Slot<V>>,
    small: VecDeque<Arc<K>>,
    main: VecDeque<Arc<K>>,
    small_bytes: usize,
    main_bytes: usize,
    /// Keys dropped from the small FIFO unread, oldest first, with the
    /// sequence number under which `ghosts` knows them (a key may be there twice).
    ghost_order: VecDeque<(Arc<K>, u64)>,
    ghosts: HashMap<Arc<K>, u64>,
    ghost_seq: u64,
    stats: CacheStats,
}

impl<K: Hash + Eq, V> S3Fifo<K, V> {
    pub fn new(budget: usize) -> Self {
        S3Fifo {
            budget,
            small_budget: budget / 10,
            map: HashMap::new(),
            small: VecDeque::new(),
            main: VecDeque::new(),
            small_bytes: 0,
            main_bytes: 0,
            ghost_order: VecDeque::new(),
            ghosts: HashMap::new(),
            ghost_seq: 0,
            stats: CacheStats { budget, ..CacheStats::default() },
        }
    }

    /// The value of `key`, counting a hit or a miss.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        match self.map.get_mut(key) {
            Some(slot) => {
                slot.freq = (slot.freq + 1).min(MAX_FREQ);
                self.stats.hits += 1;
                Some(&slot.value)
            }
            None => {
                self.stats.misses += 1;
                None
            }
        }
    }

    /// Whether `key` is cached, without counting a hit or a miss or marking it read.
    pub fn contains(&self, key: &K) -> bool {
        self.map.contains_key(key)
    }

    /// Takes `key` out of the cache (not counted as an eviction).
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let slot = self.map.remove(key)?;
        match slot.in_main {
            true => self.main_bytes -= slot.bytes,
            false => self.small_bytes -= slot.bytes,
        }
        // Its queue entry stays behind, stale, and is skipped when it reaches the front.
        Some(slot.value)
    }

    /// Takes every entry out (not counted as evictions) and forgets the
    /// ghosts; the counters of hits, misses, inserts and evictions go on.
    pub fn clear(&mut self) -> Vec<V> {
        let gone = self.map.drain().map(|(_, slot)| slot.value).collect();
        self.small.clear();
        self.main.clear();
        self.small_bytes = 0;
        self.main_bytes = 0;
        self.ghost_order.clear();
        self.ghosts.clear();
        gone
    }

    /// Changes the budget, evicting to fit; returns the values evicted.
    pub fn set_budget(&mut self, budget: usize) -> Vec<V> {
        self.budget = budget;
        self.small_budget = budget / 10;
        self.stats.budget = budget;
        let mut gone = Vec::new();
        self.evict_to(budget, &mut gone);
        gone
    }

    /// Whether a queue entry is the cached key itself, not one left by [`S3Fifo::remove`].
    fn is_live(&self, queued: &Arc<K>) -> bool {
        self.map.get_key_value(queued).is_some_and(|(key, _)| Arc::ptr_eq(key, queued))
    }

    /// Evicts until `bytes` more fit in the budget; returns the values evicted.
    pub fn make_room(&mut self, bytes: usize) -> Vec<V> {
        let mut gone = Vec::new();
        self.evict_to(self.budget.saturating_sub(bytes), &mut gone);
        gone
    }

    /// Adds (or replaces) `key`, evicting until it fits; a value larger than
    /// the whole budget is not kept. Returns the values that left the cache
    /// (evicted, replaced, or this one when rejected), for owners of what they hold.
    pub fn insert(&mut self, key: K, value: V, bytes: usize) -> Vec<V> {
        let mut gone = Vec::new();
        if bytes > self.budget {
            self.stats.rejected += 1;
            gone.push(value);
            return gone;
        }
        if let Some(slot) = self.map.get_mut(&key) {
            let queue_bytes = if slot.in_main { &mut self.main_bytes } else { &mut self.small_bytes };
            *queue_bytes = *queue_bytes - slot.bytes + bytes;
            gone.push(std::mem::replace(&mut slot.value, value));
            slot.bytes = bytes;
            self.evict_to(self.budget, &mut gone);
            return gone;
        }
        self.evict_to(self.budget - bytes, &mut gone);
        let key = Arc::new(key);
        let in_main = self.ghosts.remove(&key).is_some();
        if in_main {
            self.main.push_back(key.clone());
            self.main_bytes += bytes;
        } else {
            self.small.push_back(key.clone());
            self.small_bytes += bytes;
        }
        self.map.insert(key, Slot { value, bytes, freq: 0, in_main });
        self.stats.inserts += 1;
        gone
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats { entries: self.map.len(), bytes: self.small_bytes + self.main_bytes, ..self.stats }
    }

    /// Evicts until at most `limit` bytes are held, adding the values to `gone`.
    fn evict_to(&mut self, limit: usize, gone: &mut Vec<V>) {
        while self.small_bytes + self.main_bytes > limit {
            if self.small_bytes > self.small_budget || self.main.is_empty() {
                self.evict_small(gone);
            } else {
                self.evict_main(gone);
            }
        }
    }

    fn evict_small(&mut self, gone: &mut Vec<V>) {
        let Some(key) = self.small.pop_front() else { return };
        if !self.is_live(&key) {
            return;
        }
        let slot = self.map.get_mut(&key).expect("queued keys are cached");
        self.small_bytes -= slot.bytes;
        if slot.freq > 0 {
            slot.freq = 0;
            slot.in_main = true;
            self.main_bytes += slot.bytes;
            self.main.push_back(key);
        } else {
            gone.extend(self.map.remove(&key).map(|slot| slot.value));
            self.stats.evictions += 1;
            self.remember(key);
        }
    }

    fn evict_main(&mut self, gone: &mut Vec<V>) {
        let Some(key) = self.main.pop_front() else { return };
        if !self.is_live(&key) {
            return;
        }
        let slot = self.map.get_mut(&key).expect("queued keys are cached");
        if slot.freq > 0 {
            slot.freq -= 1;
            self.main.push_back(key);
        } else {
            self.main_bytes -= slot.bytes;
            gone.extend(self.map.remove(&key).map(|slot| slot.value));
            self.stats.evictions += 1;
        }
    }

    /// Adds `key` to the ghosts, which remember as many keys as the cache
    /// holds entries. `ghost_order` may also hold stale entries (keys
    /// re-inserted since); they are dropped as they reach the front.
    fn remember(&mut self, key: Arc<K>) {
        self.ghost_seq += 1;
        self.ghosts.insert(key.clone(), self.ghost_seq);
        self.ghost_order.push_back((key, self.ghost_seq));
        let limit = self.map.len().max(16);
        while self.ghosts.len() > limit || self.ghost_order.len() > 2 * limit {
            let Some((old, seq)) = self.ghost_order.pop_front() else { break };
            if self.ghosts.get(&old) == Some(&seq) {
                self.ghosts.remove(&old);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_keys_leave_stale_queue_entries_that_are_skipped() {
        let mut c = S3Fifo::new(100);
        for i in 0..5u32 {
            c.insert(i, i, 10);
        }
        assert_eq!(c.remove(&2), Some(2));
        assert_eq!(c.remove(&2), None);
        c.insert(2, 20, 10); // re-inserted: the old queue entry must not evict the new one
        let gone = c.set_budget(20);
        assert_eq!(gone, vec![0, 1, 3], "the stale entry of 2 is passed over");
        assert_eq!(c.get(&2), Some(&20));
        assert_eq!((c.stats().entries, c.stats().bytes, c.stats().budget), (2, 20, 20));
    }

    #[test]
    fn clearing_empties_it_and_keeps_its_counters() {
        let mut c = S3Fifo::new(25);
        for i in 0..4u32 {
            c.insert(i, i, 10);
        }
        c.get(&3);
        c.get(&0);
        let mut gone = c.clear();
        gone.sort();
        assert_eq!(gone, vec![2, 3]);
        let s = c.stats();
        assert_eq!((s.entries, s.bytes, s.inserts, s.evictions, s.hits, s.misses), (0, 0, 4, 2, 1, 1));
        assert_eq!(c.get(&3), None);
        // A key evicted unread before the clear is no ghost after it: it enters the small queue again.
        c.insert(0, 0, 10);
        c.insert(5, 5, 10);
        c.insert(9, 9, 10);
        assert_eq!(c.get(&0), None, "0 went first, from the small queue");
        assert_eq!(c.get(&5), Some(&5));
    }

    #[test]
    fn keeps_within_its_budget_and_counts() {
        let mut c = S3Fifo::new(1000);
        let mut gone = Vec::new();
        for i in 0..100u32 {
            gone.extend(c.insert(i, i, 30));
            assert!(c.stats().bytes <= 1000);
        }
        let s = c.stats();
        assert_eq!((s.inserts, s.entries), (100, 33));
        assert_eq!(s.evictions, 67);
        assert_eq!(gone, (0..67).collect::<Vec<u32>>(), "evicted values are handed back, oldest first");
        assert_eq!(c.get(&99), Some(&99));
        assert_eq!(c.get(&0), None);
        c.insert(1000, 0, 1001);
        assert_eq!(c.stats().rejected, 1);
        assert_eq!((c.stats().hits, c.stats().misses), (1, 1));
    }

    #[test]
    fn replacing_an_entry_updates_its_size() {
        let mut c = S3Fifo::new(100);
        c.insert("a", 1, 10);
        c.insert("a", 2, 60);
        assert_eq!(c.get(&"a"), Some(&2));
        assert_eq!(c.stats().bytes, 60);
    }

    /// What is read again and again survives a scan of keys read once, which
    /// would flush an LRU cache of the same size.
    #[test]
    fn a_scan_does_not_flush_the_entries_read_often() {
        let mut c = S3Fifo::new(100 * 10);
        for round in 0..3 {
            for hot in 0..50u32 {
                if c.get(&hot).is_none() {
                    c.insert(hot, round, 10);
                }
            }
        }
        for cold in 1000..1500u32 {
            if c.get(&cold).is_none() {
                c.insert(cold, 0, 10);
            }
        }
        let kept = (0..50u32).filter(|k| c.get(k).is_some()).count();
        assert_eq!(kept, 50, "hot entries evicted by a scan");
    }

    /// A key evicted unread and soon asked again goes to the main FIFO.
    #[test]
    fn a_key_back_from_the_ghosts_goes_to_main() {
        let mut c = S3Fifo::new(100);
        c.insert(1u32, (), 10);
        for k in 2..20u32 {
            c.insert(k, (), 10);
        }
        assert!(c.get(&1).is_none());
        c.insert(1, (), 10);
        assert!(c.map.get(&1).unwrap().in_main);
    }
}
