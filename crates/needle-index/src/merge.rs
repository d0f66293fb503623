//! Merging: several on-disk segments rewritten as one, documents kept in
//! order (the first segment's documents first), so ties between equal scores
//! keep breaking the same way. Deleted documents are dropped and the others
//! renumbered.

use fst::{IntoStreamer, Streamer};
use needle_codecs::bloom::{BloomParams, FilterShape};
use needle_codecs::doc_values::{sorted_keywords, BinaryBuf, ColumnBuf, MemTerms, SortedKeywords};
use needle_codecs::docstore::{write_doc_store, write_with_dictionaries, Frame, StoredDoc, MAX_DICTIONARIES};
use needle_codecs::meta::FileStamp;
use needle_codecs::postings::RecordScratch;
use needle_codecs::{
    termmap, ChecksummedWriter, EncodedRecord, IndexOrder, Postings, RecordEncoder, SegmentMeta, SegmentRead,
    SegmentReader, SegmentWriter, TermPostings,
};
use std::collections::BTreeMap;
use std::sync::mpsc;

use needle_core::{Deletes, DocId, DocSet, Error, FieldId, Result, TERMINATED};
use needle_storage::Directory;

use crate::flat_postings::FlatPostings;

/// Old document -> new document (`None`: deleted), for every source segment.
struct DocMap {
    maps: Vec<Vec<Option<DocId>>>,
    /// (segment, old doc) of every new document, in order.
    sources: Vec<(usize, DocId)>,
}

impl DocMap {
    /// The live documents of `segments` in order, or in `order` by their
    /// values as `current` reads them (equal keys in their order before).
    fn new(
        segments: &[(&SegmentReader, Option<&dyn Deletes>)],
        current: &[&dyn SegmentRead],
        order: Option<IndexOrder>,
    ) -> Result<Self> {
        let mut sources = Vec::new();
        for (i, (s, deletes)) in segments.iter().enumerate() {
            let live = (0..s.meta().max_doc).filter(|&d| !deletes.is_some_and(|del| del.is_deleted(d)));
            sources.extend(live.map(|d| (i, d)));
        }
        if let Some(order) = order {
            let mut columns: Vec<_> = current.iter().map(|c| c.numeric_values(order.field)).collect();
            let keys: Vec<i64> = sources
                .iter()
                .map(|&(seg, old)| order.key(columns[seg].as_mut().map_or(&[][..], |c| c.values(old))))
                .collect();
            // A key that failed to read must fail the merge, not misplace documents.
            needle_core::read_error::check()?;
            let mut by_key: Vec<usize> = (0..sources.len()).collect();
            by_key.sort_by(|&a, &b| match order.descending {
                true => keys[b].cmp(&keys[a]),
                false => keys[a].cmp(&keys[b]),
            });
            sources = by_key.into_iter().map(|i| sources[i]).collect();
        }
        let mut maps: Vec<Vec<Option<DocId>>> =
            segments.iter().map(|(s, _)| vec![None; s.meta().max_doc as usize]).collect();
        for (new, &(seg, old)) in sources.iter().enumerate() {
            maps[seg][old as usize] = Some(new as DocId);
        }
        Ok(DocMap { maps, sources })
    }
}

/// Writes segment `name` holding the live documents of `segments` (each with
/// its deletions), in order.
pub fn merge_segments(
    dir: &Directory,
    name: &str,
    segments: &[(&SegmentReader, Option<&dyn Deletes>)],
) -> Result<SegmentMeta> {
    let current: Vec<&dyn SegmentRead> = segments.iter().map(|(s, _)| *s as &dyn SegmentRead).collect();
    let merge = Merge { current: &current, legacy: &|_, _| None, order: None, threads: 0 };
    merge_segments_paced(dir, name, segments, &merge, &mut |_| {}).map(|(meta, _)| meta)
}

