//! The segment set: the one owner of an index's segments, their deletions,
//! the in-memory tail and the last commit. An [`crate::Index`] keeps it
//! behind one lock; the writer changes it (one document, one commit step at
//! a time), and a search takes a [`Snapshot`] of it and lets go of the lock.
//!
//! In document order: committed on-disk segments, then frozen in-memory
//! segments (former tails waiting to be flushed), then the *tail*, the
//! in-memory segment adds go to. A segment's deletions are an `Arc`'d bitset
//! a snapshot shares; the writer copies one before changing it while a
//! snapshot holds it, so a snapshot never sees a later change.

use std::collections::HashMap;
use std::sync::Arc;

use needle_codecs::bloom::BloomParams;
use needle_codecs::{SegmentRead, SegmentReader, Verify};
use needle_core::{DocId, Error, Result};
use needle_index::{AnalyzedDoc, MemSegment, MemView};
use needle_storage::Directory;

use crate::deletes::DeleteBits;
use crate::document::{analyze, parse_document, record, DocVersion};
use crate::manifest::{Manifest, SegmentEntry};
use crate::schema::{Schema, SharedSchema};
use crate::search::{find_ids, stored_version, View};
use crate::updates::{FieldUpdate, UpdatedSegment, Updates};
use crate::wal::{self, OnDamage, Record, Replayed};

/// Documents in the tail before it is frozen, when the writer does not say.
/// Each frozen tail is flushed as a segment of its own, so a small tail
/// makes many small segments to flush and merge (2,048 made 68 of the shared
/// corpus's 138,245 documents; `_forcemerge` after a `_bulk` of them took
/// 10.3 s, with 16,384 7.2 s). What a large tail costs: an add after a search
/// took a view copies the tail's norms (one byte a document a text field).
pub(crate) const TAIL_DOCS: u32 = 16384;

/// A condition a write puts on the current copy of its document
/// (Elasticsearch's `op_type=create` and `if_seq_no`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IfCurrent {
    /// Whatever there is (or is not).
    #[default]
    Any,
    /// Only if there is no live document with the `_id`.
    Absent,
    /// Only if the live document's `_seq_no` is this one.
    SeqNo(u64),
}

impl IfCurrent {
    fn check(self, id: &str, current: Option<DocVersion>) -> Result<()> {
        let conflict = |reason: String| Err(Error::Conflict { id: needle_core::printable(id, 100), reason });
        match (self, current) {
            (IfCurrent::Absent, Some(c)) => {
                conflict(format!("document already exists (current version [{}])", c.version))
            }
            (IfCurrent::SeqNo(want), Some(c)) if c.shown_seq_no() != want => conflict(format!(
                "required seqNo [{want}], primary term [1]. current document has seqNo [{}] and primary term [1]",
                c.shown_seq_no()
            )),
            (IfCurrent::SeqNo(want), None) => {
                conflict(format!("required seqNo [{want}], primary term [1] but no document was found"))
            }
            _ => Ok(()),
        }
    }
}

/// Where a document is: (segment, doc), the tail's segment being `segments.len()`.
type DocAt = (usize, DocId);

/// What a write did.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Written {
    /// The write's number in the log (from 1; its `_seq_no` is one less).
    pub lsn: u64,
    /// The version of the document it replaced or deleted.
    pub previous: Option<DocVersion>,
    /// The written document's (or for a delete, the deletion's) version and sequence number.
    pub version: DocVersion,
}

impl Written {
    /// The write's `_seq_no`: Elasticsearch counts from 0.
    pub fn seq_no(&self) -> u64 {
        record::shown_seq_no(self.lsn)
    }
}

pub(crate) enum SegmentData {
    Disk(Arc<SegmentReader>),
    Mem(Arc<MemView>),
}

impl SegmentData {
    pub fn read(&self) -> &dyn SegmentRead {
        match self {
            SegmentData::Disk(s) => s.as_ref(),
            SegmentData::Mem(s) => s.as_ref(),
        }
    }

    fn shared(&self) -> Arc<dyn SegmentRead> {
        match self {
            SegmentData::Disk(s) => s.clone(),
            SegmentData::Mem(s) => s.clone(),
        }
    }
}

pub(crate) struct Segment {
    pub data: SegmentData,
    pub deletes: Arc<DeleteBits>,
    /// The manifest entry, once the segment is committed.
    pub entry: Option<SegmentEntry>,
    /// The deletions the committed deletion file holds.
    pub persisted: DeleteBits,
    /// In-place updates of its numeric values.
    pub updates: Updates,
    /// The newest sequence number the committed updates file holds.
    pub updates_persisted: u64,
}

