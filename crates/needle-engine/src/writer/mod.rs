//! The writer: the one thing that changes an index (SPIRIT's pipeline).
//! It holds the folder's writer lock for its whole life, so a second writer
//! in any process fails at once with [`Error::Locked`]. Opening one reloads
//! the index as it is on disk and recovers the write-ahead log (replays it
//! into memory, cuts off a torn tail), before anything else may write.
//!
//! A document is searchable the moment `add` returns (it is in the
//! in-memory tail that every new [`crate::Searcher`] sees); durable too in
//! `durable` mode, once its log record is fsynced (group commit). A
//! background thread commits (flushes in-memory segments, writes deletions
//! and a manifest whose `checkpoint_lsn` says which log records it covers)
//! when memory, the log's size or the time since the last commit says so,
//! and merges committed segments at a bounded write rate. After a failed
//! write or fsync the index refuses writes ([`Error::Poisoned`]) and stays
//! readable.

mod background;
mod commit;
mod import;
mod merge;

use std::fs::File;
use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use needle_codecs::SegmentReader;
use needle_core::{Error, Result};
use needle_storage::Directory;

use self::import::{delete_segment, run_import};
pub use self::import::{read_line_within, ImportOptions, ImportProgress, ImportSummary, MAX_LINE_BYTES};
use self::merge::{run_merge, MergePolicy};
use crate::document::{analyze, parse_document};
use crate::index::{Index, LOCK_FILE};
use crate::ingest_log::IngestLog;
use crate::manifest::Manifest;
use crate::schema::{Schema, SharedSchema};
use crate::searcher::Searcher;
pub use crate::segments::IfCurrent;
use crate::segments::Written;
use crate::wal::{self, OnDamage, Record, Replayed, Wal};

/// The longest gap of an ingest log taken as writes that never happened
/// (a longer one is damage): each skipped number costs a write-ahead log record.
const MAX_SKIP: u64 = 1 << 32;

/// What survives a crash or a close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Nothing is persisted unless `commit` is called.
    Volatile,
    /// Everything is persisted by a clean `close`.
    Graceful,
    /// Every acknowledged change is in the fsynced write-ahead log.
    Durable,
}

impl Durability {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "volatile" => Some(Self::Volatile),
            "graceful" => Some(Self::Graceful),
            "durable" => Some(Self::Durable),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct WriterOptions {
    pub durability: Durability,
    /// Documents in the tail before it is frozen.
    pub tail_docs: u32,
    /// Bytes of in-memory segments before the background thread commits them
    /// (in-place updates held in memory count too; past a quarter of it the
    /// largest are folded into their segment by a merge); writers wait when
    /// twice this much is held (backpressure).
    pub memory_bytes: usize,
    /// Committed on-disk segments that trigger a background merge...
    pub merge_trigger: usize,
    /// ... of this many adjacent ones (those with the fewest documents).
    pub merge_factor: usize,
    /// Write rate a background merge keeps under, so queries keep their latency.
    pub merge_bytes_per_sec: u64,
    /// The background thread's nice value (0..=19): commits and merges get the
    /// CPU only after searches and writes, which matters on a machine with few cores.
    pub background_nice: i32,
    /// A commit once the write-ahead log holds this many bytes since the last
    /// one, so that recovery replays at most this much.
    pub checkpoint_bytes: u64,
    /// A commit at least this often while there are changes.
    pub checkpoint_interval: Duration,
    /// Recovery drops a damaged write-ahead log's records from the damage
    /// on (reported in [`IndexWriter::replayed`]), instead of failing.
    pub truncate_damaged_log: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            durability: Durability::Durable,
            tail_docs: crate::segments::TAIL_DOCS,
            memory_bytes: 256 << 20,
            merge_trigger: 8,
            merge_factor: 4,
            merge_bytes_per_sec: 64 << 20,
            background_nice: 10,
            checkpoint_bytes: 32 << 20,
            checkpoint_interval: Duration::from_secs(30),
            truncate_damaged_log: false,
        }
    }
}

