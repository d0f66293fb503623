//! tantivy peer for WSBench: speaks the line protocol of `bench/PROTOCOL.md`.
//!
//! ```text
//! tantivy-peer index --corpus FILE.jsonl[.gz] --index DIR [--memory-mb M]
//! tantivy-peer serve --index DIR --threads T
//! ```
//!
//! `index` builds the bench index: `id` (STRING | STORED), `title` and `body` (TEXT | STORED:
//! tantivy's `default` tokenizer, frequencies and positions; tantivy has no offsets), one writer
//! with one indexing thread, one commit, then every segment merged into one.
//!
//! With the field-value corpus (`needle-bench with-values`), also `tag` (STRING | FAST), `words`
//! (i64), `rating` (f64) and `stamp` (a date, milliseconds), each INDEXED | FAST (`values.rs`).
//!
//! `serve` opens the index (memory-mapped, not warmed), prints `READY\t{...}` and answers
//! `ID\tMODE\tK\tQUERY` lines with `ID\tTOTAL\tID1,...,IDk` from a pool of T worker threads.
//! `top` mode collects `TopDocs(k)` alone (block-max WAND; TOTAL is the number of hits returned, a
//! lower bound); `count` mode collects `(TopDocs(k), Count)` (every hit scored and counted).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Instant;

mod values;

use tantivy::collector::{Count, TopDocs};
use tantivy::indexer::NoMergePolicy;
use tantivy::query::QueryParser;
use tantivy::schema::{Field, Schema, Value, STORED, STRING, TEXT};
use tantivy::{DocAddress, Index, IndexWriter, ReloadPolicy, Searcher, TantivyDocument};

/// Default indexing memory budget of the single indexing thread, in MB (like the Lucene peer's
/// 256 MB buffer). tantivy accepts 15 MB to 4 GB.
const DEFAULT_WRITER_BUDGET_MB: usize = 256;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("index") => parse_options(&args[1..]).and_then(|o| cmd_index(&o)),
        Some("serve") => parse_options(&args[1..]).and_then(|o| cmd_serve(&o)),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("tantivy-peer: {message}");
            ExitCode::from(2)
        }
    }
}

const USAGE: &str = "usage:\n  tantivy-peer index --corpus FILE.jsonl[.gz] --index DIR [--memory-mb M]\n  \
                     tantivy-peer serve --index DIR [--threads T]";

#[derive(Default)]
struct Options {
    corpus: Option<PathBuf>,
    index: Option<PathBuf>,
    threads: usize,
    memory_mb: usize,
}

fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut options = Options { threads: 1, memory_mb: DEFAULT_WRITER_BUDGET_MB, ..Options::default() };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--corpus" => options.corpus = Some(PathBuf::from(value()?)),
            "--index" => options.index = Some(PathBuf::from(value()?)),
            "--threads" => {
                let v = value()?;
                options.threads = v
                    .parse()
                    .ok()
                    .filter(|&t: &usize| t >= 1)
                    .ok_or_else(|| format!("--threads: not a positive integer: {v}"))?;
            }
            "--memory-mb" => {
                let v = value()?;
                options.memory_mb = v
                    .parse()
                    .ok()
                    .filter(|&m: &usize| (15..4096).contains(&m))
                    .ok_or_else(|| format!("--memory-mb: not an integer in 15..4096: {v}"))?;
            }
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    Ok(options)
}

fn err<E: std::fmt::Display>(context: &str) -> impl FnOnce(E) -> String + '_ {
    move |e| format!("{context}: {e}")
}

// ---------------------------------------------------------------------------------------------
// index

