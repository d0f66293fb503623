//! `needle-bench`: WSBench, the benchmark suite that measures Needle beside Lucene
//! and tantivy (bench/README.md gives the commands for full runs; every engine
//! is a process speaking bench/PROTOCOL.md).

mod cgroup;
mod charts;
mod corpus;
mod engine;
mod filter_stats;
mod http;
mod load;
mod needle_side;
mod procstat;
mod queue;
mod realtime;
mod report;
mod run;
mod updates;
mod util;
mod validate;
mod values;
mod workload;

/// The same allocator as the `needle` binary, so Needle in-process and
/// Needle's server are measured alike.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::util::{parse_size, Result};

#[derive(Parser)]
#[command(name = "needle-bench", version, about = "WSBench: Needle beside Lucene and tantivy")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build a Needle index of a corpus (title and body as text; one segment).
    IndexNeedle {
        #[arg(long)]
        corpus: PathBuf,
        #[arg(long)]
        index: PathBuf,
        #[arg(long, default_value_t = std::thread::available_parallelism().map_or(2, |n| n.get()))]
        threads: usize,
        /// Memory for in-memory segments.
        #[arg(long, default_value = "512MB", value_parser = parse_size)]
        memory: u64,
    },
    /// Serve a Needle index over the engine protocol (bench/PROTOCOL.md) on stdin/stdout.
    ServeNeedle {
        #[arg(long)]
        index: PathBuf,
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Ignore the phrase Bloom filters (ablation).
        #[arg(long)]
        no_bloom: bool,
        /// Count the bytes each query needs by data kind; STATS reports the totals.
        #[arg(long)]
        read_stats: bool,
        /// Open the index live: `add` and `id` requests allowed (bench/PROTOCOL.md).
        #[arg(long)]
        live: bool,
        /// Live: volatile, graceful or durable.
        #[arg(long, default_value = "volatile")]
        durability: String,
        /// Live: threads applying `add` requests.
        #[arg(long, default_value_t = 1)]
        ingest_threads: usize,
        /// What opening checks: `checksums` (reads every file once) or `footers`
        /// (meta and norms checksums, other files' footers: for indexes larger than memory).
        #[arg(long, default_value = "checksums")]
        verify: String,
        /// Adaptive prefetch: ask the kernel ahead for a term's record zone of at least this
        /// size (e.g. 64KB; `off`, the default, never).
        #[arg(long, default_value = "off")]
        prefetch_min: String,
        /// Keep up to this many bytes of whole responses (e.g. 64MB; `off`, the default, none).
        #[arg(long, default_value = "off")]
        result_cache: String,
        /// How index files are read: mmap, pread, or direct (O_DIRECT through io_uring).
        #[arg(long, default_value = "mmap")]
        backend: needle_engine::Backend,
        /// The application cache of the pread and direct backends (e.g. 256MB; `off`, the default, none).
        #[arg(long, default_value = "off")]
        cache: String,
        /// A query log (one query a line, or `category<TAB>query`) whose most used term
        /// records are pinned in the application cache's static part.
        #[arg(long)]
        pin_log: Option<PathBuf>,
        /// The static part's size (e.g. 128MB; at most half of --cache).
        #[arg(long, default_value = "0")]
        pin: String,
        /// Join a term's fields in a dis-max with this tie breaker, as Elasticsearch's
        /// query_string does (0: its best_fields), instead of summing them as Lucene's
        /// MultiFieldQueryParser does: the in-process twin of `serve-http`'s requests.
        #[arg(long)]
        field_tie_breaker: Option<f32>,
    },
    /// Serve the engine protocol by forwarding each search to a server speaking Elasticsearch's API.
    ServeHttp(http::bridge::BridgeArgs),
    /// Time `_bulk` ingest of a corpus into a server speaking Elasticsearch's API.
    Bulk(http::bulk::BulkArgs),
    /// Generate a corpus of any size with the statistics of a real one; print both side by side.
    Scale {
        /// The real corpus to learn from.
        #[arg(long)]
        corpus: PathBuf,
        /// Output JSON lines (.gz compresses).
        #[arg(long)]
        out: PathBuf,
        /// Total text (title + body) to generate, e.g. 2GB.
        #[arg(long, value_parser = parse_size)]
        size: u64,
        /// Body length: `real` (the real corpus's distribution) or a size such as 1KB.
        #[arg(long, default_value = "1KB")]
        doc_len: String,
        /// Probability that a word follows the previous one through an observed pair.
        #[arg(long, default_value_t = 0.8)]
        pair_prob: f64,
        /// Probability that a word repeats one already in the document (burstiness: real
        /// documents repeat their words, which keeps document frequencies down).
        #[arg(long, default_value_t = 0.35)]
        repeat_prob: f64,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Learn from the first N documents only.
        #[arg(long)]
        learn_docs: Option<u64>,
    },
    /// Generate workloads (single.txt, two.txt, phrase.txt, realistic.txt) from a Needle index.
    Workload {
        /// A Needle index of the corpus (index-needle).
        #[arg(long)]
        index: PathBuf,
        #[arg(long)]
        out_dir: PathBuf,
        /// Queries per category.
        #[arg(long, default_value_t = 100)]
        per_category: usize,
        /// The corpus, for word pairs that make phrases occur.
        #[arg(long)]
        corpus: Option<PathBuf>,
        /// Documents of the corpus scanned for word pairs.
        #[arg(long, default_value_t = 200_000)]
        corpus_docs: u64,
        /// A folder of real query logs (TREC `qid:query`, MS MARCO `qid<TAB>query`).
        #[arg(long)]
        queries: Option<PathBuf>,
        /// At most this many queries per realistic category.
        #[arg(long, default_value_t = 10_000)]
        max_real: usize,
        #[arg(long, default_value_t = 42)]
        seed: u64,
    },
    /// Time an engine on a workload (closed or open loop), after validating its answers.
    Run(run::RunArgs),
    /// Raise an open-loop rate step by step until p99 passes a bound.
    Capacity(run::CapacityArgs),
    /// Compare the validation answers kept for a workload (hit counts; Needle's top 10 vs Lucene's).
    Compare {
        #[arg(long, default_value = "bench/results/answers")]
        answers_dir: PathBuf,
        #[arg(long)]
        engine: String,
        /// The workload's name (its file name without .txt).
        #[arg(long)]
        workload: String,
    },
    /// Real-time mode: add documents to a served index while querying it; visibility, ingestion, query latency.
    Realtime(realtime::RealtimeArgs),
    /// Seed 002's benchmark: search sorted by a field while documents are
    /// re-indexed or their doc values updated in place at fixed rates.
    Updates(updates::UpdatesArgs),
    /// Sorts, range filters and aggregations (field values), one engine, one request at a time.
    Values(values::ValuesArgs),
    /// Compare the engines' kept `values` answers with one engine's.
    CompareValues {
        #[arg(long, default_value = "bench/results/answers")]
        answers_dir: PathBuf,
        /// The label whose answers the others are compared with.
        #[arg(long, default_value = "needle")]
        reference: String,
    },
    /// Add the field-value benchmarks' fields to every document of a corpus (`updates`'
    /// `last_modified` and `title_dv`; `values`' `tag`, `words`, `rating` and `stamp`).
    WithValues {
        #[arg(long)]
        corpus: PathBuf,
        #[arg(long)]
        out: PathBuf,
    },
    /// Split a JSONL corpus: the first part (for the base index of `realtime`) and the rest.
    Split {
        #[arg(long)]
        corpus: PathBuf,
        /// Fraction of the documents in the first part.
        #[arg(long, default_value_t = 0.8)]
        fraction: f64,
        #[arg(long)]
        head: PathBuf,
        #[arg(long)]
        tail: PathBuf,
    },
    /// How full a Needle index's phrase filters are, by posting frequency, and the false-positive rate that implies.
    FilterStats {
        #[arg(long)]
        index: PathBuf,
        /// Look at every Nth term only.
        #[arg(long, default_value_t = 1)]
        every: usize,
    },
    /// Write a Markdown report with SVG plots from result JSON files.
    Report {
        /// Folder of result JSON files (searched recursively).
        #[arg(long)]
        results: PathBuf,
        /// Output folder (report.md and the SVG files).
        #[arg(long)]
        out: PathBuf,
    },
}