/// How a merge reads its inputs and orders its output.
pub struct Merge<'a> {
    /// What each segment's numeric values and stored documents read as: the
    /// segment, or a view of it with in-place updates, which the merge so folds in.
    pub current: &'a [&'a dyn SegmentRead],
    /// Reads an indexed term of a numeric field as its column value: a
    /// segment written before doc values has no column, and its documents'
    /// values are read from their terms when the merged segment has one.
    pub legacy: &'a dyn Fn(FieldId, &[u8]) -> Option<i64>,
    /// The index sort: the merged segment's documents in this order (in
    /// their order before when `None`).
    pub order: Option<IndexOrder>,
    /// Threads that merge terms into records (0: one a core, up to four);
    /// the records are written in order on the calling thread whatever the
    /// number, so the segment is the same.
    pub threads: usize,
}

/// Where each source document went: `maps[segment][old doc]`, `None` when it was deleted.
pub type DocMaps = Vec<Vec<Option<DocId>>>;

/// [`merge_segments`] as `merge` says, calling `pace(bytes written so far)`
/// after every term (so a background merge can be slowed to a rate); also
/// returns where each document went.
pub fn merge_segments_paced(
    dir: &Directory,
    name: &str,
    segments: &[(&SegmentReader, Option<&dyn Deletes>)],
    merge: &Merge<'_>,
    pace: &mut dyn FnMut(u64),
) -> Result<(SegmentMeta, DocMaps)> {
    let current = merge.current;
    let map = DocMap::new(segments, current, merge.order)?;
    let max_doc = map.sources.len() as DocId;
    let mut writer = SegmentWriter::create(dir, name, max_doc)?;
    writer.set_sorted(merge.order);
    writer.set_bloom(BloomParams::common(segments.iter().map(|(s, _)| s.meta().bloom.as_ref())));
    let kept = kept_dictionaries(segments, &map)?;
    let docs_out = writer.docs_output()?;
    // The document store is a file of its own: it is written on a thread of
    // its own while the terms are merged.
    let docs = std::thread::scope(|scope| {
        let docs = std::thread::Builder::new()
            .name("needle-merge-docs".into())
            .spawn_scoped(scope, || write_docs(docs_out, kept, current, &map))
            .map_err(|e| Error::Resources { what: format!("cannot start a merge thread: {e}") })?;
        let terms = merge_terms(&mut writer, segments, merge, &map, pace);
        let docs = docs.join().map_err(|_| Error::invalid("the merge's document store writer failed"))?;
        terms.and(docs)
    })?;
    writer.docs_written(docs);
    Ok((writer.finish()?.0, map.maps))
}

/// Adds every term of the inputs, their documents renumbered, and the doc values columns.
fn merge_terms(
    writer: &mut SegmentWriter,
    segments: &[(&SegmentReader, Option<&dyn Deletes>)],
    merge: &Merge<'_>,
    map: &DocMap,
    pace: &mut dyn FnMut(u64),
) -> Result<()> {
    let with_field = declare_fields(writer, segments, map);
    let merger = TermMerger {
        segments,
        map,
        encoder: writer.encoder(),
        scratch: RecordScratch::default(),
        buf: MergedTerm { shape: writer.bloom().map(|b| b.shape), ..MergedTerm::default() },
        seen: with_field,
    };
    let threads = match merge.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS)),
        n => n,
    };
    let seen = match threads {
        1 => merge_in_order(writer, merger, pace)?,
        n => merge_in_parallel(writer, merger, n, pace)?,
    };
    for (field, seen) in seen {
        writer.set_doc_count(field, seen.iter().filter(|&&s| s).count() as u64);
    }
    let (current, legacy) = (merge.current, merge.legacy);
    for (field, column) in merged_columns(segments, current, legacy, map)? {
        writer.add_numeric(field, column);
    }
    for (field, column) in merged_keywords(segments, map)? {
        writer.add_keywords(field, column);
    }
    for (field, column) in merged_binaries(current, map)? {
        writer.add_binary(field, column);
    }
    Ok(())
}

/// The most threads a merge encodes records on (besides the one writing them).
const MAX_THREADS: usize = 4;

