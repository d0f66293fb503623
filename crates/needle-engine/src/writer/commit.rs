//! Commits: what the segment set persists, in three steps so that searches
//! and writes go on while files are written. Under the lock, [`SegmentSet::begin_commit`]
//! freezes the tail and decides what to flush; without it, [`flush`] writes
//! the in-memory segments; under it again, [`SegmentSet::finish_commit`]
//! swaps them for their on-disk copies and decides the deletion files and the
//! manifest, which [`PendingCommit::write`] writes without the lock; last,
//! [`SegmentSet::complete`] records what was persisted.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use fst::{IntoStreamer, Streamer};
use needle_codecs::{termmap, SegmentRead, SegmentReader, Verify};
use needle_core::{Deletes, DocId, Error, Result};
use needle_index::MemView;
use needle_storage::Directory;

use crate::deletes::DeleteBits;
use crate::manifest::{Manifest, SegmentEntry};
use crate::schema::{Schema, ID_FIELD};
use crate::search::find_ids;
use crate::segments::{Segment, SegmentData, SegmentSet};
use crate::updates::Updates;

/// What a commit persists, decided under the lock.
pub(crate) struct CommitPlan {
    pub checkpoint_lsn: u64,
    schema: Schema,
    to_flush: Vec<(usize, Arc<MemView>, String)>,
    /// The largest segment on disk, whose document store's dictionary the
    /// flushed segments are compressed with (none yet: they train their own).
    dictionary_from: Option<Arc<SegmentReader>>,
    /// The deletions of every segment the commit covers (all of them when it began), by position.
    deletes: Vec<Arc<DeleteBits>>,
    /// Their in-place updates, by position.
    updates: Vec<Updates>,
}

/// A deletion file a commit writes.
struct PendingDeletes {
    segment: String,
    file: String,
    bits: DeleteBits,
    max_doc: u32,
}

/// An updates file a commit writes.
struct PendingUpdates {
    segment: String,
    file: String,
    updates: Updates,
}

/// What a commit or a merge writes after the lock is released: deletion and
/// updates files, then the manifest.
pub(crate) struct PendingCommit {
    pub(super) manifest: Manifest,
    deletes: Vec<PendingDeletes>,
    updates: Vec<PendingUpdates>,
    /// Files the commit makes obsolete besides replaced deletion files.
    pub(super) obsolete: Vec<String>,
    /// Segments replaced: freeing a large in-memory segment takes long enough
    /// that it must not happen under the lock.
    pub(super) retired: Vec<SegmentData>,
}

impl PendingCommit {
    pub(super) fn new(manifest: Manifest, obsolete: Vec<String>, retired: Vec<SegmentData>) -> Self {
        PendingCommit { manifest, deletes: Vec::new(), updates: Vec::new(), obsolete, retired }
    }

    /// A deletion file for segment `entry` holding `bits`, named for the manifest's next generation.
    pub(super) fn persist_deletes(&mut self, entry: &mut SegmentEntry, bits: DeleteBits) {
        let file = format!("{}.del.{}", entry.name, self.manifest.generation + 1);
        entry.deletes = Some(file.clone());
        self.deletes.push(PendingDeletes { segment: entry.name.clone(), file, bits, max_doc: entry.max_doc });
    }

    /// An updates file for segment `entry` holding `updates`, named for the manifest's next generation.
    pub(super) fn persist_updates(&mut self, entry: &mut SegmentEntry, updates: Updates) {
        let file = format!("{}.upd.{}", entry.name, self.manifest.generation + 1);
        entry.updates = Some(file.clone());
        self.updates.push(PendingUpdates { segment: entry.name.clone(), file, updates });
    }

    /// Writes the deletion and updates files and commits the manifest
    /// (write, fsync, rename, fsync the folder).
    pub fn write(&mut self, dir: &Directory) -> Result<()> {
        let deletes = self.deletes.iter().map(|d| (&d.file, d.bits.encode(d.max_doc)));
        let updates = self.updates.iter().map(|u| (&u.file, u.updates.encode()));
        for (file, bytes) in deletes.chain(updates) {
            let mut w = dir.create(file)?;
            w.write_all(&bytes)?;
            w.finish()?;
        }
        dir.sync()?;
        self.manifest.commit(dir)
    }

