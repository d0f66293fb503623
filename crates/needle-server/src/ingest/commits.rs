//! The commits of this node's primaries kept in the segment store
//! (`needle_cluster::store`): every few seconds each primary's last commit,
//! once JetStream holds every write it covers, is stored and the shard's
//! pointer moved to it; then the shard's stream is trimmed to the writes
//! after it. A copy made later (a replica, a shard moved here, a disk lost)
//! fetches that commit and reads only the rest of the stream.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use needle_cluster::store::{Commit, Stored};
use needle_engine::CommitPoint;

use super::{unavailable, Ingest, ShardLog};
use crate::catalog::Catalog;
use crate::error::ApiResult;

/// How often the primaries' commits are looked at.
pub const STORE_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// What this node stored of one of its primaries.
#[derive(Default)]
pub struct StoredShard {
    /// The writer's term the rest is for.
    term: u64,
    /// The generation of the last commit stored (or found stale).
    generation: u64,
    /// The files this term stored, by name: their keys.
    sent: BTreeMap<String, String>,
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
        let store = self.store.as_ref().expect("a segment store");
        let mut stored = self.stored.lock().unwrap_or_else(|p| p.into_inner());
        let shard = stored.entry(name.to_string()).or_default();
        if shard.term != log.term {
            *shard = StoredShard { term: log.term, ..StoredShard::default() };
        }
        let point = CommitPoint::open(dir).map_err(|e| e.to_string())?;
        if point.generation <= shard.generation || point.checkpoint_lsn > log.held() {
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
                self.runtime.block_on(log.trim_through(pointer.lsn)).map_err(|e| e.to_string())
            }
            Stored::Stale(pointer) if pointer.term > log.term => {
                Err(format!("a newer writer (term {}) stored the shard's commits", pointer.term))
            }
            Stored::Stale(_) => Ok(()),
        }
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

    /// Forgets shard `name`'s stored commits (its index deleted or made anew).
    pub(super) fn forget_stored(&self, name: &str) -> needle_cluster::store::Result<()> {
        self.stored.lock().unwrap_or_else(|p| p.into_inner()).remove(name);
        match &self.store {
            Some(store) => self.runtime.block_on(store.forget(name)),
            None => Ok(()),
        }
    }
}
