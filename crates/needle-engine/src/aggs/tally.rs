//! Documents counted by keyword value id in one segment, for a `terms`
//! aggregation with nothing below it. Each count is kept in four lanes, a
//! document's lane by its place in the batch: a run of documents with one
//! value (common where documents arrive grouped) would otherwise add to
//! one count each time, every add waiting on the one before it.

/// See the module documentation.
#[derive(Debug, Clone, Default)]
pub(super) struct Tally {
    lanes: Vec<[u64; LANES]>,
}

const LANES: usize = 4;

impl Tally {
    /// Counts one document for each of `ids` (value ids, never negative).
    pub fn add(&mut self, ids: &[i64]) {
        let Some(&top) = ids.iter().max() else { return };
        if top as usize >= self.lanes.len() {
            self.lanes.resize(top as usize + 1, [0; LANES]);
        }
        let lanes = &mut self.lanes[..];
        let mut quads = ids.chunks_exact(LANES);
        for q in &mut quads {
            for (lane, &id) in q.iter().enumerate() {
                lanes[id as usize][lane] += 1;
            }
        }
        for &id in quads.remainder() {
            lanes[id as usize][0] += 1;
        }
    }

    /// Each id counted since the last drain, with its count; the counts are
    /// emptied for the next segment.
    pub fn drain(&mut self) -> impl Iterator<Item = (usize, u64)> {
        let lanes = std::mem::take(&mut self.lanes);
        lanes.into_iter().map(|l| l.iter().sum()).enumerate().filter(|&(_, c)| c > 0)
    }
}