fn main() -> ExitCode {
    match run_command(Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run_command(c: Command) -> Result<()> {
    match c {
        Command::IndexNeedle { corpus, index, threads, memory } => {
            needle_side::index(&corpus, &index, threads, memory)
        }
        Command::ServeNeedle {
            index,
            threads,
            no_bloom,
            read_stats,
            live,
            durability,
            ingest_threads,
            verify,
            prefetch_min,
            result_cache,
            backend,
            cache,
            pin_log,
            pin,
            field_tie_breaker,
        } => {
            let size_or_off = |s: &str| -> Result<Option<usize>> {
                match s {
                    "off" => Ok(None),
                    size => Ok(Some(parse_size(size)? as usize)),
                }
            };
            needle_storage::prefetch::set_min_bytes(size_or_off(&prefetch_min)?);
            let result_cache_bytes = size_or_off(&result_cache)?.unwrap_or(0);
            let reads = needle_engine::ReadOptions::new(backend, size_or_off(&cache)?.unwrap_or(0))?;
            let verify = match verify.as_str() {
                "checksums" => needle_engine::Verify::Checksums,
                "footers" => needle_engine::Verify::Footers,
                other => return Err(format!("--verify: `{other}` is not checksums or footers").into()),
            };
            let live = if live {
                let durability = needle_engine::Durability::parse(&durability).ok_or_else(|| {
                    format!("--durability: `{durability}` is not volatile, graceful or durable")
                })?;
                Some(needle_engine::WriterOptions { durability, ..Default::default() })
            } else {
                None
            };
            let options = needle_side::ServeOptions {
                bloom: !no_bloom,
                read_stats,
                live,
                ingest_threads,
                verify,
                result_cache_bytes,
                reads,
                pin_log,
                pin_bytes: parse_size(&pin)? as usize,
                field_tie_breaker,
            };
            needle_side::serve(&index, threads, options)
        }
        Command::ServeHttp(a) => http::bridge::serve(a),
        Command::Bulk(a) => http::bulk::bulk(a),
        Command::Scale { corpus, out, size, doc_len, pair_prob, repeat_prob, seed, learn_docs } => {
            let doc_len = if doc_len == "real" {
                corpus::scale::DocLen::Real
            } else {
                corpus::scale::DocLen::Fixed(parse_size(&doc_len)? as usize)
            };
            let t = std::time::Instant::now();
            let model = corpus::scale::Model::learn(&corpus, learn_docs)?;
            eprintln!(
                "learned {} words from {} documents in {:.1} s; Heaps' law V = {:.2} n^{:.3}",
                model.real.vocabulary,
                model.real.docs,
                t.elapsed().as_secs_f64(),
                model.heaps_k,
                model.heaps_beta
            );
            let opts =
                corpus::scale::ScaleOptions { target_bytes: size, doc_len, pair_prob, repeat_prob, seed };
            let generated = corpus::scale::generate(&model, &opts, &out)?;
            eprintln!("wrote {} in {:.1} s", out.display(), t.elapsed().as_secs_f64());
            corpus::print_side_by_side(&model.real, &generated);
            Ok(())
        }
        Command::Workload { index, out_dir, per_category, corpus, corpus_docs, queries, max_real, seed } => {
            workload::generate(&workload::GenOptions {
                index,
                out_dir,
                per_category,
                seed,
                corpus,
                corpus_docs,
                queries_dir: queries,
                max_real,
            })
        }
        Command::Run(a) => run::run(&a).map(|_| ()),
        Command::Capacity(a) => run::capacity(&a).map(|_| ()),
        Command::Compare { answers_dir, engine, workload } => {
            validate::compare_all(&answers_dir, &engine, &workload).map(|_| ())
        }
        Command::Realtime(a) => realtime::realtime(&a).map(|_| ()),
        Command::Updates(a) => updates::updates(&a).map(|_| ()),
        Command::Values(a) => values::values(&a).map(|_| ()),
        Command::CompareValues { answers_dir, reference } => match values::compare(&answers_dir, &reference)?
        {
            0 => Ok(()),
            n => Err(format!("{n} difference(s)").into()),
        },
        Command::WithValues { corpus, out } => corpus::with_values(&corpus, &out),
        Command::Split { corpus, fraction, head, tail } => corpus::split(&corpus, fraction, &head, &tail),
        Command::Report { results, out } => report::write(&results, &out),
        Command::FilterStats { index, every } => filter_stats::filter_stats(&index, every),
    }
}
