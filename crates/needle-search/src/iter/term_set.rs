//! The documents of many terms at once, each scoring the same: a prefix or
//! wildcard query expanded to its terms (or a narrow numeric range, from its points). Their posting lists are read into
//! one bit set per segment (as Lucene's constant-score rewrite does past a
//! few terms), so the query costs one pass over each list instead of a heap
//! of thousands of iterators.

use std::sync::Arc;

use needle_codecs::doc_values::Points;
use needle_codecs::filter_cache::CachedDocs;
use needle_codecs::Postings;
use needle_core::{DocId, TERMINATED};

use super::filter::{FilterScorer, Matcher};

/// A bit per document of the segment (shared with a segment's filter cache when kept there).
pub struct DocBits {
    docs: Arc<CachedDocs>,
}

pub type TermSetScorer = FilterScorer<DocBits>;

impl DocBits {
    /// The documents of every list, read to its end.
    pub fn union(lists: Vec<Box<dyn Postings>>, max_doc: DocId) -> DocBits {
        let mut words = vec![0u64; (max_doc as usize).div_ceil(64)];
        for mut list in lists {
            let mut doc = list.doc();
            while doc < max_doc {
                words[doc as usize / 64] |= 1 << (doc % 64);
                doc = list.advance();
            }
        }
        DocBits::of(words)
    }

    /// The documents whose bits `words` sets.
    pub fn of(words: Vec<u64>) -> DocBits {
        let count = words.iter().map(|w| u64::from(w.count_ones())).sum();
        DocBits { docs: Arc::new(CachedDocs { words, count }) }
    }

    /// Documents a segment's filter cache keeps.
    pub fn cached(docs: Arc<CachedDocs>) -> DocBits {
        DocBits { docs }
    }

    /// The bits, to be kept in a segment's filter cache.
    pub fn shared(&self) -> Arc<CachedDocs> {
        self.docs.clone()
    }

    /// The documents of a numeric range, read from its points (a narrow
    /// range: its documents found without reading every block of the column).
    pub fn in_range(points: &Points, lower: i64, upper: i64, max_doc: DocId) -> DocBits {
        let mut words = vec![0u64; (max_doc as usize).div_ceil(64)];
        points.docs(lower, upper, &mut words);
        DocBits::of(words)
    }

    /// No documents yet, of a segment of `max_doc`.
    pub fn empty(max_doc: DocId) -> DocBits {
        DocBits::of(vec![0u64; (max_doc as usize).div_ceil(64)])
    }

    /// Adds `doc` (not yet in the set).
    pub fn insert(&mut self, doc: DocId) {
        let docs = Arc::make_mut(&mut self.docs);
        docs.words[doc as usize / 64] |= 1 << (doc % 64);
        docs.count += 1;
    }

    pub fn contains(&self, doc: DocId) -> bool {
        self.docs.words.get(doc as usize / 64).is_some_and(|w| w & (1 << (doc % 64)) != 0)
    }

    pub fn len(&self) -> u64 {
        self.docs.count
    }

    pub fn is_empty(&self) -> bool {
        self.docs.count == 0
    }
}

impl Matcher for DocBits {
    fn next_match(&mut self, from: DocId) -> DocId {
        let words = &self.docs.words;
        let mut at = from as usize / 64;
        let Some(&first) = words.get(at) else { return TERMINATED };
        let mut word = first & (u64::MAX << (from % 64));
        loop {
            if word != 0 {
                return (at * 64) as DocId + word.trailing_zeros();
            }
            at += 1;
            match words.get(at) {
                Some(&w) => word = w,
                None => return TERMINATED,
            }
        }
    }
    fn cost(&self) -> u64 {
        self.docs.count
    }
    fn fill_matches(&mut self, from: DocId, out: &mut Vec<DocId>, max: usize) -> DocId {
        // A word of bits at a time.
        let words = &self.docs.words;
        let mut at = from as usize / 64;
        let mut word = words.get(at).map_or(0, |w| w & (u64::MAX << (from % 64)));
        loop {
            while word != 0 {
                let doc = (at * 64) as DocId + word.trailing_zeros();
                if out.len() == max {
                    return doc;
                }
                out.push(doc);
                word &= word - 1;
            }
            at += 1;
            match words.get(at) {
                Some(&w) => word = w,
                None => return TERMINATED,
            }
        }
    }
    fn matches(&mut self, doc: DocId) -> Option<bool> {
        Some(self.contains(doc))
    }
}

impl TermSetScorer {
    pub fn new(bits: DocBits, score: f32) -> Self {
        FilterScorer::with(bits, score)
    }
}

#[cfg(test)]
mod tests {
    use needle_core::DocSet;
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// A bit set's documents walked one by one, in batches of any size,
        /// and asked one by one, are its bits.
        #[test]
        fn bits_walk_as_they_are_set(set in proptest::collection::vec(any::<bool>(), 0..700), chunk in 1usize..200) {
            let mut words = vec![0u64; set.len().div_ceil(64)];
            set.iter().enumerate().filter(|(_, &b)| b).for_each(|(d, _)| words[d / 64] |= 1 << (d % 64));
            let want: Vec<DocId> = (0..set.len()).filter(|&d| set[d]).map(|d| d as DocId).collect();
            let scorer = || TermSetScorer::new(DocBits::of(words.clone()), 1.0);
            let mut batched = scorer();
            let mut got = Vec::new();
            while batched.doc() != TERMINATED {
                let before = got.len();
                batched.fill_docs(&mut got, before + chunk);
            }
            prop_assert_eq!(&got, &want);
            let mut asked = scorer();
            let first = asked.doc();
            for d in (0..set.len() as DocId).filter(|&d| d >= first) {
                prop_assert_eq!(asked.matches(d), Some(set[d as usize]));
            }
        }
    }
}
