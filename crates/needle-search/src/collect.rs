//! Top-k collection. Documents arrive in increasing global id order, so a
//! newcomer that only ties the current k-th score loses (Lucene's rule: on
//! equal scores the lower document id ranks first).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use needle_core::DocId;

/// A hit: the segment (by position), the document in it, its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoredDoc {
    pub segment: usize,
    pub doc: DocId,
    /// Position in the whole index: segments' documents in order.
    pub global: u64,
    pub score: f32,
}

/// Ordered so that the heap's top is the worst hit kept.
struct Worst(ScoredDoc);

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.score.total_cmp(&self.0.score).then(self.0.global.cmp(&other.0.global))
    }
}

pub(crate) struct TopCollector {
    k: usize,
    heap: BinaryHeap<Worst>,
    pub count: u64,
    track_limit: u64,
}

impl TopCollector {
    pub fn new(k: usize, track_limit: u64) -> Self {
        TopCollector { k, heap: BinaryHeap::with_capacity(k + 1), count: 0, track_limit }
    }

    /// Whether only the count is wanted (no hits kept).
    pub fn counts_only(&self) -> bool {
        self.k == 0
    }

    /// How many matches are counted exactly.
    pub fn track_limit(&self) -> u64 {
        self.track_limit
    }

    /// The score a document must beat to be collected, once pruning is
    /// allowed (the top k are full and enough hits were counted).
    pub fn threshold(&self) -> Option<f32> {
        if self.count < self.track_limit {
            return None;
        }
        if self.k == 0 {
            return Some(f32::INFINITY);
        }
        (self.heap.len() == self.k).then(|| self.heap.peek().unwrap().0.score)
    }

    pub fn collect(&mut self, hit: ScoredDoc) {
        self.count += 1;
        if self.heap.len() < self.k {
            self.heap.push(Worst(hit));
        } else if self.k > 0 && hit.score > self.heap.peek().unwrap().0.score {
            self.heap.pop();
            self.heap.push(Worst(hit));
        }
    }

    /// Hits, best first.
    pub fn into_sorted(self) -> Vec<ScoredDoc> {
        let mut hits: Vec<ScoredDoc> = self.heap.into_iter().map(|w| w.0).collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.global.cmp(&b.global)));
        hits
    }
}