fn cmd_index(options: &Options) -> Result<(), String> {
    let corpus = options.corpus.as_ref().ok_or(format!("index needs --corpus\n{USAGE}"))?;
    let dir = options.index.as_ref().ok_or(format!("index needs --index\n{USAGE}"))?;
    let start = Instant::now();

    let mut builder = Schema::builder();
    let id = builder.add_text_field("id", STRING | STORED);
    let title = builder.add_text_field("title", TEXT | STORED);
    let body = builder.add_text_field("body", TEXT | STORED);
    let values = values::add_fields(&mut builder);
    let schema = builder.build();

    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(err("removing the old index"))?;
    }
    std::fs::create_dir_all(dir).map_err(err("creating the index directory"))?;
    let index = Index::create_in_dir(dir, schema).map_err(err("creating the index"))?;
    let mut writer: IndexWriter =
        index.writer_with_num_threads(1, options.memory_mb << 20).map_err(err("opening the writer"))?;
    // No merges while indexing: one merge of everything at the end.
    writer.set_merge_policy(Box::new(NoMergePolicy));

    let mut docs = 0u64;
    for (lineno, line) in open_text(corpus)?.lines().enumerate() {
        let line = line.map_err(err("reading the corpus"))?;
        if line.trim().is_empty() {
            continue;
        }
        let json: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| format!("corpus line {}: {e}", lineno + 1))?;
        let Some(doc_id) = json.get("id").and_then(serde_json::Value::as_str) else {
            return Err(format!("corpus line {}: no string \"id\"", lineno + 1));
        };
        let mut doc = TantivyDocument::default();
        doc.add_text(id, doc_id);
        for (field, name) in [(title, "title"), (body, "body")] {
            if let Some(text) = json.get(name).and_then(serde_json::Value::as_str) {
                doc.add_text(field, text);
            }
        }
        values.add_values(&json, &mut doc);
        writer.add_document(doc).map_err(err("adding a document"))?;
        docs += 1;
    }
    writer.commit().map_err(err("commit"))?;
    let indexed = start.elapsed();

    let segments = index.searchable_segment_ids().map_err(err("listing segments"))?;
    let before = segments.len();
    if segments.len() > 1 {
        writer.merge(&segments).wait().map_err(err("merge"))?;
    }
    writer.wait_merging_threads().map_err(err("waiting for merges"))?;
    let after = index.searchable_segment_ids().map_err(err("listing segments"))?.len();
    eprintln!(
        "tantivy-peer: indexed {docs} docs in {:.1}s, {before} segment(s) merged into {after}; \
         total {:.1}s, {} bytes on disk",
        indexed.as_secs_f64(),
        start.elapsed().as_secs_f64(),
        dir_size(dir)
    );
    Ok(())
}

/// Opens a UTF-8 text file, gunzipping it when its name ends with `.gz`.
fn open_text(path: &Path) -> Result<Box<dyn BufRead>, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let reader: Box<dyn Read> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, file)))
    } else {
        Box::new(file)
    };
    Ok(Box::new(BufReader::with_capacity(1 << 16, reader)))
}

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries.flatten().filter_map(|e| e.metadata().ok()).filter(|m| m.is_file()).map(|m| m.len()).sum()
        })
        .unwrap_or(0)
}

// ---------------------------------------------------------------------------------------------
// serve

struct Engine {
    searcher: Searcher,
    docs: usize,
    parser: QueryParser,
    id: Field,
    /// `values` requests: a query parser per text field (`match`).
    field_parsers: Vec<(String, QueryParser)>,
}

enum Mode {
    Top,
    Count,
}

impl Engine {
    /// Answers one request line (without its newline) with one response line (without newline).
    fn answer(&self, line: &str) -> String {
        let mut parts = line.splitn(4, '\t');
        let req_id = parts.next().unwrap_or("").trim();
        match self.search(req_id, parts) {
            Ok(response) => response,
            Err(message) => format!("{}\tERROR\t{}", error_id(req_id), one_line(&message)),
        }
    }

    fn search<'a>(&self, req_id: &str, mut parts: impl Iterator<Item = &'a str>) -> Result<String, String> {
        let (Some(mode), Some(k), Some(query)) = (parts.next(), parts.next(), parts.next()) else {
            return Err("expected ID\\tMODE\\tK\\tQUERY".into());
        };
        if req_id.is_empty() || !req_id.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("bad request id {req_id:?}"));
        }
        let mode = match mode {
            "values" => return values::answer(self, req_id, query),
            "top" => Mode::Top,
            "count" => Mode::Count,
            other => return Err(format!("unknown mode {other:?}")),
        };
        let k: usize = k.trim().parse().map_err(|_| format!("bad K {k:?}"))?;
        // Like Lucene: no more hits than documents (TopDocs allocates k slots).
        let k = k.min(self.docs.max(1));
        let query = self.parser.parse_query(query).map_err(|e| format!("query: {e}"))?;
        let search = |e: tantivy::TantivyError| format!("search: {e}");
        let (total, hits): (usize, Vec<(f32, DocAddress)>) = match (mode, k) {
            (_, 0) => (self.searcher.search(&query, &Count).map_err(search)?, Vec::new()),
            (Mode::Top, k) => {
                let hits =
                    self.searcher.search(&query, &TopDocs::with_limit(k).order_by_score()).map_err(search)?;
                (hits.len(), hits)
            }
            (Mode::Count, k) => {
                let (hits, count) = self
                    .searcher
                    .search(&query, &(TopDocs::with_limit(k).order_by_score(), Count))
                    .map_err(search)?;
                (count, hits)
            }
        };
        let mut out = format!("{req_id}\t{total}\t");
        for (i, (_score, address)) in hits.iter().enumerate() {
            let doc: TantivyDocument = self.searcher.doc(*address).map_err(search)?;
            let id = doc.get_first(self.id).and_then(|v| v.as_str()).unwrap_or("");
            if i > 0 {
                out.push(',');
            }
            out.push_str(id);
        }
        Ok(out)
    }
}

/// The id echoed in an error response: the request's own when it is a number, else `-1`.
fn error_id(req_id: &str) -> &str {
    if !req_id.is_empty() && req_id.bytes().all(|b| b.is_ascii_digit()) {
        req_id
    } else {
        "-1"
    }
}