/// A batch is sent to a thread when it holds this many terms, or records
/// of this many pages of prefetch zones (a measure of the work they take).
const BATCH_TERMS: usize = 1024;
const BATCH_PAGES: u64 = 256;

/// Terms to merge, each with its inputs' records, in key order.
#[derive(Default)]
struct Batch {
    keys: Vec<u8>,
    sources: Vec<fst::raw::IndexedValue>,
    /// Where each term's key and sources end in `keys` and `sources`.
    ends: Vec<(usize, usize)>,
    pages: u64,
}

impl Batch {
    fn push(&mut self, key: &[u8], sources: &[fst::raw::IndexedValue]) {
        self.keys.extend_from_slice(key);
        let from = self.sources.len();
        self.sources.extend_from_slice(sources);
        self.sources[from..].sort_by_key(|s| s.index);
        self.ends.push((self.keys.len(), self.sources.len()));
        let pages = |s: &fst::raw::IndexedValue| u64::from(termmap::unpack_entry(s.value).1).max(1);
        self.pages += sources.iter().map(pages).sum::<u64>();
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The key of term `i`, and where its inputs' records are (by input).
    fn term(&self, i: usize) -> (&[u8], &[fst::raw::IndexedValue]) {
        let (from_key, from_source) = match i {
            0 => (0, 0),
            _ => self.ends[i - 1],
        };
        let (key_end, source_end) = self.ends[i];
        (&self.keys[from_key..key_end], &self.sources[from_source..source_end])
    }

    fn clear(&mut self) {
        self.keys.clear();
        self.sources.clear();
        self.ends.clear();
        self.pages = 0;
    }
}

/// A batch's merged records, one after another in `bytes`: for each, its
/// term's place in the batch, where its bytes end, and what the writer records of it.
struct Encoded {
    batch: Batch,
    bytes: Vec<u8>,
    records: Vec<(usize, usize, EncodedRecord)>,
}

/// Calls `each` with every term of the inputs in key order, a batch at a
/// time; `each` takes the batch's terms, leaving it empty or a cleared one.
fn for_each_batch(
    segments: &[(&SegmentReader, Option<&dyn Deletes>)],
    each: &mut dyn FnMut(&mut Batch) -> Result<()>,
) -> Result<()> {
    let mut union = fst::map::OpBuilder::new();
    for (s, _) in segments {
        union = union.add(s.term_map());
    }
    let mut stream = union.union().into_stream();
    let mut batch = Batch::default();
    while let Some((key, sources)) = stream.next() {
        batch.push(key, sources);
        if batch.len() >= BATCH_TERMS || batch.pages >= BATCH_PAGES {
            each(&mut batch)?;
        }
    }
    if batch.len() > 0 {
        each(&mut batch)?;
    }
    Ok(())
}

/// Writes a batch's records, in order.
fn append(writer: &mut SegmentWriter, encoded: &Encoded, pace: &mut dyn FnMut(u64)) -> Result<()> {
    let mut start = 0;
    for (i, end, record) in &encoded.records {
        let (key, _) = encoded.batch.term(*i);
        let (field, term) = termmap::split_key(key).expect("term map keys hold a field");
        writer.add_record(field, term, &encoded.bytes[start..*end], record)?;
        start = *end;
        pace(writer.bytes_written());
    }
    Ok(())
}

/// Where each new document has each field without norms (see [`declare_fields`]).
type Seen = BTreeMap<FieldId, Vec<bool>>;

fn merge_in_order(
    writer: &mut SegmentWriter,
    mut merger: TermMerger<'_>,
    pace: &mut dyn FnMut(u64),
) -> Result<Seen> {
    let segments = merger.segments;
    let mut spare = Vec::new();
    for_each_batch(segments, &mut |batch| {
        let encoded = merger.merge(std::mem::take(batch), std::mem::take(&mut spare))?;
        append(writer, &encoded, pace)?;
        (*batch, spare) = (encoded.batch, encoded.bytes);
        batch.clear();
        Ok(())
    })?;
    Ok(merger.seen)
}

/// Merges batches on `threads` threads, each taking every `threads`-th
/// batch, while this one writes their records in order: the file is the
/// same as [`merge_in_order`]'s. At most a few batches a thread are in
/// flight; their buffers go back to be filled again.
fn merge_in_parallel(
    writer: &mut SegmentWriter,
    merger: TermMerger<'_>,
    threads: usize,
    pace: &mut dyn FnMut(u64),
) -> Result<Seen> {
    let segments = merger.segments;
    std::thread::scope(|scope| {
        let (mut to_threads, mut spares, mut results, mut handles) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..threads {
            let (send_batch, batches) = mpsc::channel::<Batch>();
            let (send_spare, spare) = mpsc::channel::<Vec<u8>>();
            let (send_result, result) = mpsc::channel::<Result<Encoded>>();
            let mut own = merger.fork();
            let work = move || {
                for batch in batches {
                    let bytes = spare.try_recv().unwrap_or_default();
                    if send_result.send(own.merge(batch, bytes)).is_err() {
                        break;
                    }
                }
                own.seen
            };
            let handle = std::thread::Builder::new()
                .name("needle-merge-terms".into())
                .spawn_scoped(scope, work)
                .map_err(|e| Error::Resources { what: format!("cannot start a merge thread: {e}") })?;
            to_threads.push(send_batch);
            spares.push(send_spare);
            results.push(result);
            handles.push(handle);
        }
        let (mut sent, mut written) = (0, 0);
        // Writes the oldest batch in flight; returns it, cleared.
        let mut write_next = |written: &mut usize| -> Result<Batch> {
            let lane = *written % threads;
            let stopped = || Error::invalid("a merge thread stopped before its batch was done");
            let encoded = results[lane].recv().map_err(|_| stopped())??;
            *written += 1;
            append(writer, &encoded, pace)?;
            // A thread that has stopped needs no buffer.
            let _ = spares[lane].send(encoded.bytes);
            let mut batch = encoded.batch;
            batch.clear();
            Ok(batch)
        };
        let window = 4 * threads;
        let mut send = |batch: &mut Batch| -> Result<()> {
            let empty = match sent - written == window {
                true => write_next(&mut written)?,
                false => Batch::default(),
            };
            to_threads[sent % threads]
                .send(std::mem::replace(batch, empty))
                .map_err(|_| Error::invalid("a merge thread stopped before its batch was sent"))?;
            sent += 1;
            Ok(())
        };
        let mut done = for_each_batch(segments, &mut send);
        while done.is_ok() && written < sent {
            done = write_next(&mut written).map(drop);
        }
        // Closing the channels ends the threads (at once, on an error).
        drop((to_threads, spares, results));
        let mut seen = merger.seen;
        for handle in handles {
            let own = handle.join().map_err(|_| Error::invalid("a merge thread failed"))?;
            for (field, marks) in own {
                let all = seen.get_mut(&field).expect("every thread marks the same fields");
                all.iter_mut().zip(marks).for_each(|(a, m)| *a |= m);
            }
        }
        done.map(|()| seen)
    })
}

/// Merges the postings of a batch's terms into records: what each thread of a merge holds.
struct TermMerger<'a> {
    segments: &'a [(&'a SegmentReader, Option<&'a dyn Deletes>)],
    map: &'a DocMap,
    encoder: RecordEncoder,
    scratch: RecordScratch,
    buf: MergedTerm,
    seen: Seen,
}

