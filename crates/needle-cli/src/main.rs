//! `needle`: build, search and check an index from the command line.

mod index_cmd;
mod ingest_cmd;
mod input;
mod search_cmd;
mod serve_cmd;
mod update_cmd;

/// The server allocates per request (bodies, JSON, hits); mimalloc's
/// thread-local free lists are cheaper than glibc's arenas for that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use needle_core::Error;
use needle_engine::{Durability, Index, WriterOptions};

#[derive(Parser)]
#[command(
    name = "needle",
    version,
    about = "Needle: a full-text search engine that reads from SSD only what a query needs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Add the documents of a JSON-lines file (plain, .gz, or - for stdin) to an index.
    Index(index_cmd::IndexArgs),
    /// Stream JSON lines into a live index (searchable at once), with a durability mode.
    Ingest(ingest_cmd::IngestArgs),
    /// Ingest and query at the same time; print how soon each document became visible.
    Live(ingest_cmd::LiveArgs),
    /// Merge an index's segments until at most N remain.
    Merge {
        #[arg(long)]
        index: PathBuf,
        #[arg(long, default_value_t = 1)]
        max_segments: usize,
    },
    /// Search an index with a query string.
    Search(search_cmd::SearchArgs),
    /// Serve the indexes of a data folder over HTTP with Elasticsearch's REST API.
    Serve(serve_cmd::ServeArgs),
    /// Verify every checksum and structural invariant of an index.
    Check {
        #[arg(long)]
        index: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print every field's statistics and every term with its frequencies (TSV).
    Dump {
        #[arg(long)]
        index: PathBuf,
    },
    /// Print stored documents as JSON lines, in the order asked (exit status 1 when one is missing).
    Get {
        #[arg(long)]
        index: PathBuf,
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// Set long, double, date or binary fields of stored documents in place
    /// (doc values: the documents are not re-indexed; a binary value is
    /// base64 text), from the arguments or from JSON lines
    /// `{"id": ..., "field": ..., "value": ...}`; committed when done.
    Update {
        #[arg(long)]
        index: PathBuf,
        /// A JSON-lines file of updates (- for stdin) instead of ID FIELD VALUE.
        #[arg(long, conflicts_with = "update")]
        input: Option<PathBuf>,
        /// ID FIELD VALUE (VALUE as JSON, or else as a string).
        #[arg(num_args = 3, value_names = ["ID", "FIELD", "VALUE"], required_unless_present = "input")]
        update: Vec<String>,
    },
    /// Recover the write-ahead log now: replay it, commit, and report what it held.
    Recover {
        #[arg(long)]
        index: PathBuf,
        /// Accept the loss of a damaged log's records from the damage on
        /// (without it, a damaged log is reported and nothing is changed).
        #[arg(long)]
        truncate_log: bool,
    },
}

fn main() -> ExitCode {
    quiet_broken_pipe();
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            if let Error::Corrupt { file, .. } = &e {
                if file.starts_with("wal-") {
                    eprintln!(
                        "hint: `needle recover --index DIR --truncate-log` keeps the log's records before \
                         the damage and drops the rest"
                    );
                }
            }
            ExitCode::from(2)
        }
    }
}

/// A thread count from the command line: 1 to 256.
fn parse_threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=256).contains(&n) => Ok(n),
        _ => Err(format!("`{s}`: give a number of threads from 1 to 256")),
    }
}

/// A writer for a one-off change (an import, a merge, a recovery): it
/// recovers the write-ahead log first and commits everything when closed.
fn one_off_writer(
    index: &Index,
    truncate_damaged_log: bool,
) -> needle_core::Result<needle_engine::IndexWriter> {
    index.writer(WriterOptions {
        durability: Durability::Graceful,
        truncate_damaged_log,
        ..WriterOptions::default()
    })
}

fn run(command: Command) -> needle_core::Result<ExitCode> {
    match command {
        Command::Index(args) => index_cmd::run(args),
        Command::Ingest(args) => ingest_cmd::ingest(args),
        Command::Live(args) => ingest_cmd::live(args),
        Command::Merge { index, max_segments } => {
            let idx = Index::open(&index)?;
            let writer = one_off_writer(&idx, false)?;
            let before = idx.segment_counts().0;
            let rewritten = writer.merge(max_segments)?;
            writer.close()?;
            println!("merged {rewritten} of {before} segments; {} segment(s) now", idx.segment_counts().0);
            Ok(ExitCode::SUCCESS)
        }
        Command::Search(args) => search_cmd::run(args),
        Command::Serve(args) => Ok(serve_cmd::run(args)),
        Command::Check { index, json } => check(&index, json),
        Command::Dump { index } => {
            let stdout = std::io::stdout();
            Index::open(&index)?.dump_terms(&mut std::io::BufWriter::new(stdout.lock()))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Get { index, ids } => get(&index, &ids),
        Command::Recover { index, truncate_log } => recover(&index, truncate_log),
        Command::Update { index, input, update } => update_cmd::run(&index, input.as_deref(), &update),
    }
}

fn get(path: &std::path::Path, ids: &[String]) -> needle_core::Result<ExitCode> {
    let searcher = Index::open(path)?.searcher();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut missing = 0;
    for id in ids {
        match searcher.get(id)? {
            Some(source) => writeln!(out, "{source}").map_err(|e| Error::io("<stdout>", e))?,
            None => {
                missing += 1;
                eprintln!("no document with id `{}`", needle_core::printable(id, 100));
            }
        }
    }
    Ok(if missing == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn recover(path: &std::path::Path, truncate_log: bool) -> needle_core::Result<ExitCode> {
    let index = Index::options().truncate_damaged_log(truncate_log).open(path)?;
    let writer = one_off_writer(&index, truncate_log)?;
    let replayed = writer.replayed();
    writer.close()?;
    println!(
        "replayed {} write-ahead log records in {:.2} s; {} documents now, all committed",
        replayed.records,
        replayed.elapsed.as_secs_f64(),
        index.num_docs()
    );
    if let Some((file, at)) = &replayed.torn {
        println!("cut off a torn record at byte {at} of {file} (written when the process died; never acknowledged)");
    }
    if let Some(dropped) = &replayed.dropped {
        println!("dropped, as asked: {dropped}");
    }
    Ok(ExitCode::SUCCESS)
}

fn check(path: &std::path::Path, json: bool) -> needle_core::Result<ExitCode> {
    let report = match Index::open(path) {
        Ok(index) => index.check(),
        // A file that does not follow its format is what `check` reports; a
        // missing index or a failed read is an error like any other.
        Err(e @ (Error::Corrupt { .. } | Error::Format { .. })) => {
            needle_engine::CheckReport { ok: false, problems: vec![e.to_string()], ..Default::default() }
        }
        Err(e) => return Err(e),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report).expect("report serializes"));
    } else {
        println!("{} documents in {} segment(s), {} terms", report.docs, report.segments, report.terms);
        for (kind, bytes) in &report.sizes {
            println!("  {kind:<22} {bytes:>14} bytes");
        }
        for p in &report.problems {
            println!("PROBLEM: {p}");
        }
        println!("{}", if report.ok { "OK" } else { "CORRUPT" });
    }
    Ok(if report.ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `needle search ... | head` closes stdout early: exit quietly instead of
/// reporting a failed write as a crash.
fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info.payload().downcast_ref::<String>().map(String::as_str).unwrap_or("");
        if msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}
