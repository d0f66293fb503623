//! Documents with a value of a numeric field in a range, read from its doc
//! values; each scores 1 (times the boosts around the query). Blocks whose
//! values all lie outside the range (their min and max say so) are passed
//! over without being read, and blocks whose values all lie inside, every
//! document having one, match whole without being read.

use needle_codecs::doc_values::{NumericValues, ValueBatch, BLOCK_DOCS};
use needle_core::{DocId, TERMINATED};

use super::filter::{FilterScorer, Matcher};

pub struct InRange {
    values: Box<dyn NumericValues + Send>,
    lower: i64,
    upper: i64,
    max_doc: DocId,
    /// The last document of a block found to match whole (every document has a value inside).
    all_until: Option<DocId>,
}

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
        FilterScorer::with(InRange { values, lower, upper, max_doc, all_until: None }, score)
    }
}

impl Matcher for InRange {
    fn next_match(&mut self, mut from: DocId) -> DocId {
        if self.all_until.is_some_and(|end| from <= end) && from < self.max_doc {
            return from;
        }
        while from < self.max_doc {
            let (block_end, bounds) = self.values.block_bounds(from);
            let Some((min, max)) = bounds.filter(|&(min, max)| max >= self.lower && min <= self.upper) else {
                from = block_end.saturating_add(1);
                continue;
            };
            if self.lower <= min && max <= self.upper && self.values.block_is_dense(from) {
                self.all_until = Some(block_end);
                return from;
            }
            for doc in from..=block_end {
                if self.values.values(doc).iter().any(|v| (self.lower..=self.upper).contains(v)) {
                    return doc;
                }
            }
            from = block_end.saturating_add(1);
        }
        TERMINATED
    }
    fn cost(&self) -> u64 {
        u64::from(self.max_doc)
    }
}

/// How many of the first `max_doc` documents have a value in `lower..=upper`,
/// counted a block at a time: from the skip index alone for blocks wholly
/// outside, or wholly inside with a value in every document; the others'
/// values read in one batch each. What a count of a range needs, without
/// visiting its matches one by one.
pub fn count_in_range(values: &mut dyn NumericValues, lower: i64, upper: i64, max_doc: DocId) -> u64 {
    let (mut count, mut from) = (0u64, 0);
    let (mut docs, mut batch) = (Vec::with_capacity(BLOCK_DOCS), ValueBatch::default());
    let inside = |v: &i64| (lower..=upper).contains(v);
    while from < max_doc {
        let (end, bounds) = values.block_bounds(from);
        match bounds {
            Some((min, max)) if max < lower || min > upper => {}
            None => {}
            Some((min, max)) if lower <= min && max <= upper && values.block_is_dense(from) => {
                count += u64::from(end - from + 1);
            }
            Some(_) => {
                docs.clear();
                docs.extend(from..end + 1);
                values.fill(&docs, &mut batch);
                count += match batch.singles() {
                    Some(singles) => singles.iter().filter(|v| inside(v)).count(),
                    None => (0..batch.len()).filter(|&i| batch.doc(i).iter().any(inside)).count(),
                } as u64;
            }
        }
        from = end.saturating_add(1);
    }
    count
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
        ) {
            let mut column = ColumnBuf::default();
            for (d, v) in values.iter().enumerate() {
                if let Some(v) = v {
                    column.set(d as DocId, &[*v]);
                }
            }
            let (lower, upper) = (a.min(b), a.max(b));
            let mut scorer = RangeScorer::new(mem_values(column, values.len() as DocId), lower, upper, values.len() as DocId, 1.0);
            let mut got = Vec::new();
            while scorer.doc() != TERMINATED {
                got.push(scorer.doc());
                scorer.advance();
            }
            let want: Vec<DocId> = values
                .iter()
                .enumerate()
                .filter(|(_, v)| v.is_some_and(|v| (lower..=upper).contains(&v)))
                .map(|(d, _)| d as DocId)
                .collect();
            prop_assert_eq!(got, want);
        }
    }
}
