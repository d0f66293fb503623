//! The in-memory segment: documents go in one at a time and are searchable at
//! once. [`MemSegment`] is the writer's handle (a term hash per field, posting
//! chunks per term, a norms column per text field, a doc values column per
//! numeric field, the stored records);
//! [`MemSegment::view`] gives a [`MemView`], a reader's snapshot of the
//! documents added so far, read through the same [`SegmentRead`] trait as
//! on-disk segments while the writer goes on adding; [`MemSegment::flush`]
//! (or the view's) writes it as an on-disk segment.
//!
//! The writer and views share the segment's data behind one reader-writer
//! lock, taken by the writer once per document and by a view only to look a
//! term up or copy a stored record: a query holds no lock while it walks
//! postings. What a view holds is never changed under it: posting chunks and
//! norms columns are shared by `Arc` and copied by the writer before it
//! changes one a view holds (see `mem_postings`), and a view reads only
//! documents below its size.

use std::sync::Arc;

use needle_codecs::bloom::BloomParams;
use needle_codecs::doc_values::{
    self, BinaryBuf, BinaryValues, ColumnBuf, KeywordValues, MemTerms, NumericValues,
};
use needle_codecs::docstore::{write_with_dictionary, StoredDoc};
use needle_codecs::norms::encode_length;
use needle_codecs::{FieldMeta, FieldStats, Postings, SegmentMeta, SegmentRead, SegmentWriter, TermMatcher};
use needle_core::{prefetch, DocId, Error, FieldId, Result};
use needle_storage::Directory;
use parking_lot::RwLock;
use rustc_hash::FxHashMap;

use crate::analyzed::{AnalyzedDoc, FieldTokens};
use crate::arena::Arena;
use crate::flat_postings::FlatPostings;
use crate::grouped::GroupedText;
use crate::mem_postings::{FieldShape, MemPostings, NewPosting, TermBuf};
use crate::term_table::{term_hash, TermTable};

struct FieldBuf {
    positions: bool,
    terms: TermTable,
    postings: Vec<TermBuf>,
    norms: Arc<Vec<u8>>,
    /// Bloom filters of text fields: their parameters (documents come with their filters filled).
    bloom: Option<Arc<BloomParams>>,
    /// The term ids of the document being filed (kept to spare an allocation a document).
    scratch_ids: Vec<u32>,
}

impl FieldBuf {
    fn new(positions: bool, bloom: Option<Arc<BloomParams>>) -> Self {
        let bloom = bloom.filter(|_| positions);
        FieldBuf {
            positions,
            terms: TermTable::default(),
            postings: Vec::new(),
            norms: Arc::default(),
            bloom,
            scratch_ids: Vec::new(),
        }
    }

    /// The postings of `term` (whose [`term_hash`] is `hash`), added if new; and whether it was new.
    fn term(&mut self, hash: u64, term: &[u8]) -> (&mut TermBuf, bool) {
        let (id, new) = self.terms.id(hash, term);
        if new {
            self.postings.push(TermBuf::default());
        }
        (&mut self.postings[id as usize], new)
    }

    /// Files keyword `term`, seen `freq` times in `doc`; returns (bytes
    /// added besides the arena's, new term).
    fn add_keyword(&mut self, arena: &mut Arena, term: &[u8], doc: DocId, freq: u32) -> (usize, bool) {
        let (buf, new_term) = self.term(term_hash(term), term);
        buf.push(arena, NewPosting { doc, freq, norm: 0, occurrences: &[], before: &[], after: &[] });
        (if new_term { term.len() + TERM_BYTES } else { 0 }, new_term)
    }