impl TermMerger<'_> {
    /// A merger for another thread, with marks of its own.
    fn fork(&self) -> Self {
        let shape = self.buf.shape;
        TermMerger {
            segments: self.segments,
            map: self.map,
            encoder: self.encoder.clone(),
            scratch: RecordScratch::default(),
            buf: MergedTerm { shape, ..MergedTerm::default() },
            seen: self.seen.iter().map(|(&f, marks)| (f, vec![false; marks.len()])).collect(),
        }
    }

    /// Merges `batch`'s terms into records appended to `bytes` (cleared first).
    fn merge(&mut self, batch: Batch, mut bytes: Vec<u8>) -> Result<Encoded> {
        bytes.clear();
        let mut records = Vec::with_capacity(batch.len());
        for i in 0..batch.len() {
            let (key, sources) = batch.term(i);
            let (field, _) = termmap::split_key(key).expect("term map keys hold a field");
            let buf = &mut self.buf;
            buf.clear();
            for src in sources {
                let mut postings = self.segments[src.index].0.postings_at(src.value)?;
                buf.append(&mut postings, &self.map.maps[src.index]);
                // A list cut short by a failed read must fail the merge, not lose documents.
                needle_core::read_error::check()?;
            }
            if buf.flat.docs.is_empty() {
                continue;
            }
            buf.order_by_doc();
            if let Some(seen) = self.seen.get_mut(&field) {
                buf.flat.docs.iter().for_each(|&d| seen[d as usize] = true);
            }
            let record = self.encoder.encode(&mut self.scratch, field, &buf.as_postings(), &mut bytes)?;
            records.push((i, bytes.len(), record));
        }
        Ok(Encoded { batch, bytes, records })
    }
}