/// What a write of one document did: Elasticsearch's `result`, `_version` and `_seq_no`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    pub id: String,
    /// 1 for a new document, one more than the replaced one's for a replacement;
    /// for a delete, one more than the deleted document's.
    pub version: u64,
    /// The write's place in the index's order of changes, from 0.
    pub seq_no: u64,
    /// Whether the `_id` was new (no live document had it).
    pub created: bool,
}

impl WriteOutcome {
    fn of(id: String, written: Written) -> Self {
        WriteOutcome {
            id,
            version: written.version.version,
            seq_no: written.version.shown_seq_no(),
            created: written.previous.is_none(),
        }
    }
}

/// An index's writer; see the module documentation.
pub struct IndexWriter {
    core: Arc<Core>,
    background: Option<JoinHandle<()>>,
}

pub(crate) struct Core {
    index: Index,
    /// The folder's writer lock, released when the last holder of the core drops.
    _lock: File,
    options: WriterOptions,
    wal: Option<Wal>,
    /// The log beyond the index's disk that a write must reach to be durable, if any.
    ingest: OnceLock<Arc<dyn IngestLog>>,
    /// One commit, or one merge swap, at a time.
    committing: Mutex<()>,
    /// One merge at a time, from plan to swap: two merges planned together
    /// (the background's and `merge`'s) could pick the same segments, and
    /// the second to finish would find its sources gone.
    merging: Mutex<()>,
    /// Set after a failed persist: writes are refused.
    failed: Mutex<Option<String>>,
    wake: (Mutex<bool>, Condvar),
    stop: AtomicBool,
    last_commit: Mutex<Instant>,
}

impl IndexWriter {
    pub(crate) fn open(index: Index, options: WriterOptions) -> Result<IndexWriter> {
        let dir = index.shared.dir.clone();
        let lock = dir.lock(LOCK_FILE)?;
        let on_damage = if options.truncate_damaged_log { OnDamage::Truncate } else { OnDamage::Fail };
        index.reload(on_damage)?;
        let replayed = index.replayed();
        if let Some((file, intact)) = &replayed.torn {
            dir.truncate(file, *intact)?;
        }
        let core = Core {
            _lock: lock,
            wal: None,
            ingest: OnceLock::new(),
            committing: Mutex::new(()),
            merging: Mutex::new(()),
            failed: Mutex::new(None),
            wake: (Mutex::new(false), Condvar::new()),
            stop: AtomicBool::new(false),
            last_commit: Mutex::new(Instant::now()),
            options,
            index,
        };
        if replayed.dropped.is_some() {
            // The records after the damage are given up: commit what came
            // before it, then no log file may be read again.
            core.commit()?;
            wal::remove_all(&dir)?;
        }
        remove_unreferenced_files(&dir, &core.index.shared.set.lock().manifest)?;
        let next_lsn = core.index.shared.set.lock().next_lsn;
        let wal = match core.options.durability {
            Durability::Durable => Some(Wal::create(&dir, next_lsn)?),
            _ => None,
        };
        let core = Arc::new(Core { wal, ..core });
        let worker = core.clone();
        let background = std::thread::Builder::new()
            .name("needle-flush".into())
            .spawn(move || worker.background())
            .map_err(|e| Error::Resources { what: format!("cannot start the flush thread: {e}") })?;
        Ok(IndexWriter { core, background: Some(background) })
    }

    /// What recovery read from the write-ahead log when this writer opened.
    pub fn replayed(&self) -> Replayed {
        self.core.index.replayed()
    }

    pub fn index(&self) -> &Index {
        &self.core.index
    }

    /// A snapshot of everything added so far.
    pub fn searcher(&self) -> Searcher {
        self.core.index.searcher()
    }

    /// Adds a document (a JSON object with an optional `id`), replacing any
    /// document with the same `_id`. It is searchable when this returns, and
    /// durable too in `durable` mode. Returns its `_id`.
    pub fn add(&self, json: &str) -> Result<String> {
        let (id, seq_no) = self.add_deferred(json)?;
        self.durable_through(seq_no)?;
        Ok(id)
    }

    /// [`IndexWriter::add`] of a document given as a JSON value.
    pub fn add_value(&self, doc: &serde_json::Value) -> Result<String> {
        self.add(&doc.to_string())
    }

