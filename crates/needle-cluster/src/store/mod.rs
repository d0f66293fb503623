//! Shards' segments kept in an object store (`needle serve --store DIR` or
//! `--store s3://BUCKET[/PREFIX]`, through the `object_store` crate: its
//! local file-system store, or S3 as `s3` sets it up), so that a copy of a shard made on another node
//! starts from the shard's last stored commit and reads only the writes of
//! its stream after it, and the stream can be trimmed to those writes.
//!
//! A shard's primary copies each commit point of its index there: every
//! file under a write-once key `{cluster}/{shard}/{term}/{file}` (`term`:
//! the stream sequence of the writer's mark, which grows with each writer
//! that takes the stream over; a file already stored by this term is not
//! stored again), then the snapshot, a JSON object that names them:
//!
//! ```text
//! {cluster}/{shard}/{term}/snapshot.{generation} :=
//!   {"version": 1, "generation": 7, "checkpoint_lsn": 5120,
//!    "files": {"needle.manifest": "c/logs.0/40/needle.manifest.7", "seg_000004.post": "c/logs.0/40/seg_000004.post", ...},
//!    "crc32": <CRC-32 of this object's compact JSON with `crc32` 0>}
//! ```
//!
//! and last moves the shard's pointer in etcd, `/needle/{cluster}/pointers/{shard}`
//! = `{"version": 1, "generation": 7, "key": "<the snapshot's key>", "lsn": 5120, "term": 40}`,
//! by a compare-and-swap on the key's revision: a writer never moves it
//! back to an older commit (`lsn`) nor over a newer writer's (`term`), so a
//! writer a newer one took over from is fenced here as in the stream.
//! Only then is the stream trimmed below the writes after `lsn`.
//! The snapshot's checksum catches one damaged at rest. A copy made from the
//! store fetches the snapshot the pointer names and each of its files.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

use futures_util::StreamExt;
use object_store::local::LocalFileSystem;
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, WriteMultipart};
use serde::{Deserialize, Serialize};

use crate::etcd::Etcd;

mod s3;

const VERSION: u32 = 1;
/// Bytes a file is sent in.
const CHUNK: usize = 8 << 20;
/// The local name of the file a copy writes last (its commit point).
const MANIFEST: &str = "needle.manifest";

/// Why the object store (or the pointer in etcd) failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the segment store: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

fn failed(e: impl std::fmt::Display) -> StoreError {
    StoreError(e.to_string())
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// Where a shard's last stored commit is (the value of its pointer in etcd).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pointer {
    pub version: u32,
    pub generation: u64,
    /// The snapshot's key.
    pub key: String,
    /// Every write up to this one is in the stored commit.
    pub lsn: u64,
    /// The writer's term (its mark's stream sequence).
    pub term: u64,
}

/// A commit point to store: its manifest's bytes and generation, its
/// checkpoint, and every other file it names, open.
pub struct Commit {
    pub generation: u64,
    pub checkpoint_lsn: u64,
    pub manifest: Vec<u8>,
    pub files: Vec<(String, std::fs::File)>,
}

/// What became of a commit sent to the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored {
    /// The pointer names it now.
    Moved(Pointer),
    /// The pointer names a newer commit, or a newer writer's: left as it is.
    Stale(Pointer),
}

#[derive(Serialize, Deserialize)]
struct Snapshot {
    version: u32,
    generation: u64,
    checkpoint_lsn: u64,
    files: BTreeMap<String, String>,
    crc32: u32,
}

impl Snapshot {
    fn checksum(&self) -> u32 {
        let bare = Snapshot { crc32: 0, files: self.files.clone(), ..*self };
        crc32fast::hash(&serde_json::to_vec(&bare).expect("a snapshot serializes"))
    }
}

/// The object store and the pointers of a cluster's shards.
pub struct SegmentStore {
    store: Arc<dyn ObjectStore>,
    etcd: Etcd,
    cluster: String,
    /// As given, for messages.
    location: String,
}