/// The dictionaries a merge's document store keeps: its inputs' (each
/// once), those of the most documents first, at most
/// [`MAX_DICTIONARIES`], the first a trained one (new records are
/// compressed with it). The frames compressed with a kept dictionary are
/// copied as they are; the others are recompressed.
struct KeptDictionaries {
    dicts: Vec<Vec<u8>>,
    /// For each input, for each of its store's dictionaries, its number among `dicts`.
    numbers: Vec<Vec<Option<usize>>>,
}

/// `None` when no input has a trained dictionary (small segments, stores of
/// format 1): a new one is trained.
fn kept_dictionaries(
    segments: &[(&SegmentReader, Option<&dyn Deletes>)],
    map: &DocMap,
) -> Result<Option<KeptDictionaries>> {
    let mut inputs = Vec::with_capacity(segments.len());
    for (s, _) in segments {
        inputs.push(s.doc_store().dictionaries()?);
    }
    let mut uses: Vec<Vec<u64>> = inputs.iter().map(|d| vec![0; d.len()]).collect();
    for &(seg, old) in &map.sources {
        if !uses[seg].is_empty() {
            uses[seg][segments[seg].0.doc_store().dictionary_of(old)] += 1;
        }
    }
    // Live documents by dictionary (equal dictionaries counted together), in the inputs' order.
    let mut by_docs: Vec<(&[u8], u64)> = Vec::new();
    for (dicts, uses) in inputs.iter().zip(&uses) {
        for (dict, &n) in dicts.iter().zip(uses).filter(|&(_, &n)| n > 0) {
            match by_docs.iter_mut().find(|(d, _)| *d == dict.as_slice()) {
                Some((_, docs)) => *docs += n,
                None => by_docs.push((dict, n)),
            }
        }
    }
    // The most documents first (a stable sort: ties in the inputs' order).
    by_docs.sort_by_key(|&(_, docs)| std::cmp::Reverse(docs));
    let Some(first) = by_docs.iter().position(|(d, _)| !d.is_empty()) else { return Ok(None) };
    let first = by_docs.remove(first);
    by_docs.insert(0, first);
    by_docs.truncate(MAX_DICTIONARIES);
    let dicts: Vec<Vec<u8>> = by_docs.iter().map(|(d, _)| d.to_vec()).collect();
    let numbers = inputs
        .iter()
        .map(|own| own.iter().map(|d| dicts.iter().position(|kept| kept == d)).collect())
        .collect();
    Ok(Some(KeptDictionaries { dicts, numbers }))
}