    pub fn checkpoint_lsn(&self) -> u64 {
        self.manifest.checkpoint_lsn
    }

    /// Frees the replaced segments (call without the lock).
    pub fn free_retired(&mut self) {
        self.retired.clear();
    }
}

/// Writes the plan's in-memory segments to disk (without the lock), in
/// order. Each is files of its own, so they are written side by side, on as
/// many threads as there are cores (this one among them).
pub(crate) fn flush(dir: &Directory, plan: &CommitPlan, verify: Verify) -> Result<Vec<Arc<SegmentReader>>> {
    // Training a dictionary took most of a small flush's document store;
    // the corpus's documents look alike from one flush to the next.
    let dictionary = match &plan.dictionary_from {
        Some(s) => s.doc_store().dictionary()?.filter(|d| !d.is_empty()),
        None => None,
    };
    let one = |(_, mem, name): &(usize, Arc<MemView>, String)| -> Result<Arc<SegmentReader>> {
        mem.flush(dir, name, dictionary.as_deref())?;
        Ok(Arc::new(SegmentReader::open_with(dir, name, verify)?))
    };
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        while let Some(item) = plan.to_flush.get(next.fetch_add(1, Ordering::Relaxed)) {
            done.push((item.0, one(item)));
        }
        done
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut done = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..cores.min(plan.to_flush.len()))
            .filter_map(|_| {
                std::thread::Builder::new().name("needle-flush".into()).spawn_scoped(scope, work).ok()
            })
            .collect();
        let mut done = work();
        for helper in helpers {
            done.extend(helper.join().unwrap_or_default());
        }
        done
    });
    if done.len() != plan.to_flush.len() {
        return Err(Error::invalid("a flush thread failed"));
    }
    done.sort_by_key(|(position, _)| *position);
    done.into_iter().map(|(_, result)| result).collect()
}

impl SegmentSet {
    /// Freezes the tail, appends `imported` (segments an import wrote, in
    /// input order, as newer than everything here) and decides what the commit persists.
    pub fn begin_commit(
        &mut self,
        schema: &Schema,
        imported: Vec<Arc<SegmentReader>>,
        names: Vec<String>,
    ) -> Result<CommitPlan> {
        self.freeze();
        if !imported.is_empty() && self.next_lsn == 1 {
            // Imported documents have no log number and show `_seq_no` 0: a
            // logged write showing it too would pass another's `if_seq_no`.
            self.next_lsn = 2;
        }
        for (reader, name) in imported.into_iter().zip(names) {
            self.add_imported(reader, name)?;
        }
        let mut to_flush = Vec::new();
        let mut dictionary_from: Option<&Arc<SegmentReader>> = None;
        for (i, s) in self.segments.iter().enumerate() {
            match &s.data {
                SegmentData::Mem(m) => to_flush.push((i, m.clone(), self.manifest.new_segment_name())),
                SegmentData::Disk(d) => {
                    if dictionary_from.is_none_or(|b| d.meta().max_doc > b.meta().max_doc) {
                        dictionary_from = Some(d);
                    }
                }
            }
        }
        Ok(CommitPlan {
            checkpoint_lsn: self.next_lsn - 1,
            schema: schema.clone(),
            dictionary_from: dictionary_from.cloned(),
            to_flush,
            deletes: self.segments.iter().map(|s| s.deletes.clone()).collect(),
            updates: self.segments.iter().map(|s| s.updates.clone()).collect(),
        })
    }

