//! Documents with a value of a numeric field in a range, read from its doc
//! values; each scores 1 (times the boosts around the query). Blocks whose
//! values all lie outside the range (their min and max say so) are passed
//! over without being read, and blocks whose values all lie inside, every
//! document having one, match whole without being read. The others are read
//! whole, once: their values compared at once into a bit per document.

use needle_codecs::doc_values::{BlockBits, NumericValues, BLOCK_DOCS};
use needle_core::{DocId, TERMINATED};

use super::filter::{FilterScorer, Matcher};

pub struct InRange {
    values: Box<dyn NumericValues + Send>,
    lower: i64,
    upper: i64,
    max_doc: DocId,
    /// The block last entered.
    block: Block,
    /// A bit per document of that block (from its first), set where it
    /// matches, once `block.bits` says so.
    bits: BlockBits,
}

/// What is known of the block last entered.
#[derive(Clone, Copy)]
struct Block {
    /// Its first document, and the first after it.
    first: DocId,
    next: DocId,
    /// Some value there is in the range (by the block's min and max).
    any: bool,
    /// Every document there matches.
    all: bool,
    /// `bits` holds its matches.
    bits: bool,
    /// Documents looked up one at a time so far.
    probes: u32,
}

/// Documents of a block looked up one at a time before the whole block is
/// read: a conjunction seeking a few documents of a block reads only their
/// values; a walk through many reads the block once.
const PROBES: u32 = 128;

pub type RangeScorer = FilterScorer<InRange>;

impl RangeScorer {
    /// Matches documents with a value in `lower..=upper`.
    pub fn new(
        values: Box<dyn NumericValues + Send>,
        lower: i64,
        upper: i64,
        max_doc: DocId,
        score: f32,
    ) -> Self {
        let matcher = InRange {
            values,
            lower,
            upper,
            max_doc,
            block: Block { first: 0, next: 0, any: false, all: false, bits: false, probes: 0 },
            bits: [0; BLOCK_DOCS / 64],
        };
        FilterScorer::with(matcher, score)
    }
}

impl InRange {
    /// Makes `block` the block of `doc` (from its skip entry alone).
    fn enter(&mut self, doc: DocId) -> Block {
        if !(self.block.first..self.block.next).contains(&doc) {
            let first = doc - doc % BLOCK_DOCS as DocId;
            let (last, bounds) = self.values.block_bounds(doc);
            let overlap = bounds.filter(|&(min, max)| max >= self.lower && min <= self.upper);
            let all = overlap.is_some_and(|(min, max)| self.lower <= min && max <= self.upper)
                && self.values.block_is_dense(doc);
            let next = last.saturating_add(1);
            self.block = Block { first, next, any: overlap.is_some(), all, bits: false, probes: 0 };
        }
        self.block
    }

    /// Reads the entered block whole into `bits`.
    fn read_block(&mut self) {
        self.values.block_in_range(self.block.first, self.lower, self.upper, &mut self.bits);
        self.block.bits = true;
    }

    /// The first match at or after `from` (within the entered block) by its bits.
    fn first_bit(&self, from: DocId) -> Option<DocId> {
        let i = (from - self.block.first) as usize;
        let mut w = i / 64;
        let mut word = self.bits[w] & (u64::MAX << (i % 64));
        loop {
            if word != 0 {
                return Some(self.block.first + (w * 64) as DocId + word.trailing_zeros());
            }
            w += 1;
            word = *self.bits.get(w)?;
        }
    }

    /// The first match at or after `from` in its block; `dense`: read the block whole at once.
    fn in_block(&mut self, from: DocId, dense: bool) -> Option<DocId> {
        let block = self.enter(from);
        if !block.any {
            return None;
        }
        if block.all {
            return Some(from);
        }
        if !block.bits && !dense {
            for doc in from..block.next {
                if self.block.probes == PROBES {
                    break;
                }
                self.block.probes += 1;
                let (lower, upper) = (self.lower, self.upper);
                if self.values.values(doc).iter().any(|&v| lower <= v && v <= upper) {
                    return Some(doc);
                }
            }
            if self.block.probes < PROBES {
                return None;
            }
        }
        if !self.block.bits {
            self.read_block();
        }
        self.first_bit(from)
    }
}

impl Matcher for InRange {
    fn matches(&mut self, doc: DocId) -> Option<bool> {
        if doc >= self.max_doc {
            return Some(false);
        }
        let block = self.enter(doc);
        if !block.any || block.all {
            return Some(block.all);
        }
        if !block.bits {
            self.block.probes += 1;
            if self.block.probes < PROBES {
                let (lower, upper) = (self.lower, self.upper);
                return Some(self.values.values(doc).iter().any(|&v| lower <= v && v <= upper));
            }
            self.read_block();
        }
        let i = (doc - block.first) as usize;
        Some(self.bits[i / 64] & (1 << (i % 64)) != 0)
    }

    fn next_match(&mut self, mut from: DocId) -> DocId {
        while from < self.max_doc {
            if let Some(doc) = self.in_block(from, false) {
                return doc;
            }
            from = self.block.next;
        }
        TERMINATED
    }

    fn fill_matches(&mut self, mut from: DocId, out: &mut Vec<DocId>, max: usize) -> DocId {
        while from < self.max_doc && out.len() < max {
            let Some(doc) = self.in_block(from, true) else {
                from = self.block.next;
                continue;
            };
            if self.block.all {
                let end = self.block.next.min(doc.saturating_add(max.saturating_sub(out.len()) as DocId));
                out.extend(doc..end);
                from = end;
                continue;
            }
            // The block's matches from `doc` on, a word at a time.
            let first = self.block.first;
            let i = (doc - first) as usize;
            let mut w = i / 64;
            let mut word = self.bits[w] & (u64::MAX << (i % 64));
            loop {
                while word != 0 {
                    let found = first + (w * 64) as DocId + word.trailing_zeros();
                    if out.len() == max {
                        return found;
                    }
                    out.push(found);
                    word &= word - 1;
                }
                w += 1;
                match self.bits.get(w) {
                    Some(&next) => word = next,
                    None => break,
                }
            }
            from = self.block.next;
        }
        self.next_match(from)
    }

