//! Which nodes make up the cluster, kept in etcd rather than by a protocol
//! of our own. Each node holds a lease and, under it, the key
//! `/needle/{cluster}/nodes/{node id}` (what it tells the others about
//! itself); a node that stops renewing, killed or cut off, drops out when its
//! lease expires, and one that stops cleanly revokes it and drops out at once.
//! A node id is taken by create-if-absent, so two live nodes cannot share one.
//!
//! One node is the cluster manager (Elasticsearch's elected master, marked
//! `*` in `_cat/nodes`): whoever created `/needle/{cluster}/manager` under its
//! lease. The others try again at every renewal, so the key passes on within
//! a lease's time after its holder is gone. This is the election every
//! single-holder role of the cluster uses.
//!
//! When the shards' writes are logged (`move_shards`: any node can make a
//! shard again from its stream), the manager changes an index's record by a
//! compare-and-swap (`indices::moved`): a primary whose node dropped out goes
//! to a live replica at once; without one, it moves to the live node holding
//! fewest copies once its node has been gone a lease's time (a node gone for
//! less, restarting, keeps its shards); and the replicas an index wants are
//! placed on live nodes holding no copy of the shard. Each node makes the
//! copies its view gives it (the server's `ingest`).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::etcd::{Etcd, EtcdError, LeaseId, Result};
use crate::indices::ShardedIndex;

/// How stale a node's view of the cluster may grow: nodes joining, leaving
/// or dropping out are seen within this (or a third of the lease's time).
pub const READ_EVERY: Duration = Duration::from_secs(1);

pub struct ClusterConfig {
    /// The etcd members' client URLs.
    pub etcd: Vec<String>,
    /// This node's id, unique among the cluster's live nodes.
    pub node_id: String,
    /// How long a node that stops renewing stays a member.
    pub lease_ttl: Duration,
    /// Clusters sharing an etcd keep apart by name.
    pub cluster: String,
    /// Whether the manager moves the shards of a node gone for a lease's
    /// time to live nodes (when writes are logged, so shards can be made again).
    pub move_shards: bool,
}

/// What a node tells the others about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeInfo {
    pub id: String,
    pub name: String,
    /// Where it serves HTTP (`ip:port`).
    pub address: String,
    /// The name of the machine it runs on.
    #[serde(default)]
    pub host: String,
    /// Its figures as of its last renewal (`_cat/nodes` cells, by column).
    #[serde(default)]
    pub figures: serde_json::Map<String, serde_json::Value>,
}

/// The cluster as this node last read it.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// The live nodes, in the order they joined.
    pub nodes: Vec<NodeInfo>,
    /// The id of the cluster manager, if any node holds the role.
    pub manager: Option<String>,
    /// The cluster's indexes, by name, as of the last read.
    pub indices: BTreeMap<String, ShardedIndex>,
}

impl View {
    /// Where node `id` serves HTTP, if it is live.
    pub fn address_of(&self, id: &str) -> Option<&str> {
        self.nodes.iter().find(|n| n.id == id).map(|n| n.address.as_str())
    }
}

pub struct Member {
    etcd: Etcd,
    config: ClusterConfig,
    lease: Mutex<LeaseId>,
    view: Mutex<View>,
    /// When the manager first saw each node that holds shards missing.
    missing_since: Mutex<HashMap<String, Instant>>,
}

impl Member {
    /// Joins the cluster as `info` (its id is `config.node_id`); an error when
    /// a live node holds that id, naming where it serves.
    pub async fn join(config: ClusterConfig, info: &NodeInfo) -> Result<Arc<Member>> {
        let etcd = Etcd::new(&config.etcd)?;
        let lease = claim(&etcd, &config, info).await?;
        let member = Arc::new(Member {
            etcd,
            config,
            lease: Mutex::new(lease),
            view: Mutex::default(),
            missing_since: Mutex::default(),
        });
        member.campaign_and_read().await?;
        Ok(member)
    }

    pub fn node_id(&self) -> &str {
        &self.config.node_id
    }

    pub fn cluster_name(&self) -> &str {
        &self.config.cluster
    }

    /// The cluster as last read (at joining, then at every renewal).
    pub fn view(&self) -> View {
        self.view.lock().expect("view lock").clone()
    }

    /// Renews the lease and republishes `info` every third of the lease's
    /// time, and stands for cluster manager and rereads the cluster every
    /// [`READ_EVERY`] at most, until the runtime ends. A lease found expired
    /// (the node was cut off from etcd longer than its time) is replaced,
    /// and the node joins again.
    pub fn keep_up(self: &Arc<Self>, describe: impl Fn() -> NodeInfo + Send + 'static) {
        let member = Arc::clone(self);
        tokio::spawn(async move {
            let renew_every = member.config.lease_ttl / 3;
            let mut renewed = tokio::time::Instant::now();
            loop {
                tokio::time::sleep(renew_every.min(READ_EVERY)).await;
                let renew = renewed.elapsed() >= renew_every;
                if renew {
                    renewed = tokio::time::Instant::now();
                }
                if let Err(e) = member.tick(renew.then(&describe).as_ref()).await {
                    eprintln!("needle serve: cluster membership of node [{}]: {e}", member.node_id());
                }
            }
        });
    }