/// Writes the merged documents to `out`: with the kept dictionaries,
/// copying the frames compressed with them (unless an update was layered
/// over them) and recompressing the others' with the first, or with a newly
/// trained one. Recompressing every document was a quarter of a merge.
fn write_docs(
    out: ChecksummedWriter,
    kept: Option<KeptDictionaries>,
    current: &[&dyn SegmentRead],
    map: &DocMap,
) -> Result<FileStamp> {
    let count = map.sources.len() as u32;
    let Some(kept) = kept else {
        return write_doc_store(out, count, &mut |doc| {
            let (seg, old) = map.sources[doc as usize];
            current[seg].stored(old)
        });
    };
    let dicts: Vec<&[u8]> = kept.dicts.iter().map(Vec::as_slice).collect();
    write_with_dictionaries(out, count, &dicts, &mut |doc| {
        let (seg, old) = map.sources[doc as usize];
        if let Some(frame) = current[seg].stored_frame(old)? {
            if let Some(dict) = kept.numbers[seg].get(frame.dict).copied().flatten() {
                return Ok(StoredDoc::Frame(Frame { dict, ..frame }));
            }
        }
        Ok(StoredDoc::Record(current[seg].stored(old)?))
    })
}

/// Every numeric column any segment has, its live documents' values in their new order.
fn merged_columns(
    segments: &[(&SegmentReader, Option<&dyn Deletes>)],
    current: &[&dyn SegmentRead],
    legacy: &dyn Fn(FieldId, &[u8]) -> Option<i64>,
    map: &DocMap,
) -> Result<Vec<(FieldId, ColumnBuf)>> {
    let mut out = Vec::new();
    let mut fields: Vec<FieldId> = current.iter().flat_map(|s| s.numeric_fields()).collect();
    fields.sort_unstable();
    fields.dedup();
    for field in fields {
        let mut sources: Vec<_> = current.iter().map(|s| s.numeric_values(field)).collect();
        let mut from_terms = Vec::with_capacity(segments.len());
        for ((segment, _), source) in segments.iter().zip(&sources) {
            from_terms.push(match source {
                Some(_) => None,
                None => Some(values_from_terms(segment, field, legacy)?),
            });
        }
        let mut column = ColumnBuf::default();
        for (new, &(seg, old)) in map.sources.iter().enumerate() {
            let values = match (&mut sources[seg], &from_terms[seg]) {
                (Some(v), _) => v.values(old),
                (None, Some(by_doc)) => by_doc.get(&old).map_or(&[][..], Vec::as_slice),
                (None, None) => &[],
            };
            if !values.is_empty() {
                column.set(new as DocId, values);
            }
        }
        // A block that failed to read must fail the merge, not drop values.
        needle_core::read_error::check()?;
        out.push((field, column));
    }
    Ok(out)
}

/// Every binary column any segment has (as `current` reads it: with its
/// updates), the live documents' values in their new order.
fn merged_binaries(current: &[&dyn SegmentRead], map: &DocMap) -> Result<Vec<(FieldId, BinaryBuf)>> {
    let mut fields: Vec<FieldId> = current.iter().flat_map(|s| s.binary_fields()).collect();
    fields.sort_unstable();
    fields.dedup();
    let mut out = Vec::with_capacity(fields.len());
    for field in fields {
        let mut sources: Vec<_> = current.iter().map(|s| s.binary_values(field)).collect();
        let mut column = BinaryBuf::default();
        for (new, &(seg, old)) in map.sources.iter().enumerate() {
            if let Some(value) = sources[seg].as_mut().and_then(|s| s.value(old)) {
                column.set(new as DocId, value);
            }
        }
        needle_core::read_error::check()?;
        out.push((field, column));
    }
    Ok(out)
}

/// The values of `field` in a segment without a column of it, read from its
/// indexed terms (each document's ascending): doc -> values.
fn values_from_terms(
    segment: &SegmentReader,
    field: FieldId,
    legacy: &dyn Fn(FieldId, &[u8]) -> Option<i64>,
) -> Result<BTreeMap<DocId, Vec<i64>>> {
    let mut out: BTreeMap<DocId, Vec<i64>> = BTreeMap::new();
    let (from, to) = termmap::field_keys(field);
    let mut stream = segment.term_map().range().ge(&from).lt(&to).into_stream();
    while let Some((key, entry)) = stream.next() {
        let Some(value) = termmap::split_key(key).and_then(|(_, term)| legacy(field, term)) else { continue };
        let mut postings = segment.postings_at(entry)?;
        let mut doc = postings.doc();
        while doc != TERMINATED {
            out.entry(doc).or_default().push(value);
            doc = postings.advance();
        }
        needle_core::read_error::check()?;
    }
    out.values_mut().for_each(|v| v.sort_unstable());
    Ok(out)
}