impl SegmentStore {
    /// The store at `location` (a folder, made if missing, or `s3://BUCKET[/PREFIX]`)
    /// for cluster `cluster`, its pointers in `etcd`. [`SegmentStore::check`] tries it.
    pub fn open(location: &str, etcd: Etcd, cluster: &str) -> Result<SegmentStore> {
        let store: Arc<dyn ObjectStore> = match location.split_once("://") {
            Some(("s3", _)) => s3::open(location).map_err(StoreError)?,
            Some(_) => {
                return Err(StoreError(format!(
                    "[{location}]: a segment store is a folder or an s3://BUCKET[/PREFIX] URL"
                )))
            }
            None => {
                std::fs::create_dir_all(location).map_err(|e| StoreError(format!("[{location}]: {e}")))?;
                Arc::new(LocalFileSystem::new_with_prefix(location).map_err(failed)?)
            }
        };
        Ok(SegmentStore { store, etcd, cluster: cluster.to_string(), location: location.to_string() })
    }

    /// Lists the cluster's keys once, so that a store that cannot be used
    /// (no such bucket, credentials refused, nothing answering) is named at
    /// start rather than at the first commit.
    pub async fn check(&self) -> Result<()> {
        let cluster = Key::from(self.cluster.clone());
        match self.store.list_with_delimiter(Some(&cluster)).await {
            Ok(_) => Ok(()),
            Err(e) => Err(StoreError(format!("[{}] cannot be used: {e}", self.location))),
        }
    }

    fn pointer_key(&self, shard: &str) -> String {
        format!("/needle/{}/pointers/{shard}", self.cluster)
    }

    fn shard_prefix(&self, shard: &str) -> String {
        format!("{}/{shard}", self.cluster)
    }

    /// The pointer of shard `shard`, and its revision in etcd (0: none yet).
    pub async fn pointer(&self, shard: &str) -> Result<(Option<Pointer>, i64)> {
        let Some(kv) = self.etcd.get(&self.pointer_key(shard)).await.map_err(failed)? else {
            return Ok((None, 0));
        };
        let pointer: Pointer = serde_json::from_slice(&kv.value)
            .map_err(|e| StoreError(format!("the pointer of [{shard}]: {e}")))?;
        if pointer.version != VERSION {
            return Err(StoreError(format!(
                "the pointer of [{shard}]: version {} (this build reads {VERSION})",
                pointer.version
            )));
        }
        Ok((Some(pointer), kv.mod_revision))
    }

    /// Stores `commit` of shard `shard` for writer `term` and moves the
    /// pointer to it, unless it names a newer commit or writer. `sent`
    /// holds the files this term stored before (name to key) and gains
    /// those stored now.
    pub async fn put(
        &self,
        shard: &str,
        term: u64,
        commit: Commit,
        sent: &mut BTreeMap<String, String>,
    ) -> Result<Stored> {
        let (generation, lsn) = (commit.generation, commit.checkpoint_lsn);
        let stale =
            |p: &Pointer| p.term > term || p.lsn > lsn || (p.term == term && p.generation >= generation);
        if let (Some(p), _) = self.pointer(shard).await? {
            if stale(&p) {
                return Ok(Stored::Stale(p));
            }
        }
        let prefix = format!("{}/{term}", self.shard_prefix(shard));
        let files = self.send_files(&prefix, commit, sent).await?;
        let mut snapshot = Snapshot { version: VERSION, generation, checkpoint_lsn: lsn, files, crc32: 0 };
        snapshot.crc32 = snapshot.checksum();
        let key = format!("{prefix}/snapshot.{generation}");
        let json = serde_json::to_vec_pretty(&snapshot).expect("a snapshot serializes");
        self.send(&key, &mut json.as_slice()).await?;
        let pointer = Pointer { version: VERSION, generation, key, lsn, term };
        self.move_pointer(shard, pointer, stale).await
    }

