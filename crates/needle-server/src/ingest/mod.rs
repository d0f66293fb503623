//! A node's cluster shards logged to their streams in NATS JetStream
//! (`needle_cluster::log`; `needle serve --log nats=URL,...`). A shard made
//! on this node gets a stream of its own (emptied of any earlier index's
//! writes of the same name). A shard opened at start first takes back, in
//! order, the writes of its stream its own disk lost; one the cluster places
//! here that the disk lost whole is made again from its index's record and
//! filled from its stream; with a segment store (`--store`), from the
//! shard's last stored commit and the writes of its stream after it (see
//! [`commits`]: the primaries' commits are stored as they are made, and each
//! stream trimmed to the writes after its shard's). The node then takes the
//! stream over with a writer's mark, which fences off any earlier writer (see
//! `needle_cluster::log`), and every write is handed to the shard's
//! [`ShardLog`] (the engine's `IngestLog`), which publishes them in order on
//! the runtime and acknowledges a write once JetStream holds it. A write
//! waits for that before it is answered; while the stream fails, writes are
//! refused and the publisher sends again what JetStream does not hold (a
//! reader keeps a write's first copy). A thread follows the cluster's view:
//! shards the cluster moves here are made, those it moves away dropped.
//!
//! A replica (a copy of a shard whose primary is on another node) is made
//! from the shard's stream and then follows it, a thread a replica applying
//! each write as it lands, so its documents trail the primary's by the
//! stream's delay. It refuses writes of its own ([`CopyLog`]). When the
//! cluster makes it the primary (its primary's node gone), it stops
//! following, takes what is left of the stream and takes the stream over
//! like any shard attached here. A replica copy found on disk at start, or
//! one this node stopped following, is made again from the stream: only a
//! copy that followed the stream throughout is known to hold its prefix.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::stream::FuturesOrdered;
use futures_util::StreamExt;
use needle_cluster::indices::{is_shard_name, split_shard_name};
use needle_cluster::log::{messages, Logged, Nats, ShardStream};
use needle_cluster::{shard_name, Member, ShardedIndex};
use needle_engine::ingest_log::IngestLog;
use needle_engine::{Error, Result};
use tokio::sync::mpsc;

use crate::catalog::{Catalog, Handle};
use crate::error::{ApiError, ApiResult};

mod commits;

pub use commits::STORE_EVERY;

/// How long a write waits for JetStream to hold it.
const WAIT: Duration = Duration::from_secs(10);
/// The pause before a failed stream is tried again.
const RETRY: Duration = Duration::from_secs(1);
/// Times a shard reads on and tries again to take its stream over, when
/// another writer published after its reading.
const TAKE_OVER_TRIES: usize = 5;

/// How long a replica's thread waits for a message before it looks whether to stop.
const POLL: Duration = Duration::from_millis(500);

/// The node's connection to the cluster's NATS servers.
pub struct Ingest {
    nats: Nats,
    runtime: tokio::runtime::Handle,
    /// The node of each shard of each index, as the node last followed the
    /// view: a shard another node held is one moved here.
    seen: Mutex<BTreeMap<String, Vec<String>>>,
    /// The replicas on this node, by local name: each one's log and the
    /// thread that follows its stream (none: made the primary, not yet
    /// attached to its stream).
    replicas: Mutex<BTreeMap<String, Replica>>,
    /// Where shards' commits are stored, if anywhere.
    store: Option<needle_cluster::store::SegmentStore>,
    /// The logs of the primaries on this node, by local name (gone with their index).
    primaries: Mutex<BTreeMap<String, std::sync::Weak<ShardLog>>>,
    /// What this node stored of each of its primaries.
    stored: Mutex<BTreeMap<String, commits::StoredShard>>,
}

/// A replica this node holds.
struct Replica {
    log: Arc<CopyLog>,
    following: Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
}

impl Replica {
    /// Whether its thread stopped following the stream on its own: the
    /// stream was trimmed past the writes it needs (it fell behind).
    fn lost(&self) -> bool {
        self.following
            .as_ref()
            .is_some_and(|(stop, thread)| thread.is_finished() && !stop.load(Ordering::Relaxed))
    }

    /// Stops following the stream, once the thread has applied what it took.
    fn stop(&mut self) {
        if let Some((stop, thread)) = self.following.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = thread.join();
        }
    }
}