    /// Files a grouped text field of `doc` (norm byte `norm`): one posting a
    /// term; returns (bytes added besides the arena's, new terms). In a field
    /// of a million terms, a term's table slot, its [`TermBuf`] and its
    /// postings' tail in the arena are each a cache miss, so the terms go
    /// through a pipeline that waits for them together: while a term is
    /// filed, the one [`LOOKUPS_AHEAD`] after it is looked up (its slot asked
    /// for as many terms before) and its `TermBuf` asked for, and the tail of
    /// the one halfway between is asked for.
    fn add_grouped(
        &mut self,
        arena: &mut Arena,
        analyzed: &AnalyzedDoc,
        doc: DocId,
        norm: u8,
        g: &GroupedText,
    ) -> (usize, u64) {
        let mut ids = std::mem::take(&mut self.scratch_ids);
        ids.clear();
        let (mut added, mut new_terms) = (0, 0u64);
        let terms = &g.terms;
        for t in terms.iter().take(2 * LOOKUPS_AHEAD) {
            self.terms.prefetch(t.hash);
        }
        let mut look_up = |this: &mut Self, j: usize, ids: &mut Vec<u32>| {
            if let Some(later) = terms.get(j + 2 * LOOKUPS_AHEAD) {
                this.terms.prefetch(later.hash);
            }
            let term = analyzed.term_at(terms[j].term);
            let (id, new) = this.terms.id(terms[j].hash, term);
            if new {
                this.postings.push(TermBuf::default());
                added += term.len() + TERM_BYTES;
                new_terms += 1;
            }
            prefetch(&this.postings, id as usize);
            ids.push(id);
        };
        for j in 0..terms.len().min(LOOKUPS_AHEAD) {
            look_up(self, j, &mut ids);
        }
        for (i, t) in terms.iter().enumerate() {
            if i + LOOKUPS_AHEAD < terms.len() {
                look_up(self, i + LOOKUPS_AHEAD, &mut ids);
            }
            if let Some(&nearer) = ids.get(i + LOOKUPS_AHEAD / 2) {
                self.postings[nearer as usize].prefetch_end(arena);
            }
            let (before, after) = g.filters(i);
            let occurrences = &g.encoded[t.encoded.clone()];
            let freq = t.occurrences.len() as u32;
            self.postings[ids[i] as usize]
                .push(arena, NewPosting { doc, freq, norm, occurrences, before, after });
        }
        self.scratch_ids = ids;
        (added, new_terms)
    }

    fn shape(&self) -> FieldShape {
        FieldShape { positions: self.positions, bloom: self.bloom.as_ref().map(|b| b.shape) }
    }
}

/// About what a term costs besides its text and postings: its entries in the
/// term table, its [`TermBuf`], the room a table keeps to grow.
const TERM_BYTES: usize = 160;

/// What the writer and views share.
#[derive(Default)]
struct Data {
    fields: FxHashMap<FieldId, FieldBuf>,
    /// Every field's postings.
    arena: Arena,
    stored: Vec<Vec<u8>>,
    /// Numeric doc values by field (blocks shared with views, copied on write).
    columns: FxHashMap<FieldId, ColumnBuf>,
    /// Keyword doc values by field: ids into the field's terms (in order of arrival).
    keywords: FxHashMap<FieldId, (ColumnBuf, Arc<MemTerms>)>,
    /// Binary doc values by field.
    binaries: FxHashMap<FieldId, BinaryBuf>,
}

/// An in-memory segment being written; see the module documentation.
pub struct MemSegment {
    name: String,
    bloom: Option<Arc<BloomParams>>,
    data: Arc<RwLock<Data>>,
    meta: SegmentMeta,
    memory: usize,
}

impl Default for MemSegment {
    fn default() -> Self {
        MemSegment::new("memory segment")
    }
}

impl MemSegment {
    /// `name` appears in messages about this segment.
    pub fn new(name: &str) -> Self {
        MemSegment {
            name: name.to_string(),
            bloom: None,
            data: Arc::default(),
            meta: SegmentMeta {
                max_doc: 0,
                fields: Vec::new(),
                bloom: None,
                files: Default::default(),
                sorted: None,
            },
            memory: 0,
        }
    }

    /// Builds Bloom filters for the text fields with these parameters.
    pub fn with_bloom(mut self, params: Option<BloomParams>) -> Self {
        self.meta.bloom = params.clone();
        self.bloom = params.map(Arc::new);
        self
    }

    pub fn max_doc(&self) -> DocId {
        self.meta.max_doc
    }

    /// Approximate bytes held.
    pub fn memory(&self) -> usize {
        self.memory
    }