    /// [`IndexWriter::add`] of a document built with [`crate::Document`].
    pub fn add_document(&self, doc: &crate::Document) -> Result<String> {
        self.add(&doc.to_json())
    }

    /// [`IndexWriter::add`] without waiting for the write-ahead log: the
    /// document is searchable when this returns; it is durable once
    /// [`IndexWriter::durable_through`] its sequence number returns. One
    /// writer thread can so keep adding while earlier adds wait for one shared
    /// fsync (group commit). Returns the `_id` and the sequence number.
    pub fn add_deferred(&self, json: &str) -> Result<(String, u64)> {
        let (id, written) = self.core.write_doc(None, json, IfCurrent::Any)?;
        Ok((id, written.seq_no()))
    }

    /// Indexes `source` (a JSON object) as `_id` `id` (a generated one when
    /// `None`; a field `id` of the source is then stored, not indexed),
    /// replacing the current document with that `_id` if `condition` holds
    /// for it (else [`Error::Conflict`], and nothing changes). Searchable and,
    /// in `durable` mode, durable when this returns.
    pub fn put(&self, id: Option<&str>, source: &str, condition: IfCurrent) -> Result<WriteOutcome> {
        let outcome = self.put_deferred(id, source, condition)?;
        self.durable_through(outcome.seq_no)?;
        Ok(outcome)
    }

    /// [`IndexWriter::put`] without waiting for the write-ahead log: durable
    /// once [`IndexWriter::durable_through`] its `seq_no` returns (many writes
    /// of a bulk request then share one fsync).
    pub fn put_deferred(&self, id: Option<&str>, source: &str, condition: IfCurrent) -> Result<WriteOutcome> {
        let id = match id {
            Some(id) => id.to_string(),
            None => crate::document::generated_id(),
        };
        let (id, written) = self.core.write_doc(Some(&id), source, condition)?;
        Ok(WriteOutcome::of(id, written))
    }

    /// Deletes the document with `_id` `id` if `condition` holds for it;
    /// `None` when there was none.
    pub fn remove(&self, id: &str, condition: IfCurrent) -> Result<Option<WriteOutcome>> {
        let (outcome, seq_no) = self.remove_deferred(id, condition)?;
        self.durable_through(seq_no)?;
        Ok(outcome)
    }

    /// [`IndexWriter::remove`] without waiting for the write-ahead log;
    /// also returns the sequence number to wait for.
    pub fn remove_deferred(&self, id: &str, condition: IfCurrent) -> Result<(Option<WriteOutcome>, u64)> {
        let written = self.core.delete(id, condition)?;
        Ok((written.previous.map(|_| WriteOutcome::of(id.to_string(), written)), written.seq_no()))
    }

    /// Sets numeric field `field` (a long, double or date field; or a binary
    /// field, its value base64 text) of
    /// document `id` to `value` (as a document would give it) in place, if
    /// `condition` holds for it: the document keeps its place and its other
    /// fields, and only the value is written (see `updates`), at a cost that
    /// does not grow with the segment. Searchable and, in `durable` mode,
    /// durable when this returns. A missing document, a field of another kind
    /// or a value that does not fit it is an error, and nothing changes.
    pub fn update_numeric(
        &self,
        id: &str,
        field: &str,
        value: &serde_json::Value,
        condition: IfCurrent,
    ) -> Result<WriteOutcome> {
        let written = self.core.update(id, &[(field, value)], condition)?;
        let outcome = WriteOutcome::of(id.to_string(), written);
        self.durable_through(outcome.seq_no)?;
        Ok(outcome)
    }

    /// Sets binary field `field` of document `id` to `value` in place, as
    /// [`IndexWriter::update_numeric`] sets a number (the document's source
    /// shows it as base64 text, as a document would give it).
    pub fn update_binary(
        &self,
        id: &str,
        field: &str,
        value: &[u8],
        condition: IfCurrent,
    ) -> Result<WriteOutcome> {
        let text = serde_json::Value::String(crate::values::base64_text(value));
        self.update_numeric(id, field, &text, condition)
    }