impl Ingest {
    /// Connects to the NATS servers `urls` of cluster `cluster` (called off
    /// the runtime's threads), shards' commits kept in `store` if given.
    pub fn connect(
        runtime: tokio::runtime::Handle,
        urls: &[String],
        cluster: &str,
        store: Option<needle_cluster::store::SegmentStore>,
    ) -> std::io::Result<Ingest> {
        let nats = runtime.block_on(Nats::connect(urls, cluster)).map_err(std::io::Error::other)?;
        Ok(Ingest {
            nats,
            runtime,
            seen: Mutex::default(),
            replicas: Mutex::default(),
            store,
            primaries: Mutex::default(),
            stored: Mutex::default(),
        })
    }

    /// Logs every shard the cluster places on this node (`member`): those
    /// in `catalog` once they took back what their disk lost, the others
    /// made again and filled from their streams. Shards on disk the cluster
    /// moved to other nodes meanwhile are dropped (their streams hold them).
    pub fn attach_all(&self, member: &Member, catalog: &Catalog) -> std::io::Result<()> {
        self.drop_moved(member, catalog);
        let view = member.view();
        // The shards on disk first: those made after them are logged as they are made.
        // A copy the view makes a replica here is not: it is made afresh from its stream.
        let replica_here = |name: &str| {
            let Some((index, k)) = split_shard_name(name) else { return false };
            view.indices.get(index).and_then(|i| i.shards.get(k)).is_some_and(|p| p != member.node_id())
        };
        for name in catalog.names().into_iter().filter(|n| is_shard_name(n) && !replica_here(n)) {
            let handle = catalog.get(&name).map_err(|e| from_log(&name, e))?;
            match self.attach(&handle, None) {
                Ok(()) => {}
                // Older than what its stream still holds (a disk put back from a backup):
                // dropped, and made again below from the stored commit and the stream.
                Err(e) if e.reason.contains(TRIMMED) => {
                    eprintln!("needle serve: shard [{name}]: {}: made again", e.reason);
                    drop(handle);
                    catalog.delete(&name).map_err(|e| from_log(&name, e))?;
                }
                Err(e) => return Err(from_log(&name, e)),
            }
        }
        for (index, sharded) in &view.indices {
            let here = sharded.shards.iter().enumerate().filter(|(_, node)| *node == member.node_id());
            for name in here.map(|(k, _)| shard_name(index, k)).filter(|n| !catalog.exists(n)) {
                self.make(catalog, &name, &sharded.created)?;
            }
        }
        *self.seen.lock().unwrap_or_else(|p| p.into_inner()) = holders(&view.indices);
        self.make_replicas(member, catalog, &view.indices);
        Ok(())
    }

    /// Brings the node's shards in line with the cluster's view (called
    /// every second): shards moved here from another node are made and
    /// filled from their streams (a new index's are made by its creation),
    /// shards moved away are dropped. A shard that fails to be made is tried
    /// again next time.
    pub fn follow(&self, member: &Member, catalog: &Catalog) {
        self.drop_moved(member, catalog);
        let view = member.view();
        let me = member.node_id();
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let mut now = holders(&view.indices);
        for (index, sharded) in &view.indices {
            for (k, node) in sharded.shards.iter().enumerate() {
                let before = seen.get(index).and_then(|s| s.get(k));
                let name = shard_name(index, k);
                if node != me || before.is_none_or(|b| b == me) {
                    continue;
                }
                let made = match self.is_replica(&name) {
                    true => self.promote(catalog, &name),
                    false if catalog.exists(&name) => continue,
                    false => self.make(catalog, &name, &sharded.created),
                };
                if let Err(e) = made {
                    eprintln!("needle serve: {e} (tried again in a moment)");
                    now.get_mut(index).expect("every index")[k] = before.cloned().unwrap_or_default();
                }
            }
        }
        // Replicas of indexes seen a round ago: a new index's primaries are made by its creation first.
        let settled: BTreeMap<String, ShardedIndex> = view
            .indices
            .iter()
            .filter(|(i, _)| seen.contains_key(*i))
            .map(|(i, s)| (i.clone(), s.clone()))
            .collect();
        *seen = now;
        drop(seen);
        self.make_replicas(member, catalog, &settled);
    }

