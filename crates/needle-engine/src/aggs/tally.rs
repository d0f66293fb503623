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
            run = q[LANES - 1];
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

    /// Each id counted since the last drain, with its count; the counts are
    /// emptied for the next segment.
    pub fn drain(&mut self) -> impl Iterator<Item = (usize, u64)> {
        let lanes = std::mem::take(&mut self.lanes);
        lanes.into_iter().map(|l| l.iter().sum()).enumerate().filter(|&(_, c)| c > 0)
    }
}