    /// The documents added so far, as a reader sees them from now on
    /// (whatever is added later), without copying them.
    pub fn view(&self) -> MemView {
        let data = self.data.read();
        let norms =
            data.fields.iter().filter(|(_, f)| f.positions).map(|(&id, f)| (id, f.norms.clone())).collect();
        let columns = data.columns.iter().map(|(&id, c)| (id, c.clone())).collect();
        let keywords = data.keywords.iter().map(|(&id, (c, t))| (id, c.clone(), t.clone())).collect();
        let binaries = data.binaries.iter().map(|(&id, c)| (id, c.clone())).collect();
        MemView {
            name: self.name.clone(),
            data: self.data.clone(),
            meta: self.meta.clone(),
            norms,
            columns,
            keywords,
            binaries,
            memory: self.memory,
        }
    }

    /// Adds an analyzed document; it is in every view taken from now on.
    /// Grouping its tokens by term ([`AnalyzedDoc::prepare`]) is the larger
    /// part of the work; it is skipped when the document comes prepared.
    pub fn add(&mut self, mut doc: AnalyzedDoc) -> DocId {
        doc.prepare(self.bloom.as_deref());
        let id = self.max_doc();
        let mut data = self.data.write();
        let data = &mut *data;
        let arena_before = data.arena.bytes();
        let (_, grouped) = doc.grouped.as_ref().expect("prepared");
        let mut grouped = grouped.iter();
        for (field, tokens) in &doc.fields {
            match tokens {
                FieldTokens::Text { tokens, length } => {
                    let g = grouped.next().expect("one group per text field");
                    let buf =
                        data.fields.entry(*field).or_insert_with(|| FieldBuf::new(true, self.bloom.clone()));
                    let (bytes, new_terms) = add_text(buf, &mut data.arena, id, &doc, g, *length);
                    self.memory += bytes;
                    let meta = field_meta(&mut self.meta, *field, true);
                    meta.stats.doc_count += u64::from(*length > 0);
                    // Every token, those at another's position too (the norm's length leaves them out).
                    meta.stats.sum_total_term_freq += tokens.len() as u64;
                    meta.stats.sum_doc_freq += g.terms.len() as u64;
                    meta.terms += new_terms;
                }
                FieldTokens::Keyword(values) => {
                    let buf = data.fields.entry(*field).or_insert_with(|| FieldBuf::new(false, None));
                    let (mut bytes, mut new_docs, mut new_terms) = (0, 0u64, 0u64);
                    // A value repeated in the document is one posting of its frequency.
                    let mut sorted: Vec<&[u8]> = values.iter().map(|v| v.as_bytes()).collect();
                    sorted.sort_unstable();
                    for run in sorted.chunk_by(|a, b| a == b) {
                        let (b, new_term) = buf.add_keyword(&mut data.arena, run[0], id, run.len() as u32);
                        bytes += b;
                        new_docs += 1;
                        new_terms += u64::from(new_term);
                    }
                    self.memory += bytes;
                    let meta = field_meta(&mut self.meta, *field, false);
                    meta.stats.doc_count += u64::from(!values.is_empty());
                    meta.stats.sum_total_term_freq += values.len() as u64;
                    meta.stats.sum_doc_freq += new_docs;
                    meta.terms += new_terms;
                }
            }
        }
        for (field, values) in &doc.numbers {
            data.columns.entry(*field).or_default().set(id, values);
            self.memory += 8 * values.len() + 8;
        }
        for (field, values) in &doc.keywords {
            let (ids, terms) = data.keywords.entry(*field).or_default();
            let mut v: Vec<i64> = values.iter().map(|t| terms.id(t.as_bytes())).collect();
            v.sort_unstable();
            v.dedup();
            ids.set(id, &v);
            self.memory += 8 * v.len() + 8;
        }
        for (field, value) in &doc.binaries {
            data.binaries.entry(*field).or_default().set(id, value);
            self.memory += value.len() + 12;
        }
        self.memory += data.arena.bytes() - arena_before + doc.stored.len() + 24;
        data.stored.push(doc.stored);
        self.meta.max_doc = id + 1;
        id
    }

    /// Writes the segment as `name` in `dir`.
    pub fn flush(&self, dir: &Directory, name: &str) -> Result<SegmentMeta> {
        flush(&self.data.read(), &self.meta, self.bloom.as_deref(), dir, name, None)
    }
}

