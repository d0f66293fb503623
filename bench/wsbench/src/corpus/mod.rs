//! Corpora: reading JSON-lines documents (`{"id","title","body",...}`, plain or
//! gzip) and the statistics WSBench compares corpora by (document-frequency
//! histogram, vocabulary size). `scale` generates larger corpora.

pub mod scale;

use std::io::{BufRead, Write};
use std::path::Path;

use crate::util::{open_input, Result};

/// A document's text fields (other fields are ignored).
pub struct Doc {
    pub title: String,
    pub body: String,
}

/// Calls `f` for each document of a JSON-lines corpus, up to `limit` documents.
pub fn for_each_doc(path: &Path, limit: Option<u64>, mut f: impl FnMut(Doc)) -> Result<u64> {
    let reader = open_input(path)?;
    let mut n = 0u64;
    for (i, line) in reader.lines().enumerate() {
        if limit.is_some_and(|l| n >= l) {
            break;
        }
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&line)
            .map_err(|e| format!("{}:{}: not JSON: {e}", path.display(), i + 1))?;
        let text = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
        f(Doc { title: text("title"), body: text("body") });
        n += 1;
    }
    Ok(n)
}

/// Document frequencies bucketed by powers of ten: `[1], [2,10], [11,100], [101,1000], ...`.
pub fn df_histogram(dfs: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut h = vec![0u64; 10];
    for df in dfs {
        if df == 0 {
            continue;
        }
        let b = if df == 1 { 0 } else { ((df - 1) as f64).log10().floor() as usize + 1 };
        let b = b.min(h.len() - 1);
        h[b] += 1;
    }
    while h.len() > 1 && *h.last().unwrap() == 0 {
        h.pop();
    }
    h
}

pub fn df_bucket_label(b: usize) -> String {
    match b {
        0 => "1".to_string(),
        1 => "2-10".to_string(),
        _ => format!("{}-{}", 10u64.pow(b as u32 - 1) + 1, 10u64.pow(b as u32)),
    }
}

/// Corpus statistics printed side by side by `scale`.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CorpusStats {
    pub docs: u64,
    pub tokens: u64,
    pub bytes: u64,
    pub vocabulary: u64,
    pub df_histogram: Vec<u64>,
}

pub fn print_side_by_side(real: &CorpusStats, generated: &CorpusStats) {
    println!("{:<22} {:>16} {:>16}", "", "real", "generated");
    println!("{:<22} {:>16} {:>16}", "documents", real.docs, generated.docs);
    println!("{:<22} {:>16} {:>16}", "text bytes", real.bytes, generated.bytes);
    println!("{:<22} {:>16} {:>16}", "tokens", real.tokens, generated.tokens);
    println!("{:<22} {:>16} {:>16}", "vocabulary (terms)", real.vocabulary, generated.vocabulary);
    println!("terms by document frequency:");
    let n = real.df_histogram.len().max(generated.df_histogram.len());
    for b in 0..n {
        let r = real.df_histogram.get(b).copied().unwrap_or(0);
        let g = generated.df_histogram.get(b).copied().unwrap_or(0);
        let pct = |x: u64, t: u64| if t == 0 { 0.0 } else { 100.0 * x as f64 / t as f64 };
        println!(
            "  df {:<18} {:>9} {:>5.1}% {:>9} {:>5.1}%",
            df_bucket_label(b),
            r,
            pct(r, real.vocabulary),
            g,
            pct(g, generated.vocabulary)
        );
    }
}

/// The corpus with the field-value benchmarks' values added to each document:
/// for the update benchmark (seed 002), `last_modified`, a whole number
/// (milliseconds from 2020-09-13, one second a line), and `title_dv`, the
/// title's first 64 bytes as base64 text (a binary doc value); for `values`
/// (sorts, filters, aggregations), as `bench/http/values.py` derives them:
/// `tag` (a keyword: the document's `source`), `words` (a long: the body's
/// whitespace-separated words), `rating` (a double in 0..100) and `stamp` (a
/// date in 2000-2024, epoch milliseconds), the last two from the CRC-32 of the `id`.
pub fn with_values(corpus: &Path, out: &Path) -> Result<()> {
    const DAY: u64 = 86_400_000;
    const EPOCH_2000: u64 = 946_684_800_000;
    let lines = crate::util::read_lines(corpus)?;
    let mut w = crate::util::create_output(out)?;
    for (i, line) in lines.iter().enumerate() {
        let mut doc: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{} line {}: {e}", corpus.display(), i + 1))?;
        let title = doc["title"].as_str().unwrap_or_default().as_bytes();
        let title_dv = needle_engine::base64_text(&title[..title.len().min(64)]);
        doc["last_modified"] = serde_json::json!(1_600_000_000_000i64 + i as i64 * 1000);
        doc["title_dv"] = serde_json::json!(title_dv);
        let mut crc = flate2::Crc::new();
        crc.update(doc["id"].as_str().unwrap_or_default().as_bytes());
        let h = u64::from(crc.sum());
        doc["tag"] = serde_json::json!(doc["source"].as_str().unwrap_or("none"));
        doc["words"] = serde_json::json!(doc["body"].as_str().map_or(0, |b| b.split_whitespace().count()));
        doc["rating"] = serde_json::json!((h % 10_000) as f64 / 100.0);
        doc["stamp"] = serde_json::json!(EPOCH_2000 + (h % (25 * 365)) * DAY + h % DAY);
        writeln!(w, "{doc}")?;
    }
    w.flush()?;
    eprintln!("{}: {} documents with values to {}", corpus.display(), lines.len(), out.display());
    Ok(())
}

/// Writes the first `fraction` of the corpus's non-empty lines to `head` and the rest to
/// `tail` (`.gz` compresses), for `realtime`: the base index and the documents added to it.
pub fn split(corpus: &Path, fraction: f64, head: &Path, tail: &Path) -> Result<()> {
    if !(0.0..=1.0).contains(&fraction) {
        return Err(format!("--fraction {fraction} is not between 0 and 1").into());
    }
    let lines = crate::util::read_lines(corpus)?;
    let cut = (lines.len() as f64 * fraction).round() as usize;
    for (path, part) in [(head, &lines[..cut]), (tail, &lines[cut..])] {
        let mut out = crate::util::create_output(path)?;
        for line in part {
            writeln!(out, "{line}")?;
        }
        out.flush()?;
    }
    eprintln!(
        "{}: {} documents, {cut} to {}, {} to {}",
        corpus.display(),
        lines.len(),
        head.display(),
        lines.len() - cut,
        tail.display()
    );
    Ok(())
}
