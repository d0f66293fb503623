//! The server: its configuration, its state, and the loop that serves
//! until SIGTERM or Ctrl-C, after which every index is persisted as its
//! durability asks.

use std::future::IntoFuture;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::response::Response;
use tokio::net::TcpListener;

use needle_cluster::{ClusterConfig, Member};

use crate::catalog::Catalog;
use crate::error::{ApiError, ApiResult};
use crate::pools::{Pool, PoolSize};

pub struct ServerConfig {
    /// Where indexes live (`DATA/indices/NAME`).
    pub data: PathBuf,
    pub bind: SocketAddr,
    /// When set, every request must carry `Authorization: ApiKey KEY`.
    pub api_key: Option<String>,
    /// Request bodies above this many bytes are refused with 413.
    pub max_body: usize,
    /// Searches and writes running at once and waiting; beyond, 429 (see `pools`).
    pub search_pool: PoolSize,
    pub write_pool: PoolSize,
    /// A node of a cluster whose membership etcd keeps; `None`: a single node.
    pub cluster: Option<ClusterConfig>,
    /// The NATS servers whose JetStream logs the cluster's shards' writes
    /// (`nats://host:port`); `None`: each shard's own disk alone.
    pub log: Option<Vec<String>>,
    /// Where the shards' commits are stored (a folder), if anywhere (needs `log`).
    pub store: Option<String>,
}

impl ServerConfig {
    /// A server of the indexes in `data` on `bind`, with no API key and the default body limit.
    pub fn new(data: PathBuf, bind: SocketAddr) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        ServerConfig {
            data,
            bind,
            api_key: None,
            max_body: crate::call::MAX_BODY,
            search_pool: PoolSize::search(cores),
            write_pool: PoolSize::write(cores),
            cluster: None,
            log: None,
            store: None,
        }
    }
}

/// What every handler shares.
pub struct App {
    pub catalog: Catalog,
    pub api_key: Option<String>,
    pub max_body: usize,
    pub node_name: String,
    /// The address the server listens on (`_cat` shows its IP).
    pub address: SocketAddr,
    pub cluster_uuid: String,
    pub scrolls: crate::routes::scroll::Scrolls,
    pub searches: Pool,
    pub writes: Pool,
    /// This node's membership of its cluster, if it is in one.
    pub member: Option<Arc<Member>>,
    /// Where its shards' writes are logged, if anywhere but their own disks.
    pub ingest: Option<crate::ingest::Ingest>,
}

impl App {
    pub fn cluster_name(&self) -> &str {
        self.member.as_ref().map_or("needle", |m| m.cluster_name())
    }

    /// The index a write goes to, made when missing (as Elasticsearch
    /// creates an index a write names: a data stream when the index template
    /// matching the name makes one, else an index from that template, if
    /// any, else with dynamic mappings and default settings), except
    /// a cluster shard's: only its index's creation or its move here makes one
    /// (from its stream), so a write reaching a node before the shard is there
    /// is a 503. `create`: the write makes a new document only (a data
    /// stream takes no other).
    pub fn index_for_write(&self, name: &str, create: bool) -> ApiResult<Arc<crate::catalog::Handle>> {
        let shard = self.member.as_ref().and(needle_cluster::indices::split_shard_name(name));
        if let Some((index, k)) = shard.filter(|_| !self.catalog.exists(name)) {
            return Err(crate::coordinator::shard_unavailable(index, k, "not on this node (moving)"));
        }
        let found = if create { self.catalog.get_for_create(name) } else { self.catalog.get(name) };
        match found {
            Err(e) if e.kind == "index_not_found_exception" => {}
            found => return found,
        }
        if self.catalog.templates().data_stream_for(name).is_some() {
            // Made whatever the write (as Elasticsearch makes it), which a stream then takes or refuses.
            match crate::routes::data_streams::make(self, name) {
                Err(e) if e.kind != "resource_already_exists_exception" => return Err(e),
                _ if !create => return Err(crate::data_streams::create_only()),
                _ => return self.catalog.get_for_create(name),
            }
        }
        let body = self.catalog.templates().applied(name, &serde_json::json!({}))?;
        match crate::routes::indices::create_with(&self.catalog, name, &body, None, None) {
            // Made meanwhile by another request.
            Err(e) if e.kind == "resource_already_exists_exception" => self.catalog.get(name),
            made => made,
        }
    }

