//! `serve-http`: an engine of bench/PROTOCOL.md that forwards every search to a
//! server speaking Elasticsearch's API. `ID top|count K QUERY` becomes
//! `POST /INDEX/_search` with
//! `{"size": K, "_source": false, "track_total_hits": 1000|true,
//!   "query": {"query_string": {"query": QUERY, "fields": FIELDS, "type": TYPE}}}`
//! over up to `--threads` keep-alive connections; the answer line carries
//! `hits.total.value`, the hits' `_id`s and their scores. `ID values K BODY`
//! (`needle-bench values`) posts BODY as it is and answers as Needle's side
//! does. Only searches: `add` and the update modes are refused.
//!
//! The bridge runs on one thread of the same machine as the server, so its CPU is
//! the client's cost of any HTTP benchmark here; `STATS` reports it apart from
//! the server's (given `--server-pid`).

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use super::client::{runtime, Conn, Server};
use crate::util::Result;

#[derive(clap::Args, Debug, Clone)]
pub struct BridgeArgs {
    /// The server, e.g. http://127.0.0.1:9200.
    #[arg(long)]
    pub url: String,
    /// The index searched (the engine protocol's --index).
    #[arg(long)]
    pub index: String,
    /// Searches in flight at most, each on its own connection (the protocol's --threads).
    #[arg(long, default_value_t = 16)]
    pub threads: usize,
    /// The query string's fields.
    #[arg(long, default_value = "title,body")]
    pub fields: String,
    /// How query_string joins a term's fields: best_fields (dis-max) or most_fields (sum).
    #[arg(long, default_value = "best_fields")]
    pub query_type: String,
    /// The server's process: STATS then reports its CPU seconds and resident memory.
    #[arg(long)]
    pub server_pid: Option<u32>,
}

struct Shared {
    server: Server,
    path: String,
    fields: Vec<String>,
    query_type: String,
    idle: Mutex<Vec<Conn>>,
    out: Mutex<std::io::Stdout>,
    requests: AtomicU64,
    errors: AtomicU64,
}

pub fn serve(args: BridgeArgs) -> Result<()> {
    runtime()?.block_on(run(args))
}

async fn run(args: BridgeArgs) -> Result<()> {
    let server = Server::parse(&args.url)?;
    let mut conn = Conn::open(&server).await?;
    let root = conn.json("GET", "/", None).await?;
    let count = conn.json("GET", &format!("/{}/_count", args.index), None).await?;
    let ready = json!({
        "engine": root["version"]["distribution"].as_str().unwrap_or("elasticsearch"),
        "version": root["version"]["number"],
        "docs": count["count"],
        "url": args.url,
    });
    let shared = Arc::new(Shared {
        server,
        path: format!("/{}/_search", args.index),
        fields: args.fields.split(',').map(str::to_string).collect(),
        query_type: args.query_type.clone(),
        idle: Mutex::new(vec![conn]),
        out: Mutex::new(std::io::stdout()),
        requests: AtomicU64::new(0),
        errors: AtomicU64::new(0),
    });
    shared.write(&format!("READY\t{ready}\n"));
    let lines = stdin_lines();
    let slots = Arc::new(Semaphore::new(args.threads.max(1)));
    let all = args.threads.max(1) as u32;
    let mut lines = lines;
    while let Some(line) = lines.recv().await {
        let line = line.trim_end_matches('\r').to_string();
        if line.is_empty() {
            continue;
        }
        if line == "STATS" {
            // Every slot free: every earlier request answered.
            drop(slots.acquire_many(all).await?);
            shared.write(&format!("STATS\t{}\n", shared.stats(args.server_pid)));
            continue;
        }
        let slot = slots.clone().acquire_owned().await?;
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let answer = shared.answer(&line).await;
            shared.write(&answer);
            drop(slot);
        });
    }
    drop(slots.acquire_many(all).await?);
    Ok(())
}

/// The protocol's input, read on a thread of its own so the runtime never blocks on it.
fn stdin_lines() -> tokio::sync::mpsc::UnboundedReceiver<String> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