    fn cost(&self) -> u64 {
        u64::from(self.max_doc)
    }
}

/// How many of the first `max_doc` documents have a value in `lower..=upper`,
/// counted a block at a time: from the skip index alone for blocks wholly
/// outside, or wholly inside with a value in every document; the others'
/// values compared at once into bits, which are counted. What a count of a
/// range needs, without visiting its matches one by one.
pub fn count_in_range(values: &mut dyn NumericValues, lower: i64, upper: i64, max_doc: DocId) -> u64 {
    let mut count = 0u64;
    walk_in_range(values, lower, upper, max_doc, |first, end, bits| {
        count += match bits {
            None => u64::from(end - first + 1),
            Some(bits) => bits.iter().map(|w| u64::from(w.count_ones())).sum::<u64>(),
        }
    });
    count
}

/// The documents of the first `max_doc` with a value in `lower..=upper`, a
/// bit each, found a block at a time as [`count_in_range`] finds them: what
/// a segment's filter cache keeps of a range.
pub fn bits_in_range(values: &mut dyn NumericValues, lower: i64, upper: i64, max_doc: DocId) -> Vec<u64> {
    let mut words = vec![0u64; (max_doc as usize).div_ceil(64)];
    walk_in_range(values, lower, upper, max_doc, |first, end, bits| {
        let at = first as usize / 64; // a block's first document begins a word
        match bits {
            Some(bits) => words[at..].iter_mut().zip(bits).for_each(|(w, b)| *w |= b),
            None => (first..=end).for_each(|d| words[d as usize / 64] |= 1 << (d % 64)),
        }
    });
    words
}

/// Calls `found(first, last, bits)` for each block of the first `max_doc`
/// documents with a value in `lower..=upper`: `bits` `None` when every
/// document there matches (its skip entry says so), else its matches read
/// into a bit each. Blocks without one are passed over unread.
fn walk_in_range(
    values: &mut dyn NumericValues,
    lower: i64,
    upper: i64,
    max_doc: DocId,
    mut found: impl FnMut(DocId, DocId, Option<&BlockBits>),
) {
    let mut from = 0;
    let mut bits = [0u64; BLOCK_DOCS / 64];
    while from < max_doc {
        let (end, bounds) = values.block_bounds(from);
        match bounds {
            Some((min, max)) if max < lower || min > upper => {}
            None => {}
            Some((min, max)) if lower <= min && max <= upper && values.block_is_dense(from) => {
                found(from, end, None);
            }
            Some(_) => {
                values.block_in_range(from, lower, upper, &mut bits);
                found(from, end, Some(&bits));
            }
        }
        from = end.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use needle_codecs::doc_values::{mem_values, ColumnBuf};
    use proptest::prelude::*;

    use needle_core::DocSet;

    use super::*;

    proptest! {
        #[test]
        fn matches_a_scan(
            values in proptest::collection::vec(proptest::option::weighted(0.97, -50i64..50), 1..5000),
            a in -60i64..60,
            b in -60i64..60,
            chunk in 1usize..1500,
        ) {
            let mut column = ColumnBuf::default();
            for (d, v) in values.iter().enumerate() {
                if let Some(v) = v {
                    column.set(d as DocId, &[*v]);
                }
            }
            let (lower, upper) = (a.min(b), a.max(b));
            let max_doc = values.len() as DocId;
            let scorer = || RangeScorer::new(mem_values(column.clone(), max_doc), lower, upper, max_doc, 1.0);
            let mut one_by_one = scorer();
            let mut got = Vec::new();
            while one_by_one.doc() != TERMINATED {
                got.push(one_by_one.doc());
                one_by_one.advance();
            }
            // In batches of `chunk` documents, as aggregations take them.
            let mut batched = scorer();
            let mut filled = Vec::new();
            while batched.doc() != TERMINATED {
                let before = filled.len();
                batched.fill_docs(&mut filled, before + chunk);
                prop_assert!(filled.len() > before && filled.len() <= before + chunk);
            }
            prop_assert_eq!(&filled, &got);
            let want: Vec<DocId> = values
                .iter()
                .enumerate()
                .filter(|(_, v)| v.is_some_and(|v| (lower..=upper).contains(&v)))
                .map(|(d, _)| d as DocId)
                .collect();
            // Seeking forward by `chunk % 97 + 1` documents at a time, as a conjunction does.
            let mut seeking = scorer();
            let mut target = 0;
            while target < max_doc {
                let found = seeking.seek(target);
                let expected = want.iter().copied().find(|&d| d >= target).unwrap_or(TERMINATED);
                prop_assert_eq!(found, expected);
                if found == TERMINATED {
                    break;
                }
                target = found + (chunk % 97) as DocId + 1;
            }
            // Asked document by document, as a conjunction led by another clause asks.
            let mut asked = scorer();
            let mut target = asked.doc();
            while target < max_doc {
                let hit = asked.matches(target);
                prop_assert_eq!(hit, Some(want.binary_search(&target).is_ok()), "document {}", target);
                if hit == Some(true) {
                    prop_assert_eq!(asked.doc(), target);
                }
                target += (chunk % 7) as DocId + 1;
            }
            prop_assert_eq!(got, want);
        }
    }
}