/// The keyword fields with doc values in any segment.
fn keyword_fields(segments: &[(&SegmentReader, Option<&dyn Deletes>)]) -> Vec<FieldId> {
    let mut fields: Vec<FieldId> = segments
        .iter()
        .filter_map(|(s, _)| s.doc_values())
        .flat_map(|v| v.fields().filter(move |&f| v.is_keyword(f)))
        .collect();
    fields.sort_unstable();
    fields.dedup();
    fields
}

/// Every keyword column any segment has: the live documents' values in their
/// new order, as ordinals into the merged dictionary.
fn merged_keywords(
    segments: &[(&SegmentReader, Option<&dyn Deletes>)],
    map: &DocMap,
) -> Result<Vec<(FieldId, SortedKeywords)>> {
    let mut out = Vec::new();
    for field in keyword_fields(segments) {
        let mut sources: Vec<_> = segments.iter().map(|(s, _)| s.keyword_values(field)).collect();
        let terms = MemTerms::default();
        let mut ids = ColumnBuf::default();
        let mut scratch = Vec::new();
        for (new, &(seg, old)) in map.sources.iter().enumerate() {
            let Some(source) = sources[seg].as_mut() else { continue };
            let own: Vec<i64> = source.ids(old).to_vec();
            scratch.clear();
            scratch.extend(own.into_iter().map(|o| terms.id(&source.term(o))));
            if !scratch.is_empty() {
                scratch.sort_unstable();
                ids.set(new as DocId, &scratch);
            }
        }
        needle_core::read_error::check()?;
        out.push((field, sorted_keywords(&ids, &terms.all(), map.sources.len() as DocId)));
    }
    Ok(out)
}

/// Declares every field any segment has, with norms of the live documents in
/// order. Returns, for fields without norms, a "has the field" flag per new
/// document, filled while terms are written, to count documents with the field.
fn declare_fields(
    writer: &mut SegmentWriter,
    segments: &[(&SegmentReader, Option<&dyn Deletes>)],
    map: &DocMap,
) -> BTreeMap<FieldId, Vec<bool>> {
    let mut fields: Vec<_> = segments.iter().flat_map(|(s, _)| s.meta().fields.iter().cloned()).collect();
    fields.sort_by_key(|f| f.field);
    fields.dedup_by_key(|f| f.field);
    let mut without_norms = BTreeMap::new();
    for f in fields {
        let norms = f.norms_index.is_some().then(|| {
            let norm =
                |&(seg, old): &(usize, DocId)| segments[seg].0.norms(f.field).map_or(0, |n| n[old as usize]);
            map.sources.iter().map(norm).collect::<Vec<u8>>()
        });
        let doc_count = match &norms {
            Some(n) => n.iter().filter(|&&b| b > 0).count() as u64,
            None => {
                without_norms.insert(f.field, vec![false; map.sources.len()]);
                0
            }
        };
        writer.add_field(f.field, f.positions, f.offsets, norms, doc_count);
    }
    without_norms
}

#[derive(Default)]
struct MergedTerm {
    flat: FlatPostings,
    pos_scratch: Vec<u32>,
    off_scratch: Vec<(u32, u32)>,
    /// The merged segment's filters (every posting's, as in memory).
    shape: Option<FilterShape>,
    /// The filters gathered keep those of the postings of this frequency or
    /// more: a source that kept none for a posting raises it past that one.
    keep_from: u32,
    /// Whether a source posting came with filters, and whether every one sized them as `shape`.
    saw_filters: bool,
    bloom_consistent: bool,
    /// Where each posting's positions, offsets and filters start (to reorder them).
    starts: Vec<[usize; 4]>,
    /// The postings reordered by document, when the documents were renumbered out of order.
    sorted: FlatPostings,
}

