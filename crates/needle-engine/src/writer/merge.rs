//! Merges: committed on-disk segments rewritten as one, deleted documents
//! dropped. Which segments is a policy ([`MergePolicy`]): the background
//! thread's tiered one (a few small adjacent segments once there are many),
//! or an explicit target (`needle merge --max-segments N`). Either way a
//! merge is planned under the lock, written without it (searches and writes
//! go on), and swapped in under it again, carrying over deletions made while
//! it ran ([`SegmentSet::finish_merge`]).

use std::sync::Arc;

use needle_codecs::{SegmentRead, SegmentReader, Verify};
use needle_core::{Deletes, Error, Result};
use needle_index::{merge_segments_paced, DocMaps, Merge};
use needle_storage::Directory;

use super::commit::PendingCommit;
use crate::deletes::DeleteBits;
use crate::manifest::SegmentEntry;
use crate::schema::Schema;
use crate::segments::{with_updates, Segment, SegmentData, SegmentSet};
use crate::updates::Updates;

/// Which committed segments to merge next.
#[derive(Debug, Clone, Copy)]
pub(crate) enum MergePolicy {
    /// Once at least `trigger` segments are committed, the `factor` adjacent
    /// ones with the fewest documents.
    Tiered { factor: usize, trigger: usize },
    /// Until at most this many segments remain, groups of adjacent segments of similar sizes.
    AtMost(usize),
    /// The segment whose in-place updates hold the most memory, rewritten
    /// alone to fold them in (they stay in memory until a merge does).
    FoldUpdates,
}

/// What a policy knows of each committed segment.
#[derive(Debug, Clone, Copy, Default)]
struct Candidate {
    docs: u64,
    /// Out of the index sort's order.
    unsorted: bool,
    /// Bytes its in-place updates hold.
    updates: usize,
}

/// A merge decided under the lock: its sources (with their committed
/// deletions and their in-place updates, which it folds in) and the new name.
pub(crate) struct MergePlan {
    sources: Vec<(Arc<SegmentReader>, DeleteBits, Updates)>,
    name: String,
    schema: Arc<Schema>,
    /// The newest sequence number when it was planned: updates after it are carried over.
    last_seq: u64,
}

impl MergePolicy {
    /// The run of adjacent segments to merge among the committed ones, or
    /// `None`. An explicit target rewrites a segment out of the index sort's
    /// order even alone, so that a merged index is sorted.
    fn pick(self, segments: &[Candidate]) -> Option<std::ops::Range<usize>> {
        let sizes: Vec<u64> = segments.iter().map(|c| c.docs).collect();
        match self {
            MergePolicy::Tiered { factor, trigger } => {
                if sizes.len() < trigger.max(factor) || factor < 2 {
                    return None;
                }
                let start =
                    (0..=sizes.len() - factor).min_by_key(|&i| sizes[i..i + factor].iter().sum::<u64>())?;
                Some(start..start + factor)
            }
            MergePolicy::AtMost(max) => group_by_size(&sizes, max.max(1))
                .into_iter()
                .find(|g| g.len() >= 2 || (g.len() == 1 && segments[g.start].unsorted)),
            MergePolicy::FoldUpdates => {
                let (i, most) = segments.iter().enumerate().max_by_key(|(_, c)| c.updates)?;
                (most.updates > 0).then_some(i..i + 1)
            }
        }
    }
}

/// Splits consecutive segments into at most `max` runs of similar document counts.
fn group_by_size(sizes: &[u64], max: usize) -> Vec<std::ops::Range<usize>> {
    if sizes.len() <= max {
        return (0..sizes.len()).map(|i| i..i + 1).collect();
    }
    let total: u64 = sizes.iter().sum();
    let target = total.div_ceil(max as u64).max(1);
    let mut groups = Vec::with_capacity(max);
    groups.push(0..0);
    let mut size = 0;
    for (i, &s) in sizes.iter().enumerate() {
        let groups_left = max - groups.len();
        let current = groups.last_mut().expect("one group at least");
        if current.end > current.start && size + s > target && groups_left > 0 {
            groups.push(i..i + 1);
            size = s;
        } else {
            current.end = i + 1;
            size += s;
        }
    }
    groups
}

