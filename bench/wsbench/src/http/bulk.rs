//! `bulk`: `_bulk` ingest into a search server over loopback HTTP (Needle's
//! `needle serve` or OpenSearch, given the same requests). The index is created
//! anew (one shard, no replica, `title` and `body` as text, or the fields of
//! `--mapping`; the corpus's `id` as `_id`, fields the mapping does not name
//! left out, as every engine of WSBench indexes the corpus),
//! the NDJSON batches are built before the clock starts, then sent over
//! `--clients` connections; the time runs until the last batch is acknowledged.
//! A refresh and (optionally) a force merge to one segment follow, timed apart,
//! so the index is ready for `serve-http` runs. Every item must succeed.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use serde_json::{json, Value};

use super::client::{runtime, Conn, Server};
use crate::util::{create_output, open_input, Result};

#[derive(clap::Args, Debug, Clone)]
pub struct BulkArgs {
    /// The server, e.g. http://127.0.0.1:9200.
    #[arg(long)]
    pub url: String,
    /// The index to create (an existing one of that name is deleted first).
    #[arg(long)]
    pub index: String,
    /// The corpus (JSON lines with id, title, body; .gz read as such).
    #[arg(long)]
    pub corpus: std::path::PathBuf,
    /// Documents per `_bulk` request.
    #[arg(long, default_value_t = 1000)]
    pub batch: usize,
    /// Requests in flight, each on its own connection.
    #[arg(long, default_value_t = 2)]
    pub clients: usize,
    /// Index only the first N documents.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Settings merged into the created index's (e.g. '{"translog.durability":"async"}').
    #[arg(long)]
    pub settings: Option<String>,
    /// The created index's mappings, whose properties are the fields sent
    /// (default: title and body as text).
    #[arg(long)]
    pub mapping: Option<String>,
    /// Force-merge to one segment after the refresh.
    #[arg(long)]
    pub forcemerge: bool,
    /// The server's process: its CPU seconds during ingest are reported.
    #[arg(long)]
    pub server_pid: Option<u32>,
    /// Write the JSON result here (default: stdout).
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
}

pub fn bulk(args: BulkArgs) -> Result<()> {
    let batches = batches(&args)?;
    let docs: usize = batches.iter().map(|b| b.docs).sum();
    let bytes: usize = batches.iter().map(|b| b.body.len()).sum();
    let result = runtime()?.block_on(ingest(&args, batches))?;
    let result = json!({
        "kind": "bulk",
        "url": args.url,
        "index": args.index,
        "docs": docs,
        "body_bytes": bytes,
        "batch": args.batch,
        "clients": args.clients,
        "docs_per_second": docs as f64 / result["ingest_seconds"].as_f64().unwrap_or(f64::NAN),
        "measured": result,
    });
    let text = serde_json::to_string_pretty(&result)?;
    eprintln!(
        "{}: {docs} documents in {:.2} s = {:.0} docs/s",
        args.url,
        result["measured"]["ingest_seconds"].as_f64().unwrap_or(0.0),
        result["docs_per_second"].as_f64().unwrap_or(0.0)
    );
    match &args.out {
        Some(p) => {
            let mut w = create_output(p)?;
            w.write_all(text.as_bytes())?;
            w.write_all(b"\n")?;
            w.flush()?;
        }
        None => println!("{text}"),
    }
    Ok(())
}

use std::io::Write;

struct Batch {
    docs: usize,
    body: Bytes,
}

/// The index's mappings: `--mapping`, or title and body as text.
fn mapping(args: &BulkArgs) -> Result<Value> {
    Ok(match &args.mapping {
        Some(text) => serde_json::from_str(text).map_err(|e| format!("--mapping: {e}"))?,
        None => json!({"properties": {"title": {"type": "text"}, "body": {"type": "text"}}}),
    })
}

