//! `needle`: build, search and check an index from the command line.

mod index_cmd;
mod ingest_cmd;
mod input;
mod search_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use needle_engine::Index;

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
    /// Print a stored document as JSON (exit status 1 when there is none).
    Get {
        #[arg(long)]
        index: PathBuf,
        id: String,
    },
}

fn main() -> ExitCode {
    quiet_broken_pipe();
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> needle_core::Result<ExitCode> {
    match command {
        Command::Index(args) => index_cmd::run(args),
        Command::Ingest(args) => ingest_cmd::ingest(args),
        Command::Live(args) => ingest_cmd::live(args),
        Command::Merge { index, max_segments } => {
            let mut idx = Index::open(&index)?;
            let before = idx.segments().len();
            let rewritten = idx.merge(max_segments)?;
            println!("merged {rewritten} of {before} segments; {} segment(s) now", idx.segments().len());
            Ok(ExitCode::SUCCESS)
        }
        Command::Search(args) => search_cmd::run(args),
        Command::Check { index, json } => check(&index, json),
        Command::Dump { index } => {
            let stdout = std::io::stdout();
            Index::open(&index)?.dump_terms(&mut std::io::BufWriter::new(stdout.lock()))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Get { index, id } => match Index::open(&index)?.get(&id)? {
            Some(source) => {
                println!("{source}");
                Ok(ExitCode::SUCCESS)
            }
            None => {
                eprintln!("no document with id `{id}`");
                Ok(ExitCode::from(1))
            }
        },
    }
}

fn check(path: &std::path::Path, json: bool) -> needle_core::Result<ExitCode> {
    let report = match Index::open(path) {
        Ok(index) => index.check(),
        Err(e) => {
            needle_engine::CheckReport { ok: false, problems: vec![e.to_string()], ..Default::default() }
        }
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
