//! `needle index`: import with a progress line and a summary.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use needle_engine::{ImportOptions, ImportProgress, Index, Schema};

use crate::one_off_writer;

use crate::input;

#[derive(Args)]
pub struct IndexArgs {
    #[arg(long)]
    index: PathBuf,
    /// JSON lines, one document per line (plain or gzip), or - for stdin.
    #[arg(long)]
    input: String,
    /// An Elasticsearch-style mapping (JSON); without one, fields are typed from their values.
    #[arg(long)]
    mapping: Option<PathBuf>,
    /// Indexing threads.
    #[arg(long, default_value_t = std::thread::available_parallelism().map_or(2, |n| n.get()), value_parser = crate::parse_threads)]
    threads: usize,
    /// Memory for in-memory segments (e.g. 512MB); sets the segment size.
    #[arg(long, default_value = "512MB", value_parser = needle_core::parse_size)]
    memory: u64,
    /// Skip malformed lines (and report them) instead of stopping.
    #[arg(long)]
    skip_bad: bool,
    /// Two-way Bloom filters for phrase queries: on (the default for a new index) or off.
    #[arg(long, value_parser = ["on", "off"])]
    bloom: Option<String>,
}

pub fn run(args: IndexArgs) -> needle_core::Result<ExitCode> {
    let mapping = match &args.mapping {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| needle_core::Error::io(path, e))?;
            Some(Schema::from_mapping(&text)?)
        }
        None => None,
    };
    // The input first: a missing file must not leave an empty index behind.
    let mut reader = input::open(&args.input)?;
    let index = Index::open_or_create(&args.index, mapping)?;
    let writer = one_off_writer(&index, false)?;
    let bloom = args.bloom.map(|b| b == "on");
    let options =
        ImportOptions { threads: args.threads, memory_bytes: args.memory, skip_bad: args.skip_bad, bloom };
    let progress = ImportProgress::default();
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("valid template"));
    let done = std::sync::atomic::AtomicBool::new(false);
    let result = std::thread::scope(|s| {
        s.spawn(|| {
            let start = std::time::Instant::now();
            while !done.load(Ordering::Relaxed) {
                let secs = start.elapsed().as_secs_f64().max(1e-3);
                let docs = progress.docs.load(Ordering::Relaxed);
                let mb = progress.bytes.load(Ordering::Relaxed) as f64 / 1e6;
                bar.set_message(format!(
                    "{docs} docs  {:.0} docs/s  {:.1} MB/s",
                    docs as f64 / secs,
                    mb / secs
                ));
                bar.tick();
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let r = writer.import(&mut reader, &options, &progress);
        done.store(true, Ordering::Relaxed);
        r
    });
    bar.finish_and_clear();
    let summary = result?;
    writer.close()?;
    let secs = summary.elapsed.as_secs_f64().max(1e-6);
    println!(
        "indexed {} documents ({:.1} MB) in {:.2} s: {:.0} docs/s, {:.1} MB/s",
        summary.docs,
        summary.input_bytes as f64 / 1e6,
        secs,
        summary.docs as f64 / secs,
        summary.input_bytes as f64 / 1e6 / secs
    );
    println!(
        "{} new segment(s), {} terms; index now holds {} documents in {} segment(s)",
        summary.segments,
        summary.terms,
        index.num_docs(),
        index.segment_counts().0
    );
    print_file_sizes(&index)?;
    for (line, reason) in &summary.skipped {
        eprintln!("skipped line {line}: {reason}");
    }
    if !summary.skipped.is_empty() {
        eprintln!("{} line(s) skipped", summary.skipped.len());
    }
    Ok(ExitCode::SUCCESS)
}

fn print_file_sizes(index: &Index) -> needle_core::Result<()> {
    let dir = index.directory();
    let mut by_kind = std::collections::BTreeMap::<String, u64>::new();
    for name in dir.list()? {
        if let Some((_, ext)) = name.rsplit_once('.').filter(|(_, ext)| *ext != "lock") {
            let len = std::fs::metadata(dir.file_path(&name)).map(|m| m.len()).unwrap_or(0);
            *by_kind.entry(ext.to_string()).or_default() += len;
        }
    }
    let label = |ext: &str| match ext {
        "post" => "postings (.post)",
        "terms" => "term map (.terms)",
        "norms" => "norms (.norms)",
        "docs" => "document store (.docs)",
        "meta" => "segment meta (.meta)",
        "manifest" => "manifest",
        _ => "other",
    };
    for (ext, bytes) in by_kind {
        println!("  {:<24} {:>12} bytes", label(&ext), bytes);
    }
    Ok(())
}