/// The corpus as `_bulk` bodies of `args.batch` documents each.
fn batches(args: &BulkArgs) -> Result<Vec<Batch>> {
    let mapping = mapping(args)?;
    let fields: Vec<&String> =
        mapping["properties"].as_object().ok_or("--mapping has no properties")?.keys().collect();
    let input = open_input(&args.corpus)?;
    let mut out = Vec::new();
    let (mut body, mut docs, mut total) = (Vec::new(), 0, 0);
    for line in std::io::BufRead::lines(input) {
        if args.limit.is_some_and(|l| total >= l) {
            break;
        }
        let doc: Value = serde_json::from_str(&line?)?;
        let id = match &doc["id"] {
            Value::String(s) => s.clone(),
            Value::Null => return Err("a corpus document has no `id`".into()),
            other => other.to_string(),
        };
        serde_json::to_writer(&mut body, &json!({"index": {"_id": id}}))?;
        body.push(b'\n');
        let sent: serde_json::Map<String, Value> =
            fields.iter().filter_map(|&f| doc.get(f).map(|v| (f.clone(), v.clone()))).collect();
        serde_json::to_writer(&mut body, &sent)?;
        body.push(b'\n');
        docs += 1;
        total += 1;
        if docs == args.batch {
            out.push(Batch { docs, body: Bytes::from(std::mem::take(&mut body)) });
            docs = 0;
        }
    }
    if docs > 0 {
        out.push(Batch { docs, body: Bytes::from(body) });
    }
    Ok(out)
}

async fn ingest(args: &BulkArgs, batches: Vec<Batch>) -> Result<Value> {
    let server = Server::parse(&args.url)?;
    let mut conn = Conn::open(&server).await?;
    let index = format!("/{}", args.index);
    // Absent or not: what matters is that it is gone.
    conn.call("DELETE", &index, "application/json", Bytes::new()).await?;
    let mut settings = json!({"number_of_shards": 1, "number_of_replicas": 0});
    if let Some(extra) = &args.settings {
        let extra: Value = serde_json::from_str(extra).map_err(|e| format!("--settings: {e}"))?;
        for (k, v) in extra.as_object().ok_or("--settings must be a JSON object")? {
            settings[k] = v.clone();
        }
    }
    let mapping = mapping(args)?;
    conn.json("PUT", &index, Some(&json!({"settings": settings, "mappings": mapping}))).await?;
    let cpu = || args.server_pid.map(|p| crate::procstat::sample(p).cpu_seconds);
    let cpu_before = cpu();
    let queue = Arc::new(Mutex::new(batches.into_iter().rev().collect::<Vec<_>>()));
    let started = Instant::now();
    let mut senders = Vec::new();
    for _ in 0..args.clients.max(1) {
        let (queue, server, path) = (Arc::clone(&queue), server.clone(), format!("{index}/_bulk"));
        senders.push(tokio::spawn(async move {
            send_all(&server, &path, &queue).await.map_err(|e| e.to_string())
        }));
    }
    for s in senders {
        s.await?.map_err(|e| format!("_bulk: {e}"))?;
    }
    let ingest_seconds = started.elapsed().as_secs_f64();
    let cpu_ingest = cpu().zip(cpu_before).map(|(a, b)| a - b);
    let t = Instant::now();
    conn.json("POST", &format!("{index}/_refresh"), None).await?;
    let refresh_seconds = t.elapsed().as_secs_f64();
    let forcemerge_seconds = match args.forcemerge {
        true => {
            let t = Instant::now();
            conn.json("POST", &format!("{index}/_forcemerge?max_num_segments=1"), None).await?;
            Some(t.elapsed().as_secs_f64())
        }
        false => None,
    };
    let count = conn.json("GET", &format!("{index}/_count"), None).await?;
    let stats = conn.json("GET", &format!("{index}/_stats/store,segments"), None).await?;
    let total = &stats["indices"][&args.index]["total"];
    Ok(json!({
        "ingest_seconds": ingest_seconds,
        "server_cpu_seconds_ingest": cpu_ingest,
        "refresh_seconds": refresh_seconds,
        "forcemerge_seconds": forcemerge_seconds,
        "count": count["count"],
        "store_bytes": total["store"]["size_in_bytes"],
        "segments": total["segments"]["count"],
    }))
}

/// Takes batches off the shared queue until it is empty; any failed item is an error.
async fn send_all(server: &Server, path: &str, queue: &Mutex<Vec<Batch>>) -> Result<()> {
    let mut conn = Conn::open(server).await?;
    loop {
        let Some(batch) = queue.lock().unwrap().pop() else { return Ok(()) };
        let reply = conn.call("POST", path, "application/x-ndjson", batch.body).await?;
        let value: Value = serde_json::from_slice(&reply.body)?;
        if reply.status != 200 || value["errors"] != json!(false) {
            let first = value["items"]
                .as_array()
                .and_then(|items| items.iter().find(|i| i["index"]["error"].is_object()))
                .map_or_else(|| value.to_string(), |i| i["index"]["error"].to_string());
            return Err(format!(
                "{} on a batch of {}: {}",
                reply.status,
                batch.docs,
                needle_core::printable(&first, 300)
            )
            .into());
        }
    }
}
