//! Importing JSON lines, a writer's bulk path: one thread reads the input and
//! cuts it into chunks of consecutive lines; worker threads each turn a chunk
//! into one segment. The segments keep the input's order (chunk order), so
//! document ids follow the input. Nothing is visible until every chunk is
//! written and the writer commits them (each `_id` then replacing older
//! copies); on failure the new segments are deleted and the index is as it was.

use std::io::{BufRead, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use needle_codecs::bloom::BloomParams;
use needle_codecs::SegmentMeta;
use needle_core::{Error, Result};
use needle_index::MemSegment;
use needle_storage::Directory;

use crate::document::{analyze, parse_document};
use crate::schema::SharedSchema;

/// The most import threads: more than the machine has cores only adds memory.
const MAX_THREADS: usize = 256;

#[derive(Debug, Clone)]
pub struct ImportOptions {
    pub threads: usize,
    /// Memory for the import's in-memory segments; it sets the chunk size.
    pub memory_bytes: u64,
    /// Skip (and report) bad lines instead of stopping.
    pub skip_bad: bool,
    /// Turn phrase Bloom filters on or off for this and later imports (`None`: keep the index's setting).
    pub bloom: Option<bool>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions { threads: 2, memory_bytes: 512 << 20, skip_bad: false, bloom: None }
    }
}

/// Counters a progress display reads while an import runs.
#[derive(Debug, Default)]
pub struct ImportProgress {
    pub docs: AtomicU64,
    pub bytes: AtomicU64,
}

#[derive(Debug, Clone, Default)]
pub struct ImportSummary {
    pub docs: u64,
    pub input_bytes: u64,
    pub segments: usize,
    /// Terms per segment, summed.
    pub terms: u64,
    /// (line number, reason) of each skipped line.
    pub skipped: Vec<(u64, String)>,
    pub elapsed: Duration,
}

struct Chunk {
    seq: usize,
    first_line: u64,
    lines: Vec<String>,
}

struct ChunkResult {
    seq: usize,
    name: Option<String>,
    docs: u64,
    meta: Option<SegmentMeta>,
    skipped: Vec<(u64, String)>,
}

/// Runs the import pipeline and returns the new segments' names in input order.
pub(crate) fn run_import(
    dir: &Directory,
    schema: &SharedSchema,
    input: &mut dyn BufRead,
    names: &mut dyn FnMut() -> String,
    options: &ImportOptions,
    progress: &ImportProgress,
) -> Result<(Vec<String>, ImportSummary)> {
    let started = Instant::now();
    let threads = options.threads.clamp(1, MAX_THREADS);
    let bloom = schema.current().bloom_params();
    let chunk_bytes = (options.memory_bytes / (3 * (threads as u64 + 2))).max(64 << 10) as usize;
    let abort = AtomicBool::new(false);
    let (work_tx, work_rx) = crossbeam_channel::bounded::<(Chunk, String)>(1);
    let (done_tx, done_rx) = crossbeam_channel::unbounded::<Result<ChunkResult>>();
    let mut read_error = None;
    let mut issued = Vec::new();
    let mut spawn_error = None;
    let mut unreadable = Vec::new();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (rx, tx) = (work_rx.clone(), done_tx.clone());
            let (abort, bloom) = (&abort, &bloom);
            let worker =
                std::thread::Builder::new().name("needle-import".into()).spawn_scoped(scope, move || {
                    for (chunk, name) in rx {
                        if abort.load(Ordering::Relaxed) {
                            continue;
                        }
                        let result =
                            index_chunk(dir, schema, bloom, chunk, &name, options.skip_bad, progress);
                        if result.is_err() {
                            abort.store(true, Ordering::Relaxed);
                        }
                        let _ = tx.send(result);
                    }
                });
            if let Err(e) = worker {
                spawn_error = Some(Error::Resources { what: format!("cannot start an import thread: {e}") });
                abort.store(true, Ordering::Relaxed);
                break;
            }
        }
        drop(done_tx);
        let reading = Reading {
            chunk_bytes,
            max_line: MAX_LINE_BYTES,
            skip_bad: options.skip_bad,
            abort: &abort,
            progress,
        };
        read_error = read_chunks(input, &reading, &mut unreadable, |chunk| {
            let name = names();
            issued.push(name.clone());
            work_tx.send((chunk, name)).is_ok()
        })
        .err();
        drop(work_tx);
    });
    let mut results = Vec::new();
    let mut first_error: Option<Error> = spawn_error.or(read_error);
    for r in done_rx {
        match r {
            Ok(r) => results.push(r),
            Err(e) => first_error = Some(earliest(first_error, e)),
        }
    }
    if let Some(e) = first_error {
        for name in &issued {
            delete_segment(dir, name);
        }
        return Err(e);
    }
    results.sort_by_key(|r| r.seq);
    let mut summary =
        ImportSummary { input_bytes: progress.bytes.load(Ordering::Relaxed), ..Default::default() };
    let mut created = Vec::new();
    summary.skipped = unreadable;
    for r in results {
        summary.docs += r.docs;
        summary.skipped.extend(r.skipped);
        if let (Some(name), Some(meta)) = (r.name, r.meta) {
            summary.terms += meta.fields.iter().map(|f| f.terms).sum::<u64>();
            created.push(name);
        }
    }
    summary.skipped.sort_by_key(|(line, _)| *line);
    summary.segments = created.len();
    summary.elapsed = started.elapsed();
    Ok((created, summary))
}

