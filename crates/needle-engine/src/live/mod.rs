//! A live index: documents are searchable the moment `add` returns, while a
//! background thread persists and merges (SPIRIT's pipeline).
//!
//! State, all behind one reader-writer lock per index:
//! - the *tail*: an in-memory segment that `add` appends to;
//! - *frozen* in-memory segments: former tails, immutable, waiting to be flushed;
//! - on-disk segments, named by the manifest;
//! - a deletion bitset per segment.
//!
//! A search holds the read lock for its whole run, so it sees one consistent
//! snapshot; a write holds the write lock for one document, so an update
//! (delete the old version, add the new) is seen whole or not at all. What
//! searches wait for is kept short: a document is analyzed and grouped by term
//! (its phrase filters filled) before the lock, so under it the tail files one
//! posting per distinct term; commits and merges write, fsync and free memory
//! outside it and take it only to swap segments in. Nothing on the query path
//! touches the filesystem: segment files stay open.
//!
//! Durability ([`Durability`]): `volatile` keeps nothing after a crash or
//! close (a `commit` still persists), `graceful` persists on `close`,
//! `durable` logs every change in the write-ahead log ([`wal`]) and
//! acknowledges it only once fsynced (group commit). A commit freezes the
//! tail, flushes every frozen segment, writes the deletions and a new manifest
//! whose `checkpoint_lsn` says which log records it covers; recovery replays
//! the records after it. After a failed fsync the index refuses writes and
//! stays readable.

mod state;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::Duration;

use needle_core::{Error, Result};
use needle_storage::cache::CacheStats;
use needle_storage::Directory;

use self::state::State;
use crate::document::{analyze, parse_document};
use crate::result_cache::ResultCache;
use crate::schema::Schema;
use crate::search::{run_search, SearchRequest, SearchResponse};
use crate::wal::{self, Record, Wal};

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
pub struct LiveOptions {
    pub durability: Durability,
    /// Documents in the tail before it is frozen.
    pub tail_docs: u32,
    /// Bytes of frozen in-memory segments before the background thread flushes them;
    /// writers wait when twice this much is waiting (backpressure).
    pub memory_bytes: usize,
    /// Committed on-disk segments that trigger a background merge...
    pub merge_trigger: usize,
    /// ... of this many adjacent ones (those with the fewest documents).
    pub merge_factor: usize,
    /// Write rate a background merge keeps under, so queries keep their latency.
    pub merge_bytes_per_sec: u64,
    /// The background thread's nice value (0..=19): flushes and merges get the CPU
    /// only after searches and writes, which matters on a machine with few cores.
    pub background_nice: i32,
    /// Bytes of search responses kept (0: no result cache); see [`ResultCache`].
    pub result_cache_bytes: usize,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            durability: Durability::Durable,
            tail_docs: 2048,
            memory_bytes: 256 << 20,
            merge_trigger: 8,
            merge_factor: 4,
            merge_bytes_per_sec: 64 << 20,
            background_nice: 10,
            result_cache_bytes: 0,
        }
    }
}

struct Inner {
    dir: Directory,
    options: LiveOptions,
    /// The phrase filters' parameters of every segment of this index.
    bloom: Option<needle_codecs::bloom::BloomParams>,
    schema: RwLock<Schema>,
    /// Searches wait for a writer queued here (so writers are not starved),
    /// except `contains`, a lookup short enough to go ahead of it.
    state: parking_lot::RwLock<State>,
    wal: Option<Wal>,
    results: Option<ResultCache>,
    /// One commit at a time.
    committing: Mutex<()>,
    /// Set after a failed persist: writes are refused.
    failed: Mutex<Option<String>>,
    wake: (Mutex<bool>, Condvar),
    stop: AtomicBool,
}

/// A live index; see the module documentation.
pub struct LiveIndex {
    inner: Arc<Inner>,
    background: Option<JoinHandle<()>>,
}

impl LiveIndex {
    /// Opens (or creates) the index at `path` and replays its write-ahead log.
    pub fn open(path: &Path, options: LiveOptions) -> Result<LiveIndex> {
        let dir = Directory::open(path, true)?;
        let (state, schema, next_lsn) = State::recover(&dir)?;
        let wal = match options.durability {
            Durability::Durable => Some(Wal::create(&dir, next_lsn)?),
            _ => None,
        };
        let results = (options.result_cache_bytes > 0).then(|| ResultCache::new(options.result_cache_bytes));
        let inner = Arc::new(Inner {
            dir,
            options,
            results,
            bloom: state.bloom().cloned(),
            schema: RwLock::new(schema),
            state: parking_lot::RwLock::new(state),
            wal,
            committing: Mutex::new(()),
            failed: Mutex::new(None),
            wake: (Mutex::new(false), Condvar::new()),
            stop: AtomicBool::new(false),
        });
        let worker = inner.clone();
        let background = std::thread::Builder::new()
            .name("needle-flush".into())
            .spawn(move || worker.background())
            .map_err(|e| Error::Resources { what: format!("cannot start the flush thread: {e}") })?;
        Ok(LiveIndex { inner, background: Some(background) })
    }