/// Writes the merged segment (without the lock), dropping the documents
/// whose deletion was committed; returns it and where each document went.
pub(crate) fn run_merge(
    dir: &Directory,
    plan: &MergePlan,
    verify: Verify,
    pace: &mut dyn FnMut(u64),
) -> Result<(Arc<SegmentReader>, DocMaps)> {
    let sources: Vec<(&SegmentReader, Option<&dyn Deletes>)> =
        plan.sources.iter().map(|(r, d, _)| (r.as_ref(), Some(d as &dyn Deletes))).collect();
    let current: Vec<Arc<dyn SegmentRead>> =
        plan.sources.iter().map(|(r, _, updates)| with_updates(r.clone(), updates, &plan.schema)).collect();
    let current: Vec<&dyn SegmentRead> = current.iter().map(|c| c.as_ref()).collect();
    let legacy = |field, term: &[u8]| crate::values::indexed_value(&plan.schema, field, term);
    let merge = Merge { current: &current, legacy: &legacy, order: plan.schema.index_order(), threads: 0 };
    let (_, maps) = merge_segments_paced(dir, &plan.name, &sources, &merge, pace)?;
    Ok((Arc::new(SegmentReader::open_with(dir, &plan.name, verify)?), maps))
}

impl SegmentSet {
    /// The next merge `policy` asks for among the committed segments.
    pub fn plan_merge(&mut self, policy: MergePolicy, schema: Arc<Schema>) -> Option<MergePlan> {
        let committed = self.segments.iter().take_while(|s| s.entry.is_some()).count();
        let order = schema.index_order();
        let candidates: Vec<Candidate> = self.segments[..committed]
            .iter()
            .map(|s| Candidate {
                docs: u64::from(s.max_doc()),
                unsorted: order.is_some()
                    && matches!(&s.data, SegmentData::Disk(r) if r.meta().sorted != order),
                updates: s.updates.memory(),
            })
            .collect();
        let run = policy.pick(&candidates)?;
        let sources = self.segments[run]
            .iter()
            .map(|s| match &s.data {
                SegmentData::Disk(r) => (r.clone(), s.persisted.clone(), s.updates.clone()),
                SegmentData::Mem(_) => unreachable!("committed segments are on disk"),
            })
            .collect();
        Some(MergePlan {
            sources,
            name: self.manifest.new_segment_name(),
            schema,
            last_seq: self.next_lsn - 1,
        })
    }

