//! The segments of a live index and the changes applied to them. Everything
//! here runs under the index's lock (see the module above); only `flush`, which
//! writes frozen segments to disk, runs without it.

use std::sync::{Arc, RwLock};

use needle_codecs::{SegmentRead, SegmentReader};
use needle_core::{Deletes, Error, Result};
use needle_index::{merge_segments_paced, AnalyzedDoc, DocMaps, MemSegment};
use needle_search::{parse_query, SearchOptions, Searcher};
use needle_storage::Directory;

use crate::deletes::DeleteBits;
use crate::document::{analyze, parse_document};
use crate::import::open_segments;
use crate::index::{read_deletes, remove_unreferenced_files};
use crate::manifest::{self, Manifest, SegmentEntry};
use crate::schema::Schema;
use crate::search::{find_id, stored_document, View};
use crate::wal::{self, Record};

enum Data {
    Disk(Arc<SegmentReader>),
    Mem(Arc<MemSegment>),
}

struct Segment {
    data: Data,
    deletes: DeleteBits,
    /// The manifest entry, once the segment is committed.
    entry: Option<SegmentEntry>,
    /// The deletions the committed deletion file holds.
    persisted: DeleteBits,
}

impl Segment {
    fn read(&self) -> &dyn SegmentRead {
        match &self.data {
            Data::Disk(s) => s.as_ref(),
            Data::Mem(s) => s.as_ref(),
        }
    }
}

pub(super) struct State {
    manifest: Manifest,
    bloom: Option<needle_codecs::bloom::BloomParams>,
    segments: Vec<Segment>,
    tail: MemSegment,
    tail_deletes: DeleteBits,
    next_lsn: u64,
    /// Moves on with every change to what a search sees, or to how it is split
    /// into segments (the result cache's key).
    generation: u64,
}

/// What a commit persists, decided under the lock.
pub(super) struct CommitPlan {
    pub checkpoint_lsn: u64,
    schema: Schema,
    to_flush: Vec<(usize, Arc<MemSegment>, String)>,
    /// The deletions of every segment the commit covers (all of them when it began), by position.
    deletes: Vec<DeleteBits>,
}

impl State {
    /// Opens the committed segments and replays the log after the checkpoint.
    pub fn recover(dir: &Directory) -> Result<(State, Schema, u64)> {
        if !dir.exists(manifest::FILE) {
            Manifest::new(Schema::default()).commit(dir)?;
        }
        let manifest = Manifest::read(dir)?;
        remove_unreferenced_files(dir, &manifest)?;
        let names: Vec<String> = manifest.segments.iter().map(|s| s.name.clone()).collect();
        let readers = open_segments(dir, &names)?;
        let deletes = read_deletes(dir, &manifest.segments)?;
        let segments = readers
            .into_iter()
            .zip(deletes)
            .zip(&manifest.segments)
            .map(|((r, d), e)| {
                let deletes = d.unwrap_or_else(|| DeleteBits::new(e.max_doc));
                Segment { data: Data::Disk(r), persisted: deletes.clone(), deletes, entry: Some(e.clone()) }
            })
            .collect();
        let schema = RwLock::new(manifest.schema.clone());
        let manifest_bloom = manifest.schema.bloom_params();
        let next_lsn = manifest.checkpoint_lsn + 1;
        let mut st = State {
            manifest,
            segments,
            bloom: manifest_bloom.clone(),
            tail: MemSegment::new("memory segment").with_bloom(manifest_bloom),
            tail_deletes: DeleteBits::new(0),
            next_lsn,
            generation: 0,
        };
        let checkpoint = st.manifest.checkpoint_lsn;
        let replayed = wal::replay(dir, checkpoint, wal::OnDamage::Fail, &mut |lsn, record| {
            st.next_lsn = lsn;
            match record {
                Record::Add(json) => {
                    let doc = parse_document(&json, &schema).map_err(|e| e.at_line(lsn))?;
                    let id = doc.id.clone();
                    st.add(&id, analyze(doc, &schema.read().unwrap()), 2048);
                }
                Record::Delete(id) => {
                    st.delete(&id);
                }
            }
            Ok(())
        })?;
        if let Some((file, intact)) = &replayed.torn {
            dir.truncate(file, *intact)?;
        }
        st.next_lsn = replayed.next_lsn;
        Ok((st, schema.into_inner().unwrap(), replayed.next_lsn))
    }