impl MergedTerm {
    fn clear(&mut self) {
        self.flat.clear();
        self.starts.clear();
        self.keep_from = 1;
        self.saw_filters = false;
        self.bloom_consistent = true;
    }

    /// Puts the postings in document order (an index sort renumbers the
    /// documents out of their order), each with its positions, offsets and filters.
    fn order_by_doc(&mut self) {
        if self.flat.docs.is_sorted() {
            return;
        }
        let flat = &self.flat;
        let ends = [flat.positions.len(), flat.offsets.len(), flat.before.len(), flat.after.len()];
        let range = |i: usize, k: usize| self.starts[i][k]..self.starts.get(i + 1).map_or(ends[k], |s| s[k]);
        let mut order: Vec<usize> = (0..flat.docs.len()).collect();
        order.sort_unstable_by_key(|&i| flat.docs[i]);
        let out = &mut self.sorted;
        out.clear();
        for i in order {
            out.docs.push(flat.docs[i]);
            out.freqs.push(flat.freqs[i]);
            out.positions.extend_from_slice(&flat.positions[range(i, 0)]);
            out.offsets.extend_from_slice(&flat.offsets[range(i, 1)]);
            out.before.extend_from_slice(&flat.before[range(i, 2)]);
            out.after.extend_from_slice(&flat.after[range(i, 3)]);
        }
        std::mem::swap(&mut self.flat, &mut self.sorted);
    }

    fn append(&mut self, postings: &mut dyn Postings, map: &[Option<DocId>]) {
        let mut doc = postings.doc();
        while doc != TERMINATED {
            let Some(new) = map[doc as usize] else {
                doc = postings.advance();
                continue;
            };
            let flat = &mut self.flat;
            self.starts.push([flat.positions.len(), flat.offsets.len(), flat.before.len(), flat.after.len()]);
            flat.docs.push(new);
            flat.freqs.push(postings.freq());
            postings.positions(&mut self.pos_scratch);
            flat.positions.extend_from_slice(&self.pos_scratch);
            postings.offsets(&mut self.off_scratch);
            flat.offsets.extend_from_slice(&self.off_scratch);
            let (before, after, freq) = (flat.before.len(), flat.after.len(), postings.freq());
            let kept = postings.filters_into(&mut flat.before, &mut flat.after);
            self.saw_filters |= kept.is_some();
            if kept.is_some_and(|k| self.shape.is_none_or(|s| !s.sizes_match(k))) {
                self.bloom_consistent = false;
            }
            if !kept.is_some_and(|k| k.stores(freq)) {
                self.keep_filters_from(freq + 1);
            } else if freq < self.keep_from {
                flat.before.truncate(before);
                flat.after.truncate(after);
            }
            doc = postings.advance();
        }
    }

    /// Drops the filters gathered of postings below frequency `min` (when above `keep_from`).
    fn keep_filters_from(&mut self, min: u32) {
        if min <= self.keep_from {
            return;
        }
        self.keep_from = min;
        let flat = &mut self.flat;
        let ends = [flat.before.len(), flat.after.len()];
        let mut to = [0, 0];
        for i in 0..flat.docs.len() {
            let next = self.starts.get(i + 1).map_or(ends, |s| [s[2], s[3]]);
            for (side, filters) in [&mut flat.before, &mut flat.after].into_iter().enumerate() {
                let from = self.starts[i][2 + side];
                self.starts[i][2 + side] = to[side];
                if flat.freqs[i] >= min {
                    filters.copy_within(from..next[side], to[side]);
                    to[side] += next[side] - from;
                }
            }
        }
        flat.before.truncate(to[0]);
        flat.after.truncate(to[1]);
    }

    fn as_postings(&self) -> TermPostings<'_> {
        let shape = self.shape.map(|s| s.with_min_freq(self.keep_from));
        self.flat.as_postings(shape.filter(|_| self.saw_filters && self.bloom_consistent))
    }
}
