//! `needle ingest` and `needle live`: stream JSON lines into a live index.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::Args;
use needle_core::Error;
use needle_engine::{Durability, Index, IndexWriter, SearchRequest, WriterOptions};

use crate::input;

#[derive(Args)]
pub struct IngestArgs {
    #[arg(long)]
    index: PathBuf,
    /// volatile | graceful | durable
    #[arg(long, default_value = "durable", value_parser = parse_durability)]
    durability: Durability,
    /// JSON lines (plain or gzip), or - for stdin.
    #[arg(long)]
    input: String,
    /// Print each document's id on stdout once it is acknowledged (durable in durable mode).
    #[arg(long)]
    ack: bool,
    /// Writer threads (more threads share each fsync: group commit).
    #[arg(long, default_value_t = 4, value_parser = crate::parse_threads)]
    threads: usize,
    /// Memory for in-memory segments before they are flushed to disk (e.g. 256MB).
    #[arg(long, default_value = "256MB", value_parser = needle_core::parse_size)]
    memory: u64,
}

fn parse_durability(s: &str) -> Result<Durability, String> {
    Durability::parse(s).ok_or_else(|| format!("`{s}`: expected volatile, graceful or durable"))
}

/// Streams lines through `threads` writers; `on_ack(id)` runs after each acknowledgement.
fn stream(
    index: &IndexWriter,
    lines: &mut dyn BufRead,
    threads: usize,
    on_ack: &(dyn Fn(&str) + Sync),
) -> needle_core::Result<u64> {
    let (tx, rx) = crossbeam_channel::bounded::<(u64, String)>(threads * 4);
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let acked = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            let rx = rx.clone();
            let (first_error, acked) = (&first_error, &acked);
            s.spawn(move || {
                for (line_no, line) in rx {
                    match index.add(&line) {
                        Ok(id) => {
                            acked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            on_ack(&id);
                        }
                        Err(e) => {
                            let e = e.at_line(line_no);
                            first_error.lock().unwrap().get_or_insert(e);
                        }
                    }
                }
            });
        }
        for line in crate::input::bounded_lines(lines, needle_engine::MAX_LINE_BYTES) {
            let (line_no, line) = match line {
                Ok(numbered) => numbered,
                Err(e) => {
                    first_error.lock().unwrap().get_or_insert(e);
                    break;
                }
            };
            if first_error.lock().unwrap().is_some() {
                break;
            }
            if !line.trim().is_empty() && tx.send((line_no, line)).is_err() {
                break;
            }
        }
        drop(tx);
    });
    match first_error.into_inner().unwrap() {
        Some(e) => Err(e),
        None => Ok(acked.into_inner()),
    }
}

/// Opens (or creates) the index and its writer, saying what recovery replayed.
fn open_writer(path: &std::path::Path, options: WriterOptions) -> needle_core::Result<IndexWriter> {
    let writer = Index::open_or_create(path, None)?.writer(options)?;
    let replayed = writer.replayed();
    if replayed.records > 0 {
        eprintln!(
            "recovered {} write-ahead log records in {:.2} s",
            replayed.records,
            replayed.elapsed.as_secs_f64()
        );
    }
    Ok(writer)
}

pub fn ingest(args: IngestArgs) -> needle_core::Result<ExitCode> {
    let mut lines = input::open(&args.input)?;
    let options = WriterOptions {
        durability: args.durability,
        memory_bytes: args.memory as usize,
        ..WriterOptions::default()
    };
    let index = open_writer(&args.index, options)?;
    let stdout = Mutex::new(std::io::stdout());
    let started = Instant::now();
    let ack = |id: &str| {
        if args.ack {
            let mut out = stdout.lock().unwrap();
            let _ = writeln!(out, "{id}").and_then(|()| out.flush());
        }
    };
    let result = stream(&index, &mut lines, args.threads, &ack);
    let closed = index.close();
    let docs = result?;
    closed?;
    let secs = started.elapsed().as_secs_f64();
    eprintln!("ingested {docs} documents in {secs:.2} s ({:.0} docs/s)", docs as f64 / secs.max(1e-9));
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct LiveArgs {
    #[arg(long)]
    index: PathBuf,
    #[arg(long, default_value = "volatile", value_parser = parse_durability)]
    durability: Durability,
    /// JSON lines (plain or gzip), or - for stdin.
    #[arg(long)]
    input: String,
    #[arg(long, default_value_t = 2, value_parser = crate::parse_threads)]
    threads: usize,
}

/// Ingests while a query thread looks for each acknowledged document by id,
/// and reports how long after its acknowledgement each was first found.
pub fn live(args: LiveArgs) -> needle_core::Result<ExitCode> {
    let mut lines = input::open(&args.input)?;
    let index =
        open_writer(&args.index, WriterOptions { durability: args.durability, ..WriterOptions::default() })?;
    let (tx, rx) = crossbeam_channel::unbounded::<(String, Instant)>();
    let started = Instant::now();
    let (docs, mut visibility) = std::thread::scope(|s| {
        let checker = s.spawn(|| {
            let mut latencies = Vec::new();
            for (id, acked_at) in rx {
                let request = SearchRequest::new(&format!("id:{}", quote(&id)));
                loop {
                    match index.searcher().search(&request) {
                        Ok(r) if r.total > 0 => break,
                        Ok(_) if acked_at.elapsed() < Duration::from_secs(10) => continue,
                        _ => break,
                    }
                }
                latencies.push(acked_at.elapsed());
            }
            latencies
        });
        let docs = stream(&index, &mut lines, args.threads, &|id: &str| {
            let _ = tx.send((id.to_string(), Instant::now()));
        });
        drop(tx);
        (docs, checker.join().expect("query thread"))
    });
    let docs = docs?;
    let secs = started.elapsed().as_secs_f64();
    index.close()?;
    visibility.sort();
    let pct = |p: f64| {
        visibility
            .get(((visibility.len() as f64 * p) as usize).min(visibility.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    println!("ingested {docs} documents in {secs:.2} s ({:.0} docs/s)", docs as f64 / secs.max(1e-9));
    println!(
        "visibility (acknowledgement to first query that finds it): p50 {:.1} us, p99 {:.1} us, max {:.1} us",
        pct(0.5).as_secs_f64() * 1e6,
        pct(0.99).as_secs_f64() * 1e6,
        visibility.last().copied().unwrap_or_default().as_secs_f64() * 1e6
    );
    Ok(ExitCode::SUCCESS)
}

/// An id as a query-string term: special characters escaped.
fn quote(id: &str) -> String {
    id.chars()
        .flat_map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { vec![c] } else { vec!['\\', c] })
        .collect()
}