/// Of two errors, the one about the earlier input line (so a failed import
/// reports the same line however threads were scheduled).
fn earliest(a: Option<Error>, b: Error) -> Error {
    match (a, &b) {
        (
            Some(a @ Error::InvalidInput { line: Some(la), .. }),
            Error::InvalidInput { line: Some(lb), .. },
        ) if la < *lb => a,
        (Some(a), _) if !matches!(a, Error::InvalidInput { .. }) => a,
        _ => b,
    }
}

/// The longest line a document may take: the body the server accepts
/// (Elasticsearch's `http.max_content_length`). A longer line is refused (or
/// skipped, with `skip_bad`) without holding more than this of it.
pub const MAX_LINE_BYTES: usize = 100 << 20;

/// How [`read_chunks`] reads.
struct Reading<'a> {
    chunk_bytes: usize,
    /// The longest line read (see [`MAX_LINE_BYTES`]).
    max_line: usize,
    /// Lines that are not UTF-8 are skipped (and listed) rather than fatal.
    skip_bad: bool,
    abort: &'a AtomicBool,
    progress: &'a ImportProgress,
}

/// Reads the next line of `input` into `buf` (its end kept), holding at most
/// `max` bytes of it: the bytes it took (0 at the end), and whether it was
/// longer than `max` (its rest is read past, not held).
pub fn read_line_within(
    input: &mut dyn BufRead,
    max: usize,
    buf: &mut Vec<u8>,
) -> std::io::Result<(usize, bool)> {
    let n = Read::take(&mut *input, max as u64 + 1).read_until(b'\n', buf)?;
    let too_long = n > max && buf.last() != Some(&b'\n');
    let rest = if too_long { input.skip_until(b'\n')? } else { 0 };
    Ok((n + rest, too_long))
}

/// Reads lines into chunks of about `chunk_bytes`; `send` returns false to
/// stop. A skipped line stays in its chunk as an empty line, so line numbers hold.
fn read_chunks(
    input: &mut dyn BufRead,
    how: &Reading<'_>,
    skipped: &mut Vec<(u64, String)>,
    mut send: impl FnMut(Chunk) -> bool,
) -> Result<()> {
    let Reading { chunk_bytes, max_line, skip_bad, abort, progress } = *how;
    let mut chunk = Chunk { seq: 0, first_line: 1, lines: Vec::new() };
    let mut size = 0;
    let mut line_no = 0u64;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let at = line_no + 1;
        let read_failed = |e: std::io::Error| Error::invalid(format!("read failed: {e}")).at_line(at);
        let (n, too_long) = read_line_within(input, max_line, &mut buf).map_err(read_failed)?;
        if n == 0 || abort.load(Ordering::Relaxed) {
            break;
        }
        line_no += 1;
        progress.bytes.fetch_add(n as u64, Ordering::Relaxed);
        let line = match String::from_utf8(std::mem::take(&mut buf)) {
            _ if too_long => {
                let what = format!("longer than the {max_line} bytes a document may take");
                if !skip_bad {
                    return Err(Error::invalid(what).at_line(line_no));
                }
                skipped.push((line_no, what));
                String::new()
            }
            Ok(line) => line,
            Err(_) if skip_bad => {
                skipped.push((line_no, "not valid UTF-8".to_string()));
                String::new()
            }
            Err(_) => return Err(Error::invalid("not valid UTF-8").at_line(line_no)),
        };
        size += line.len();
        chunk.lines.push(line);
        if size >= chunk_bytes {
            let next = Chunk { seq: chunk.seq + 1, first_line: line_no + 1, lines: Vec::new() };
            if !send(std::mem::replace(&mut chunk, next)) {
                return Ok(());
            }
            size = 0;
        }
    }
    if !chunk.lines.is_empty() {
        send(chunk);
    }
    Ok(())
}