    /// Puts the merged segment in place of its sources, carrying over the
    /// deletions made since the merge began, and decides the manifest naming
    /// it, written without the lock ([`PendingCommit::write`]), then [`SegmentSet::complete`].
    pub fn finish_merge(
        &mut self,
        plan: MergePlan,
        merged: Arc<SegmentReader>,
        maps: DocMaps,
    ) -> Result<PendingCommit> {
        self.generation += 1;
        let first = &plan.sources[0];
        let start = self
            .segments
            .iter()
            .position(|s| matches!(&s.data, SegmentData::Disk(r) if Arc::ptr_eq(r, &first.0)))
            .ok_or_else(|| Error::invalid("the segments being merged left the index"))?;
        let n = plan.sources.len();
        let in_place = self.segments.get(start..start + n).is_some_and(|run| {
            run.iter()
                .zip(&plan.sources)
                .all(|(s, (r, _, _))| matches!(&s.data, SegmentData::Disk(d) if Arc::ptr_eq(d, r)))
        });
        if !in_place {
            return Err(Error::invalid("the segments being merged changed while the merge ran"));
        }
        let max_doc = merged.meta().max_doc;
        // Deletions made while the merge ran: all of them stay in memory; those
        // a commit persisted meanwhile must stay persisted for the merged segment.
        let (mut deletes, mut persisted) = (DeleteBits::new(max_doc), DeleteBits::new(max_doc));
        // Updates made while the merge ran (it folded in those before) stay
        // in memory, and persisted with the merge (replaying a log record of
        // one of them changes nothing: see `updates`).
        let mut updates = Updates::default();
        for (seg, map) in self.segments[start..start + n].iter().zip(&maps) {
            seg.updates.carry_over(plan.last_seq, map, &mut updates);
            for (old, new) in map.iter().enumerate() {
                let Some(new) = *new else { continue };
                if seg.deletes.is_deleted(old as u32) {
                    deletes.delete(new);
                }
                if seg.persisted.is_deleted(old as u32) {
                    persisted.delete(new);
                }
            }
        }
        let mut pending = PendingCommit::new(self.manifest.clone(), Vec::new(), Vec::new());
        let at = pending
            .manifest
            .segments
            .iter()
            .position(|e| Some(e) == self.segments[start].entry.as_ref())
            .ok_or_else(|| Error::invalid("the segments being merged are not committed"))?;
        let mut entry = SegmentEntry { name: plan.name.clone(), max_doc, deletes: None, updates: None };
        if persisted.count() > 0 {
            pending.persist_deletes(&mut entry, persisted.clone());
        }
        if !updates.is_empty() {
            pending.persist_updates(&mut entry, updates.clone());
        }
        pending.manifest.segments.splice(at..at + n, [entry.clone()]);
        let mut merged_segment =
            Segment::new(SegmentData::Disk(merged), Arc::new(deletes), Some(entry), updates);
        merged_segment.persisted = persisted;
        let old: Vec<Segment> = self.segments.splice(start..start + n, [merged_segment]).collect();
        for s in old {
            let e = s.entry.expect("committed");
            pending.obsolete.extend(needle_codecs::segment_files(&e.name));
            pending.obsolete.extend(e.deletes);
            pending.obsolete.extend(e.updates);
            pending.retired.push(s.data);
        }
        Ok(pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_groups_keep_order_and_respect_the_maximum() {
        for (sizes, max) in [
            (vec![10, 10, 10, 10], 1),
            (vec![10, 10, 10, 10], 2),
            (vec![1, 100, 1, 1, 50], 3),
            (vec![5; 9], 4),
        ] {
            let groups = group_by_size(&sizes, max);
            assert!(groups.len() <= max, "{sizes:?} {max}: {groups:?}");
            let flat: Vec<usize> = groups.into_iter().flatten().collect();
            assert_eq!(flat, (0..sizes.len()).collect::<Vec<_>>());
        }
    }

    #[test]
    fn tiered_picks_the_smallest_adjacent_run_once_there_are_enough() {
        let policy = MergePolicy::Tiered { factor: 2, trigger: 3 };
        assert_eq!(policy.pick(&docs(&[5, 5])), None);
        assert_eq!(policy.pick(&docs(&[9, 1, 2, 8])), Some(1..3));
        assert_eq!(MergePolicy::AtMost(4).pick(&docs(&[1, 2, 3])), None);
    }

    fn docs(sizes: &[u64]) -> Vec<Candidate> {
        sizes.iter().map(|&docs| Candidate { docs, ..Candidate::default() }).collect()
    }

    #[test]
    fn an_explicit_target_rewrites_a_segment_out_of_the_index_order_alone() {
        let mut three = docs(&[1, 2, 3]);
        three[1].unsorted = true;
        assert_eq!(MergePolicy::AtMost(4).pick(&three), Some(1..2));
        let one = |unsorted| vec![Candidate { docs: 7, unsorted, updates: 0 }];
        assert_eq!(MergePolicy::AtMost(1).pick(&one(true)), Some(0..1));
        assert_eq!(MergePolicy::AtMost(1).pick(&one(false)), None);
        // The background policy leaves them to its merges.
        assert_eq!(MergePolicy::Tiered { factor: 2, trigger: 3 }.pick(&one(true)), None);
    }

    #[test]
    fn folding_updates_rewrites_the_segment_whose_updates_hold_the_most() {
        let mut three = docs(&[1, 2, 3]);
        assert_eq!(MergePolicy::FoldUpdates.pick(&three), None);
        three[0].updates = 500;
        three[2].updates = 900;
        assert_eq!(MergePolicy::FoldUpdates.pick(&three), Some(2..3));
    }
}