    /// Adds a document (a JSON object with an optional `id`), replacing any
    /// document with the same `_id`. It is searchable when this returns, and
    /// durable too in `durable` mode. Returns its `_id`.
    pub fn add(&self, json: &str) -> Result<String> {
        let (id, lsn) = self.add_deferred(json)?;
        self.durable_through(lsn)?;
        Ok(id)
    }

    /// [`LiveIndex::add`] without waiting for the write-ahead log: the
    /// document is searchable when this returns; it is durable once
    /// [`LiveIndex::durable_through`] its sequence number returns. One writer
    /// can so keep adding while earlier adds wait for one shared fsync (group
    /// commit). Returns the `_id` and the sequence number.
    pub fn add_deferred(&self, json: &str) -> Result<(String, u64)> {
        let doc = parse_document(json, &self.inner.schema)?;
        let id = doc.id.clone();
        let mut analyzed = analyze(doc, &self.inner.schema.read().unwrap());
        // The segment's share of the work, done before the lock that searches wait for.
        analyzed.prepare(self.inner.bloom.as_ref());
        self.inner.wait_for_memory();
        let lsn = {
            let mut st = self.inner.state.write();
            self.inner.check_writable()?;
            let lsn = st.add(&id, analyzed, self.inner.options.tail_docs);
            if let Some(wal) = &self.inner.wal {
                wal.append(lsn, &Record::Add(json.trim().to_string()));
            }
            lsn
        };
        self.inner.nudge();
        Ok((id, lsn))
    }

    /// Returns once every change up to sequence number `lsn` is durable (at
    /// once outside `durable` mode); a failed fsync poisons the index.
    pub fn durable_through(&self, lsn: u64) -> Result<()> {
        self.inner.durable(lsn)
    }

    /// Deletes the document with `_id` `id`; returns whether there was one.
    pub fn delete(&self, id: &str) -> Result<bool> {
        let (lsn, found) = {
            let mut st = self.inner.state.write();
            self.inner.check_writable()?;
            let (lsn, found) = st.delete(id);
            if let Some(wal) = &self.inner.wal {
                wal.append(lsn, &Record::Delete(id.to_string()));
            }
            (lsn, found)
        };
        self.inner.durable(lsn)?;
        Ok(found)
    }

    /// Deletes every document matching `query`; returns how many.
    pub fn delete_by_query(&self, query: &str) -> Result<u64> {
        let mut st = self.inner.state.write();
        self.inner.check_writable()?;
        let schema = self.inner.schema.read().unwrap();
        let ids = st.matching_ids(query, &schema)?;
        let mut last = 0;
        for id in &ids {
            let (lsn, _) = st.delete(id);
            if let Some(wal) = &self.inner.wal {
                wal.append(lsn, &Record::Delete(id.clone()));
            }
            last = lsn;
        }
        drop((st, schema));
        self.inner.durable(last)?;
        Ok(ids.len() as u64)
    }

    /// Searches a consistent snapshot of everything added so far.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        let st = self.inner.state.read();
        let schema = self.inner.schema.read().unwrap();
        let cache = self.inner.results.as_ref().map(|c| (c, st.generation()));
        run_search(&st.views(), &schema, request, cache)
    }

    /// The result cache's counters, when there is one.
    pub fn result_cache_stats(&self) -> Option<CacheStats> {
        self.inner.results.as_ref().map(ResultCache::stats)
    }

    /// Runs a parsed query over a consistent snapshot: hits as (segment, document, score).
    pub fn top_docs(
        &self,
        query: &needle_search::Query,
        options: needle_search::SearchOptions,
    ) -> Result<needle_search::TopDocs> {
        let st = self.inner.state.read();
        needle_search::Searcher::with_deletes(st.views()).search(query, options)
    }

    /// (on-disk segments, all segments including the tail), for tests and statistics.
    pub fn segment_counts(&self) -> (usize, usize) {
        self.inner.state.read().segment_counts()
    }

    /// The field id of `name` in this index's schema.
    pub fn field_id(&self, name: &str) -> Option<needle_core::FieldId> {
        self.inner.schema.read().unwrap().field_id(name)
    }

    /// The stored source of the live document with `_id` `id`.
    pub fn get(&self, id: &str) -> Result<Option<String>> {
        self.inner.state.read().get(id)
    }

    /// Whether a live document has `_id` `id` (a lookup in the id field, no stored fields read).
    pub fn contains(&self, id: &str) -> Result<bool> {
        // A visibility probe must not wait behind a writer that waits for a long search.
        self.inner.state.read_recursive().contains(id)
    }

    /// Live documents.
    pub fn num_docs(&self) -> u64 {
        self.inner.state.read().num_docs()
    }

    /// Persists everything added so far and commits it.
    pub fn commit(&self) -> Result<()> {
        self.inner.commit()
    }

    /// Stops the background thread; in `graceful` and `durable` modes, commits first.
    pub fn close(mut self) -> Result<()> {
        let result = match self.inner.options.durability {
            Durability::Volatile => Ok(()),
            _ => self.inner.commit(),
        };
        self.stop_background();
        result
    }

    fn stop_background(&mut self) {
        self.inner.stop.store(true, Ordering::SeqCst);
        self.inner.nudge();
        if let Some(handle) = self.background.take() {
            let _ = handle.join();
        }
    }
}

