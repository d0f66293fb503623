//! Documents counted by keyword value id in one segment, for a `terms`
//! aggregation with nothing below it. A run of documents with one value
//! (common where documents arrive grouped) is counted in a register; other
//! documents in four lanes of counts, a document's lane by its place in the
//! batch, so that no add waits on the one before it.

/// See the module documentation.
#[derive(Debug, Clone, Default)]
pub(super) struct Tally {
    lanes: Vec<[u64; LANES]>,
}

const LANES: usize = 4;

impl Tally {
    /// Counts one document for each of `ids`: value ids below `bound` (the
    /// segment's value count and a stand-in's id; any other is not counted).
    pub fn add(&mut self, ids: &[i64], bound: usize) {
        if self.lanes.len() < bound {
            self.lanes.resize(bound, [0; LANES]);
        }
        let lanes = &mut self.lanes[..];
        // Documents in a run of one value (most, where documents arrive
        // grouped) are counted four at a time in a register.
        let (mut run, mut in_run) = (ids.first().copied().unwrap_or(0), 0u64);
        let mut quads = ids.chunks_exact(LANES);
        for q in &mut quads {
            if q.iter().all(|&id| id == run) {
                in_run += LANES as u64;
                continue;
            }
            for (lane, &id) in q.iter().enumerate() {
                if let Some(counts) = lanes.get_mut(id as usize) {
                    counts[lane] += 1;
                }
            }
            // The run ends: its documents go to their value before the next one starts.
            if let Some(counts) = lanes.get_mut(run as usize) {
                counts[0] += in_run;
            }
            (run, in_run) = (q[LANES - 1], 0);
        }
        for &id in quads.remainder() {
            if let Some(counts) = lanes.get_mut(id as usize) {
                counts[0] += 1;
            }
        }
        if let Some(counts) = lanes.get_mut(run as usize) {
            counts[0] += in_run;
        }
    }

    /// The ids it has counts for (counted or not).
    pub fn len(&self) -> usize {
        self.lanes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lanes.is_empty()
    }

    /// Makes room for `len` ids, the current ones moved up by `front`.
    pub fn grow(&mut self, front: usize, len: usize) {
        super::dense::grow(&mut self.lanes, front, len, [0; LANES]);
    }

    /// Each id counted since the last drain, with its count; the counts are
    /// emptied for the next segment.
    pub fn drain(&mut self) -> impl Iterator<Item = (usize, u64)> {
        let lanes = std::mem::take(&mut self.lanes);
        lanes.into_iter().map(|l| l.iter().sum()).enumerate().filter(|&(_, c)| c > 0)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Every id counted once a document, whatever the runs, batches and bound.
        #[test]
        fn counts_equal_a_count_of_each_id(
            runs in proptest::collection::vec((0i64..12, 1usize..40), 0..60),
            batch in 1usize..300,
        ) {
            let ids: Vec<i64> = runs.iter().flat_map(|&(id, n)| std::iter::repeat_n(id, n)).collect();
            let bound = 10; // ids 10 and 11 are past it: not counted
            let mut tally = Tally::default();
            ids.chunks(batch).for_each(|b| tally.add(b, bound));
            let mut want = vec![0u64; bound];
            ids.iter().filter(|&&id| (id as usize) < bound).for_each(|&id| want[id as usize] += 1);
            let got: Vec<(usize, u64)> = tally.drain().collect();
            let want: Vec<(usize, u64)> = want.into_iter().enumerate().filter(|&(_, c)| c > 0).collect();
            prop_assert_eq!(got, want);
        }
    }
}
