//! `needle serve`: the Elasticsearch-compatible HTTP server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use needle_server::{load_demo, Server, ServerConfig};

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
}

pub fn run(args: ServeArgs) -> ExitCode {
    let data = args.data.unwrap_or_else(default_data);
    let config = ServerConfig { api_key: args.api_key, ..ServerConfig::new(data.clone(), args.bind) };
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