fn one_line(message: &str) -> String {
    message.replace(['\t', '\n', '\r'], " ")
}

/// Requests waiting for a worker, and the number received but not yet answered.
struct Queue {
    state: Mutex<QueueState>,
    work: Condvar,
    idle: Condvar,
}

struct QueueState {
    lines: VecDeque<String>,
    pending: usize,
    closed: bool,
}

fn cmd_serve(options: &Options) -> Result<(), String> {
    let dir = options.index.as_ref().ok_or(format!("serve needs --index\n{USAGE}"))?;
    let index = Index::open_in_dir(dir).map_err(err("opening the index"))?;
    let schema = index.schema();
    let field = |name: &str| schema.get_field(name).map_err(err("schema"));
    let (id, title, body) = (field("id")?, field("title")?, field("body")?);
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()
        .map_err(err("opening a reader"))?;
    let searcher = reader.searcher();
    let docs = searcher.num_docs();
    let engine = Arc::new(Engine {
        searcher,
        docs: docs as usize,
        parser: QueryParser::for_index(&index, vec![title, body]),
        id,
        field_parsers: [("title", title), ("body", body)]
            .map(|(name, f)| (name.to_string(), QueryParser::for_index(&index, vec![f])))
            .into(),
    });

    let out = Arc::new(Mutex::new(BufWriter::new(io::stdout())));
    let queue = Arc::new(Queue {
        state: Mutex::new(QueueState { lines: VecDeque::new(), pending: 0, closed: false }),
        work: Condvar::new(),
        idle: Condvar::new(),
    });
    let write_line = |out: &Mutex<BufWriter<io::Stdout>>, line: &str| {
        let mut out = out.lock().unwrap_or_else(|p| p.into_inner());
        // A closed stdout (driver gone) is not worth a panic: the process ends with stdin anyway.
        let _ = out.write_all(line.as_bytes()).and_then(|_| out.write_all(b"\n"));
        let _ = out.flush();
    };
    write_line(
        &out,
        &format!("READY\t{{\"engine\":\"tantivy\",\"version\":\"{}\",\"docs\":{docs}}}", tantivy_version()),
    );

    let workers: Vec<_> = (0..options.threads)
        .map(|_| {
            let (engine, out, queue) = (engine.clone(), out.clone(), queue.clone());
            thread::spawn(move || loop {
                let line = {
                    let mut state = queue.state.lock().unwrap();
                    loop {
                        if let Some(line) = state.lines.pop_front() {
                            break line;
                        }
                        if state.closed {
                            return;
                        }
                        state = queue.work.wait(state).unwrap();
                    }
                };
                let response = catch_unwind(AssertUnwindSafe(|| engine.answer(&line))).unwrap_or_else(|_| {
                    let req_id = line.split('\t').next().unwrap_or("").trim();
                    format!("{}\tERROR\tinternal error (panic)", error_id(req_id))
                });
                write_line(&out, &response);
                let mut state = queue.state.lock().unwrap();
                state.pending -= 1;
                if state.pending == 0 {
                    queue.idle.notify_all();
                }
            })
        })
        .collect();

    let mut stdin = io::stdin().lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match stdin.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("tantivy-peer: reading stdin: {e}");
                break;
            }
        }
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        let line = match std::str::from_utf8(&buf) {
            Ok(line) => line.to_string(),
            Err(_) => {
                let lossy = String::from_utf8_lossy(&buf);
                let req_id = lossy.split('\t').next().unwrap_or("").trim();
                write_line(&out, &format!("{}\tERROR\trequest is not UTF-8", error_id(req_id)));
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        if line.trim() == "STATS" {
            // Answered after every earlier request.
            let mut state = queue.state.lock().unwrap();
            while state.pending > 0 {
                state = queue.idle.wait(state).unwrap();
            }
            drop(state);
            write_line(&out, &format!("STATS\t{}", stats()));
            continue;
        }
        let mut state = queue.state.lock().unwrap();
        state.lines.push_back(line);
        state.pending += 1;
        queue.work.notify_one();
    }
    queue.state.lock().unwrap().closed = true;
    queue.work.notify_all();
    for worker in workers {
        worker.join().map_err(|_| "a worker thread panicked".to_string())?;
    }
    Ok(())
}

/// "0.27.0" out of tantivy's "tantivy v0.27.0, index_format v7".
fn tantivy_version() -> String {
    let full = tantivy::version().to_string();
    full.split([' ', ','])
        .find_map(|w| w.strip_prefix('v').filter(|v| v.contains('.')))
        .unwrap_or(&full)
        .to_string()
}

/// `{"rss_kb":...,"hwm_kb":...}` from /proc/self/status (VmRSS, VmHWM).
fn stats() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = |key: &str| -> i64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(-1)
    };
    format!("{{\"rss_kb\":{},\"hwm_kb\":{}}}", kb("VmRSS:"), kb("VmHWM:"))
}