    /// [`IndexWriter::update_numeric`] of every field of `values` in one
    /// write (one new version), not waiting for the write-ahead log.
    pub fn update_values_deferred(
        &self,
        id: &str,
        values: &serde_json::Map<String, serde_json::Value>,
        condition: IfCurrent,
    ) -> Result<WriteOutcome> {
        let written = self.core.update(id, &crate::values::named_values(values), condition)?;
        Ok(WriteOutcome::of(id.to_string(), written))
    }

    /// Returns once every change up to `_seq_no` `seq_no` is durable (at
    /// once outside `durable` mode); a failed fsync poisons the index.
    pub fn durable_through(&self, seq_no: u64) -> Result<()> {
        self.core.durable(seq_no + 1)
    }

    /// Sends every later write to `log` too (see `ingest_log`): a write is
    /// then durable once the log holds it, and refused while the log is
    /// known to fail. An index has one ingest log, for good.
    pub fn attach_log(&self, log: Arc<dyn IngestLog>) -> Result<()> {
        self.core.ingest.set(log).map_err(|_| Error::invalid("the index already has an ingest log"))
    }

    /// The sequence number (`_seq_no` + 1) the index's next write takes:
    /// the first write of an ingest log it does not have.
    pub fn next_lsn(&self) -> u64 {
        self.core.index.shared.set.lock().next_lsn
    }

    /// Applies write `lsn` of the ingest log (a record as `ingest_log::encode`
    /// made it), if the index does not have it yet: `Ok(false)` when it has.
    /// Writes apply in order: one past [`IndexWriter::next_lsn`] is an error
    /// (a gap), as is a record that does not decode or apply; neither changes anything.
    pub fn apply_logged(&self, lsn: u64, record: &[u8]) -> Result<bool> {
        let core = &self.core;
        core.check_writable()?;
        let record = crate::ingest_log::decode(record)?;
        let shared = &core.index.shared;
        let mut set = shared.set.lock();
        let next = set.next_lsn;
        if lsn < next {
            return Ok(false);
        }
        if lsn > next {
            let what = format!("write {lsn} follows write {}, which the index never had", next - 1);
            return Err(Error::corrupt("ingest log", what));
        }
        set.apply(record.clone(), &shared.schema, core.options.tail_docs)?;
        if let Some(wal) = &core.wal {
            wal.append(lsn, &record);
        }
        let due = core.over_budget(&set);
        drop(set);
        core.nudge_if(due);
        Ok(true)
    }

    /// Takes the sequence numbers up to `through` that the index does not
    /// have yet, as writes that change nothing (the ingest log's gap: writes a
    /// failed node took but never logged, so never acknowledged); returns how
    /// many. They are kept in the write-ahead log, whose numbers run on.
    pub fn skip_logged(&self, through: u64) -> Result<u64> {
        let core = &self.core;
        core.check_writable()?;
        let shared = &core.index.shared;
        let mut set = shared.set.lock();
        let skipped = (through + 1).saturating_sub(set.next_lsn);
        if skipped > MAX_SKIP {
            let what = format!("a gap of {skipped} writes after write {}", set.next_lsn - 1);
            return Err(Error::corrupt("ingest log", what));
        }
        for _ in 0..skipped {
            let lsn = set.next_lsn;
            set.apply(Record::Skip, &shared.schema, core.options.tail_docs)?;
            if let Some(wal) = &core.wal {
                wal.append(lsn, &Record::Skip);
            }
        }
        Ok(skipped)
    }

    /// Deletes the document with `_id` `id`; returns whether there was one.
    pub fn delete(&self, id: &str) -> Result<bool> {
        Ok(self.remove(id, IfCurrent::Any)?.is_some())
    }

    /// Deletes every document matching `query` in a snapshot taken now (an
    /// `_id` added again meanwhile is deleted too); returns how many.
    pub fn delete_by_query(&self, query: &str) -> Result<u64> {
        let searcher = self.searcher();
        let matched = searcher.matching(&searcher.parse(query)?)?;
        for m in &matched {
            self.delete(&m.id)?;
        }
        Ok(matched.len() as u64)
    }

    /// Persists everything added so far and commits it.
    pub fn commit(&self) -> Result<()> {
        self.core.commit()
    }

