//! The documents of many terms at once, each scoring the same: a prefix or
//! wildcard query expanded to its terms. Their posting lists are read into
//! one bit set per segment (as Lucene's constant-score rewrite does past a
//! few terms), so the query costs one pass over each list instead of a heap
//! of thousands of iterators.

use needle_codecs::Postings;
use needle_core::{DocId, TERMINATED};

use super::filter::{FilterScorer, Matcher};

/// A bit per document of the segment.
pub struct DocBits {
    words: Vec<u64>,
    count: u64,
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
        let count = words.iter().map(|w| u64::from(w.count_ones())).sum();
        DocBits { words, count }
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

impl Matcher for DocBits {
    fn next_match(&mut self, from: DocId) -> DocId {
        let mut at = from as usize / 64;
        let Some(&first) = self.words.get(at) else { return TERMINATED };
        let mut word = first & (u64::MAX << (from % 64));
        loop {
            if word != 0 {
                return (at * 64) as DocId + word.trailing_zeros();
            }
            at += 1;
            match self.words.get(at) {
                Some(&w) => word = w,
                None => return TERMINATED,
            }
        }
    }
    fn cost(&self) -> u64 {
        self.count
    }
}

impl TermSetScorer {
    pub fn new(bits: DocBits, score: f32) -> Self {
        FilterScorer::with(bits, score)
    }
}