impl Shared {
    fn write(&self, s: &str) {
        let mut out = self.out.lock().unwrap();
        let _ = out.write_all(s.as_bytes());
        let _ = out.flush();
    }

    fn stats(&self, server_pid: Option<u32>) -> Value {
        let mut stats = json!({
            "requests": self.requests.load(Ordering::Relaxed),
            "errors": self.errors.load(Ordering::Relaxed),
            "connections": self.idle.lock().unwrap().len(),
            "bridge_rss_kb": crate::procstat::self_rss_kb(),
        });
        if let Some(pid) = server_pid {
            stats["server_cpu_seconds"] = json!(crate::procstat::sample(pid).cpu_seconds);
            stats["server_rss_kb"] = json!(crate::procstat::rss_kb(&pid.to_string()));
        }
        stats
    }

    async fn answer(&self, line: &str) -> String {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let mut parts = line.splitn(4, '\t');
        let id = parts.next().unwrap_or("");
        let answer = match (parts.next(), parts.next(), parts.next()) {
            (Some("values"), _, Some(body)) => match self.post(body.to_string()).await {
                Ok(value) => {
                    return crate::values::answer_line(id, &value).unwrap_or_else(|e| self.failed(id, &e))
                }
                Err(e) => Err(e),
            },
            (Some(mode @ ("top" | "count")), Some(k), Some(query)) => self.search(mode, k, query).await,
            (Some(mode), _, _) => Err(format!("mode `{mode}` is not served over HTTP").into()),
            _ => Err("expected ID\\tMODE\\tK\\tQUERY".into()),
        };
        match answer {
            Ok((total, hits)) => {
                let ids: Vec<&str> = hits.iter().map(|(id, _)| id.as_str()).collect();
                let scores: Vec<String> = hits.iter().map(|(_, s)| s.to_string()).collect();
                format!("{id}\t{total}\t{}\t{}\n", ids.join(","), scores.join(","))
            }
            Err(e) => self.failed(id, &e),
        }
    }

    /// The error line of request `id`, counted.
    fn failed(&self, id: &str, e: &dyn std::fmt::Display) -> String {
        self.errors.fetch_add(1, Ordering::Relaxed);
        format!("{id}\tERROR\t{}\n", e.to_string().replace(['\t', '\n'], " "))
    }

    /// Posts a search body on an idle connection; the answer, or the server's error.
    async fn post(&self, body: String) -> Result<Value> {
        let popped = self.idle.lock().unwrap().pop();
        let mut conn = match popped {
            Some(c) => c,
            None => Conn::open(&self.server).await?,
        };
        let reply = conn.call("POST", &self.path, "application/json", Bytes::from(body)).await?;
        self.idle.lock().unwrap().push(conn);
        let value: Value = serde_json::from_slice(&reply.body)?;
        if reply.status != 200 {
            let reason = value["error"]["reason"].as_str().map_or_else(|| value.to_string(), str::to_string);
            return Err(format!("{}: {reason}", reply.status).into());
        }
        Ok(value)
    }

    /// The hit count and the hits' ids and scores.
    async fn search(&self, mode: &str, k: &str, query: &str) -> Result<(u64, Vec<(String, f32)>)> {
        let size: usize = k.parse().map_err(|_| format!("bad K `{k}`"))?;
        let track: Value = if mode == "count" { json!(true) } else { json!(1000) };
        let body = json!({
            "size": size,
            "_source": false,
            "track_total_hits": track,
            "query": {"query_string": {"query": query, "fields": self.fields, "type": self.query_type}},
        });
        let value = self.post(body.to_string()).await?;
        let total = value["hits"]["total"]["value"].as_u64().ok_or("the answer has no hits.total.value")?;
        let hits = value["hits"]["hits"]
            .as_array()
            .ok_or("the answer has no hits.hits")?
            .iter()
            .map(|h| {
                (h["_id"].as_str().unwrap_or("").to_string(), h["_score"].as_f64().unwrap_or(f64::NAN) as f32)
            })
            .collect();
        Ok((total, hits))
    }
}