    /// Adds the documents of `input` (JSON lines) as new segments, built on
    /// several threads and committed together when all are written; each
    /// replaces the documents with its `_id` (a later line replaces an
    /// earlier one). A bad line fails the import and changes nothing, unless
    /// `options.skip_bad` skips it.
    pub fn import(
        &self,
        input: &mut dyn BufRead,
        options: &ImportOptions,
        progress: &ImportProgress,
    ) -> Result<ImportSummary> {
        let core = &self.core;
        core.check_writable()?;
        let shared = &core.index.shared;
        // The import types new fields in a schema of its own: a failed import changes nothing.
        let mut schema = Schema::clone(&shared.schema.current());
        let known = schema.fields.len();
        if let Some(on) = options.bloom {
            schema.bloom.enabled = on;
        }
        let schema = SharedSchema::new(schema);
        let mut names = || shared.set.lock().manifest.new_segment_name();
        let (created, summary) = run_import(&shared.dir, &schema, input, &mut names, options, progress)?;
        let committed = self.adopt_schema(&schema.current(), known).and_then(|()| {
            let opened = created
                .iter()
                .map(|n| SegmentReader::open_with(&shared.dir, n, shared.options.verify).map(Arc::new))
                .collect::<Result<Vec<_>>>()?;
            core.commit_with(opened, created.clone())
        });
        if let Err(e) = committed {
            created.iter().for_each(|n| delete_segment(&shared.dir, n));
            return Err(e);
        }
        Ok(summary)
    }

    /// Makes the fields an import added (those of `imported` from number
    /// `known` on) and its filter setting the index's. The import's segments
    /// number fields as its schema did: fields added meanwhile by other writes
    /// that took those numbers fail the import.
    fn adopt_schema(&self, imported: &Schema, known: usize) -> Result<()> {
        let shared = &self.core.index.shared;
        let merged = shared.schema.add_fields(&imported.fields[known..])?;
        for (i, def) in imported.fields.iter().enumerate().skip(known) {
            if merged.field_id(&def.name) != Some(i as needle_core::FieldId) {
                return Err(Error::invalid_field(
                    &def.name,
                    "other writes added fields while the import ran; import again",
                ));
            }
        }
        if merged.bloom != imported.bloom {
            let bloom = imported.bloom.clone();
            let schema = shared.schema.update(|s| s.bloom = bloom);
            shared.set.lock().bloom = schema.bloom_params();
        }
        Ok(())
    }

    /// Adds the fields of `mapping` the index does not have, changes those
    /// it has as a mapping update may (see `Schema::check_update`: a field's
    /// search analyzers and `ignore_above`; any other change is an error
    /// naming it, and nothing changes), and commits so they stay. Returns
    /// the schema now.
    pub fn add_mapping(&self, mapping: &Schema) -> Result<Arc<Schema>> {
        let schema = self.core.index.shared.schema.update_fields(&mapping.fields)?;
        self.core.commit()?;
        Ok(schema)
    }

    /// Commits, then merges committed segments until at most `max_segments`
    /// remain. Returns how many segments were rewritten.
    pub fn merge(&self, max_segments: usize) -> Result<usize> {
        self.commit()?;
        let mut rewritten = 0;
        while let Some(n) = self.core.merge_once(MergePolicy::AtMost(max_segments), &mut |_| {})? {
            rewritten += n;
        }
        Ok(rewritten)
    }

    /// Stops the background thread; in `graceful` and `durable` modes, commits first.
    pub fn close(mut self) -> Result<()> {
        let result = match self.core.options.durability {
            Durability::Volatile => Ok(()),
            _ => self.core.commit(),
        };
        self.stop_background();
        result
    }

    fn stop_background(&mut self) {
        self.core.stop.store(true, Ordering::SeqCst);
        self.core.nudge();
        if let Some(handle) = self.background.take() {
            let _ = handle.join();
        }
    }
}

impl Drop for IndexWriter {
    fn drop(&mut self) {
        self.stop_background();
    }
}

impl Core {
    fn dir(&self) -> &Directory {
        &self.index.shared.dir
    }