    /// A document written to index `h` must hold a timestamp when `h` backs a data stream.
    pub fn check_stream_document(&self, h: &crate::catalog::Handle, source: &[u8]) -> ApiResult<()> {
        match self.catalog.data_streams().read().timestamp_field_of(&h.name) {
            Some(field) => crate::data_streams::check_timestamp(field, source),
            None => Ok(()),
        }
    }
}

pub type Shared = Arc<App>;

/// A bound server, not yet serving (so a caller can learn its address and
/// load data first).
pub struct Server {
    listener: TcpListener,
    app: Shared,
    runtime: tokio::runtime::Runtime,
}

impl Server {
    /// Opens the data folder's indexes and binds the address.
    pub fn bind(config: ServerConfig) -> std::io::Result<Server> {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
        let listener = runtime.block_on(TcpListener::bind(config.bind))?;
        let catalog = Catalog::open(&config.data)?;
        let address = listener.local_addr()?;
        // Nodes of one cluster on one machine are told apart by their ids.
        let node_name = config.cluster.as_ref().map_or_else(hostname, |c| c.node_id.clone());
        // The log is reached before joining: a node that cannot log does not join.
        let ingest = match (config.log, &config.cluster) {
            (Some(urls), Some(cluster)) => {
                let store = match config.store.as_deref() {
                    Some(at) => Some(runtime.block_on(segment_store(at, cluster))?),
                    None => None,
                };
                Some(crate::ingest::Ingest::connect(
                    runtime.handle().clone(),
                    &urls,
                    &cluster.cluster,
                    store,
                )?)
            }
            (Some(_), None) => {
                return Err(std::io::Error::other(
                    "an ingest log (--log) is for a node of a cluster (--cluster)",
                ))
            }
            (None, _) if config.store.is_some() => {
                return Err(std::io::Error::other(
                    "a segment store (--store) is for a cluster whose writes are logged (--log)",
                ))
            }
            (None, _) => None,
        };
        let member = match config.cluster {
            Some(cluster) => {
                let info = crate::node_stats::node_info(&cluster.node_id, &node_name, address);
                let joined = runtime.block_on(Member::join(cluster, &info));
                Some(joined.map_err(|e| std::io::Error::other(format!("joining the cluster: {e}")))?)
            }
            None => None,
        };
        if let (Some(ingest), Some(member)) = (&ingest, &member) {
            ingest.attach_all(member, &catalog)?;
        }
        let app = Arc::new(App {
            catalog,
            api_key: config.api_key,
            max_body: config.max_body,
            node_name,
            address,
            cluster_uuid: crate::catalog::uuid(),
            scrolls: Default::default(),
            searches: Pool::new("search", config.search_pool),
            writes: Pool::new("write", config.write_pool),
            member,
            ingest,
        });
        Ok(Server { listener, app, runtime })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    pub fn catalog(&self) -> &Catalog {
        &self.app.catalog
    }

    /// Serves until `stop` resolves, or SIGTERM, or Ctrl-C; then persists
    /// every index as its durability asks.
    pub fn serve_until(
        self,
        stop: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let Server { listener, app, runtime } = self;
        let router = crate::routes::router(app.clone());
        if let Some(member) = &app.member {
            let (name, address) = (app.node_name.clone(), app.address);
            let id = member.node_id().to_string();
            let _entered = runtime.enter();
            member.keep_up(move || crate::node_stats::node_info(&id, &name, address));
        }
        let following = follow_the_cluster(&app);
        let storing = store_commits(&app);
        let served = runtime.block_on(async move {
            let shutdown = async move {
                tokio::select! {
                    _ = stop => {}
                    _ = terminated() => {}
                }
            };
            axum::serve(listener, router).with_graceful_shutdown(shutdown).into_future().await
        });
        if let Some(member) = &app.member {
            // Leaving at once, not when the lease runs out: searches stop being sent here.
            if let Err(e) = runtime.block_on(member.leave()) {
                eprintln!("needle serve: leaving the cluster: {e}");
            }
        }
        for (stop, thread) in following.into_iter().chain(storing) {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let _ = thread.join();
        }
        if let Some(ingest) = &app.ingest {
            ingest.stop_replicas();
        }
        // Handlers still running finish before the runtime goes; then the indexes are persisted.
        drop(runtime);
        app.catalog.close();
        served
    }

    pub fn serve(self) -> std::io::Result<()> {
        self.serve_until(std::future::pending())
    }
}

/// A thread that runs `round` every `period` until told to stop.
type Rounds = (Arc<AtomicBool>, std::thread::JoinHandle<()>);

fn every(period: std::time::Duration, app: &Shared, round: impl Fn(&App) + Send + 'static) -> Rounds {
    let stop = Arc::new(AtomicBool::new(false));
    let (app, stopped) = (app.clone(), stop.clone());
    let thread = std::thread::spawn(move || {
        while !stopped.load(Ordering::Relaxed) {
            std::thread::sleep(period);
            round(&app);
        }
    });
    (stop, thread)
}

/// With an ingest log, a thread that makes the shards the cluster moves to
/// this node and drops those it moves away, every second until told to stop.
fn follow_the_cluster(app: &Shared) -> Option<Rounds> {
    app.ingest.as_ref().zip(app.member.as_ref())?;
    Some(every(needle_cluster::membership::READ_EVERY, app, |app| {
        if let (Some(ingest), Some(member)) = (&app.ingest, &app.member) {
            ingest.follow(member, &app.catalog);
        }
    }))
}

/// With a segment store, a thread that stores the commits of this node's primaries.
fn store_commits(app: &Shared) -> Option<Rounds> {
    app.ingest.as_ref()?;
    Some(every(crate::ingest::STORE_EVERY, app, |app| {
        if let Some(ingest) = &app.ingest {
            ingest.store_commits(&app.catalog);
        }
    }))
}

/// The segment store at `location` for the cluster `cluster` configures, tried
/// once: one that cannot be used stops the node at start.
async fn segment_store(
    location: &str,
    cluster: &ClusterConfig,
) -> std::io::Result<needle_cluster::store::SegmentStore> {
    let etcd = needle_cluster::etcd::Etcd::new(&cluster.etcd).map_err(std::io::Error::other)?;
    let store = needle_cluster::store::SegmentStore::open(location, etcd, &cluster.cluster)
        .map_err(std::io::Error::other)?;
    store.check().await.map_err(std::io::Error::other)?;
    Ok(store)
}

async fn terminated() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "needle".into())
}

/// Runs `work` (engine calls block: fsyncs, reads, scoring) on the blocking pool.
pub async fn blocking(work: impl FnOnce() -> ApiResult<Response> + Send + 'static) -> Response {
    answer(tokio::task::spawn_blocking(work).await)
}

/// A handler's response, its error's, or a 500 when it failed (panicked).
pub fn answer<E: std::fmt::Display>(handled: Result<ApiResult<Response>, E>) -> Response {
    match handled {
        Ok(Ok(response)) => response,
        Ok(Err(e)) => axum::response::IntoResponse::into_response(e),
        Err(e) => axum::response::IntoResponse::into_response(ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "exception",
            format!("the request's handler failed: {e}"),
        )),
    }
}