/// Files a text field of document `doc`; returns (bytes added, new terms).
/// How many terms ahead of the one it files a document asks for memory
/// ([`FieldBuf::add_grouped`]): enough to overlap the misses, few enough
/// that what was asked for is still cached when read.
const LOOKUPS_AHEAD: usize = 8;

fn add_text(
    buf: &mut FieldBuf,
    arena: &mut Arena,
    doc: DocId,
    analyzed: &AnalyzedDoc,
    g: &GroupedText,
    length: u32,
) -> (usize, u64) {
    let norm = encode_length(length);
    let (added, new_terms) = buf.add_grouped(arena, analyzed, doc, norm, g);
    if length > 0 {
        let norms = Arc::make_mut(&mut buf.norms);
        norms.resize(doc as usize, 0);
        norms.push(norm);
    }
    (added, new_terms)
}

fn field_meta(meta: &mut SegmentMeta, field: FieldId, positions: bool) -> &mut FieldMeta {
    let i = match meta.fields.binary_search_by_key(&field, |f| f.field) {
        Ok(i) => i,
        Err(i) => {
            let norms_index = positions.then_some(u32::from(field));
            let m = FieldMeta {
                field,
                positions,
                offsets: positions,
                norms_index,
                stats: FieldStats::default(),
                terms: 0,
            };
            meta.fields.insert(i, m);
            i
        }
    };
    &mut meta.fields[i]
}

/// Writes the first `meta.max_doc` documents of `data` as segment `name`
/// (the sources compressed with `dictionary` when given, else a trained one).
fn flush(
    data: &Data,
    meta: &SegmentMeta,
    bloom: Option<&BloomParams>,
    dir: &Directory,
    name: &str,
    dictionary: Option<&[u8]>,
) -> Result<SegmentMeta> {
    let max_doc = meta.max_doc;
    let mut writer = SegmentWriter::create(dir, name, max_doc)?;
    writer.set_bloom(bloom.cloned());
    let pages = data.arena.pages();
    let mut fields: Vec<_> = data.fields.iter().collect();
    fields.sort_by_key(|(id, _)| **id);
    for (&id, buf) in fields {
        let norms = buf.positions.then(|| {
            let mut n = buf.norms.to_vec();
            n.resize(max_doc as usize, 0);
            n
        });
        let doc_count = meta.field(id).map_or(0, |m| m.stats.doc_count);
        writer.add_field(id, buf.positions, buf.positions, norms, doc_count);
        let mut terms: Vec<(&[u8], u32)> = buf.terms.iter().collect();
        terms.sort_unstable();
        let shape = buf.shape();
        let (mut t, mut bytes) = (FlatPostings::default(), Vec::new());
        for (term, tid) in terms {
            buf.postings[tid as usize].flat_into(&pages, max_doc, shape, &mut t, &mut bytes);
            if !t.docs.is_empty() {
                writer.add_term(id, term, &t.as_postings(shape.bloom))?;
            }
        }
    }
    for (&field, column) in &data.columns {
        writer.add_numeric(field, column.clone());
    }
    for (&field, (ids, terms)) in &data.keywords {
        writer.add_keywords(field, doc_values::sorted_keywords(ids, &terms.all(), max_doc));
    }
    for (&field, column) in &data.binaries {
        writer.add_binary(field, column.clone());
    }
    let record = |i: u32| data.stored[i as usize].clone();
    match dictionary {
        Some(dict) => {
            let records = &mut |i| Ok(StoredDoc::Record(record(i)));
            writer.docs_written(write_with_dictionary(writer.docs_output()?, max_doc, dict, records)?);
        }
        None => writer.write_docs(&mut |i| Ok(record(i)))?,
    }
    Ok(writer.finish()?.0)
}

