//! The commits of this node's primaries kept in the segment store
//! (`needle_cluster::store`): every few seconds each primary's last commit,
//! once JetStream holds every write it covers, is stored and the shard's
//! pointer moved to it; then the shard's stream is trimmed to the writes
//! after it. A copy made later (a replica, a shard moved here, a disk lost)
//! fetches that commit and reads only the rest of the stream.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use needle_cluster::store::{Commit, Pointer, Stored};
use needle_engine::CommitPoint;

use super::{unavailable, Ingest, ShardLog, TRIMMED};
use crate::catalog::{Catalog, Handle};
use crate::error::ApiResult;

/// How often the primaries' commits are looked at.
pub const STORE_EVERY: Duration = Duration::from_secs(2);
/// How long a stored file no commit names is kept: a copy may still be
/// fetching the older commit that named it.
const UNNAMED_KEPT: Duration = Duration::from_secs(60);

/// What this node stored of one of its primaries.
#[derive(Default)]
pub struct StoredShard {
    /// The writer's term the rest is for.
    term: u64,
    /// The generation of the last commit stored (or found stale).
    generation: u64,
    /// The files this term stored, by name: their keys.
    sent: BTreeMap<String, String>,
    /// Stored files the last stored commit does not name: since when.
    unnamed: BTreeMap<String, Instant>,
}

impl Ingest {
    /// Stores the new commits of this node's primaries and trims their streams.
    pub fn store_commits(&self, catalog: &Catalog) {
        if self.store.is_none() {
            return;
        }
        let logs: Vec<(String, Arc<ShardLog>)> = {
            let mut primaries = self.primaries.lock().unwrap_or_else(|p| p.into_inner());
            primaries.retain(|_, log| log.strong_count() > 0);
            primaries.iter().filter_map(|(name, log)| Some((name.clone(), log.upgrade()?))).collect()
        };
        for (name, log) in logs {
            let Ok(handle) = catalog.get(&name) else { continue };
            if let Err(e) = self.store_commit(&name, handle.index.directory().path(), &log) {
                eprintln!(
                    "needle serve: shard [{name}]: its commit not stored: {e} (tried again in a moment)"
                );
            }
        }
    }

    /// Stores the last commit of primary `name` (its index in `dir`, logged
    /// to `log`) if it is new and JetStream holds every write it covers.
    fn store_commit(&self, name: &str, dir: &Path, log: &ShardLog) -> Result<(), String> {
        // Taken out while it is sent: a request forgetting the shard meanwhile does not wait for it.
        let taken = self.stored.lock().unwrap_or_else(|p| p.into_inner()).remove(name);
        let mut shard = taken
            .filter(|s| s.term == log.term)
            .unwrap_or(StoredShard { term: log.term, ..StoredShard::default() });
        let stored = self.store_newer(name, dir, log, &mut shard);
        self.stored.lock().unwrap_or_else(|p| p.into_inner()).insert(name.to_string(), shard);
        stored
    }

    /// [`Ingest::store_commit`] with what this term stored of the shard.
    fn store_newer(
        &self,
        name: &str,
        dir: &Path,
        log: &ShardLog,
        shard: &mut StoredShard,
    ) -> Result<(), String> {
        let store = self.store.as_ref().expect("a segment store");
        let Some(point) = CommitPoint::open(dir, shard.generation).map_err(|e| e.to_string())? else {
            return Ok(());
        };
        if point.checkpoint_lsn > log.held() {
            return Ok(());
        }
        let generation = point.generation;
        let commit = Commit {
            generation,
            checkpoint_lsn: point.checkpoint_lsn,
            manifest: point.manifest,
            files: point.files,
        };
        let put = self.runtime.block_on(store.put(name, log.term, commit, &mut shard.sent));
        shard.generation = generation;
        match put.map_err(|e| e.to_string())? {
            Stored::Moved(pointer) => {
                self.runtime.block_on(log.trim_through(pointer.lsn)).map_err(|e| e.to_string())?;
                self.collect(name, &pointer, shard).map_err(|e| format!("its unneeded files stay: {e}"))
            }
            Stored::Stale(pointer) if pointer.term > log.term => {
                Err(format!("a newer writer (term {}) stored the shard's commits", pointer.term))
            }
            Stored::Stale(_) => Ok(()),
        }
    }

