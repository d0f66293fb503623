//! An index: a folder holding a manifest, the segments it names and the
//! write-ahead log, opened as one [`Index`] that owns one segment set
//! ([`crate::segments`]) behind one lock. Searches take [`Searcher`]
//! snapshots of it; one [`IndexWriter`] at a time (in any process: the
//! folder's writer lock) changes it.
//!
//! Opening reads the write-ahead log too: the documents acknowledged since
//! the last commit are applied in memory, so a reader right after a crash
//! sees every acknowledged document without changing a file (the writer
//! that opens next recovers the log for good). A log that is damaged
//! beyond its torn tail fails the open, naming what would be lost.

use std::path::Path;
use std::sync::Arc;

use needle_codecs::{SegmentReader, Verify};
use needle_core::{Error, Result};
use needle_storage::cache::CacheStats;
use needle_storage::{Directory, ReadOptions};
use parking_lot::Mutex;

use crate::manifest::{self, Manifest};
use crate::result_cache::ResultCache;
use crate::schema::{Schema, SharedSchema};
use crate::searcher::Searcher;
use crate::segments::SegmentSet;
use crate::wal::{OnDamage, Replayed};
use crate::writer::{IndexWriter, WriterOptions};

/// The file a writer holds locked for its whole life.
pub(crate) const LOCK_FILE: &str = "write.lock";

/// How an index is opened: how its files are read and checked, and its caches.
#[derive(Debug, Clone, Default)]
pub struct IndexOptions {
    /// What opening checks: [`Verify::Footers`] (the default: every file's
    /// footer, and the checksums of the small files) or [`Verify::Checksums`]
    /// (every byte). `Index::check` verifies everything either way.
    pub verify: Verify,
    /// How files are read: a memory map (the default), `pread`, or direct I/O,
    /// with an application cache.
    pub reads: ReadOptions,
    /// Bytes of search responses kept (0, the default: none); see [`ResultCache`].
    pub result_cache_bytes: usize,
    /// Read a damaged write-ahead log up to the damage and no further (what
    /// was dropped is in [`Index::replayed`]), instead of failing the open.
    /// Nothing is changed on disk: a writer opened with
    /// [`crate::WriterOptions::truncate_damaged_log`] makes the loss final.
    pub truncate_damaged_log: bool,
}

impl IndexOptions {
    pub fn verify(mut self, verify: Verify) -> Self {
        self.verify = verify;
        self
    }

    pub fn reads(mut self, reads: ReadOptions) -> Self {
        self.reads = reads;
        self
    }

    pub fn result_cache(mut self, bytes: usize) -> Self {
        self.result_cache_bytes = bytes;
        self
    }

    pub fn truncate_damaged_log(mut self, yes: bool) -> Self {
        self.truncate_damaged_log = yes;
        self
    }

    /// Opens the existing index at `path`.
    pub fn open(self, path: &Path) -> Result<Index> {
        let dir = Directory::open(path, false)?.with_reads(self.reads.clone());
        if !dir.exists(manifest::FILE) {
            return Err(Error::not_found(format!(
                "Needle index at {} (no {})",
                path.display(),
                manifest::FILE
            )));
        }
        Index::load(dir, self)
    }

    /// Opens the index at `path`, creating it (with `mapping`, or a dynamic
    /// schema) when there is none. A mapping given for an existing index must
    /// equal the index's.
    pub fn open_or_create(self, path: &Path, mapping: Option<Schema>) -> Result<Index> {
        let dir = Directory::open(path, true)?.with_reads(self.reads.clone());
        if !dir.exists(manifest::FILE) {
            let _lock = dir.lock(LOCK_FILE)?;
            if !dir.exists(manifest::FILE) {
                Manifest::new(mapping.clone().unwrap_or_default()).commit(&dir)?;
            }
        }
        let index = Index::load(dir, self)?;
        if let Some(m) = mapping {
            if m != *index.schema() {
                return Err(Error::invalid(format!("{} already has a different mapping", path.display())));
            }
        }
        Ok(index)
    }
}

/// An open index; cheap to clone (clones share everything).
#[derive(Clone)]
pub struct Index {
    pub(crate) shared: Arc<Shared>,
}

/// What an index's handles, searchers and writer share.
pub(crate) struct Shared {
    pub dir: Directory,
    pub options: IndexOptions,
    /// The one segment set; held only for short steps, never for a search.
    pub set: Mutex<SegmentSet>,
    pub schema: SharedSchema,
    pub results: Option<ResultCache>,
    /// What the last load read from the write-ahead log.
    pub replayed: Mutex<Replayed>,
}

impl Index {
    /// Opens the existing index at `path` with default options.
    pub fn open(path: &Path) -> Result<Index> {
        IndexOptions::default().open(path)
    }

    /// Opens the index at `path`, creating it when there is none.
    pub fn open_or_create(path: &Path, mapping: Option<Schema>) -> Result<Index> {
        IndexOptions::default().open_or_create(path, mapping)
    }

    pub fn options() -> IndexOptions {
        IndexOptions::default()
    }

    fn load(dir: Directory, options: IndexOptions) -> Result<Index> {
        let schema = SharedSchema::new(Schema::default());
        let on_damage = if options.truncate_damaged_log { OnDamage::Truncate } else { OnDamage::Fail };
        let (set, replayed) = load_set(&dir, &options, &Default::default(), &schema, on_damage)?;
        let results = (options.result_cache_bytes > 0).then(|| ResultCache::new(options.result_cache_bytes));
        let shared =
            Shared { dir, options, set: Mutex::new(set), schema, results, replayed: Mutex::new(replayed) };
        Ok(Index { shared: Arc::new(shared) })
    }