    /// Where node `id` serves, if it is in the cluster (without copying the view).
    pub fn address_of(&self, id: &str) -> Option<String> {
        self.view.lock().expect("view lock").address_of(id).map(str::to_string)
    }

    /// Whether node `id` is in the cluster, as the view holds it (without copying the view).
    pub fn has_node(&self, id: &str) -> bool {
        self.view.lock().expect("view lock").nodes.iter().any(|n| n.id == id)
    }

    /// Leaves the cluster now: the lease is revoked, and with it this node's keys.
    pub async fn leave(&self) -> Result<()> {
        let lease = *self.lease.lock().expect("lease lock");
        self.etcd.revoke(lease).await
    }

    /// Renews the lease and republishes `info`, when given; then stands and rereads.
    async fn tick(&self, renew: Option<&NodeInfo>) -> Result<()> {
        if let Some(info) = renew {
            let lease = *self.lease.lock().expect("lease lock");
            if self.etcd.keep_alive(lease).await? {
                self.etcd.put(&node_key(&self.config), &to_json(info), Some(lease)).await?;
            } else {
                let lease = claim(&self.etcd, &self.config, info).await?;
                *self.lease.lock().expect("lease lock") = lease;
            }
        }
        self.campaign_and_read().await
    }

    async fn campaign_and_read(&self) -> Result<()> {
        let lease = *self.lease.lock().expect("lease lock");
        let manager_key = format!("/needle/{}/manager", self.config.cluster);
        self.etcd.create(&manager_key, self.config.node_id.as_bytes(), Some(lease)).await?;
        let manager = self.etcd.get(&manager_key).await?.and_then(|kv| String::from_utf8(kv.value).ok());
        let mut kvs = self.etcd.prefix(&format!("/needle/{}/nodes/", self.config.cluster)).await?;
        kvs.sort_by_key(|kv| kv.create_revision);
        let nodes = kvs.iter().filter_map(|kv| serde_json::from_slice(&kv.value).ok()).collect();
        let mut view = View { nodes, manager, indices: self.indices().await? };
        if self.config.move_shards
            && view.manager.as_deref() == Some(self.node_id())
            && self.move_shards(&view).await?
        {
            view.indices = self.indices().await?;
        }
        *self.view.lock().expect("view lock") = view;
        Ok(())
    }

    /// Moves the shards of nodes gone for a lease's time to live nodes (the
    /// manager's duty); whether any moved. An index changed meanwhile is
    /// left to the next round.
    async fn move_shards(&self, view: &View) -> Result<bool> {
        let live: Vec<String> = view.nodes.iter().map(|n| n.id.clone()).collect();
        let holders =
            || view.indices.values().flat_map(|i| i.shards.iter().chain(i.replicas.iter().flatten()));
        let gone: Vec<String> = {
            let mut missing = self.missing_since.lock().expect("missing lock");
            let absent: Vec<&String> = holders().filter(|n| !live.contains(n)).collect();
            missing.retain(|node, _| absent.contains(&node));
            let now = Instant::now();
            for node in &absent {
                missing.entry(node.to_string()).or_insert(now);
            }
            let long = |since: &Instant| since.elapsed() >= self.config.lease_ttl;
            missing.iter().filter(|(_, since)| long(since)).map(|(n, _)| n.clone()).collect()
        };
        let is_gone = |n: &str| gone.iter().any(|g| g == n);
        let mut load: BTreeMap<String, usize> = BTreeMap::new();
        holders().for_each(|n| *load.entry(n.clone()).or_default() += 1);
        // Decided on the view first: the records are read only when something is to change.
        let changes = view
            .indices
            .values()
            .any(|i| crate::indices::moved(i, &live, is_gone, &mut load.clone()).is_some());
        if !changes {
            return Ok(false);
        }
        let mut any = false;
        for kv in self.etcd.prefix(&self.indices_prefix()).await? {
            let Ok(index) = serde_json::from_slice::<ShardedIndex>(&kv.value) else { continue };
            let Some(after) = crate::indices::moved(&index, &live, is_gone, &mut load) else { continue };
            let value = serde_json::to_vec(&after).expect("JSON");
            if self.etcd.replace(&kv.key, &value, kv.mod_revision).await? {
                eprintln!(
                    "needle serve: copies of [{}] placed (gone: {gone:?}): primaries on {:?}, replicas on {:?}",
                    kv.key.strip_prefix(&self.indices_prefix()).unwrap_or(&kv.key),
                    after.shards,
                    after.replicas
                );
                any = true;
            }
        }
        Ok(any)
    }

    fn indices_prefix(&self) -> String {
        format!("/needle/{}/indices/", self.config.cluster)
    }

    /// Records a new index of the cluster; false when one of that name exists.
    pub async fn create_index(&self, name: &str, index: &ShardedIndex) -> Result<bool> {
        let key = format!("{}{name}", self.indices_prefix());
        let created = self.etcd.create(&key, &serde_json::to_vec(index).expect("JSON"), None).await?;
        if created {
            self.view.lock().expect("view lock").indices.insert(name.to_string(), index.clone());
        }
        Ok(created)
    }

