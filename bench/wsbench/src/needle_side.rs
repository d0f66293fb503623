//! Needle's side of WSBench: `index-needle` builds an index with the same fields
//! as the peers (title and body as text, `id` as the document id, everything else
//! ignored, one segment), and `serve-needle` serves bench/PROTOCOL.md with the
//! library, T worker threads answering searches concurrently on searcher
//! snapshots; with `--live`, the index's writer also takes the real-time
//! requests (`add` on dedicated ingest threads, `id` probes answered by the
//! input thread so they never queue behind a search).

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use needle_engine::{
    Durability, IfCurrent, ImportOptions, ImportProgress, Index, IndexWriter, ParseOptions, Schema,
    SearchRequest, WriterOptions,
};

use crate::queue::Queue;
use crate::util::{open_input, Result};

/// The mapping every WSBench Needle index uses: the benchmark's fields; the
/// others only in the corpus with values (`needle-bench with-values`): the
/// update benchmark's `last_modified` and `title_dv`, and `values`' fields.
pub const MAPPING: &str = r#"{"dynamic": false, "properties": {"title": {"type": "text"}, "body": {"type": "text"},
  "last_modified": {"type": "long"}, "title_dv": {"type": "binary"},
  "tag": {"type": "keyword"}, "words": {"type": "long"}, "rating": {"type": "double"}, "stamp": {"type": "date"}}}"#;