    pub fn bloom(&self) -> Option<&needle_codecs::bloom::BloomParams> {
        self.bloom.as_ref()
    }

    /// Applies an add (replacing any live document with the same `_id`); returns its sequence number.
    pub fn add(&mut self, id: &str, doc: AnalyzedDoc, tail_docs: u32) -> u64 {
        let lsn = self.take_lsn();
        self.delete_id(id);
        self.tail.add(doc);
        if self.tail.max_doc() >= tail_docs {
            self.freeze();
        }
        lsn
    }

    /// Applies a delete; returns its sequence number and whether a document was deleted.
    pub fn delete(&mut self, id: &str) -> (u64, bool) {
        let lsn = self.take_lsn();
        (lsn, self.delete_id(id))
    }

    /// See the field: a search under the same lock sees the same documents and statistics.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    fn take_lsn(&mut self) -> u64 {
        self.generation += 1;
        self.next_lsn += 1;
        self.next_lsn - 1
    }

    fn delete_id(&mut self, id: &str) -> bool {
        let mut found = false;
        while let Ok(Some((i, doc))) = find_id(&self.views(), id) {
            found = true;
            if i == self.segments.len() {
                self.tail_deletes.delete(doc);
            } else {
                self.segments[i].deletes.delete(doc);
            }
        }
        found
    }

    /// Moves the tail to the frozen segments and starts a new one.
    fn freeze(&mut self) {
        if self.tail.max_doc() == 0 {
            return;
        }
        self.generation += 1;
        let tail = std::mem::replace(
            &mut self.tail,
            MemSegment::new("memory segment").with_bloom(self.bloom.clone()),
        );
        let deletes = std::mem::replace(&mut self.tail_deletes, DeleteBits::new(0));
        self.segments.push(Segment {
            data: Data::Mem(Arc::new(tail)),
            deletes,
            entry: None,
            persisted: DeleteBits::new(0),
        });
    }

    /// Every segment with its deletions, the tail last.
    pub fn views(&self) -> Vec<View<'_>> {
        let mut v: Vec<View<'_>> =
            self.segments.iter().map(|s| (s.read(), Some(&s.deletes as &dyn Deletes))).collect();
        v.push((&self.tail, Some(&self.tail_deletes)));
        v
    }

    pub fn get(&self, id: &str) -> Result<Option<String>> {
        let views = self.views();
        match find_id(&views, id)? {
            Some((i, doc)) => Ok(Some(stored_document(views[i].0, doc)?.1)),
            None => Ok(None),
        }
    }

    pub fn contains(&self, id: &str) -> Result<bool> {
        Ok(find_id(&self.views(), id)?.is_some())
    }

    pub fn num_docs(&self) -> u64 {
        let deleted: u64 = self.segments.iter().map(|s| u64::from(s.deletes.count())).sum::<u64>()
            + u64::from(self.tail_deletes.count());
        self.views().iter().map(|(s, _)| u64::from(s.meta().max_doc)).sum::<u64>() - deleted
    }

    /// Bytes held by frozen in-memory segments (the tail included).
    pub fn frozen_bytes(&self) -> usize {
        let frozen: usize = self
            .segments
            .iter()
            .filter_map(|s| if let Data::Mem(m) = &s.data { Some(m.memory()) } else { None })
            .sum();
        frozen + self.tail.memory()
    }

    /// `_id`s of every live document matching `query`.
    pub fn matching_ids(&self, query: &str, schema: &Schema) -> Result<Vec<String>> {
        let q = parse_query(query, schema)?;
        let views = self.views();
        let all = self.num_docs() as usize;
        let top = Searcher::with_deletes(views.clone())
            .search(&q, SearchOptions { top_k: all, track_total_hits: u64::MAX, bloom: true })?;
        top.hits.iter().map(|h| stored_document(views[h.segment].0, h.doc).map(|(id, _)| id)).collect()
    }

    /// Freezes the tail and decides what the commit persists.
    pub fn begin_commit(&mut self, schema: &Schema) -> CommitPlan {
        self.freeze();
        let mut to_flush = Vec::new();
        for (i, s) in self.segments.iter().enumerate() {
            if let Data::Mem(m) = &s.data {
                to_flush.push((i, m.clone(), self.manifest.new_segment_name()));
            }
        }
        CommitPlan {
            checkpoint_lsn: self.next_lsn - 1,
            schema: schema.clone(),
            to_flush,
            deletes: self.segments.iter().map(|s| s.deletes.clone()).collect(),
        }
    }

    /// Writes the plan's in-memory segments to disk (without the lock).
    pub fn flush(dir: &Directory, plan: &CommitPlan) -> Result<Vec<Arc<SegmentReader>>> {
        let mut out = Vec::with_capacity(plan.to_flush.len());
        for (_, mem, name) in &plan.to_flush {
            mem.flush(dir, name)?;
            out.push(Arc::new(SegmentReader::open(dir, name)?));
        }
        Ok(out)
    }

    /// Puts the flushed segments in place of the in-memory ones and decides
    /// the deletion files and the manifest to write; the writing happens
    /// without the lock ([`PendingCommit::write`]), then [`State::complete`].
    pub fn finish_commit(&mut self, plan: CommitPlan, flushed: Vec<Arc<SegmentReader>>) -> PendingCommit {
        self.generation += 1;
        let mut retired = Vec::new();
        for ((i, mem, name), reader) in plan.to_flush.into_iter().zip(flushed) {
            let max_doc = reader.meta().max_doc;
            retired.push(std::mem::replace(&mut self.segments[i].data, Data::Disk(reader)));
            retired.push(Data::Mem(mem));
            self.segments[i].entry = Some(SegmentEntry { name, max_doc, deletes: None });
        }
        let mut next = self.manifest.clone();
        next.schema = plan.schema;
        next.checkpoint_lsn = plan.checkpoint_lsn;
        next.segments.clear();
        let generation = next.generation + 1;
        let mut deletes = Vec::new();
        for (i, bits) in plan.deletes.into_iter().enumerate() {
            let mut entry = self.segments[i].entry.clone().expect("flushed segments have entries");
            if bits.count() != self.segments[i].persisted.count() {
                let file = format!("{}.del.{generation}", entry.name);
                entry.deletes = Some(file.clone());
                deletes.push(PendingDeletes {
                    segment: entry.name.clone(),
                    file,
                    bits,
                    max_doc: entry.max_doc,
                });
            }
            next.segments.push(entry);
        }
        PendingCommit { manifest: next, deletes, obsolete: Vec::new(), retired }
    }

    /// Records what a written commit persisted; returns the files it made obsolete.
    pub fn complete(&mut self, done: PendingCommit) -> Vec<String> {
        let mut obsolete = done.obsolete;
        for d in done.deletes {
            let Some(s) =
                self.segments.iter_mut().find(|s| s.entry.as_ref().is_some_and(|e| e.name == d.segment))
            else {
                continue;
            };
            let entry = s.entry.as_mut().expect("found by its entry");
            // A merged segment's entry already names its file.
            obsolete.extend(entry.deletes.replace(d.file.clone()).filter(|old| *old != d.file));
            s.persisted = d.bits;
        }
        // A merge planned meanwhile may have taken a segment name.
        let next_segment = self.manifest.next_segment.max(done.manifest.next_segment);
        self.manifest = Manifest { next_segment, ..done.manifest };
        obsolete
    }

    /// Picks `factor` adjacent committed on-disk segments to merge (the run
    /// with the fewest documents) once there are at least `trigger` of them.
    pub fn plan_merge(&mut self, factor: usize, trigger: usize) -> Option<MergePlan> {
        let committed = self.segments.iter().take_while(|s| s.entry.is_some()).count();
        if committed < trigger.max(factor) || factor < 2 {
            return None;
        }
        let size = |s: &Segment| u64::from(s.read().meta().max_doc);
        let start = (0..=committed - factor)
            .min_by_key(|&i| self.segments[i..i + factor].iter().map(size).sum::<u64>())?;
        let sources = self.segments[start..start + factor]
            .iter()
            .map(|s| match &s.data {
                Data::Disk(r) => (r.clone(), s.persisted.clone()),
                Data::Mem(_) => unreachable!("committed segments are on disk"),
            })
            .collect();
        Some(MergePlan { sources, name: self.manifest.new_segment_name() })
    }

    /// Writes the merged segment (without the lock), dropping the documents
    /// whose deletion was committed; returns it and where each document went.
    pub fn run_merge(
        dir: &Directory,
        plan: &MergePlan,
        pace: &mut dyn FnMut(u64),
    ) -> Result<(Arc<SegmentReader>, DocMaps)> {
        let sources: Vec<(&SegmentReader, Option<&dyn Deletes>)> =
            plan.sources.iter().map(|(r, d)| (r.as_ref(), Some(d as &dyn Deletes))).collect();
        let (_, maps) = merge_segments_paced(dir, &plan.name, &sources, pace)?;
        Ok((Arc::new(SegmentReader::open(dir, &plan.name)?), maps))
    }

    /// Puts the merged segment in place of its sources, carrying over the
    /// deletions made since the merge began, and decides the manifest naming
    /// it, written without the lock ([`PendingCommit::write`]), then [`State::complete`].
    pub fn finish_merge(
        &mut self,
        plan: MergePlan,
        merged: Arc<SegmentReader>,
        maps: DocMaps,
    ) -> Result<PendingCommit> {
        self.generation += 1;
        let first = &plan.sources[0].0;
        let start = self
            .segments
            .iter()
            .position(|s| matches!(&s.data, Data::Disk(r) if Arc::ptr_eq(r, first)))
            .ok_or_else(|| Error::invalid("merged segments vanished"))?;
        let n = plan.sources.len();
        let max_doc = merged.meta().max_doc;
        // Deletions made while the merge ran: all of them stay in memory; those
        // a commit persisted meanwhile must stay persisted for the merged segment.
        let (mut deletes, mut persisted) = (DeleteBits::new(max_doc), DeleteBits::new(max_doc));
        for (seg, map) in self.segments[start..start + n].iter().zip(&maps) {
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
        let mut entry = SegmentEntry { name: plan.name.clone(), max_doc, deletes: None };
        let mut pending_deletes = Vec::new();
        if persisted.count() > 0 {
            let file = format!("{}.del.{}", plan.name, self.manifest.generation + 1);
            entry.deletes = Some(file.clone());
            pending_deletes.push(PendingDeletes {
                segment: plan.name.clone(),
                file,
                bits: persisted.clone(),
                max_doc,
            });
        }
        let mut next = self.manifest.clone();
        let at = next
            .segments
            .iter()
            .position(|e| Some(e) == self.segments[start].entry.as_ref())
            .expect("committed");
        next.segments.splice(at..at + n, [entry.clone()]);
        let merged_segment = Segment { data: Data::Disk(merged), deletes, entry: Some(entry), persisted };
        let old: Vec<Segment> = self.segments.splice(start..start + n, [merged_segment]).collect();
        let (mut obsolete, mut retired) = (Vec::new(), Vec::new());
        for s in old {
            let e = s.entry.expect("committed");
            obsolete.extend(segment_file_names(&e.name));
            obsolete.extend(e.deletes);
            retired.push(s.data);
        }
        Ok(PendingCommit { manifest: next, deletes: pending_deletes, obsolete, retired })
    }

    /// On-disk segments and all segments, for tests and statistics.
    pub fn segment_counts(&self) -> (usize, usize) {
        (self.segments.iter().filter(|s| matches!(s.data, Data::Disk(_))).count(), self.segments.len() + 1)
    }
}