    /// Makes the replicas `indices` place on this node that it does not
    /// follow yet, each filled from its stream and then following it; one
    /// that fails is tried again next time.
    fn make_replicas(&self, member: &Member, catalog: &Catalog, indices: &BTreeMap<String, ShardedIndex>) {
        let me = member.node_id();
        for (index, sharded) in indices {
            for k in (0..sharded.shards.len()).filter(|&k| sharded.replicas_of(k).iter().any(|n| n == me)) {
                let name = shard_name(index, k);
                if self.is_replica(&name) && !self.forget_lost_replica(&name) {
                    continue;
                }
                // Said first, so that a making that never ends is seen in the log.
                eprintln!("needle serve: replica [{name}]: making it");
                if let Err(e) = self.make_replica(catalog, &name, &sharded.created) {
                    eprintln!("needle serve: replica [{name}]: {e} (tried again in a moment)");
                }
            }
        }
    }

    fn is_replica(&self, name: &str) -> bool {
        self.replicas.lock().unwrap_or_else(|p| p.into_inner()).contains_key(name)
    }

    /// Forgets replica `name` if it fell behind its trimmed stream (to be made again); whether it did.
    fn forget_lost_replica(&self, name: &str) -> bool {
        let mut replicas = self.replicas.lock().unwrap_or_else(|p| p.into_inner());
        let lost = replicas.get(name).is_some_and(Replica::lost);
        if lost {
            replicas.remove(name);
            eprintln!("needle serve: replica [{name}] fell behind its trimmed stream: made again");
        }
        lost
    }