pub fn index(corpus: &Path, dir: &Path, threads: usize, memory_bytes: u64) -> Result<()> {
    let started = Instant::now();
    let schema = Schema::from_mapping(MAPPING)?;
    let index = Index::open_or_create(dir, Some(schema))?;
    let writer = index.writer(WriterOptions { durability: Durability::Graceful, ..Default::default() })?;
    let mut input = open_input(corpus)?;
    let options = ImportOptions { threads, memory_bytes, ..Default::default() };
    let summary = writer.import(&mut input, &options, &ImportProgress::default())?;
    let segments = index.segment_counts().0;
    writer.merge(1)?;
    writer.close()?;
    eprintln!(
        "indexed {} documents ({:.1} MB) in {:.1} s into {segments} segment(s), merged to {} in {:.1} s total",
        summary.docs,
        summary.input_bytes as f64 / 1e6,
        summary.elapsed.as_secs_f64(),
        index.segment_counts().0,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// How `serve-needle` answers.
#[derive(Clone)]
pub struct ServeOptions {
    /// Let phrases use the Bloom filters.
    pub bloom: bool,
    /// Count each query's reads by data kind (see `needle search --stats`).
    pub read_stats: bool,
    /// Open the index live (real-time requests allowed) with a writer of these options.
    pub live: Option<WriterOptions>,
    /// Live: threads applying `add` requests.
    pub ingest_threads: usize,
    /// What opening a read-only index checks.
    pub verify: needle_engine::Verify,
    /// Bytes of the result cache (0: none).
    pub result_cache_bytes: usize,
    /// How a read-only index's files are read.
    pub reads: needle_engine::ReadOptions,
    /// A query log whose hottest term records are pinned, and the bytes to pin.
    pub pin_log: Option<PathBuf>,
    pub pin_bytes: usize,
    /// How a term's default fields join: summed (Lucene's MultiFieldQueryParser,
    /// `None`) or in a dis-max with this tie breaker (Elasticsearch's query_string).
    pub field_tie_breaker: Option<f32>,
}

/// The index being served, and its writer when started `--live`.
struct Served {
    index: Index,
    writer: Option<IndexWriter>,
}

impl Served {
    fn live(&self) -> Result<&IndexWriter> {
        self.writer.as_ref().ok_or_else(|| "this engine was started without --live".into())
    }
}

struct Shared {
    index: Served,
    options: ServeOptions,
    /// Bytes needed, and pages touched, by data kind, summed over the queries answered.
    needed: Mutex<std::collections::BTreeMap<String, u64>>,
    pages: Mutex<std::collections::BTreeMap<String, u64>>,
    out: Mutex<std::io::Stdout>,
    /// Requests accepted and not yet answered; STATS waits for zero.
    inflight: Mutex<u64>,
    idle: Condvar,
    queries: AtomicU64,
    errors: AtomicU64,
    /// Writes (adds and in-place updates) made, and the time spent in them.
    writes: AtomicU64,
    write_nanos: AtomicU64,
    write_cpu_nanos: AtomicU64,
    /// Durable mode: adds applied and waiting for the write-ahead log, (request id, `_id`,
    /// sequence number), acknowledged in order by one thread (group commit with one writer).
    /// Taken (closed) at the end of input.
    durable_acks: Mutex<Option<crossbeam_channel::Sender<(String, String, u64)>>>,
}

type Answer = std::result::Result<Option<String>, (String, String)>;

impl Shared {
    fn answer(&self, line: &str) {
        match handle(self, line) {
            Ok(Some(text)) => self.reply(Ok(text)),
            Ok(None) => {} // answered later, by the acknowledging thread
            Err(e) => self.reply(Err(e)),
        }
    }

    /// Writes one answer and counts it done.
    fn reply(&self, result: std::result::Result<String, (String, String)>) {
        let text = result.unwrap_or_else(|(id, msg)| {
            self.errors.fetch_add(1, Ordering::Relaxed);
            format!("{id}\tERROR\t{}\n", msg.replace(['\t', '\n', '\r'], " "))
        });
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

/// The MODE field of a request line.
/// The update benchmark's sort: `last_modified`, newest first.
fn by_last_modified(schema: &needle_engine::Schema) -> Result<needle_engine::SortKey> {
    let field = schema.field_id("last_modified").ok_or("the index has no `last_modified` field")?;
    let missing = needle_engine::missing_value(needle_engine::FieldKind::Long, true, false);
    Ok(needle_engine::SortKey { by: needle_engine::SortBy::Field { field, missing }, descending: true })
}

/// The clocks at a write's start: this thread's CPU clock, then the wall
/// clock, so that the wall-clock time leaves out the CPU clock's system call
/// (about a microsecond here; [`Shared::count_write`] reads them in the
/// other order).
fn write_started() -> (Instant, u64) {
    let cpu = crate::procstat::thread_cpu_nanos();
    (Instant::now(), cpu)
}

impl Shared {
    /// Counts a write that began at `started` (wall clock) and `cpu` (this thread's CPU clock).
    fn count_write(&self, (started, cpu): (Instant, u64)) {
        self.writes.fetch_add(1, Ordering::Relaxed);
        self.write_nanos.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        let used = crate::procstat::thread_cpu_nanos().saturating_sub(cpu);
        self.write_cpu_nanos.fetch_add(used, Ordering::Relaxed);
    }
}

fn mode_of(line: &str) -> &str {
    line.split('\t').nth(1).unwrap_or("")
}

fn handle(shared: &Shared, line: &str) -> Answer {
    let mut parts = line.splitn(4, '\t');
    let id = parts.next().unwrap_or("").to_string();
    let (Some(mode), Some(k), Some(query)) = (parts.next(), parts.next(), parts.next()) else {
        return Err((id, "expected ID\\tMODE\\tK\\tQUERY".into()));
    };
    let failed = |e: &dyn std::fmt::Display| (id.clone(), e.to_string());
    let track_total_hits = match mode {
        // Lucene's `IndexSearcher.search(query, k)` counts hits exactly up to 1,000, then prunes.
        "top" => 1_000,
        "count" => u64::MAX,
        "add" => {
            let live = shared.index.live().map_err(|e| failed(&e))?;
            let Some(acks) = shared.durable_acks.lock().unwrap().clone() else {
                let started = write_started();
                let doc_id = live.add(query).map_err(|e| failed(&e))?;
                shared.count_write(started);
                return Ok(Some(format!("{id}\t1\t{doc_id}\n")));
            };
            let (doc_id, lsn) = live.add_deferred(query).map_err(|e| failed(&e))?;
            acks.send((id.clone(), doc_id, lsn)).map_err(|e| failed(&e))?;
            return Ok(None);
        }
        "numeric" | "binary" => {
            let live = shared.index.live().map_err(|e| failed(&e))?;
            let (doc_id, value) = query.split_once('\t').ok_or_else(|| failed(&"expected DOCID\\tVALUE"))?;
            let started = write_started();
            let done = match mode {
                "numeric" => {
                    let v: i64 = value.parse().map_err(|_| failed(&format!("bad value `{value}`")))?;
                    live.update_numeric(doc_id, "last_modified", &serde_json::json!(v), IfCurrent::Any)
                }
                _ => live.update_numeric(doc_id, "title_dv", &serde_json::json!(value), IfCurrent::Any),
            };
            done.map_err(|e| failed(&e))?;
            shared.count_write(started);
            return Ok(Some(format!("{id}\t1\t{doc_id}\n")));
        }
        "sorted" => 1_000,
        "values" => return values_answer(shared, &id, query).map(Some).map_err(|e| failed(&e)),
        "id" => {
            shared.index.live().map_err(|e| failed(&e))?;
            let found = shared.index.index.searcher().contains(query).map_err(|e| failed(&e))?;
            return Ok(Some(if found { format!("{id}\t1\t{query}\n") } else { format!("{id}\t0\t\n") }));
        }
        other => return Err((id, format!("unknown mode `{other}`"))),
    };
    let top_k: usize = k.parse().map_err(|_| (id.clone(), format!("bad K `{k}`")))?;
    let mut request = SearchRequest::new(query);
    request.top_k = top_k;
    request.track_total_hits = track_total_hits;
    request.bloom = shared.options.bloom;
    request.stats = shared.options.read_stats;
    let searcher = shared.index.index.searcher();
    if mode == "sorted" {
        request.sort = vec![by_last_modified(searcher.schema()).map_err(|e| failed(&e))?];
    }
    let parse = ParseOptions {
        default_and: false,
        field_tie_breaker: shared.options.field_tie_breaker,
        ..ParseOptions::default()
    };
    let parsed = searcher.parse_with(query, &parse).map_err(|e| failed(&e))?;
    let response = searcher.search_query(&parsed, &request).map_err(|e| failed(&e))?;
    if let Some(stats) = &response.stats {
        for (sums, figures) in [(&shared.needed, &stats.needed_bytes), (&shared.pages, &stats.pages_by_kind)]
        {
            let mut sums = sums.lock().unwrap();
            for (kind, n) in figures {
                *sums.entry((*kind).to_string()).or_default() += n;
            }
        }
    }
    let ids: Vec<&str> = response.hits.iter().map(|h| h.id.as_str()).collect();
    let scores: Vec<String> = response.hits.iter().map(|h| h.score.to_string()).collect();
    Ok(Some(format!("{id}\t{}\t{}\t{}\n", response.total, ids.join(","), scores.join(","))))
}

/// A `values` request: a search body in Elasticsearch's DSL, answered as the
/// server answers it (`needle_server::search_body`), without HTTP.
fn values_answer(shared: &Shared, id: &str, body: &str) -> Result<String> {
    let body: serde_json::Value = serde_json::from_str(body)?;
    let answer = needle_server::search_body("bench", shared.index.index.searcher(), body)?;
    crate::values::answer_line(id, &answer)
}

pub fn serve(dir: &Path, threads: usize, options: ServeOptions) -> Result<()> {
    let opened = Index::options()
        .verify(options.verify)
        .reads(options.reads.clone())
        .result_cache(options.result_cache_bytes)
        .open(dir)?;
    let writer = options.live.clone().map(|live| opened.writer(live)).transpose()?;
    if let Some(log) = &options.pin_log {
        let text = std::fs::read_to_string(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let queries =
            text.lines().filter(|l| !l.starts_with('#')).map(|l| l.rsplit('\t').next().unwrap_or(l));
        let summary = opened.pin_hot_terms(queries, options.pin_bytes)?;
        eprintln!("pinned: {}", serde_json::to_string(&summary)?);
    }
    let index = Served { index: opened, writer };
    let docs = index.index.num_docs();
    let ingest_threads = if options.live.is_some() { options.ingest_threads.max(1) } else { 0 };
    let durable = options.live.as_ref().is_some_and(|l| l.durability == needle_engine::Durability::Durable);
    let (durable_acks, acks_rx) = match durable {
        true => {
            let (tx, rx) = crossbeam_channel::unbounded();
            (Some(tx), Some(rx))
        }
        false => (None, None),
    };
    let shared = Arc::new(Shared {
        index,
        options,
        needed: Mutex::new(Default::default()),
        pages: Mutex::new(Default::default()),
        out: Mutex::new(std::io::stdout()),
        inflight: Mutex::new(0),
        idle: Condvar::new(),
        queries: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        writes: AtomicU64::new(0),
        write_nanos: AtomicU64::new(0),
        write_cpu_nanos: AtomicU64::new(0),
        durable_acks: Mutex::new(durable_acks),
    });
    let acker = acks_rx.map(|rx| {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            for (id, doc_id, lsn) in rx {
                let live = shared.index.live().expect("durable mode is live");
                let acked = live.durable_through(lsn).map(|()| format!("{id}\t1\t{doc_id}\n"));
                shared.reply(acked.map_err(|e| (id, e.to_string())));
            }
        })
    });
    {
        let mut out = shared.out.lock().unwrap();
        let ready =
            serde_json::json!({"engine": "needle", "version": env!("CARGO_PKG_VERSION"), "docs": docs});
        writeln!(out, "READY\t{ready}")?;
        out.flush()?;
    }
    let pool = |n: usize, name: &str| -> Result<_> {
        let queue = Arc::new(Queue::<String>::default());
        let mut workers = Vec::new();
        for _ in 0..n {
            let queue = Arc::clone(&queue);
            let shared = Arc::clone(&shared);
            workers.push(std::thread::Builder::new().name(name.to_string()).spawn(move || {
                while let Some(line) = queue.take() {
                    shared.answer(&line);
                }
            })?);
        }
        Ok((queue, workers))
    };
    let (searches, mut workers) = pool(threads.max(1), "search")?;
    let (adds, ingest_workers) = pool(ingest_threads, "ingest")?;
    workers.extend(ingest_workers);
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
                "updates": shared.writes.load(Ordering::Relaxed),
                "update_ms": shared.write_nanos.load(Ordering::Relaxed) as f64 / 1e6,
                "update_cpu_ms": shared.write_cpu_nanos.load(Ordering::Relaxed) as f64 / 1e6,
                "needed_bytes": *shared.needed.lock().unwrap(),
                "pages_by_kind": *shared.pages.lock().unwrap(),
                "result_cache": shared.index.index.result_cache_stats(),
                "page_cache": shared.index.index.page_cache_stats(),
            });
            let mut out = shared.out.lock().unwrap();
            writeln!(out, "STATS\t{stats}")?;
            out.flush()?;
            continue;
        }
        *shared.inflight.lock().unwrap() += 1;
        match mode_of(line) {
            "id" => shared.answer(line),
            "add" | "numeric" | "binary" if ingest_threads > 0 => adds.push(line.to_string()),
            _ => searches.push(line.to_string()),
        }
    }
    searches.close();
    adds.close();
    for w in workers {
        let _ = w.join();
    }
    drop(shared.durable_acks.lock().unwrap().take());
    if let Some(a) = acker {
        let _ = a.join();
    }
    Ok(())
}