/// A reader's snapshot of an in-memory segment: the documents it held when
/// the view was taken. Cheap to take; see the module documentation.
pub struct MemView {
    name: String,
    data: Arc<RwLock<Data>>,
    meta: SegmentMeta,
    /// Each text field's norms column as of the view (documents past it are not read).
    norms: Vec<(FieldId, Arc<Vec<u8>>)>,
    /// Each numeric field's doc values as of the view.
    columns: Vec<(FieldId, ColumnBuf)>,
    /// Each keyword field's doc values (ids) as of the view, and its terms.
    keywords: Vec<(FieldId, ColumnBuf, Arc<MemTerms>)>,
    /// Each binary field's doc values as of the view.
    binaries: Vec<(FieldId, BinaryBuf)>,
    /// The segment's approximate size when the view was taken.
    memory: usize,
}

impl MemView {
    /// Approximate bytes the segment held when the view was taken.
    pub fn memory(&self) -> usize {
        self.memory
    }

    /// Writes the view's documents as segment `name` in `dir`, their
    /// sources compressed with `dictionary` (another segment's) when given,
    /// else with one trained on them.
    pub fn flush(&self, dir: &Directory, name: &str, dictionary: Option<&[u8]>) -> Result<SegmentMeta> {
        flush(&self.data.read(), &self.meta, self.meta.bloom.as_ref(), dir, name, dictionary)
    }
}

impl SegmentRead for MemView {
    fn name(&self) -> &str {
        &self.name
    }

    fn meta(&self) -> &SegmentMeta {
        &self.meta
    }

    fn postings(&self, field: FieldId, term: &[u8]) -> Result<Option<Box<dyn Postings>>> {
        let data = self.data.read();
        let Some(buf) = data.fields.get(&field) else { return Ok(None) };
        let Some(id) = buf.terms.get(term) else { return Ok(None) };
        let postings =
            MemPostings::new(&buf.postings[id as usize], data.arena.pages(), self.meta.max_doc, buf.shape());
        Ok((postings.doc_freq() > 0).then(|| Box::new(postings) as Box<dyn Postings>))
    }

    fn matching_terms(&self, field: FieldId, matcher: &dyn TermMatcher) -> Result<Vec<Vec<u8>>> {
        let data = self.data.read();
        let Some(buf) = data.fields.get(&field) else { return Ok(Vec::new()) };
        // A term first seen after the view was taken has no documents in it.
        let in_view = |id: u32| buf.postings[id as usize].first_doc().is_some_and(|d| d < self.meta.max_doc);
        let mut terms: Vec<Vec<u8>> = buf
            .terms
            .iter()
            .filter(|&(term, id)| matcher.matches(term) && in_view(id))
            .map(|(term, _)| term.to_vec())
            .collect();
        terms.sort_unstable();
        Ok(terms)
    }

    fn norms(&self, field: FieldId) -> Option<&[u8]> {
        self.norms.iter().find(|(f, _)| *f == field).map(|(_, n)| &n[..])
    }

    fn numeric_values(&self, field: FieldId) -> Option<Box<dyn NumericValues + Send>> {
        let (_, column) = self.columns.iter().find(|(f, _)| *f == field)?;
        Some(doc_values::mem_values(column.clone(), self.meta.max_doc))
    }

    fn numeric_fields(&self) -> Vec<FieldId> {
        let mut out: Vec<FieldId> = self.columns.iter().map(|(f, _)| *f).collect();
        out.sort_unstable();
        out
    }

    fn keyword_values(&self, field: FieldId) -> Option<Box<dyn KeywordValues + Send>> {
        let (_, ids, terms) = self.keywords.iter().find(|(f, _, _)| *f == field)?;
        Some(doc_values::mem_keywords(ids.clone(), terms.clone(), self.meta.max_doc))
    }

    fn binary_values(&self, field: FieldId) -> Option<Box<dyn BinaryValues + Send>> {
        let (_, column) = self.binaries.iter().find(|(f, _)| *f == field)?;
        Some(doc_values::mem_binary(column.clone(), self.meta.max_doc))
    }

    fn binary_fields(&self) -> Vec<FieldId> {
        let mut out: Vec<FieldId> = self.binaries.iter().map(|(f, _)| *f).collect();
        out.sort_unstable();
        out
    }

    fn stored(&self, doc: DocId) -> Result<Vec<u8>> {
        let data = self.data.read();
        data.stored
            .get(doc as usize)
            .filter(|_| doc < self.meta.max_doc)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("document {doc} in {}", self.name)))
    }
}
