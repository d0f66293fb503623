//! A keyed aggregation's buckets (histograms, terms of numbers): kept in
//! the order first met beside an index from key to place, so gathering a
//! value costs one hash lookup (none when it falls in the bucket found
//! last, and only a probe of a small table when its key was met lately);
//! sorted by key only to be answered.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::dense::Dense;
use super::{spread, Bucket};

#[derive(Debug, Clone, Default)]
pub(super) struct KeyedBuckets {
    /// Each key's place, by the key spread (a bijection: FxHash keeps a
    /// key's trailing zero bits, which round dates and doubles share).
    places: FxHashMap<u64, u32>,
    keys: Vec<i64>,
    buckets: Vec<Bucket>,
    /// The places of keys met lately, [`RECENT`] of them by a cheap hash of
    /// the key ([`NONE`]: empty): an aggregation's few buckets are found
    /// here without a lookup in `places`, which spreads the key first.
    recent: Vec<(i64, u32)>,
    /// The current segment's buckets while a histogram counts them in an
    /// array (see `dense`), made buckets here at the segment's end.
    pub dense: Dense,
}

const RECENT: usize = 64;
const NONE: u32 = u32::MAX;

/// A key's slot in `recent`: the top bits of a multiplicative hash (the
/// low bits of a key are often all zero).
#[inline]
fn recent_slot(key: i64) -> usize {
    ((key as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - RECENT.trailing_zeros())) as usize
}

impl KeyedBuckets {
    /// The place of `key`'s bucket, made with `new` when the key is new.
    #[inline]
    pub fn place(&mut self, key: i64, new: impl FnOnce() -> Bucket) -> usize {
        let slot = recent_slot(key);
        if let Some(&(k, at)) = self.recent.get(slot) {
            if k == key && at != NONE {
                return at as usize;
            }
        }
        let next = self.keys.len() as u32;
        let at = *self.places.entry(spread(key)).or_insert(next);
        if at == next {
            self.keys.push(key);
            self.buckets.push(new());
        }
        if self.recent.is_empty() {
            self.recent = vec![(0, NONE); RECENT];
        }
        self.recent[slot] = (key, at);
        at as usize
    }

    pub fn entry(&mut self, key: i64, new: impl FnOnce() -> Bucket) -> &mut Bucket {
        let at = self.place(key, new);
        &mut self.buckets[at]
    }

    pub fn at(&mut self, place: usize) -> &mut Bucket {
        &mut self.buckets[place]
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// The smallest and the largest key.
    pub fn first_last(&self) -> Option<(i64, i64)> {
        let min = self.keys.iter().min()?;
        Some((*min, *self.keys.iter().max()?))
    }

    /// The keys, in the order of [`KeyedBuckets::buckets`].
    pub fn keys(&self) -> impl Iterator<Item = &i64> {
        self.keys.iter()
    }

    pub fn buckets(&self) -> impl Iterator<Item = &Bucket> {
        self.buckets.iter()
    }

    pub fn buckets_mut(&mut self) -> impl Iterator<Item = &mut Bucket> {
        self.buckets.iter_mut()
    }

    /// Adds `other`'s buckets (of the same aggregation) to these.
    pub fn merge(&mut self, other: KeyedBuckets) {
        self.add_all(other.keys.into_iter().zip(other.buckets));
    }

    /// Makes buckets of what the array counted in the segment ending.
    pub fn end_segment(&mut self) {
        let counted = self.dense.drain();
        self.add_all(counted.into_iter().map(|(key, count, sums)| (key, Bucket::of_metrics(count, sums))));
    }

    pub fn add_all(&mut self, buckets: impl Iterator<Item = (i64, Bucket)>) {
        for (key, bucket) in buckets {
            let mut bucket = Some(bucket);
            let at = self.place(key, || bucket.take().expect("taken once"));
            if let Some(theirs) = bucket {
                self.buckets[at].merge(theirs);
            }
        }
    }

    /// The buckets by key.
    pub fn into_sorted(self) -> BTreeMap<i64, Bucket> {
        self.keys.into_iter().zip(self.buckets).collect()
    }
}
