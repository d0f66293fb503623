//! Needle's side of WSBench: `index-needle` builds an index with the same fields
//! as the peers (title and body as text, `id` as the document id, everything else
//! ignored, one segment), and `serve-needle` serves bench/PROTOCOL.md with the
//! library (`Index::search`), T worker threads answering requests concurrently.

use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use needle_engine::{ImportOptions, ImportProgress, Index, Schema, SearchRequest};

use crate::util::{open_input, Result};

/// The mapping every WSBench Needle index uses.
pub const MAPPING: &str =
    r#"{"dynamic": false, "properties": {"title": {"type": "text"}, "body": {"type": "text"}}}"#;

pub fn index(corpus: &Path, dir: &Path, threads: usize, memory_bytes: u64) -> Result<()> {
    let started = Instant::now();
    let schema = Schema::from_mapping(MAPPING)?;
    let mut index = Index::open_or_create(dir, Some(schema))?;
    let mut input = open_input(corpus)?;
    let options = ImportOptions { threads, memory_bytes, ..Default::default() };
    let summary = index.import(&mut input, &options, &ImportProgress::default())?;
    let segments = index.segments().len();
    index.merge(1)?;
    eprintln!(
        "indexed {} documents ({:.1} MB) in {:.1} s into {segments} segment(s), merged to {} in {:.1} s total",
        summary.docs,
        summary.input_bytes as f64 / 1e6,
        summary.elapsed.as_secs_f64(),
        index.segments().len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// How `serve-needle` answers.
#[derive(Debug, Clone, Copy)]
pub struct ServeOptions {
    /// Let phrases use the Bloom filters.
    pub bloom: bool,
    /// Count each query's reads by data kind (see `needle search --stats`).
    pub read_stats: bool,
}

struct Shared {
    index: Index,
    options: ServeOptions,
    /// Bytes needed by data kind, summed over the queries answered.
    needed: Mutex<std::collections::BTreeMap<String, u64>>,
    out: Mutex<std::io::Stdout>,
    /// Requests accepted and not yet answered; STATS waits for zero.
    inflight: Mutex<u64>,
    idle: Condvar,
    queries: AtomicU64,
    errors: AtomicU64,
}

impl Shared {
    fn answer(&self, line: &str) {
        let text = match handle(self, line) {
            Ok(t) => t,
            Err((id, msg)) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                format!("{id}\tERROR\t{}\n", msg.replace(['\t', '\n', '\r'], " "))
            }
        };
        self.queries.fetch_add(1, Ordering::Relaxed);
        {
            let mut out = self.out.lock().unwrap();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
        let mut n = self.inflight.lock().unwrap();
        *n -= 1;
        if *n == 0 {
            self.idle.notify_all();
        }
    }
}

fn handle(shared: &Shared, line: &str) -> std::result::Result<String, (String, String)> {
    let mut parts = line.splitn(4, '\t');
    let id = parts.next().unwrap_or("").to_string();
    let (Some(mode), Some(k), Some(query)) = (parts.next(), parts.next(), parts.next()) else {
        return Err((id, "expected ID\\tMODE\\tK\\tQUERY".into()));
    };
    let top_k: usize = k.parse().map_err(|_| (id.clone(), format!("bad K `{k}`")))?;
    let track_total_hits = match mode {
        // Lucene's `IndexSearcher.search(query, k)` counts hits exactly up to 1,000, then prunes.
        "top" => 1_000,
        "count" => u64::MAX,
        other => return Err((id, format!("unknown mode `{other}`"))),
    };
    let mut request = SearchRequest::new(query);
    request.top_k = top_k;
    request.track_total_hits = track_total_hits;
    request.bloom = shared.options.bloom;
    request.stats = shared.options.read_stats;
    let response = shared.index.search(&request).map_err(|e| (id.clone(), e.to_string()))?;
    if let Some(stats) = &response.stats {
        let mut needed = shared.needed.lock().unwrap();
        for (kind, bytes) in &stats.needed_bytes {
            *needed.entry((*kind).to_string()).or_default() += bytes;
        }
    }
    let mut s = format!("{id}\t{}\t", response.total);
    for (i, h) in response.hits.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&h.id);
    }
    s.push('\n');
    Ok(s)
}

pub fn serve(dir: &Path, threads: usize, options: ServeOptions) -> Result<()> {
    let index = Index::open(dir)?;
    let docs = index.num_docs();
    let shared = Arc::new(Shared {
        index,
        options,
        needed: Mutex::new(Default::default()),
        out: Mutex::new(std::io::stdout()),
        inflight: Mutex::new(0),
        idle: Condvar::new(),
        queries: AtomicU64::new(0),
        errors: AtomicU64::new(0),
    });
    {
        let mut out = shared.out.lock().unwrap();
        let ready =
            serde_json::json!({"engine": "needle", "version": env!("CARGO_PKG_VERSION"), "docs": docs});
        writeln!(out, "READY\t{ready}")?;
        out.flush()?;
    }
    let (tx, rx) = crossbeam_channel::unbounded::<String>();
    let workers: Vec<_> = (0..threads.max(1))
        .map(|_| {
            let rx = rx.clone();
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || {
                for line in rx {
                    shared.answer(&line);
                }
            })
        })
        .collect();
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let line = line?;
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            continue;
        }
        if line == "STATS" {
            let mut n = shared.inflight.lock().unwrap();
            while *n > 0 {
                n = shared.idle.wait(n).unwrap();
            }
            let stats = serde_json::json!({
                "rss_kb": crate::procstat::self_rss_kb(),
                "queries": shared.queries.load(Ordering::Relaxed),
                "errors": shared.errors.load(Ordering::Relaxed),
                "needed_bytes": *shared.needed.lock().unwrap(),
            });
            let mut out = shared.out.lock().unwrap();
            writeln!(out, "STATS\t{stats}")?;
            out.flush()?;
            continue;
        }
        *shared.inflight.lock().unwrap() += 1;
        tx.send(line.to_string()).map_err(|_| "workers gone")?;
    }
    drop(tx);
    for w in workers {
        let _ = w.join();
    }
    Ok(())
}