    /// Sends the files of `commit` that `sent` lacks under `prefix`, then
    /// its manifest: every file's key, by name.
    async fn send_files(
        &self,
        prefix: &str,
        commit: Commit,
        sent: &mut BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>> {
        let mut files = BTreeMap::new();
        for (name, mut file) in commit.files {
            let key = match sent.get(&name) {
                Some(key) => key.clone(),
                None => {
                    let key = format!("{prefix}/{name}");
                    self.send(&key, &mut file).await?;
                    sent.insert(name.clone(), key.clone());
                    key
                }
            };
            files.insert(name, key);
        }
        // A file no longer named (merged away, its deletions replaced) is never named again.
        sent.retain(|name, _| files.contains_key(name));
        let manifest_key = format!("{prefix}/{MANIFEST}.{}", commit.generation);
        self.send(&manifest_key, &mut commit.manifest.as_slice()).await?;
        files.insert(MANIFEST.to_string(), manifest_key);
        Ok(files)
    }

    /// Moves the pointer of `shard` to `pointer` by a compare-and-swap on
    /// what was read just before, unless what it names then is `stale`
    /// (a writer that moved it meanwhile wins).
    async fn move_pointer(
        &self,
        shard: &str,
        pointer: Pointer,
        stale: impl Fn(&Pointer) -> bool,
    ) -> Result<Stored> {
        let (now, revision) = self.pointer(shard).await?;
        if let Some(p) = now.filter(&stale) {
            return Ok(Stored::Stale(p));
        }
        let key = self.pointer_key(shard);
        let value = serde_json::to_vec(&pointer).expect("a pointer serializes");
        let moved = match revision {
            0 => self.etcd.create(&key, &value, None).await,
            r => self.etcd.replace(&key, &value, r).await,
        };
        match moved.map_err(failed)? {
            true => Ok(Stored::Moved(pointer)),
            false => match self.pointer(shard).await? {
                (Some(p), _) => Ok(Stored::Stale(p)),
                (None, _) => Err(StoreError(format!(
                    "the pointer of [{shard}] changed while it was moved; tried again later"
                ))),
            },
        }
    }

    /// Fetches shard `shard`'s stored commit into folder `dir` (made if
    /// missing; its manifest written last), if the shard has one: its pointer.
    pub async fn fetch(&self, shard: &str, dir: &Path) -> Result<Option<Pointer>> {
        let (Some(pointer), _) = self.pointer(shard).await? else { return Ok(None) };
        let snapshot = self.snapshot(&pointer.key).await?;
        std::fs::create_dir_all(dir).map_err(|e| StoreError(format!("{}: {e}", dir.display())))?;
        let manifest = snapshot
            .files
            .get(MANIFEST)
            .ok_or_else(|| StoreError(format!("snapshot {} names no manifest", pointer.key)))?;
        for (name, key) in snapshot.files.iter().filter(|(n, _)| *n != MANIFEST) {
            self.fetch_file(key, &dir.join(safe_name(name)?)).await?;
        }
        self.fetch_file(manifest, &dir.join(MANIFEST)).await?;
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| StoreError(format!("{}: {e}", dir.display())))?;
        Ok(Some(pointer))
    }

    /// The keys stored for shard `shard` that its commit at `pointer` does
    /// not name, stored by its writer or earlier ones (a newer writer's
    /// files may be on their way into a snapshot): garbage, once no copy
    /// can still be fetching an older commit that names them.
    pub async fn unnamed(&self, shard: &str, pointer: &Pointer) -> Result<Vec<String>> {
        let snapshot = self.snapshot(&pointer.key).await?;
        let named: std::collections::BTreeSet<&str> =
            snapshot.files.values().map(String::as_str).chain([pointer.key.as_str()]).collect();
        let prefix = self.shard_prefix(shard);
        let mut listed = self.store.list(Some(&Key::from(prefix.clone())));
        let mut unnamed = Vec::new();
        while let Some(meta) = listed.next().await {
            let key = meta.map_err(failed)?.location.to_string();
            if !named.contains(key.as_str()) && term_of(&prefix, &key).is_some_and(|t| t <= pointer.term) {
                unnamed.push(key);
            }
        }
        Ok(unnamed)
    }