    /// Deletes the files of shard `name` no commit named for a while (`pointer`: its last).
    fn collect(
        &self,
        name: &str,
        pointer: &Pointer,
        shard: &mut StoredShard,
    ) -> needle_cluster::store::Result<()> {
        let store = self.store.as_ref().expect("a segment store");
        let unnamed = self.runtime.block_on(store.unnamed(name, pointer))?;
        let ripe = ripen(&mut shard.unnamed, unnamed, Instant::now());
        ripe.iter().try_for_each(|key| self.runtime.block_on(store.delete(key)))
    }

    /// Fetches shard `name`'s stored commit into `dir`, if it has one.
    pub(super) fn fetch(&self, name: &str, dir: &Path) -> ApiResult<bool> {
        let Some(store) = &self.store else { return Ok(false) };
        let fetched = self.runtime.block_on(store.fetch(name, dir)).map_err(unavailable)?;
        if let Some(p) = &fetched {
            eprintln!(
                "needle serve: shard [{name}]: its commit {} fetched (writes to {})",
                p.generation, p.lsn
            );
        }
        Ok(fetched.is_some())
    }

    /// An error when copy `handle`, filled from its stream, is older than
    /// its shard's stored commit: the stream may have been trimmed of the
    /// writes between (trimmed whole, it shows no sign of it).
    pub(super) fn not_behind_store(&self, handle: &Handle) -> ApiResult<()> {
        let Some(store) = &self.store else { return Ok(()) };
        let (pointer, _) = self.runtime.block_on(store.pointer(&handle.name)).map_err(unavailable)?;
        let next = handle.writer.next_lsn();
        match pointer.filter(|p| p.lsn >= next) {
            Some(p) => Err(unavailable(format!(
                "copy [{}] holds writes up to {} and its stored commit up to {}: the writes between may be gone from the stream, as {TRIMMED} (the copy is made again from the stored commit)",
                handle.name,
                next - 1,
                p.lsn
            ))),
            None => Ok(()),
        }
    }

    /// Forgets shard `name`'s stored commits (its index deleted or made anew).
    pub(super) fn forget_stored(&self, name: &str) -> needle_cluster::store::Result<()> {
        self.stored.lock().unwrap_or_else(|p| p.into_inner()).remove(name);
        match &self.store {
            Some(store) => self.runtime.block_on(store.forget(name)),
            None => Ok(()),
        }
    }
}

/// Of the files no commit names now (`unnamed`), those unnamed for
/// [`UNNAMED_KEPT`] by `now` (`since`: when each was first seen unnamed,
/// kept for the others).
fn ripen(since: &mut BTreeMap<String, Instant>, unnamed: Vec<String>, now: Instant) -> Vec<String> {
    let seen: BTreeMap<String, Instant> =
        unnamed.into_iter().map(|key| (key.clone(), *since.get(&key).unwrap_or(&now))).collect();
    let (ripe, waiting) = seen.into_iter().partition(|(_, t)| now.duration_since(*t) >= UNNAMED_KEPT);
    *since = waiting;
    ripe.into_keys().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unnamed_file_goes_once_unnamed_for_a_while() {
        let start = Instant::now();
        let mut since = BTreeMap::new();
        let keys = |k: &[&str]| k.iter().map(|k| k.to_string()).collect::<Vec<_>>();
        assert!(ripen(&mut since, keys(&["a", "b"]), start).is_empty(), "just unnamed");
        let later = start + UNNAMED_KEPT / 2;
        assert!(ripen(&mut since, keys(&["a", "b", "c"]), later).is_empty());
        // "b" is named again meanwhile (forgotten); "a" has waited long enough, "c" not.
        let ripe = ripen(&mut since, keys(&["a", "c"]), start + UNNAMED_KEPT);
        assert_eq!(ripe, ["a"]);
        assert_eq!(since.keys().collect::<Vec<_>>(), ["c"]);
        assert_eq!(ripen(&mut since, keys(&["b", "c"]), later + UNNAMED_KEPT), ["c"]);
        assert_eq!(since.keys().collect::<Vec<_>>(), ["b"], "b waits again from its new unnaming");
    }
}