impl Drop for LiveIndex {
    fn drop(&mut self) {
        self.stop_background();
    }
}

impl Inner {
    fn check_writable(&self) -> Result<()> {
        if let Some(e) = self.failed.lock().unwrap().as_ref() {
            return Err(Error::Poisoned { cause: e.clone() });
        }
        Ok(())
    }

    /// In durable mode, waits until the log holds `lsn`; a failure poisons the index.
    fn durable(&self, lsn: u64) -> Result<()> {
        let Some(wal) = &self.wal else { return Ok(()) };
        wal.sync_to(lsn).inspect_err(|e| self.poison(e))
    }

    fn poison(&self, e: &Error) {
        self.failed.lock().unwrap().get_or_insert_with(|| e.to_string());
    }

    fn nudge(&self) {
        let (lock, cv) = &self.wake;
        *lock.lock().unwrap() = true;
        cv.notify_all();
    }

    /// Backpressure: writers wait while the frozen segments exceed twice the budget.
    fn wait_for_memory(&self) {
        while self.state.read().frozen_bytes() > 2 * self.options.memory_bytes
            && !self.stop.load(Ordering::Relaxed)
        {
            self.nudge();
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn commit(&self) -> Result<()> {
        let _one = self.committing.lock().unwrap();
        self.check_writable()?;
        let plan = {
            let mut st = self.state.write();
            let plan = st.begin_commit(&self.schema.read().unwrap());
            if let Some(wal) = &self.wal {
                wal.rotate(plan.checkpoint_lsn + 1).inspect_err(|e| self.poison(e))?;
            }
            plan
        };
        let flushed = State::flush(&self.dir, &plan).inspect_err(|e| self.poison(e))?;
        let mut pending = self.state.write().finish_commit(plan, flushed);
        // Searches and writes go on while the files are written and fsynced.
        pending.free_retired();
        pending.write(&self.dir).inspect_err(|e| self.poison(e))?;
        let checkpoint = pending.checkpoint_lsn();
        let obsolete = self.state.write().complete(pending);
        if self.wal.is_some() {
            wal::remove_through(&self.dir, checkpoint)?;
        }
        self.remove(&obsolete)
    }

    /// Deletes files no commit refers to any more.
    fn remove(&self, files: &[String]) -> Result<()> {
        files.iter().try_for_each(|f| self.dir.delete(f))
    }

    /// Merges adjacent committed segments when there are too many, at a bounded write rate.
    fn maybe_merge(&self) -> Result<()> {
        let opts = &self.options;
        let plan = self.state.write().plan_merge(opts.merge_factor, opts.merge_trigger);
        let Some(plan) = plan else { return Ok(()) };
        let started = std::time::Instant::now();
        let rate = opts.merge_bytes_per_sec.max(1) as f64;
        let mut pace = |written: u64| {
            let due = Duration::from_secs_f64(written as f64 / rate);
            if let Some(wait) = due.checked_sub(started.elapsed()) {
                std::thread::sleep(wait.min(Duration::from_millis(100)));
            }
        };
        let (merged, maps) = State::run_merge(&self.dir, &plan, &mut pace).inspect_err(|e| self.poison(e))?;
        let _one = self.committing.lock().unwrap();
        let finished = self.state.write().finish_merge(plan, merged, maps);
        let mut pending = finished.inspect_err(|e| self.poison(e))?;
        pending.free_retired();
        pending.write(&self.dir).inspect_err(|e| self.poison(e))?;
        let obsolete = self.state.write().complete(pending);
        self.remove(&obsolete)
    }

    /// Flushes when the frozen segments outgrow the memory budget.
    fn background(&self) {
        lower_thread_priority(self.options.background_nice);
        while !self.stop.load(Ordering::SeqCst) {
            {
                let (lock, cv) = &self.wake;
                let mut woken = lock.lock().unwrap();
                if !*woken {
                    woken = cv.wait_timeout(woken, Duration::from_millis(200)).unwrap().0;
                }
                *woken = false;
            }
            if self.check_writable().is_err() {
                continue;
            }
            // Failures poison the index; the error reaches writers from there.
            if self.state.read().frozen_bytes() > self.options.memory_bytes {
                let _ = self.commit();
            }
            let _ = self.maybe_merge();
        }
    }
}

/// Gives the calling thread a nice value (Linux sets it per thread); a failure leaves it as it was.
fn lower_thread_priority(nice: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority takes plain integers; `who` 0 is the calling thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, nice.clamp(0, 19));
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}