/// A deletion file a commit writes.
struct PendingDeletes {
    segment: String,
    file: String,
    bits: DeleteBits,
    max_doc: u32,
}

/// What a commit or a merge writes after the lock is released: deletion files, then the manifest.
pub(super) struct PendingCommit {
    manifest: Manifest,
    deletes: Vec<PendingDeletes>,
    /// Files the commit makes obsolete besides replaced deletion files.
    obsolete: Vec<String>,
    /// Segments replaced: freeing a large in-memory segment takes long enough
    /// that it must not happen under the lock.
    retired: Vec<Data>,
}

impl PendingCommit {
    /// Writes the deletion files and commits the manifest (write, fsync, rename, fsync the folder).
    pub fn write(&mut self, dir: &Directory) -> Result<()> {
        for d in &self.deletes {
            let mut w = dir.create(&d.file)?;
            w.write_all(&d.bits.encode(d.max_doc))?;
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

/// A merge decided under the lock: its sources (with their committed deletions) and the new name.
pub(super) struct MergePlan {
    sources: Vec<(Arc<SegmentReader>, DeleteBits)>,
    name: String,
}

fn segment_file_names(name: &str) -> Vec<String> {
    ["post", "terms", "norms", "docs", "meta"].iter().map(|ext| format!("{name}.{ext}")).collect()
}