impl Segment {
    pub fn committed(
        reader: Arc<SegmentReader>,
        entry: SegmentEntry,
        deletes: DeleteBits,
        updates: Updates,
    ) -> Self {
        Segment {
            data: SegmentData::Disk(reader),
            persisted: deletes.clone(),
            deletes: Arc::new(deletes),
            entry: Some(entry),
            updates_persisted: updates.last_seq(),
            updates,
        }
    }

    /// A new segment: nothing of it persisted yet.
    pub fn new(
        data: SegmentData,
        deletes: Arc<DeleteBits>,
        entry: Option<SegmentEntry>,
        updates: Updates,
    ) -> Self {
        Segment { data, deletes, entry, persisted: DeleteBits::new(0), updates, updates_persisted: 0 }
    }

    /// What a search reads: the segment, through its updates when it has any.
    fn current(&self, schema: &Arc<Schema>) -> Arc<dyn SegmentRead> {
        with_updates(self.data.shared(), &self.updates, schema)
    }

    pub fn max_doc(&self) -> DocId {
        self.data.read().meta().max_doc
    }
}

/// `segment` as `updates` leave it.
pub(crate) fn with_updates(
    segment: Arc<dyn SegmentRead>,
    updates: &Updates,
    schema: &Arc<Schema>,
) -> Arc<dyn SegmentRead> {
    match updates.is_empty() {
        true => segment,
        false => Arc::new(UpdatedSegment::new(segment, updates.clone(), schema.clone())),
    }
}

pub(crate) struct SegmentSet {
    /// The last commit.
    pub manifest: Manifest,
    pub segments: Vec<Segment>,
    pub tail: MemSegment,
    pub tail_deletes: Arc<DeleteBits>,
    pub tail_updates: Updates,
    pub next_lsn: u64,
    /// Moves on with every change to what a search sees, or to how it is
    /// split into segments (the result cache's key).
    pub generation: u64,
    /// The phrase filters' parameters of the segments built here.
    pub bloom: Option<BloomParams>,
}

/// A search's view of the segment set at one moment.
pub(crate) struct Snapshot {
    pub segments: Vec<SnapshotSegment>,
    pub schema: Arc<Schema>,
    pub generation: u64,
}

pub(crate) struct SnapshotSegment {
    pub data: Arc<dyn SegmentRead>,
    pub deletes: Arc<DeleteBits>,
}

impl Snapshot {
    /// Each segment, with its deletions when it has any (a snapshot's do not
    /// change, and a search then asks nothing per document).
    pub fn views(&self) -> Vec<View<'_>> {
        self.segments
            .iter()
            .map(|s| {
                (s.data.as_ref(), (s.deletes.count() > 0).then_some(&*s.deletes as &dyn needle_core::Deletes))
            })
            .collect()
    }
}

/// Opens the segments `manifest` names, reusing the readers in `open` (by
/// name), and their deletions.
fn open_committed(
    dir: &Directory,
    manifest: &Manifest,
    verify: Verify,
    open: &HashMap<String, Arc<SegmentReader>>,
) -> Result<Vec<Segment>> {
    manifest
        .segments
        .iter()
        .map(|e| {
            let reader = match open.get(&e.name) {
                Some(r) => r.clone(),
                None => Arc::new(SegmentReader::open_with(dir, &e.name, verify)?),
            };
            let deletes = match &e.deletes {
                Some(file) => DeleteBits::decode(file, &dir.read_all(file)?, e.max_doc)?,
                None => DeleteBits::new(e.max_doc),
            };
            let updates = match &e.updates {
                Some(file) => Updates::decode(file, &dir.read_all(file)?, e.max_doc)?,
                None => Updates::default(),
            };
            Ok(Segment::committed(reader, e.clone(), deletes, updates))
        })
        .collect()
}