    /// Parses and analyzes a document, then writes it under the lock and
    /// logs it (not waiting for the log): returns its `_id` and what the write did.
    fn write_doc(&self, id: Option<&str>, json: &str, condition: IfCurrent) -> Result<(String, Written)> {
        self.check_write()?;
        let json = json.trim();
        let shared = &self.index.shared;
        let (doc, schema) = parse_document(json, &shared.schema, id)?;
        let id = doc.id.clone();
        // An `_id` the source's `id` gave is found there again by a replay, which then
        // indexes the same fields (given the `_id`, it would index `id` as a field).
        let logged_id = (!doc.id_in_source).then(|| id.clone());
        let mut analyzed = analyze(doc, &schema);
        // The segment's share of the work, done before the lock that searches wait for.
        analyzed.prepare(schema.bloom_params().as_ref());
        self.wait_for_memory()?;
        let (written, due) = {
            let mut set = shared.set.lock();
            self.check_writable()?;
            let written = set.write(&id, Some(analyzed), condition, self.options.tail_docs)?;
            self.log(written.lsn, || Record::Add { id: logged_id.clone(), json: json.to_string() });
            (written, self.over_budget(&set))
        };
        self.nudge_if(due);
        Ok((id, written))
    }

    /// Deletes `id` under the lock if `condition` holds, and logs it when there was a document.
    fn delete(&self, id: &str, condition: IfCurrent) -> Result<Written> {
        self.check_write()?;
        let mut set = self.index.shared.set.lock();
        self.check_writable()?;
        let written = set.write(id, None, condition, self.options.tail_docs)?;
        self.log(written.lsn, || Record::Delete(id.to_string()));
        Ok(written)
    }

    /// Updates numeric values in place under the lock, and logs it.
    fn update(
        &self,
        id: &str,
        values: &[(&str, &serde_json::Value)],
        condition: IfCurrent,
    ) -> Result<Written> {
        self.check_write()?;
        let changes = crate::values::field_updates(&self.index.shared.schema.current(), values)?;
        self.wait_for_memory()?;
        let mut set = self.index.shared.set.lock();
        self.check_writable()?;
        let written = set.update(id, &changes, condition)?;
        self.log(written.lsn, || {
            let values: serde_json::Map<_, _> =
                values.iter().map(|&(field, value)| (field.to_string(), value.clone())).collect();
            Record::Update { id: id.to_string(), values: serde_json::Value::Object(values).to_string() }
        });
        let due = self.over_budget(&set);
        drop(set);
        self.nudge_if(due);
        Ok(written)
    }

    /// Logs write `lsn` (under the lock, so in order): to the write-ahead
    /// log in durable mode, and to the ingest log when there is one.
    fn log(&self, lsn: u64, record: impl FnOnce() -> Record) {
        let ingest = self.ingest.get();
        if self.wal.is_none() && ingest.is_none() {
            return;
        }
        let record = record();
        if let Some(wal) = &self.wal {
            wal.append(lsn, &record);
        }
        if let Some(log) = ingest {
            log.append(lsn, crate::ingest_log::encode(&record));
        }
    }

    /// Whether a write may be taken: the index is writable and its ingest
    /// log, if any, is not known to fail.
    fn check_write(&self) -> Result<()> {
        self.check_writable()?;
        match self.ingest.get() {
            Some(log) => log.check(),
            None => Ok(()),
        }
    }