    /// A snapshot of everything the index holds now, for searching: later
    /// changes are not seen, and searching it holds no lock.
    pub fn searcher(&self) -> Searcher {
        let snapshot = {
            let set = self.shared.set.lock();
            // Read after the segments: a document is added after its fields are.
            set.snapshot(self.shared.schema.current())
        };
        Searcher::new(snapshot, self.shared.clone())
    }

    /// The index's writer: takes the folder's writer lock (a second writer,
    /// in this process or another, gets [`Error::Locked`]), reloads the
    /// index as it is on disk, recovers the write-ahead log, and starts the
    /// background flushes and merges.
    pub fn writer(&self, options: WriterOptions) -> Result<IndexWriter> {
        IndexWriter::open(self.clone(), options)
    }

    /// The schema, as of now.
    pub fn schema(&self) -> Arc<Schema> {
        self.shared.schema.current()
    }

    pub fn directory(&self) -> &Directory {
        &self.shared.dir
    }

    /// Bytes the index holds in memory for its writer: in-memory segments
    /// and in-place updates not yet folded into their segments.
    pub fn memory_bytes(&self) -> usize {
        self.shared.set.lock().memory_bytes()
    }

    /// Live documents.
    pub fn num_docs(&self) -> u64 {
        self.shared.set.lock().num_docs()
    }

    /// The on-disk segments' readers, in index order.
    pub fn segment_readers(&self) -> Vec<Arc<SegmentReader>> {
        let set = self.shared.set.lock();
        set.segments
            .iter()
            .filter_map(|s| match &s.data {
                crate::segments::SegmentData::Disk(r) => Some(r.clone()),
                crate::segments::SegmentData::Mem(_) => None,
            })
            .collect()
    }

    /// (on-disk segments, all segments including the in-memory tail).
    pub fn segment_counts(&self) -> (usize, usize) {
        self.shared.set.lock().segment_counts()
    }

    /// What opening (or the writer's recovery) read from the write-ahead log.
    pub fn replayed(&self) -> Replayed {
        self.shared.replayed.lock().clone()
    }

    /// Pins in the application cache's static part the term records that
    /// `queries` (a query log) use most per page, within `budget_bytes` (at
    /// most half the cache). Nothing happens for an index read without an
    /// application cache (a mapping is cached by the kernel).
    pub fn pin_hot_terms<'a>(
        &self,
        queries: impl IntoIterator<Item = &'a str>,
        budget_bytes: usize,
    ) -> Result<crate::PinSummary> {
        let readers = self.segment_readers();
        let segments: Vec<&SegmentReader> = readers.iter().map(|s| s.as_ref()).collect();
        crate::hot_terms::pin_hot_terms(&segments, &self.schema(), queries, budget_bytes)
    }

    /// The application cache's counters, when the index is read through one.
    pub fn page_cache_stats(&self) -> Option<CacheStats> {
        self.shared.page_cache_stats()
    }

    /// The result cache's counters, when there is one.
    pub fn result_cache_stats(&self) -> Option<CacheStats> {
        self.shared.results.as_ref().map(ResultCache::stats)
    }

    /// Re-reads the index from disk (another process's commits, or a fresh
    /// start after a writer in this process closed), keeping open segment readers.
    pub(crate) fn reload(&self, on_damage: OnDamage) -> Result<()> {
        let (open, generation) = {
            let set = self.shared.set.lock();
            (set.open_readers(), set.generation)
        };
        let (mut set, replayed) =
            load_set(&self.shared.dir, &self.shared.options, &open, &self.shared.schema, on_damage)?;
        // Generations only move on: the result cache keys on them.
        set.generation = generation + 1;
        *self.shared.set.lock() = set;
        *self.shared.replayed.lock() = replayed;
        Ok(())
    }
}

impl Shared {
    pub fn page_cache_stats(&self) -> Option<CacheStats> {
        self.dir.reads().cache.as_ref().map(|c| c.stats())
    }
}

/// Loads the segment set the manifest names, with the log after it applied.
/// A writer in another process may commit meanwhile (deleting files this
/// load was about to read): a load that fails on a missing file, or on a log
/// that no longer continues the manifest it read, is retried while the
/// manifest keeps changing under it.
fn load_set(
    dir: &Directory,
    options: &IndexOptions,
    open: &std::collections::HashMap<String, Arc<SegmentReader>>,
    schema: &SharedSchema,
    on_damage: OnDamage,
) -> Result<(SegmentSet, Replayed)> {
    const ATTEMPTS: usize = 10;
    let mut manifest = Manifest::read(dir)?;
    for attempt in 1.. {
        schema.replace(manifest.schema.clone());
        let generation = manifest.generation;
        match SegmentSet::load(dir, manifest, options.verify, open, schema, on_damage) {
            Ok(loaded) => return Ok(loaded),
            Err(e) if attempt < ATTEMPTS && (e.is_missing_file() || matches!(e, Error::Corrupt { .. })) => {
                manifest = Manifest::read(dir)?;
                if manifest.generation == generation {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
    unreachable!("the loop returns")
}