impl SegmentSet {
    /// The committed state `manifest` describes, with the write-ahead log
    /// after its checkpoint applied in memory; `open` holds segment readers
    /// already open (by name). `schema` starts as the manifest's and gains
    /// the fields the log's documents add.
    pub fn load(
        dir: &Directory,
        manifest: Manifest,
        verify: Verify,
        open: &HashMap<String, Arc<SegmentReader>>,
        schema: &SharedSchema,
        on_damage: OnDamage,
    ) -> Result<(SegmentSet, Replayed)> {
        let segments = open_committed(dir, &manifest, verify, open)?;
        let bloom = manifest.schema.bloom_params();
        let mut set = SegmentSet {
            tail: MemSegment::new("memory segment").with_bloom(bloom.clone()),
            tail_deletes: Arc::default(),
            tail_updates: Updates::default(),
            next_lsn: manifest.checkpoint_lsn + 1,
            generation: 0,
            segments,
            bloom,
            manifest,
        };
        let replayed = wal::replay(dir, set.manifest.checkpoint_lsn, on_damage, &mut |lsn, record| {
            set.next_lsn = lsn;
            set.apply(record, schema, TAIL_DOCS).map_err(|e| {
                Error::corrupt("write-ahead log", format!("record {lsn} cannot be applied: {e}"))
            })
        })?;
        set.next_lsn = replayed.next_lsn;
        Ok((set, replayed))
    }

    /// Applies a logged change (recovery): the same writes in the same
    /// order, so versions come out as they did.
    pub(crate) fn apply(&mut self, record: Record, schema: &SharedSchema, tail_docs: u32) -> Result<()> {
        match record {
            Record::Add { id, json } => {
                let (doc, current) = parse_document(&json, schema, id.as_deref())?;
                let id = doc.id.clone();
                self.write(&id, Some(analyze(doc, &current)), IfCurrent::Any, tail_docs)?;
            }
            Record::Delete(id) => {
                self.write(&id, None, IfCurrent::Any, tail_docs)?;
            }
            Record::Update { id, values } => {
                let values: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(&values).map_err(|e| Error::invalid(format!("bad values: {e}")))?;
                let changes =
                    crate::values::field_updates(&schema.current(), &crate::values::named_values(&values))?;
                self.update(&id, &changes, IfCurrent::Any)?;
            }
            Record::Skip => {
                self.take_lsn();
            }
        }
        Ok(())
    }

    /// The readers of the on-disk segments, by name.
    pub fn open_readers(&self) -> HashMap<String, Arc<SegmentReader>> {
        self.segments
            .iter()
            .filter_map(|s| match (&s.data, &s.entry) {
                (SegmentData::Disk(r), Some(e)) => Some((e.name.clone(), r.clone())),
                _ => None,
            })
            .collect()
    }

    pub fn snapshot(&self, schema: Arc<Schema>) -> Snapshot {
        let mut segments: Vec<_> = self
            .segments
            .iter()
            .map(|s| SnapshotSegment { data: s.current(&schema), deletes: s.deletes.clone() })
            .collect();
        if self.tail.max_doc() > 0 {
            segments.push(SnapshotSegment {
                data: with_updates(Arc::new(self.tail.view()), &self.tail_updates, &schema),
                deletes: self.tail_deletes.clone(),
            });
        }
        Snapshot { segments, schema, generation: self.generation }
    }

    /// Every segment with its deletions (under the lock), and a view of the
    /// tail when it holds documents (a view copies the tail's lists of
    /// columns: a lookup by `_id` need not pay for that when it is empty).
    fn views(&self) -> (Vec<View<'_>>, Option<MemView>) {
        let tail = (self.tail.max_doc() > 0).then(|| self.tail.view());
        let views = self
            .segments
            .iter()
            .map(|s| (s.data.read(), Some(&*s.deletes as &dyn needle_core::Deletes)))
            .collect();
        (views, tail)
    }

    /// Writes `doc` as `_id` `id` (with `None`, deletes `id`), replacing any
    /// live document with that `_id`, if `condition` holds for the current
    /// one (else [`Error::Conflict`], and nothing changes). A failed read of
    /// the current copy is an error too, never a second copy.
    pub fn write(
        &mut self,
        id: &str,
        doc: Option<AnalyzedDoc>,
        condition: IfCurrent,
        tail_docs: u32,
    ) -> Result<Written> {
        let (found, previous) = self.lookup(id)?;
        condition.check(id, previous)?;
        let lsn = self.take_lsn();
        for &(i, doc) in &found {
            let bits = match self.segments.get_mut(i) {
                Some(s) => &mut s.deletes,
                None => &mut self.tail_deletes,
            };
            Arc::make_mut(bits).delete(doc);
        }
        let version = DocVersion { version: previous.map_or(1, |p| p.version + 1), seq_no: lsn };
        if let Some(mut doc) = doc {
            doc.set_stored(record::with_version(doc.stored(), version));
            self.tail.add(doc);
            if self.tail.max_doc() >= tail_docs {
                self.freeze();
            }
        }
        Ok(Written { lsn, previous, version })
    }