    /// Appends an imported segment; each of its `_id`s replaces the live
    /// documents with that id before it (in older segments, and earlier in the
    /// segment itself), as if its documents had been added one by one.
    fn add_imported(&mut self, reader: Arc<SegmentReader>, name: String) -> Result<()> {
        let max_doc = reader.meta().max_doc;
        let mut own = DeleteBits::new(max_doc);
        let (from, to) = termmap::field_keys(ID_FIELD);
        let mut stream = reader.term_map().range().ge(&from).lt(&to).into_stream();
        let views: Vec<_> =
            self.segments.iter().map(|s| (s.data.read(), Some(&*s.deletes as &dyn Deletes))).collect();
        let mut replaced: Vec<(usize, DocId)> = Vec::new();
        while let Some((key, _)) = stream.next() {
            let term = &key[2..];
            let docs = reader.term_docs(ID_FIELD, term)?;
            // The last copy in input order wins.
            for &d in docs.iter().rev().skip(1) {
                own.delete(d);
            }
            replaced.extend(find_ids(&views, std::str::from_utf8(term).unwrap_or_default())?);
        }
        drop(views);
        for (i, doc) in replaced {
            Arc::make_mut(&mut self.segments[i].deletes).delete(doc);
        }
        self.generation += 1;
        let entry = SegmentEntry { name, max_doc, deletes: None, updates: None };
        let mut segment =
            Segment::new(SegmentData::Disk(reader), Arc::new(own), Some(entry), Default::default());
        segment.persisted = DeleteBits::new(max_doc);
        self.segments.push(segment);
        Ok(())
    }

    /// Puts the flushed segments in place of the in-memory ones and decides
    /// the deletion files and the manifest to write; the writing happens
    /// without the lock ([`PendingCommit::write`]), then [`SegmentSet::complete`].
    pub fn finish_commit(&mut self, plan: CommitPlan, flushed: Vec<Arc<SegmentReader>>) -> PendingCommit {
        self.generation += 1;
        let mut retired = Vec::new();
        for ((i, mem, name), reader) in plan.to_flush.into_iter().zip(flushed) {
            let max_doc = reader.meta().max_doc;
            retired.push(std::mem::replace(&mut self.segments[i].data, SegmentData::Disk(reader)));
            retired.push(SegmentData::Mem(mem));
            self.segments[i].entry = Some(SegmentEntry { name, max_doc, deletes: None, updates: None });
        }
        let mut next = self.manifest.clone();
        next.schema = plan.schema;
        next.checkpoint_lsn = plan.checkpoint_lsn;
        next.segments.clear();
        let mut pending = PendingCommit::new(next, Vec::new(), retired);
        for (i, (bits, updates)) in plan.deletes.into_iter().zip(plan.updates).enumerate() {
            let mut entry = self.segments[i].entry.clone().expect("every segment is on disk now");
            if bits.count() != self.segments[i].persisted.count() {
                pending.persist_deletes(&mut entry, DeleteBits::clone(&bits));
            }
            if updates.last_seq() > self.segments[i].updates_persisted {
                pending.persist_updates(&mut entry, updates);
            }
            pending.manifest.segments.push(entry);
        }
        pending
    }

    /// Records what a written commit persisted; returns the files it made obsolete.
    pub fn complete(&mut self, done: PendingCommit) -> Vec<String> {
        let mut obsolete = done.obsolete;
        for d in done.deletes {
            if let Some(s) = self.committed_mut(&d.segment) {
                let entry = s.entry.as_mut().expect("found by its entry");
                // A merged segment's entry already names its file.
                obsolete.extend(entry.deletes.replace(d.file.clone()).filter(|old| *old != d.file));
                s.persisted = d.bits;
            }
        }
        for u in done.updates {
            if let Some(s) = self.committed_mut(&u.segment) {
                let entry = s.entry.as_mut().expect("found by its entry");
                obsolete.extend(entry.updates.replace(u.file.clone()).filter(|old| *old != u.file));
                s.updates_persisted = u.updates.last_seq();
            }
        }
        // A merge planned meanwhile may have taken a segment name.
        let next_segment = self.manifest.next_segment.max(done.manifest.next_segment);
        self.manifest = Manifest { next_segment, ..done.manifest };
        obsolete
    }

    /// The committed segment named `name`, if it is still here.
    fn committed_mut(&mut self, name: &str) -> Option<&mut Segment> {
        self.segments.iter_mut().find(|s| s.entry.as_ref().is_some_and(|e| e.name == name))
    }
}
