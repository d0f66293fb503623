//! `needle search`: run a query string, print hits with scores and highlights.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use needle_core::parse_size;
use needle_engine::{Backend, Index, ReadOptions, SearchRequest, SearchResponse};

#[derive(Args)]
pub struct SearchArgs {
    #[arg(long)]
    index: PathBuf,
    /// How many hits to return.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Show snippets with the matched terms marked.
    #[arg(long)]
    highlight: bool,
    /// Print one JSON object: hits (_id, _score, highlight), total and took_ms.
    #[arg(long)]
    json: bool,
    /// Count every hit exactly (no pruning past 10,000 hits).
    #[arg(long)]
    count: bool,
    /// Print what the query read as JSON: bytes needed by data kind, pages touched,
    /// storage bytes read, read amplification, resident memory.
    #[arg(long)]
    stats: bool,
    /// Read positions for every phrase candidate, ignoring the Bloom filters (for comparison).
    #[arg(long)]
    no_bloom: bool,
    /// How index files are read: mmap, pread, or direct (O_DIRECT through io_uring).
    #[arg(long, default_value = "mmap")]
    backend: Backend,
    /// An application cache for the pread and direct backends, e.g. 256MB.
    #[arg(long, value_parser = parse_size)]
    cache: Option<u64>,
    /// Adaptive prefetch: a term whose record's prefetch zone is at least this size (e.g.
    /// 64KB) has the whole zone asked for before the query reads it (off by default).
    #[arg(long, value_parser = parse_size)]
    prefetch_min: Option<u64>,
    /// `a b` (either), `+a +b` (both), `-a` (not), `"a b"` (phrase), `field:term`,
    /// `AND`/`OR`/`NOT`, `( )`; `-` reads the query from stdin (a long one).
    query: String,
}

pub fn run(args: SearchArgs) -> needle_core::Result<ExitCode> {
    let reads = ReadOptions::new(args.backend, args.cache.unwrap_or(0) as usize)?;
    needle_engine::set_prefetch_min(args.prefetch_min.map(|n| n as usize));
    let index = Index::options().reads(reads).open(&args.index)?;
    let query = match args.query.as_str() {
        "-" => {
            let mut q = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut q)
                .map_err(|e| needle_core::Error::io("<stdin>", e))?;
            q
        }
        q => q.to_string(),
    };
    let request = SearchRequest {
        query,
        top_k: args.top,
        highlight: args.highlight,
        track_total_hits: if args.count { u64::MAX } else { 10_000 },
        stats: args.stats,
        bloom: !args.no_bloom,
        ..SearchRequest::new("")
    };
    let response = index.searcher().search(&request)?;
    if args.json {
        println!("{}", serde_json::to_string(&response).expect("response serializes"));
    } else {
        print_text(&response);
        if let Some(stats) = &response.stats {
            println!("{}", serde_json::to_string(stats).expect("stats serialize"));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_text(r: &SearchResponse) {
    let more = if r.total_relation == "gte" { "+" } else { "" };
    println!("{}{more} hits in {:.2} ms", r.total, r.took_ms);
    let bold = std::io::stdout().is_terminal();
    for (i, hit) in r.hits.iter().enumerate() {
        println!("{:>3}. {}  (score {:.4})", i + 1, hit.id, hit.score);
        for (field, fragments) in &hit.highlight {
            for f in fragments {
                let flat: String = f.split_whitespace().collect::<Vec<_>>().join(" ");
                let shown =
                    if bold { flat.replace("<em>", "\x1b[1m").replace("</em>", "\x1b[0m") } else { flat };
                println!("     {field}: {shown}");
            }
        }
    }
}