fn index_chunk(
    dir: &Directory,
    schema: &SharedSchema,
    bloom: &Option<BloomParams>,
    chunk: Chunk,
    name: &str,
    skip_bad: bool,
    progress: &ImportProgress,
) -> Result<ChunkResult> {
    let mut builder = MemSegment::new(name).with_bloom(bloom.clone());
    let mut skipped = Vec::new();
    // Lines are dropped as they are indexed: their memory serves the segment.
    for (i, line) in chunk.lines.into_iter().enumerate() {
        let line_no = chunk.first_line + i as u64;
        if line.trim().is_empty() {
            continue;
        }
        match parse_document(&line, schema, None) {
            Ok((doc, current)) => {
                builder.add(analyze(doc, &current));
                progress.docs.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) if skip_bad => skipped.push((line_no, e.to_string())),
            Err(e) => return Err(e.at_line(line_no)),
        }
    }
    let docs = u64::from(builder.max_doc());
    let (name, meta) =
        if docs > 0 { (Some(name.to_string()), Some(builder.flush(dir, name)?)) } else { (None, None) };
    Ok(ChunkResult { seq: chunk.seq, name, docs, meta, skipped })
}

/// Removes a segment's files (those that exist).
pub(crate) fn delete_segment(dir: &Directory, name: &str) {
    for file in needle_codecs::segment_files(name) {
        let _ = dir.delete(&file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `input` in chunks as an import does, lines of at most `max_line` bytes.
    fn read(input: &str, max_line: usize, skip_bad: bool) -> Result<(Vec<String>, Vec<(u64, String)>)> {
        let (abort, progress) = (AtomicBool::new(false), ImportProgress::default());
        let how = Reading { chunk_bytes: 1 << 20, max_line, skip_bad, abort: &abort, progress: &progress };
        let (mut lines, mut skipped) = (Vec::new(), Vec::new());
        read_chunks(&mut input.as_bytes(), &how, &mut skipped, |c| {
            lines.extend(c.lines);
            true
        })?;
        assert_eq!(progress.bytes.load(Ordering::Relaxed), input.len() as u64, "every byte is counted");
        Ok((lines, skipped))
    }

    /// A line longer than the limit is an error naming it, or with
    /// `skip_bad` an empty line listed as skipped; the lines after it read whole.
    #[test]
    fn a_line_past_the_limit_is_refused_or_skipped() {
        let input = format!("{{\"a\":1}}\n{{\"b\":\"{}\"}}\n{{\"c\":3}}\n", "x".repeat(40));
        let (lines, skipped) = read(&input, 64, false).unwrap();
        assert_eq!((lines.len(), skipped.len()), (3, 0));
        let e = read(&input, 20, false).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("longer than the 20 bytes"), "{e}");
        let (lines, skipped) = read(&input, 20, true).unwrap();
        assert_eq!(lines, ["{\"a\":1}\n", "", "{\"c\":3}\n"]);
        assert_eq!(skipped, [(2, "longer than the 20 bytes a document may take".to_string())]);
        // A last line without its newline, exactly at the limit, is whole.
        let (lines, _) = read("{\"a\":12}", 8, false).unwrap();
        assert_eq!(lines, ["{\"a\":12}"]);
    }
}
