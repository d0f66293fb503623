//! Merging: several on-disk segments rewritten as one, documents kept in
//! order (the first segment's documents first), so ties between equal scores
//! keep breaking the same way. Deleted documents are dropped and the others
//! renumbered.

use fst::{IntoStreamer, Streamer};
use needle_codecs::bloom::{BloomParams, FilterShape};
use needle_codecs::doc_values::{sorted_keywords, BinaryBuf, ColumnBuf, MemTerms, SortedKeywords};
use needle_codecs::docstore::{write_doc_store, write_with_dictionary, StoredDoc};
use needle_codecs::meta::FileStamp;
use needle_codecs::{
    termmap, ChecksummedWriter, IndexOrder, Postings, SegmentMeta, SegmentRead, SegmentReader, SegmentWriter,
    TermPostings,
};
use std::collections::BTreeMap;

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
    let merge = Merge { current: &current, legacy: &|_, _| None, order: None };
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
    let (current, legacy) = (merge.current, merge.legacy);
    let map = DocMap::new(segments, current, merge.order)?;
    let max_doc = map.sources.len() as DocId;
    let mut writer = SegmentWriter::create(dir, name, max_doc)?;
    writer.set_sorted(merge.order);
    writer.set_bloom(BloomParams::common(segments.iter().map(|(s, _)| s.meta().bloom.as_ref())));
    let kept = kept_dictionary(segments, &map)?;
    let docs_out = writer.docs_output()?;
    // The document store is a file of its own: it is written on a second
    // thread while this one merges the terms (each about half of a merge).
    let docs = std::thread::scope(|scope| {
        let docs = std::thread::Builder::new()
            .name("needle-merge-docs".into())
            .spawn_scoped(scope, || write_docs(docs_out, kept, current, &map))
            .map_err(|e| Error::Resources { what: format!("cannot start a merge thread: {e}") })?;
        let terms = merge_terms(&mut writer, segments, current, legacy, &map, pace);
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
    current: &[&dyn SegmentRead],
    legacy: &dyn Fn(FieldId, &[u8]) -> Option<i64>,
    map: &DocMap,
    pace: &mut dyn FnMut(u64),
) -> Result<()> {
    let mut with_field = declare_fields(writer, segments, map);
    let mut union = fst::map::OpBuilder::new();
    for (s, _) in segments {
        union = union.add(s.term_map());
    }
    let mut stream = union.union().into_stream();
    let mut buf = MergedTerm { shape: writer.bloom().map(|b| b.shape), ..MergedTerm::default() };
    while let Some((key, sources)) = stream.next() {
        let (field, term) = termmap::split_key(key).expect("term map keys hold a field");
        let mut sources = sources.to_vec();
        sources.sort_by_key(|s| s.index);
        buf.clear();
        for src in sources {
            let mut postings = segments[src.index].0.postings_at(src.value)?;
            buf.append(&mut postings, &map.maps[src.index]);
            // A list cut short by a failed read must fail the merge, not lose documents.
            needle_core::read_error::check()?;
        }
        if buf.flat.docs.is_empty() {
            continue;
        }
        buf.order_by_doc();
        if let Some(seen) = with_field.get_mut(&field) {
            buf.flat.docs.iter().for_each(|&d| seen[d as usize] = true);
        }
        writer.add_term(field, term, &buf.as_postings())?;
        pace(writer.bytes_written());
    }
    for (field, seen) in with_field {
        writer.set_doc_count(field, seen.iter().filter(|&&s| s).count() as u64);
    }
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

/// The dictionary a merge's document store is written with: that of the
/// input holding the most of its documents (with that input's index), whose
/// frames are then copied as they are; `None` when no input has a trained
/// one (small segments, stores of format 1), and a new one is trained.
fn kept_dictionary(
    segments: &[(&SegmentReader, Option<&dyn Deletes>)],
    map: &DocMap,
) -> Result<Option<(usize, Vec<u8>)>> {
    let mut live = vec![0usize; segments.len()];
    map.sources.iter().for_each(|&(seg, _)| live[seg] += 1);
    let mut best: Option<(usize, Vec<u8>)> = None;
    for (i, (s, _)) in segments.iter().enumerate() {
        if best.as_ref().is_none_or(|(b, _)| live[i] > live[*b]) {
            if let Some(dict) = s.doc_store().dictionary()?.filter(|d| !d.is_empty()) {
                best = Some((i, dict));
            }
        }
    }
    Ok(best)
}

/// Writes the merged documents to `out`: with the kept input's dictionary,
/// copying its frames (unless an update was layered over them) and
/// recompressing the others' with it, or with a newly trained one. Training
/// and recompressing every document was a quarter of a merge.
fn write_docs(
    out: ChecksummedWriter,
    kept: Option<(usize, Vec<u8>)>,
    current: &[&dyn SegmentRead],
    map: &DocMap,
) -> Result<FileStamp> {
    let count = map.sources.len() as u32;
    let Some((kept, dict)) = kept else {
        return write_doc_store(out, count, &mut |doc| {
            let (seg, old) = map.sources[doc as usize];
            current[seg].stored(old)
        });
    };
    write_with_dictionary(out, count, &dict, &mut |doc| {
        let (seg, old) = map.sources[doc as usize];
        if seg == kept {
            if let Some(frame) = current[seg].stored_frame(old)? {
                return Ok(StoredDoc::Frame(frame));
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