    /// Makes `changes` to numeric fields of the live document `id` in place,
    /// if `condition` holds for it. A document that already has this write's
    /// sequence number or a newer one (a log record replayed over updates a
    /// merge persisted ahead of the checkpoint) is left as it is.
    pub fn update(&mut self, id: &str, changes: &[FieldUpdate], condition: IfCurrent) -> Result<Written> {
        let (found, previous) = self.lookup(id)?;
        let (Some(&(i, doc)), Some(previous)) = (found.first(), previous) else {
            return Err(Error::not_found(format!("document [{}]", needle_core::printable(id, 100))));
        };
        condition.check(id, Some(previous))?;
        let lsn = self.take_lsn();
        if previous.seq_no >= lsn {
            return Ok(Written { lsn, previous: Some(previous), version: previous });
        }
        let version = DocVersion { version: previous.version + 1, seq_no: lsn };
        let updates = match self.segments.get_mut(i) {
            Some(s) => &mut s.updates,
            None => &mut self.tail_updates,
        };
        updates.set(doc, changes, version);
        Ok(Written { lsn, previous: Some(previous), version })
    }

    fn take_lsn(&mut self) -> u64 {
        self.generation += 1;
        self.next_lsn += 1;
        self.next_lsn - 1
    }

    /// Every live document with `_id` `id` (segment, doc; the tail's segment
    /// being `segments.len()`), and the version of the newest.
    fn lookup(&self, id: &str) -> Result<(Vec<DocAt>, Option<DocVersion>)> {
        let (mut views, tail) = self.views();
        if let Some(tail) = &tail {
            views.push((tail, Some(&*self.tail_deletes)));
        }
        let found = find_ids(&views, id)?;
        let newest = match found.first() {
            Some(&(i, doc)) => {
                let updates = self.segments.get(i).map_or(&self.tail_updates, |s| &s.updates);
                match updates.version(doc) {
                    Some(v) => Some(v),
                    // Not updated in place since written: the record's head says.
                    None => Some(stored_version(views[i].0, doc)?),
                }
            }
            None => None,
        };
        Ok((found, newest))
    }

    /// Moves the tail to the frozen segments and starts a new one.
    pub fn freeze(&mut self) {
        if self.tail.max_doc() == 0 {
            return;
        }
        self.generation += 1;
        let tail = std::mem::replace(
            &mut self.tail,
            MemSegment::new("memory segment").with_bloom(self.bloom.clone()),
        );
        let deletes = std::mem::take(&mut self.tail_deletes);
        let updates = std::mem::take(&mut self.tail_updates);
        self.segments.push(Segment::new(SegmentData::Mem(Arc::new(tail.view())), deletes, None, updates));
    }

    /// Live documents.
    pub fn num_docs(&self) -> u64 {
        let all: u64 = self.segments.iter().map(|s| u64::from(s.max_doc())).sum::<u64>()
            + u64::from(self.tail.max_doc());
        let deleted: u64 = self.segments.iter().map(|s| u64::from(s.deletes.count())).sum::<u64>()
            + u64::from(self.tail_deletes.count());
        all - deleted
    }

    /// Bytes held by frozen in-memory segments and the tail, and by in-place updates.
    pub fn memory_bytes(&self) -> usize {
        let frozen: usize = self.segments.iter().map(|s| mem_bytes(&s.data)).sum();
        frozen + self.tail.memory() + self.updates_bytes()
    }

    /// Bytes held by in-place updates (until merges fold them into segments).
    pub fn updates_bytes(&self) -> usize {
        self.segments.iter().map(|s| s.updates.memory()).sum::<usize>() + self.tail_updates.memory()
    }

    /// Whether anything happened since the last commit that a commit would persist.
    pub fn has_changes(&self) -> bool {
        self.next_lsn - 1 > self.manifest.checkpoint_lsn
            || self.tail.max_doc() > 0
            || self.segments.iter().any(|s| {
                s.entry.is_none()
                    || s.deletes.count() != s.persisted.count()
                    || s.updates.last_seq() > s.updates_persisted
            })
    }

    /// (on-disk segments, all segments including the tail), for tests and statistics.
    pub fn segment_counts(&self) -> (usize, usize) {
        let disk = self.segments.iter().filter(|s| matches!(s.data, SegmentData::Disk(_))).count();
        (disk, self.segments.len() + 1)
    }
}

fn mem_bytes(data: &SegmentData) -> usize {
    match data {
        SegmentData::Mem(m) => m.memory(),
        SegmentData::Disk(_) => 0,
    }
}