    /// Deletes `key` (gone already is no error).
    pub async fn delete(&self, key: &str) -> Result<()> {
        match self.store.delete(&Key::from(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(StoreError(format!("{key}: {e}"))),
        }
    }

    /// Forgets shard `shard`: its pointer and every file stored for it (its index deleted or made anew).
    pub async fn forget(&self, shard: &str) -> Result<()> {
        self.etcd.delete(&self.pointer_key(shard)).await.map_err(failed)?;
        let prefix = Key::from(self.shard_prefix(shard));
        let mut listed = self.store.list(Some(&prefix));
        while let Some(meta) = listed.next().await {
            // Another node forgetting it too may have deleted it first.
            match meta {
                Ok(meta) => self.delete(meta.location.as_ref()).await?,
                Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(failed(e)),
            }
        }
        Ok(())
    }

    /// The snapshot at `key`, checked.
    async fn snapshot(&self, key: &str) -> Result<Snapshot> {
        let bytes = self.get(key).await?;
        let snapshot: Snapshot =
            serde_json::from_slice(&bytes).map_err(|e| StoreError(format!("snapshot {key}: {e}")))?;
        if snapshot.version != VERSION || snapshot.crc32 != snapshot.checksum() {
            return Err(StoreError(format!(
                "snapshot {key}: damaged (its checksum or version does not match)"
            )));
        }
        Ok(snapshot)
    }

    /// Sends what `from` reads to `key`: in one request when it fits in
    /// a chunk (most files of a commit; a multipart upload costs S3 three
    /// requests at least), else in parts of a chunk each.
    async fn send(&self, key: &str, from: &mut dyn Read) -> Result<()> {
        let named = |e: &dyn std::fmt::Display| StoreError(format!("{key}: {e}"));
        let mut first = Vec::with_capacity(CHUNK);
        from.take(CHUNK as u64 + 1)
            .read_to_end(&mut first)
            .map_err(|e| StoreError(format!("reading for {key}: {e}")))?;
        if first.len() <= CHUNK {
            self.store.put(&Key::from(key), first.into()).await.map_err(|e| named(&e))?;
            return Ok(());
        }
        let upload = self.store.put_multipart(&Key::from(key)).await.map_err(|e| named(&e))?;
        let mut writer = WriteMultipart::new_with_chunk_size(upload, CHUNK);
        writer.write(&first);
        let mut buffer = vec![0; CHUNK];
        loop {
            let n = from.read(&mut buffer).map_err(|e| StoreError(format!("reading for {key}: {e}")))?;
            if n == 0 {
                break;
            }
            writer.wait_for_capacity(2).await.map_err(|e| named(&e))?;
            writer.write(&buffer[..n]);
        }
        writer.finish().await.map_err(|e| named(&e))?;
        Ok(())
    }

    async fn get(&self, key: &str) -> Result<bytes::Bytes> {
        let got = self.store.get(&Key::from(key)).await.map_err(|e| StoreError(format!("{key}: {e}")))?;
        got.bytes().await.map_err(|e| StoreError(format!("{key}: {e}")))
    }

    /// Fetches `key` into file `path`, synced.
    async fn fetch_file(&self, key: &str, path: &Path) -> Result<()> {
        let named = |e: &dyn std::fmt::Display| StoreError(format!("{key} to {}: {e}", path.display()));
        let got = self.store.get(&Key::from(key)).await.map_err(|e| named(&e))?;
        let mut file = std::fs::File::create(path).map_err(|e| named(&e))?;
        let mut chunks = got.into_stream();
        while let Some(chunk) = chunks.next().await {
            file.write_all(&chunk.map_err(|e| named(&e))?).map_err(|e| named(&e))?;
        }
        file.sync_all().map_err(|e| named(&e))
    }
}

/// The writer's term of `key`, stored under a shard's `prefix` (`{prefix}/{term}/{file}`).
fn term_of(prefix: &str, key: &str) -> Option<u64> {
    key.strip_prefix(prefix)?.strip_prefix('/')?.split('/').next()?.parse().ok()
}

/// A file name from a snapshot, refused if it would leave the folder.
fn safe_name(name: &str) -> Result<&str> {
    match name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        true => Err(StoreError(format!("a snapshot names file `{name}`, not a file of an index folder"))),
        false => Ok(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_their_writers_term() {
        assert_eq!(term_of("c/logs.shard-0", "c/logs.shard-0/40/seg_000001.post"), Some(40));
        assert_eq!(term_of("c/logs.shard-0", "c/logs.shard-0/x/seg_000001.post"), None);
        // Another shard whose name starts alike is not this one's.
        assert_eq!(term_of("c/logs.shard-1", "c/logs.shard-10/40/seg_000001.post"), None);
    }

    #[test]
    fn a_snapshot_names_only_files_of_its_folder_and_is_checked() {
        assert!(safe_name("seg_000001.post").is_ok());
        for bad in ["", "../x", "a/b", ".hidden", "a\\b"] {
            assert!(safe_name(bad).is_err(), "{bad}");
        }
        let files = BTreeMap::from([("needle.manifest".to_string(), "k".to_string())]);
        let mut snapshot = Snapshot { version: VERSION, generation: 3, checkpoint_lsn: 9, files, crc32: 0 };
        snapshot.crc32 = snapshot.checksum();
        let sealed = snapshot.crc32;
        snapshot.checkpoint_lsn = 10;
        assert_ne!(snapshot.checksum(), sealed, "a changed snapshot fails its checksum");
    }
}
