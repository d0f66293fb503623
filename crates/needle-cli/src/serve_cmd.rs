//! `needle serve`: the Elasticsearch-compatible HTTP server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use needle_server::{load_demo, ClusterConfig, Server, ServerConfig};

#[derive(Args)]
pub struct ServeArgs {
    /// Where the indexes live (default: the user's data folder, `~/.local/share/needle`).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Address to listen on (loopback by default: reachable from this machine only).
    #[arg(long, default_value = "127.0.0.1:9200")]
    bind: SocketAddr,
    /// Require `Authorization: ApiKey KEY` on every request (or set NEEDLE_API_KEY).
    #[arg(long, env = "NEEDLE_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// Load the bundled State of the Union addresses into index `sotu` (if absent).
    #[arg(long)]
    demo: bool,
    /// Join a cluster whose membership etcd keeps: `etcd=http://HOST:PORT,...` (its members' client URLs).
    #[arg(long, value_name = "etcd=URL,...", value_parser = etcd_urls, requires = "node_id")]
    cluster: Option<EtcdUrls>,
    /// This node's id in the cluster, unique among its live nodes.
    #[arg(long)]
    node_id: Option<String>,
    /// Seconds a node that stops renewing its lease (killed, cut off) stays a member.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    lease_ttl: u64,
    /// The cluster's name: clusters sharing an etcd keep apart by it.
    #[arg(long, default_value = "needle")]
    cluster_name: String,
    /// Log every write of this node's shards to NATS JetStream before acknowledging it:
    /// `nats=nats://HOST:PORT,...` (the cluster's NATS servers; streams get up to three copies).
    #[arg(long, value_name = "nats=URL,...", value_parser = nats_urls, requires = "cluster")]
    log: Option<NatsUrls>,
    /// Keep the shards' commits in this folder (shared by the nodes) or in S3
    /// (`s3://BUCKET[/PREFIX]`; credentials, region and `AWS_ENDPOINT` from the
    /// AWS_* environment): a copy made on another node starts from its shard's
    /// last stored commit, and streams are trimmed to the writes after it.
    #[arg(long, value_name = "DIR|s3://BUCKET[/PREFIX]", requires = "log")]
    store: Option<String>,
}

/// The etcd members' client URLs.
#[derive(Clone)]
struct EtcdUrls(Vec<String>);

/// The URLs of `etcd=URL,URL,...`.
fn etcd_urls(value: &str) -> Result<EtcdUrls, String> {
    urls_after("etcd", "etcd's client URLs", value).map(EtcdUrls)
}

/// The NATS servers' URLs.
#[derive(Clone)]
struct NatsUrls(Vec<String>);

/// The URLs of `nats=URL,URL,...`.
fn nats_urls(value: &str) -> Result<NatsUrls, String> {
    urls_after("nats", "the NATS servers' URLs", value).map(NatsUrls)
}

/// The comma-separated URLs of `{system}=URL,...`, one at least.
fn urls_after(system: &str, what: &str, value: &str) -> Result<Vec<String>, String> {
    let urls =
        value.strip_prefix(&format!("{system}=")).ok_or(format!("expected {system}=URL,... ({what})"))?;
    let urls: Vec<String> = urls.split(',').filter(|u| !u.is_empty()).map(str::to_string).collect();
    match urls.is_empty() {
        true => Err(format!("no URL after {system}=")),
        false => Ok(urls),
    }
}

pub fn run(args: ServeArgs) -> ExitCode {
    let data = args.data.unwrap_or_else(default_data);
    let cluster = args.cluster.map(|EtcdUrls(etcd)| ClusterConfig {
        etcd,
        node_id: args.node_id.unwrap_or_default(),
        lease_ttl: Duration::from_secs(args.lease_ttl),
        cluster: args.cluster_name,
        // A shard whose writes are logged can be made again on another node.
        move_shards: args.log.is_some(),
    });
    let log = args.log.map(|NatsUrls(urls)| urls);
    let config = ServerConfig {
        api_key: args.api_key,
        cluster,
        log,
        store: args.store,
        ..ServerConfig::new(data.clone(), args.bind)
    };
    let server = match Server::bind(config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot serve {} on {}: {e}", data.display(), args.bind);
            return ExitCode::from(2);
        }
    };
    if args.demo {
        match load_demo(&server) {
            Ok(0) => {}
            Ok(n) => eprintln!("loaded {n} State of the Union addresses into index [sotu]"),
            Err(e) => {
                eprintln!("error: the demo corpus was not loaded: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let addr = server.local_addr().map_or(args.bind, |a| a);
    eprintln!("needle serving {} on http://{addr} (Ctrl-C or SIGTERM to stop)", data.display());
    match server.serve() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// `$XDG_DATA_HOME/needle`, else `~/.local/share/needle`, else `./needle-data`.
fn default_data() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("needle");
    }
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(home) => PathBuf::from(home).join(".local/share/needle"),
        None => PathBuf::from("needle-data"),
    }
}