    /// The cluster's index `name` as the view holds it (read every second,
    /// as Elasticsearch's nodes route by the cluster state they last got),
    /// else as etcd holds it (made since). A request routed by a view that
    /// is a moment old reaches shards deleted since and is answered not
    /// found: [`Member::fresh_index`] then tells what holds now.
    pub async fn index(&self, name: &str) -> Result<Option<ShardedIndex>> {
        if let Some(index) = self.view.lock().expect("view lock").indices.get(name) {
            return Ok(Some(index.clone()));
        }
        self.fresh_index(name).await
    }

    /// The cluster's index `name`, read from etcd now (and the view made to agree).
    pub async fn fresh_index(&self, name: &str) -> Result<Option<ShardedIndex>> {
        let found = self.etcd.get(&format!("{}{name}", self.indices_prefix())).await?;
        let found: Option<ShardedIndex> = found.and_then(|kv| serde_json::from_slice(&kv.value).ok());
        let mut view = self.view.lock().expect("view lock");
        match &found {
            Some(index) => drop(view.indices.insert(name.to_string(), index.clone())),
            None => drop(view.indices.remove(name)),
        }
        Ok(found)
    }

    /// Every index of the cluster, by name.
    pub async fn indices(&self) -> Result<BTreeMap<String, ShardedIndex>> {
        let prefix = self.indices_prefix();
        let kvs = self.etcd.prefix(&prefix).await?;
        let named = kvs.into_iter().filter_map(|kv| {
            let index = serde_json::from_slice(&kv.value).ok()?;
            Some((kv.key.strip_prefix(&prefix)?.to_string(), index))
        });
        Ok(named.collect())
    }

    /// Changes the record of the cluster's index `name` by `change`, by a
    /// compare-and-swap (read again and changed again when another change
    /// came between); the record as changed, `None` when there is no index.
    pub async fn update_index(
        &self,
        name: &str,
        change: impl Fn(&mut ShardedIndex),
    ) -> Result<Option<ShardedIndex>> {
        let key = format!("{}{name}", self.indices_prefix());
        loop {
            let Some(kv) = self.etcd.get(&key).await? else { return Ok(None) };
            let Ok(mut index) = serde_json::from_slice::<ShardedIndex>(&kv.value) else { return Ok(None) };
            change(&mut index);
            let value = serde_json::to_vec(&index).expect("JSON");
            if self.etcd.replace(&key, &value, kv.mod_revision).await? {
                self.view.lock().expect("view lock").indices.insert(name.to_string(), index.clone());
                return Ok(Some(index));
            }
        }
    }

    /// Forgets the cluster's index `name`; whether it was there.
    pub async fn delete_index(&self, name: &str) -> Result<bool> {
        self.view.lock().expect("view lock").indices.remove(name);
        self.etcd.delete(&format!("{}{name}", self.indices_prefix())).await
    }
}

/// A new lease holding this node's key, or an error naming the live node that holds it.
async fn claim(etcd: &Etcd, config: &ClusterConfig, info: &NodeInfo) -> Result<LeaseId> {
    let lease = etcd.grant(config.lease_ttl).await?;
    let key = node_key(config);
    if etcd.create(&key, &to_json(info), Some(lease)).await? {
        return Ok(lease);
    }
    let held = etcd.get(&key).await?;
    let holder = held.as_ref().and_then(|kv| serde_json::from_slice::<NodeInfo>(&kv.value).ok());
    if let (Some(kv), Some(h)) = (&held, &holder) {
        if restarted_here(h, info) {
            // The key names the address this process has bound, on this
            // machine: the process that put it is gone, its lease not yet
            // run out. Ending that lease now lets the node rejoin at once.
            etcd.revoke(kv.lease).await?;
            if etcd.create(&key, &to_json(info), Some(lease)).await? {
                return Ok(lease);
            }
        }
    }
    etcd.revoke(lease).await?;
    let at =
        holder.map_or_else(|| "another node".to_string(), |h| format!("the node serving at {}", h.address));
    Err(EtcdError(format!(
        "node id [{}] of cluster [{}] is held by {at} (a node that stopped without leaving holds it \
         until its lease runs out)",
        config.node_id, config.cluster
    )))
}

/// Whether `holder` was this node before a restart: the same machine and
/// the same specific address (one a process serving there would still hold).
fn restarted_here(holder: &NodeInfo, me: &NodeInfo) -> bool {
    let specific = me.address.parse::<std::net::SocketAddr>().is_ok_and(|a| !a.ip().is_unspecified());
    specific && !me.host.is_empty() && holder.host == me.host && holder.address == me.address
}

fn node_key(config: &ClusterConfig) -> String {
    format!("/needle/{}/nodes/{}", config.cluster, config.node_id)
}

fn to_json(info: &NodeInfo) -> Vec<u8> {
    serde_json::to_vec(info).expect("node info is JSON")
}