    /// Makes replica `name` afresh (a copy on disk is dropped: only one
    /// that followed the stream throughout is known to hold its prefix),
    /// from the shard's stored commit if there is one, filled from its
    /// stream, then following it.
    fn make_replica(
        &self,
        catalog: &Catalog,
        name: &str,
        created: &serde_json::Value,
    ) -> std::io::Result<()> {
        if catalog.exists(name) {
            catalog.delete(name).map_err(|e| from_log(name, e))?;
        }
        let stream = self.runtime.block_on(self.nats.open(name)).map_err(std::io::Error::other)?;
        let log = Arc::new(CopyLog::default());
        let last = std::cell::Cell::new(0);
        let fill = |h: &Handle| {
            let read = self.runtime.block_on(stream.read_from(h.writer.next_lsn())).map_err(unavailable)?;
            apply(h, read.writes)?;
            self.not_behind_store(h)?;
            last.set(read.last_sequence);
            h.writer.attach_log(log.clone())?;
            Ok(())
        };
        let fetch = |dir: &std::path::Path| self.fetch(name, dir);
        let seed = self.store.as_ref().map(|_| &fetch as crate::catalog::Seed<'_>);
        let handle = crate::routes::indices::create_with(catalog, name, created, seed, Some(&fill))
            .map_err(|e| from_log(name, e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let runtime = self.runtime.clone();
        let (stopped, start) = (stop.clone(), last.get() + 1);
        let thread = std::thread::spawn(move || follow_stream(&runtime, &stream, &handle, start, &stopped));
        let replica = Replica { log, following: Some((stop, thread)) };
        self.replicas.lock().unwrap_or_else(|p| p.into_inner()).insert(name.to_string(), replica);
        eprintln!("needle serve: replica [{name}] made, following its stream");
        Ok(())
    }

    /// Makes replica `name` the shard's primary: it stops following the
    /// stream, takes the rest of it and takes it over.
    fn promote(&self, catalog: &Catalog, name: &str) -> std::io::Result<()> {
        let log = {
            let mut replicas = self.replicas.lock().unwrap_or_else(|p| p.into_inner());
            // Deleted meanwhile: nothing to promote.
            let Some(replica) = replicas.get_mut(name) else { return Ok(()) };
            replica.stop();
            replica.log.clone()
        };
        let handle = catalog.get(name).map_err(|e| from_log(name, e))?;
        if let Err(e) = self.attach(&handle, Some(&log)) {
            // Fallen behind its trimmed stream: dropped, the shard is made afresh next time.
            if e.reason.contains(TRIMMED) {
                self.replicas.lock().unwrap_or_else(|p| p.into_inner()).remove(name);
                catalog.delete(name).map_err(|e| from_log(name, e))?;
            }
            return Err(from_log(name, e));
        }
        self.replicas.lock().unwrap_or_else(|p| p.into_inner()).remove(name);
        eprintln!("needle serve: replica [{name}] is the shard's primary now");
        Ok(())
    }

    /// Stops following every replica's stream (the server stopping).
    pub fn stop_replicas(&self) {
        let mut replicas = self.replicas.lock().unwrap_or_else(|p| p.into_inner());
        replicas.values_mut().for_each(Replica::stop);
    }

    /// Makes shard `name` (of an index created with `created`), served once
    /// filled from its stored commit and its stream, and logged from then on.
    fn make(&self, catalog: &Catalog, name: &str, created: &serde_json::Value) -> std::io::Result<()> {
        let attach = |h: &Handle| self.attach(h, None);
        let fetch = |dir: &std::path::Path| self.fetch(name, dir);
        let seed = self.store.as_ref().map(|_| &fetch as crate::catalog::Seed<'_>);
        crate::routes::indices::create_with(catalog, name, created, seed, Some(&attach))
            .map_err(|e| from_log(name, e))?;
        Ok(())
    }

    /// Drops the node's copies of shards the view places on other nodes
    /// (the shard's stream stays: it is the copy the new holder fills from),
    /// and replicas of indexes gone from the view (deleted).
    fn drop_moved(&self, member: &Member, catalog: &Catalog) {
        let indices = member.view().indices;
        let me = member.node_id();
        for name in catalog.names() {
            let Some((index, k)) = split_shard_name(&name) else { continue };
            let keep = match indices.get(index).filter(|i| k < i.shards.len()) {
                Some(sharded) => sharded.shards[k] == me || sharded.replicas_of(k).iter().any(|n| n == me),
                // An index not in the view is new (made a moment ago) or deleted: a replica is only the latter.
                None => !self.is_replica(&name),
            };
            if keep {
                continue;
            }
            if let Some(mut replica) = self.replicas.lock().unwrap_or_else(|p| p.into_inner()).remove(&name) {
                replica.stop();
            }
            match catalog.delete(&name) {
                Ok(()) => eprintln!("needle serve: shard [{name}] no longer placed here: dropped"),
                Err(e) => eprintln!("needle serve: shard [{name}] moved away, not dropped: {}", e.reason),
            }
        }
    }

    /// Logs the writes of index `handle`, just made, if it is a shard: its stream starts empty.
    pub fn made(&self, handle: &Handle) -> ApiResult<()> {
        if !is_shard_name(&handle.name) {
            return Ok(());
        }
        self.runtime.block_on(self.nats.remove(&handle.name)).map_err(unavailable)?;
        self.forget_stored(&handle.name).map_err(unavailable)?;
        self.attach(handle, None)
    }

    /// Takes back the writes of shard `handle`'s stream it does not have,
    /// in order, takes the stream over with a writer's mark (writes the
    /// shard has beyond the stream's newest, taken before its node failed
    /// and never logged, become a gap there: a copy filled from the stream
    /// later takes the writes after them), then logs its every write there
    /// (through `replica`'s log, when a replica becomes the primary).
    pub fn attach(&self, handle: &Handle, replica: Option<&Arc<CopyLog>>) -> ApiResult<()> {
        let stream = self.runtime.block_on(self.nats.open(&handle.name)).map_err(unavailable)?;
        let writer = &handle.writer;
        let mut tries = 0;
        // Read to the end, then take over there; a writer that published meanwhile is read too.
        let after = loop {
            let read = self.runtime.block_on(stream.read_from(writer.next_lsn())).map_err(unavailable)?;
            apply(handle, read.writes)?;
            self.not_behind_store(handle)?;
            let have = writer.next_lsn() - 1;
            match self.runtime.block_on(stream.take_over(have, read.last_sequence)) {
                Ok(after) => break after,
                Err(e) if tries == TAKE_OVER_TRIES => return Err(unavailable(e)),
                Err(_) => tries += 1,
            }
        };
        let log = ShardLog::start(stream, writer.next_lsn() - 1, after, &self.runtime);
        let primaries = &mut self.primaries.lock().unwrap_or_else(|p| p.into_inner());
        primaries.insert(handle.name.clone(), Arc::downgrade(&log));
        match replica {
            Some(copy) => copy.promote(log),
            None => handle.writer.attach_log(Arc::new(CopyLog::writing(log)))?,
        }
        Ok(())
    }

    /// Deletes the stream of index `name`, deleted, if it is a shard (a
    /// replica here stops following it).
    pub fn deleted(&self, name: &str) {
        if !is_shard_name(name) {
            return;
        }
        if let Some(mut replica) = self.replicas.lock().unwrap_or_else(|p| p.into_inner()).remove(name) {
            replica.stop();
        }
        if let Err(e) = self.runtime.block_on(self.nats.remove(name)) {
            eprintln!("needle: the stream of deleted shard [{name}] stays: {e}");
        }
        if let Err(e) = self.forget_stored(name) {
            eprintln!("needle: the stored commits of deleted shard [{name}] stay: {e}");
        }
    }
}

/// What the error of a copy behind its trimmed stream says.
const TRIMMED: &str = "they were trimmed once stored";

/// Applies writes read from a shard's stream to its copy `handle`, in
/// order; an error when the stream no longer holds the copy's next write.
fn apply(handle: &Handle, writes: Vec<(u64, Logged)>) -> ApiResult<()> {
    if let Some(first) = trimmed_past(handle, &writes) {
        let next = handle.writer.next_lsn();
        return Err(unavailable(format!(
            "the stream of [{}] holds writes from {first} on, not write {next}: {TRIMMED} (the copy is made again from the stored commit)",
            handle.name
        )));
    }
    for (lsn, write) in writes {
        match write {
            Logged::Write(record) => handle.writer.apply_logged(lsn, &record).map(drop)?,
            Logged::Gap => handle.writer.skip_logged(lsn).map(drop)?,
        }
    }
    Ok(())
}

/// The first of `writes` when it comes after copy `handle`'s next write:
/// the writes between were trimmed from the stream.
fn trimmed_past(handle: &Handle, writes: &[(u64, Logged)]) -> Option<u64> {
    match writes.first() {
        Some((lsn, Logged::Write(_))) if *lsn > handle.writer.next_lsn() => Some(*lsn),
        _ => None,
    }
}

/// A replica's thread: applies the writes of `stream` from sequence `start`
/// on to `handle` as they land, until `stop`. A failure (the stream
/// unreachable) is told and the stream followed again from where it got;
/// a stream trimmed past the replica's next write ends the thread (the
/// replica is made again).
fn follow_stream(
    runtime: &tokio::runtime::Handle,
    stream: &ShardStream,
    handle: &Handle,
    mut start: u64,
    stop: &AtomicBool,
) {
    let name = &handle.name;
    while !stop.load(Ordering::Relaxed) {
        let mut tail = match runtime.block_on(stream.tail(start, handle.writer.next_lsn())) {
            Ok(tail) => tail,
            Err(e) => {
                eprintln!("needle serve: replica [{name}] cannot follow its stream: {e}");
                std::thread::sleep(RETRY);
                continue;
            }
        };
        while !stop.load(Ordering::Relaxed) {
            let failed = match runtime.block_on(tail.next(POLL)) {
                Ok(None) => continue,
                Ok(Some((_, writes))) if trimmed_past(handle, &writes).is_some() => {
                    return eprintln!(
                        "needle serve: replica [{name}]: its stream was trimmed past its next write"
                    );
                }
                Ok(Some((at, writes))) => match apply(handle, writes) {
                    Ok(()) => {
                        start = at + 1;
                        continue;
                    }
                    Err(e) => e.reason,
                },
                Err(e) => e.to_string(),
            };
            eprintln!("needle serve: replica [{name}] following its stream: {failed}");
            std::thread::sleep(RETRY);
            break;
        }
    }
}

/// The node of each shard of each index.
fn holders(indices: &BTreeMap<String, ShardedIndex>) -> BTreeMap<String, Vec<String>> {
    indices.iter().map(|(name, index)| (name.clone(), index.shards.clone())).collect()
}

fn from_log(name: &str, e: ApiError) -> std::io::Error {
    std::io::Error::other(format!("shard [{name}] from its ingest log: {}", e.reason))
}

fn unavailable(e: impl std::fmt::Display) -> ApiError {
    ApiError::from(Error::Unavailable { what: e.to_string() })
}

/// A shard copy's ingest log: a replica's refuses writes (the primary
/// takes them); the primary's, and a replica's once made the primary,
/// hands them to the publisher of the shard's stream.
#[derive(Default)]
pub struct CopyLog {
    writer: OnceLock<Arc<ShardLog>>,
}

impl CopyLog {
    fn writing(log: Arc<ShardLog>) -> CopyLog {
        let copy = CopyLog::default();
        copy.promote(log);
        copy
    }

    fn promote(&self, log: Arc<ShardLog>) {
        let _ = self.writer.set(log);
    }
}

impl IngestLog for CopyLog {
    fn append(&self, lsn: u64, record: Vec<u8>) {
        if let Some(log) = self.writer.get() {
            log.append(lsn, record);
        }
    }

    fn wait(&self, lsn: u64) -> Result<()> {
        self.writer.get().map_or(Ok(()), |log| log.wait(lsn))
    }

    fn check(&self) -> Result<()> {
        match self.writer.get() {
            Some(log) => log.check(),
            None => Err(Error::Unavailable {
                what: "a replica of the shard: writes go to its primary".to_string(),
            }),
        }
    }
}

/// What a shard's publisher has been told.
#[derive(Default)]
struct Acks {
    /// JetStream holds every write up to this one.
    held: u64,
    /// Why the stream fails, until a write is held again.
    failure: Option<String>,
    /// Messages JetStream confirmed that complete a write, oldest first
    /// (the last few thousand): (stream sequence, the write), where the
    /// stream can be trimmed.
    completed: VecDeque<(u64, u64)>,
}

/// How many confirmed messages a shard's log remembers for trimming.
const COMPLETED_KEPT: usize = 4096;

impl Acks {
    fn completed(&mut self, sequence: u64, lsn: u64) {
        if self.completed.len() == COMPLETED_KEPT {
            self.completed.pop_front();
        }
        self.completed.push_back((sequence, lsn));
    }
}

/// One shard's writes on their way to its stream.
struct ShardLog {
    sender: mpsc::UnboundedSender<(u64, Bytes)>,
    acks: Arc<(Mutex<Acks>, Condvar)>,
    stream: ShardStream,
    /// The stream sequence of this writer's mark: its term, greater than any earlier writer's.
    term: u64,
}

impl ShardLog {
    /// The log of a shard whose stream holds (or need not hold) every write
    /// up to `held`, taken over at stream sequence `after` (the writer's mark).
    fn start(stream: ShardStream, held: u64, after: u64, runtime: &tokio::runtime::Handle) -> Arc<ShardLog> {
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut state = Acks { held, ..Acks::default() };
        // The mark completes every write up to `held`.
        state.completed(after, held);
        let acks = Arc::new((Mutex::new(state), Condvar::new()));
        runtime.spawn(publish(stream.clone(), receiver, acks.clone(), after));
        Arc::new(ShardLog { sender, acks, stream, term: after })
    }

    /// The newest write JetStream holds.
    fn held(&self) -> u64 {
        self.state().held
    }

    /// Drops the stream's messages whose writes are all at or before
    /// `lsn` (in a stored commit); forgets them here too.
    async fn trim_through(&self, lsn: u64) -> needle_cluster::log::Result<()> {
        let keep_from = {
            let mut acks = self.state();
            let mut last = None;
            while acks.completed.front().is_some_and(|&(_, l)| l <= lsn) {
                last = acks.completed.pop_front();
            }
            last.map(|(sequence, _)| sequence + 1)
        };
        match keep_from {
            Some(keep_from) => self.stream.trim_before(keep_from).await,
            None => Ok(()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Acks> {
        self.acks.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl IngestLog for ShardLog {
    fn append(&self, lsn: u64, record: Vec<u8>) {
        // The receiver lives as long as the runtime: a send fails only at shutdown.
        let _ = self.sender.send((lsn, Bytes::from(record)));
    }

    fn wait(&self, lsn: u64) -> Result<()> {
        let deadline = Instant::now() + WAIT;
        let mut acks = self.state();
        loop {
            if acks.held >= lsn {
                return Ok(());
            }
            if let Some(failure) = &acks.failure {
                return Err(Error::Unavailable { what: failure.clone() });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let what = format!("the ingest log did not hold write {lsn} in {} s", WAIT.as_secs());
                return Err(Error::Unavailable { what });
            }
            acks = self.acks.1.wait_timeout(acks, left).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    fn check(&self) -> Result<()> {
        match &self.state().failure {
            Some(failure) => Err(Error::Unavailable { what: failure.clone() }),
            None => Ok(()),
        }
    }
}

/// Publishes a shard's writes in order as they come (those waiting when a
/// round starts packed together, see `needle_cluster::log::messages`),
/// many messages in flight, each to follow the one before in the stream
/// (the first: the writer's mark at sequence `after`), and records what
/// JetStream holds. After a failure it reads what the stream holds past the
/// last message JetStream confirmed: the writes its messages there complete
/// are held (messages sent before the failure and stored late included, so
/// no write is taken as held that the stream lacks), and every later write
/// is published again; if another writer's mark is there, the shard was
/// taken over, and the log refuses every write from then on.
async fn publish(
    stream: ShardStream,
    mut receiver: mpsc::UnboundedReceiver<(u64, Bytes)>,
    acks: Arc<(Mutex<Acks>, Condvar)>,
    after: u64,
) {
    let mut unheld: VecDeque<(u64, Bytes)> = VecDeque::new();
    // How many of `unheld` (from its front) were published.
    let mut sent = 0;
    let mut answers = FuturesOrdered::new();
    // The stream sequence JetStream confirmed last, and the one the next message follows.
    let (mut confirmed, mut last) = (after, after);
    // The shard's index is gone (deleted, or the server stopping): what is left is sent, once.
    let mut closed = false;
    let tell = |f: &dyn Fn(&mut Acks)| {
        f(&mut acks.0.lock().unwrap_or_else(|p| p.into_inner()));
        acks.1.notify_all();
    };
    loop {
        if closed && unheld.is_empty() {
            return;
        }
        let mut failure = None;
        for message in messages(unheld.range(sent..)) {
            match stream.publish(message.payload, last).await {
                Ok(answer) => {
                    last += 1;
                    answers.push_back(async move { (message.completes, answer.await) });
                }
                Err(e) => {
                    failure = Some(format!("writes were not sent: {e}"));
                    break;
                }
            }
        }
        sent = unheld.len();
        let failure = match failure {
            Some(failure) => failure,
            None => tokio::select! {
                got = receiver.recv(), if !closed => {
                    match got {
                        Some(write) => {
                            unheld.push_back(write);
                            while let Ok(write) = receiver.try_recv() {
                                unheld.push_back(write);
                            }
                        }
                        None => closed = true,
                    }
                    continue;
                }
                Some((completes, answer)) = answers.next(), if !answers.is_empty() => match answer {
                    Ok(ack) => {
                        confirmed = ack.sequence;
                        if let Some(lsn) = completes {
                            hold(&mut unheld, &mut sent, lsn);
                            tell(&|a| {
                                a.held = a.held.max(lsn);
                                a.failure = None;
                                a.completed(ack.sequence, lsn);
                            });
                        }
                        continue;
                    }
                    Err(e) => format!("JetStream did not take writes: {e}"),
                },
            },
        };
        tell(&|a| a.failure = Some(failure.clone()));
        if closed {
            return;
        }
        answers = FuturesOrdered::new();
        sent = 0;
        tokio::time::sleep(RETRY).await;
        // How far the stream got: its messages after `confirmed` are this writer's, or another's mark.
        let landed = match stream.landed_after(confirmed).await {
            Ok(landed) => landed,
            Err(e) => {
                // Unknown: sent again after the last message known to be held, which JetStream
                // refuses if more got in; the next round looks again.
                last = confirmed;
                tell(&|a| a.failure = Some(format!("the stream cannot be read: {e}")));
                continue;
            }
        };
        if landed.fenced {
            let why = "another node took the shard's stream over (the cluster moved the shard)";
            eprintln!(
                "needle serve: {}: {why}, after sequence {confirmed}: writes refused",
                stream.subject()
            );
            tell(&|a| a.failure = Some(why.to_string()));
            return;
        }
        // The stream answers again: what reached it is held, writes are taken again.
        hold(&mut unheld, &mut sent, landed.through);
        tell(&|a| {
            a.held = a.held.max(landed.through);
            a.failure = None;
        });
        (confirmed, last, sent) = (landed.last, landed.last, 0);
    }
}

/// Drops the writes up to `lsn` from `unheld`: JetStream holds them.
fn hold(unheld: &mut VecDeque<(u64, Bytes)>, sent: &mut usize, lsn: u64) {
    while unheld.front().is_some_and(|(l, _)| *l <= lsn) {
        unheld.pop_front();
        *sent = sent.saturating_sub(1);
    }
}