    fn check_writable(&self) -> Result<()> {
        match self.failed.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            Some(cause) => Err(Error::Poisoned { cause: cause.clone() }),
            None => Ok(()),
        }
    }

    /// In durable mode, waits until the write-ahead log holds `lsn` (a
    /// failure poisons the index); with an ingest log, until it holds `lsn` too.
    fn durable(&self, lsn: u64) -> Result<()> {
        if let Some(wal) = &self.wal {
            wal.sync_to(lsn).inspect_err(|e| self.poison(e))?;
        }
        match self.ingest.get() {
            Some(log) => log.wait(lsn),
            None => Ok(()),
        }
    }

    fn poison(&self, e: &Error) {
        self.failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| e.to_string());
    }

    /// Wakes the background thread when `due`: a wake on every write
    /// would cost each one a system call and the thread a needless round.
    fn nudge_if(&self, due: bool) {
        if due {
            self.nudge();
        }
    }

    fn nudge(&self) {
        let (lock, cv) = &self.wake;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_all();
    }

    /// Backpressure: writers wait while in-memory segments and updates exceed
    /// twice the budget, and give up if the background thread can no longer
    /// persist (or fold) them.
    fn wait_for_memory(&self) -> Result<()> {
        while self.index.shared.set.lock().memory_bytes() > 2 * self.options.memory_bytes {
            self.check_writable()?;
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            self.nudge();
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    fn commit(&self) -> Result<()> {
        self.commit_with(Vec::new(), Vec::new())
    }

    /// Commits everything in memory, with `imported` segments (named `names`) added after it.
    fn commit_with(&self, imported: Vec<Arc<SegmentReader>>, names: Vec<String>) -> Result<()> {
        let _one = self.committing.lock().unwrap_or_else(|p| p.into_inner());
        self.check_writable()?;
        let shared = &self.index.shared;
        let plan = {
            let mut set = shared.set.lock();
            let schema = shared.schema.current();
            if imported.is_empty() && !set.has_changes() && *schema == set.manifest.schema {
                return Ok(());
            }
            let plan = set.begin_commit(&schema, imported, names)?;
            if let Some(wal) = &self.wal {
                wal.rotate(plan.checkpoint_lsn + 1).inspect_err(|e| self.poison(e))?;
            }
            plan
        };
        let flushed =
            commit::flush(self.dir(), &plan, shared.options.verify).inspect_err(|e| self.poison(e))?;
        let mut pending = shared.set.lock().finish_commit(plan, flushed);
        // Searches and writes go on while the files are written and fsynced.
        pending.free_retired();
        pending.write(self.dir()).inspect_err(|e| self.poison(e))?;
        let checkpoint = pending.checkpoint_lsn();
        let obsolete = shared.set.lock().complete(pending);
        *self.last_commit.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
        wal::remove_through(self.dir(), checkpoint)?;
        self.remove(&obsolete)
    }

    /// Deletes files no commit refers to any more.
    fn remove(&self, files: &[String]) -> Result<()> {
        files.iter().try_for_each(|f| self.dir().delete(f))
    }

    /// Runs the next merge `policy` asks for, `pace` called with the bytes
    /// written so far; returns how many segments it rewrote, or `None`.
    fn merge_once(&self, policy: MergePolicy, pace: &mut dyn FnMut(u64)) -> Result<Option<usize>> {
        let shared = &self.index.shared;
        let _merging = self.merging.lock().unwrap_or_else(|p| p.into_inner());
        let Some(plan) = shared.set.lock().plan_merge(policy, shared.schema.current()) else {
            return Ok(None);
        };
        let (merged, maps) =
            run_merge(self.dir(), &plan, shared.options.verify, pace).inspect_err(|e| self.poison(e))?;
        let _one = self.committing.lock().unwrap_or_else(|p| p.into_inner());
        let finished = shared.set.lock().finish_merge(plan, merged, maps);
        let mut pending = finished.inspect_err(|e| self.poison(e))?;
        let rewritten = pending.retired.len();
        pending.free_retired();
        pending.write(self.dir()).inspect_err(|e| self.poison(e))?;
        let obsolete = shared.set.lock().complete(pending);
        self.remove(&obsolete)?;
        Ok(Some(rewritten))
    }
}

/// Deletes segment, deletion, updates and temporary files no commit refers to (left by
/// an interrupted import, merge or commit, or replaced by a newer
/// generation). Only a writer, holding the lock, may.
fn remove_unreferenced_files(dir: &Directory, manifest: &Manifest) -> Result<()> {
    let live: std::collections::HashSet<&str> = manifest.segments.iter().map(|s| s.name.as_str()).collect();
    let live_generations: std::collections::HashSet<&str> = manifest
        .segments
        .iter()
        .flat_map(|s| s.deletes.iter().chain(&s.updates))
        .map(String::as_str)
        .collect();
    for file in dir.list()? {
        let Some((stem, rest)) = file.split_once('.') else { continue };
        let stale_segment = stem.starts_with("seg_") && !live.contains(stem);
        let generation = rest.starts_with("del.") || rest.starts_with("upd.");
        let stale_generation = generation && !live_generations.contains(file.as_str());
        if stale_segment || stale_generation || file.ends_with(".tmp") {
            dir.delete(&file)?;
        }
    }
    Ok(())
}
