//! In-place updates of numeric and binary doc values (seed 002's "stacked" updates):
//! a segment's updated values are kept beside it, never by rewriting its
//! columns, so an update costs the same in a segment of ten documents or ten
//! million, and a commit writes only the updated documents.
//!
//! In memory, a segment's updates are a stack of immutable layers, newest
//! last: an update goes into the newest layer when no snapshot shares it,
//! else into a new one; small layers are folded into the one below them so
//! the stack stays logarithmic in the number of updates. A search reads a
//! segment through [`UpdatedSegment`], which answers a field's values and a
//! document's stored source (its `_source` and version) with the newest layer
//! that has them, then the segment. A merge folds the updates into the
//! merged segment's columns and stored documents.
//!
//! On disk, a commit writes each segment's updates (all of them, merged) to a
//! new generation file the manifest names, as it does deletions:
//!
//! ```text
//! NAME.upd.GEN := FieldCount:vint Field^FieldCount Footer(kind "DVUP", version 2)
//! Field := FieldId:vint Kind:u8 Count:vint Entry^Count             documents ascending
//! Entry := DocDelta:vint Value Version:vint SeqNo:vint JsonLen:vint Json
//! Value := zigzag-vint (Kind 0: a number) | Len:vint Bytes (Kind 1: bytes)
//! ```
//!
//! `DocDelta` is the document minus the previous entry's (the first: minus
//! 0). `Value` is the column value (see `needle_codecs::doc_values`): a
//! number for long, double and date fields, the bytes of a binary one; `Json`
//! the value as the update gave it (what the document's `_source` shows);
//! `Version` and `SeqNo` are the document's version and sequence number after
//! the update that set it, so a document's version is its entries' newest.
//! Example: field 3 set to 7 in document 2 by write 9 (version 2) is
//! `01 | 03 00 01 | 02 0E 02 09 01 37`. Version 1 files have no `Kind` (all numbers).
//!
//! A file may hold updates newer than its manifest's checkpoint (a merge
//! persists the updates it carries over): replaying an update whose document
//! already has that sequence number or a newer one changes nothing.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use needle_codecs::bytes::{write_vint, ByteReader};
use needle_codecs::doc_values::{BinaryValues, NumericValues, BLOCK_DOCS};
use needle_codecs::meta::SegmentMeta;
use needle_codecs::{footer, Postings, SegmentRead};
use needle_core::{DocId, Error, FieldId, Result};
use rustc_hash::FxHashMap;
use serde_json::Value;
use smol_str::SmolStr;

use crate::document::{record, DocVersion};
use crate::schema::{FieldKind, Schema};

const KIND: &[u8; 4] = b"DVUP";
const VERSION: u32 = 2;
/// Layers above this many are folded together whatever their sizes.
const MAX_LAYERS: usize = 12;

/// A column value an update sets: a number, or a binary field's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ColumnValue {
    Number(i64),
    Bytes(Arc<[u8]>),
}

/// A value set by an update, and the document's version after it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    value: ColumnValue,
    /// The value as given, for the document's source.
    json: SmolStr,
    at: DocVersion,
}

impl Entry {
    /// About the bytes it holds: its map slot and its copy in a reader's
    /// walk (128 in all, with room), and its text and bytes.
    fn memory(&self) -> usize {
        let bytes = match &self.value {
            ColumnValue::Bytes(b) => b.len(),
            ColumnValue::Number(_) => 0,
        };
        128 + self.json.len() + bytes
    }
}

/// One field's new value in an update: the field, its column value, the value as given.
pub(crate) type FieldUpdate = (FieldId, ColumnValue, SmolStr);

/// Updates of one field in one layer.
#[derive(Debug, Clone, Default)]
struct FieldLayer {
    values: FxHashMap<DocId, Entry>,
    /// The smallest and largest value set in each block of documents (the
    /// block's bounds widen by them: a range filter must not skip it).
    blocks: FxHashMap<u32, (i64, i64)>,
    /// The values by document ascending, made when a reader first walks the
    /// layer (it is then shared, so unchanged while that reader holds it).
    ascending: OnceLock<Arc<[(DocId, ColumnValue)]>>,
}

impl FieldLayer {
    /// Sets `doc`'s value; the one it replaces.
    fn set(&mut self, doc: DocId, entry: Entry) -> Option<Entry> {
        if let ColumnValue::Number(v) = entry.value {
            let b = self.blocks.entry(doc / BLOCK_DOCS as u32).or_insert((v, v));
            *b = (b.0.min(v), b.1.max(v));
        }
        self.ascending = OnceLock::new();
        self.values.insert(doc, entry)
    }

    /// A cursor over the values by document, for reads in (mostly) ascending order.
    fn cursor(&self) -> LayerCursor {
        let values = self.ascending.get_or_init(|| {
            let mut all: Vec<_> = self.values.iter().map(|(&d, e)| (d, e.value.clone())).collect();
            all.sort_unstable_by_key(|&(d, _)| d);
            all.into()
        });
        LayerCursor { values: values.clone(), at: 0 }
    }
}

/// One layer's values of a field, walked by document: a search asks for
/// documents in ascending order, so finding the next is a short gallop from
/// the last, not a hash lookup with its cache miss.
struct LayerCursor {
    values: Arc<[(DocId, ColumnValue)]>,
    /// The first entry not before the document last asked for.
    at: usize,
}

impl LayerCursor {
    fn get(&mut self, doc: DocId) -> Option<&ColumnValue> {
        let all = &self.values;
        if self.at > 0 && all[self.at - 1].0 >= doc {
            // Asked for an earlier document: search from the start.
            self.at = 0;
        }
        let rest = &all[self.at..];
        if rest.first().is_some_and(|e| e.0 < doc) {
            let mut bound = 1;
            while bound < rest.len() && rest[bound].0 < doc {
                bound *= 2;
            }
            let from = bound / 2 + 1;
            self.at += from + rest[from..bound.min(rest.len())].partition_point(|e| e.0 < doc);
        }
        all.get(self.at).filter(|e| e.0 == doc).map(|e| &e.1)
    }
}

/// Updates made between two snapshots (or folded together since).
#[derive(Debug, Clone, Default)]
struct Layer {
    fields: BTreeMap<FieldId, FieldLayer>,
    /// About the bytes its entries hold ([`Entry::memory`]).
    bytes: usize,
}

impl Layer {
    fn set(&mut self, doc: DocId, field: FieldId, entry: Entry) {
        let f = self.fields.entry(field).or_default();
        self.bytes += entry.memory();
        if let Some(old) = f.set(doc, entry) {
            self.bytes -= old.memory();
        }
    }

    /// `doc`'s version after its newest update here: that of its entry
    /// with the newest write (a layer has an entry a field, most often one;
    /// a map of versions beside them would be copied at every fold).
    fn version(&self, doc: DocId) -> Option<DocVersion> {
        let entries = self.fields.values().filter_map(|f| f.values.get(&doc));
        entries.map(|e| e.at).max_by_key(|at| at.seq_no)
    }

    /// Values set here (a field and a document each).
    fn entries(&self) -> usize {
        self.fields.values().map(|f| f.values.len()).sum()
    }

    /// `newer` written over this layer.
    fn absorb(&mut self, newer: &Layer) {
        for (&field, f) in &newer.fields {
            for (&doc, entry) in &f.values {
                self.set(doc, field, entry.clone());
            }
        }
    }
}

/// One segment's updates; cloning shares the layers (a snapshot's copy).
#[derive(Debug, Clone, Default)]
pub(crate) struct Updates {
    layers: Vec<Arc<Layer>>,
    /// The newest sequence number of any update here.
    last_seq: u64,
}

impl Updates {
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// About the bytes the updates hold (see [`Entry::memory`]).
    pub fn memory(&self) -> usize {
        self.layers.iter().map(|l| l.bytes).sum()
    }

    /// Sets the fields of `doc` that `changes` gives by the write `at`.
    pub fn set(&mut self, doc: DocId, changes: &[FieldUpdate], at: DocVersion) {
        self.last_seq = self.last_seq.max(at.seq_no);
        // A layer a snapshot shares is immutable: a new one goes on top.
        if self.layers.last_mut().and_then(Arc::get_mut).is_none() {
            self.layers.push(Arc::default());
        }
        let top = self.layers.last_mut().and_then(Arc::get_mut).expect("a layer of its own");
        for (field, value, json) in changes {
            top.set(doc, *field, Entry { value: value.clone(), json: json.clone(), at });
        }
        self.fold();
    }

    /// Folds the layer below the newest into it while the newest is at
    /// least half its size (or there are too many): each entry is copied
    /// a logarithmic number of times.
    fn fold(&mut self) {
        while let [.., below, top] = self.layers.as_slice() {
            if 2 * top.entries() < below.entries() && self.layers.len() <= MAX_LAYERS {
                break;
            }
            let top = self.layers.pop().expect("two layers");
            let below = self.layers.last_mut().expect("one layer");
            Arc::make_mut(below).absorb(&top);
        }
    }

    /// The document's version after its newest update, if it has one.
    pub fn version(&self, doc: DocId) -> Option<DocVersion> {
        self.layers.iter().rev().find_map(|l| l.version(doc))
    }

    /// Cursors over the layers that set values of `field`, oldest first.
    fn cursors(&self, field: FieldId) -> Vec<LayerCursor> {
        self.layers.iter().filter_map(|l| l.fields.get(&field)).map(FieldLayer::cursor).collect()
    }

    /// Whether any update set a value of `field`.
    fn has_field(&self, field: FieldId) -> bool {
        self.layers.iter().any(|l| l.fields.contains_key(&field))
    }

    fn fields(&self) -> Vec<FieldId> {
        let mut out: Vec<FieldId> = self.layers.iter().flat_map(|l| l.fields.keys().copied()).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Every field's updated values, newest wins: field -> doc -> entry.
    fn merged(&self) -> BTreeMap<FieldId, BTreeMap<DocId, Entry>> {
        let mut out: BTreeMap<FieldId, BTreeMap<DocId, Entry>> = BTreeMap::new();
        for layer in &self.layers {
            for (&field, f) in &layer.fields {
                out.entry(field).or_default().extend(f.values.iter().map(|(&d, e)| (d, e.clone())));
            }
        }
        out
    }

    /// The updates of `doc` (field, value as given), newest wins.
    pub(crate) fn of_doc(&self, doc: DocId) -> Vec<(FieldId, SmolStr)> {
        let mut out: BTreeMap<FieldId, SmolStr> = BTreeMap::new();
        for layer in &self.layers {
            for (&field, f) in &layer.fields {
                if let Some(e) = f.values.get(&doc) {
                    out.insert(field, e.json.clone());
                }
            }
        }
        out.into_iter().collect()
    }

    /// The updates newer than sequence number `after`, moved to the documents
    /// `map` gives (a merge's doc map; `None`: the document is gone), into `out`.
    pub fn carry_over(&self, after: u64, map: &[Option<DocId>], out: &mut Updates) {
        for (field, docs) in self.merged() {
            for (doc, e) in docs {
                if e.at.seq_no > after {
                    if let Some(Some(new)) = map.get(doc as usize) {
                        out.set(*new, &[(field, e.value, e.json)], e.at);
                    }
                }
            }
        }
    }

    /// The generation file's bytes (see the module documentation).
    pub fn encode(&self) -> Vec<u8> {
        let merged = self.merged();
        let mut out = Vec::new();
        write_vint(&mut out, merged.len() as u64);
        for (field, docs) in merged {
            write_vint(&mut out, u64::from(field));
            let bytes = docs.values().next().is_some_and(|e| matches!(e.value, ColumnValue::Bytes(_)));
            out.push(u8::from(bytes));
            write_vint(&mut out, docs.len() as u64);
            let mut last = 0;
            for (doc, e) in docs {
                write_vint(&mut out, u64::from(doc - last));
                match &e.value {
                    ColumnValue::Number(v) => write_vint(&mut out, zigzag(*v)),
                    ColumnValue::Bytes(b) => {
                        write_vint(&mut out, b.len() as u64);
                        out.extend_from_slice(b);
                    }
                }
                write_vint(&mut out, e.at.version);
                write_vint(&mut out, e.at.seq_no);
                write_vint(&mut out, e.json.len() as u64);
                out.extend_from_slice(e.json.as_bytes());
                last = doc;
            }
        }
        footer::append(&mut out, KIND, VERSION);
        out
    }

    /// Reads generation file `file` of a segment of `max_doc` documents.
    pub fn decode(file: &str, bytes: &[u8], max_doc: DocId) -> Result<Updates> {
        let (len, version) = footer::verify(file, bytes, KIND, VERSION)?;
        let mut r = ByteReader::new(file, &bytes[..len]);
        let mut out = Updates::default();
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..r.vint()? {
            let field =
                FieldId::try_from(r.vint()?).map_err(|_| Error::corrupt(file, "field number too large"))?;
            // Written once each: a field listed again (maybe of another kind) is damage.
            if !seen.insert(field) {
                return Err(Error::corrupt(file, format!("field {field} listed twice")));
            }
            let bytes = match version {
                1 => false,
                _ => match r.u8()? {
                    0 => false,
                    1 => true,
                    _ => return Err(Error::corrupt(file, "a field of an unknown kind")),
                },
            };
            let mut doc: u64 = 0;
            for i in 0..r.vint()? {
                let delta = r.vint()?;
                doc = doc.saturating_add(delta);
                if (i > 0 && delta == 0) || doc >= u64::from(max_doc) {
                    return Err(Error::corrupt(
                        file,
                        format!("document {doc} is not in the segment, or repeated"),
                    ));
                }
                let value = match bytes {
                    false => ColumnValue::Number(unzigzag(r.vint()?)),
                    true => {
                        let len =
                            usize::try_from(r.vint()?).map_err(|_| Error::corrupt(file, "value too long"))?;
                        ColumnValue::Bytes(r.take(len)?.into())
                    }
                };
                let at = DocVersion { version: r.vint()?, seq_no: r.vint()? };
                let len = usize::try_from(r.vint()?).map_err(|_| Error::corrupt(file, "value too long"))?;
                let json = std::str::from_utf8(r.take(len)?)
                    .map_err(|_| Error::corrupt(file, "a value that is not UTF-8"))?;
                out.set(doc as DocId, &[(field, value, json.into())], at);
            }
        }
        if r.remaining() > 0 {
            return Err(Error::corrupt(file, "bytes after the last field"));
        }
        Ok(out)
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A segment as its updates leave it: values and stored sources read the
/// updates first. What a snapshot and a merge read.
pub(crate) struct UpdatedSegment {
    base: Arc<dyn SegmentRead>,
    updates: Updates,
    schema: Arc<Schema>,
}

impl UpdatedSegment {
    pub fn new(base: Arc<dyn SegmentRead>, updates: Updates, schema: Arc<Schema>) -> Self {
        UpdatedSegment { base, updates, schema }
    }

    fn is_binary(&self, field: FieldId) -> bool {
        self.schema.fields.get(usize::from(field)).is_some_and(|f| f.kind == FieldKind::Binary)
    }

    /// `record` with the updated fields written into its source, and its version.
    fn patched(&self, doc: DocId, record: Vec<u8>) -> Result<Vec<u8>> {
        let Some(at) = self.updates.version(doc) else { return Ok(record) };
        let file = format!("{}.docs", self.base.name());
        let stored = record::decode(&file, &record)?;
        let mut source: Value = serde_json::from_str(stored.source)
            .map_err(|e| Error::corrupt(&file, format!("stored source is not JSON: {e}")))?;
        for (field, json) in self.updates.of_doc(doc) {
            let value = serde_json::from_str(&json).map_err(|e| {
                Error::corrupt(format!("{}.upd", self.base.name()), format!("bad value: {e}"))
            })?;
            set_path(&mut source, &self.schema.field(field).name, value);
        }
        Ok(record::with_version(&record::encode(stored.id, &source.to_string()), at))
    }
}

/// Sets `name` in `source`: a key of that name if there is one, else the
/// path its dots give (objects made on the way), as a field is flattened.
fn set_path(source: &mut Value, name: &str, value: Value) {
    let Some(object) = source.as_object_mut() else { return };
    if object.contains_key(name) {
        object.insert(name.to_string(), value);
        return;
    }
    match name.split_once('.') {
        Some((head, rest)) if object.get(head).is_some_and(Value::is_object) => {
            set_path(object.get_mut(head).expect("checked"), rest, value)
        }
        Some((head, rest)) if !object.contains_key(head) => {
            let mut inner = Value::Object(Default::default());
            set_path(&mut inner, rest, value);
            object.insert(head.to_string(), inner);
        }
        _ => {
            object.insert(name.to_string(), value);
        }
    }
}

// No `filter_cache`: what the base segment kept of a filter predates these updates.
impl SegmentRead for UpdatedSegment {
    fn name(&self) -> &str {
        self.base.name()
    }

    fn meta(&self) -> &SegmentMeta {
        self.base.meta()
    }

    fn postings(&self, field: FieldId, term: &[u8]) -> Result<Option<Box<dyn Postings>>> {
        self.base.postings(field, term)
    }

    fn norms(&self, field: FieldId) -> Option<&[u8]> {
        self.base.norms(field)
    }

    fn stored(&self, doc: DocId) -> Result<Vec<u8>> {
        self.patched(doc, self.base.stored(doc)?)
    }

    /// The head with the version of the last update in place, as [`Self::stored`] has it.
    fn stored_head(&self, doc: DocId) -> Result<Vec<u8>> {
        let Some(at) = self.updates.version(doc) else { return self.base.stored_head(doc) };
        let head = self.base.stored_head(doc)?;
        let file = format!("{}.docs", self.base.name());
        let id = record::decode(&file, &head)?.id;
        Ok(record::with_version(&record::encode(id, ""), at))
    }

    fn term_docs(&self, field: FieldId, term: &[u8]) -> Result<Vec<DocId>> {
        self.base.term_docs(field, term)
    }

    fn stored_frame(&self, doc: DocId) -> Result<Option<needle_codecs::docstore::Frame>> {
        match self.updates.version(doc) {
            Some(_) => Ok(None),
            None => self.base.stored_frame(doc),
        }
    }

    fn postings_all(&self, terms: &[(FieldId, &[u8])]) -> Result<Vec<Option<Box<dyn Postings>>>> {
        self.base.postings_all(terms)
    }

    fn matching_terms(
        &self,
        field: FieldId,
        matcher: &dyn needle_codecs::TermMatcher,
    ) -> Result<Vec<Vec<u8>>> {
        self.base.matching_terms(field, matcher)
    }

    fn prefetch_stored(&self, docs: &[DocId]) {
        self.base.prefetch_stored(docs)
    }

    fn numeric_values(&self, field: FieldId) -> Option<Box<dyn NumericValues + Send>> {
        let base = self.base.numeric_values(field);
        if !self.updates.has_field(field) || self.is_binary(field) {
            return base;
        }
        let layers: Vec<_> =
            self.updates.layers.iter().filter(|l| l.fields.contains_key(&field)).cloned().collect();
        let cursors = self.updates.cursors(field);
        Some(Box::new(UpdatedValues { base, layers, cursors, field, max_doc: self.meta().max_doc, one: [0] }))
    }

    fn numeric_points(&self, field: FieldId) -> Option<needle_codecs::doc_values::Points> {
        // Points hold the values before the updates: a field updated here is read from its column.
        match self.updates.has_field(field) {
            true => None,
            false => self.base.numeric_points(field),
        }
    }

    fn numeric_fields(&self) -> Vec<FieldId> {
        let mut out = self.base.numeric_fields();
        out.extend(self.updates.fields().into_iter().filter(|&f| !self.is_binary(f)));
        out.sort_unstable();
        out.dedup();
        out
    }

    fn binary_values(&self, field: FieldId) -> Option<Box<dyn BinaryValues + Send>> {
        let base = self.base.binary_values(field);
        if !self.updates.has_field(field) {
            return base;
        }
        Some(Box::new(UpdatedBinary { base, cursors: self.updates.cursors(field) }))
    }

    fn binary_fields(&self) -> Vec<FieldId> {
        let mut out = self.base.binary_fields();
        out.extend(self.updates.fields().into_iter().filter(|&f| self.is_binary(f)));
        out.sort_unstable();
        out.dedup();
        out
    }

    fn keyword_values(
        &self,
        field: FieldId,
    ) -> Option<Box<dyn needle_codecs::doc_values::KeywordValues + Send>> {
        self.base.keyword_values(field)
    }
}

/// The newest value any of `cursors` (oldest first) has for `doc`.
fn newest(cursors: &mut [LayerCursor], doc: DocId) -> Option<&ColumnValue> {
    let at = cursors.iter_mut().rposition(|c| c.get(doc).is_some())?;
    cursors[at].get(doc)
}

/// A column with updates over it (cursors over the layers that have its field).
struct UpdatedValues {
    base: Option<Box<dyn NumericValues + Send>>,
    layers: Vec<Arc<Layer>>,
    cursors: Vec<LayerCursor>,
    field: FieldId,
    max_doc: DocId,
    one: [i64; 1],
}

impl NumericValues for UpdatedValues {
    fn values(&mut self, doc: DocId) -> &[i64] {
        if let Some(&ColumnValue::Number(v)) = newest(&mut self.cursors, doc) {
            self.one = [v];
            return &self.one;
        }
        match &mut self.base {
            Some(base) => base.values(doc),
            None => &[],
        }
    }

    fn block_bounds(&self, doc: DocId) -> (DocId, Option<(i64, i64)>) {
        let block = doc / BLOCK_DOCS as u32;
        let (last, mut bounds) = match &self.base {
            Some(base) => base.block_bounds(doc),
            None => (((block + 1) * BLOCK_DOCS as u32).min(self.max_doc) - 1, None),
        };
        for l in &self.layers {
            if let Some(&(lo, hi)) = l.fields[&self.field].blocks.get(&block) {
                bounds = Some(bounds.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
            }
        }
        (last, bounds)
    }

    fn block_is_dense(&self, doc: DocId) -> bool {
        // An update gives a document a value and never takes one away.
        self.base.as_ref().is_some_and(|b| b.block_is_dense(doc))
    }
}

/// A binary column with updates over it (cursors over the layers that have its field).
struct UpdatedBinary {
    base: Option<Box<dyn BinaryValues + Send>>,
    cursors: Vec<LayerCursor>,
}

impl BinaryValues for UpdatedBinary {
    fn value(&mut self, doc: DocId) -> Option<&[u8]> {
        match newest(&mut self.cursors, doc) {
            Some(ColumnValue::Bytes(b)) => Some(b),
            _ => self.base.as_mut()?.value(doc),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seq_no: u64) -> DocVersion {
        DocVersion { version: seq_no + 1, seq_no }
    }

    #[test]
    fn example_from_the_docs() {
        let mut u = Updates::default();
        u.set(2, &[(3, ColumnValue::Number(7), "7".into())], DocVersion { version: 2, seq_no: 9 });
        let bytes = u.encode();
        assert_eq!(&bytes[..bytes.len() - footer::FOOTER_LEN], &[1, 3, 0, 1, 2, 14, 2, 9, 1, b'7']);
        let back = Updates::decode("x.upd.1", &bytes, 3).unwrap();
        assert_eq!(back.of_doc(2), vec![(3, "7".into())]);
        assert_eq!(back.version(2), Some(DocVersion { version: 2, seq_no: 9 }));
        assert!(Updates::decode("x.upd.1", &bytes, 2).is_err(), "document 2 is not in a segment of 2");
    }

    #[test]
    fn bytes_round_trip_beside_numbers_and_version_1_files_read() {
        let mut u = Updates::default();
        let bytes = ColumnValue::Bytes(b"\x00hi"[..].into());
        u.set(4, &[(2, bytes.clone(), "\"AGhp\"".into()), (5, ColumnValue::Number(-3), "-3".into())], at(7));
        let back = Updates::decode("x.upd.1", &u.encode(), 5).unwrap();
        assert_eq!(back.merged(), u.merged());
        assert_eq!(back.merged()[&2][&4].value, bytes);
        // Version 1 (no kind byte) as the last release wrote it: field 3 set to 7 in document 2.
        let mut v1 = vec![1, 3, 1, 2, 14, 2, 9, 1, b'7'];
        footer::append(&mut v1, KIND, 1);
        let back = Updates::decode("x.upd.1", &v1, 3).unwrap();
        assert_eq!(back.merged()[&3][&2].value, ColumnValue::Number(7));
    }

    proptest::proptest! {
        /// Values read through the layers' cursors, ascending with repeats and
        /// then in any order, are the newest each document was given.
        #[test]
        fn cursors_find_the_newest_value_in_any_order(
            writes in proptest::collection::vec((0u32..3000, proptest::prelude::any::<i64>()), 1..400),
            snapshot_every in 1usize..50,
            reads in proptest::collection::vec(0u32..3000, 0..200),
        ) {
            let mut u = Updates::default();
            let mut model = std::collections::HashMap::new();
            let mut held = Vec::new();
            for (i, &(doc, v)) in writes.iter().enumerate() {
                u.set(doc, &[(1, ColumnValue::Number(v), v.to_string().into())], at(i as u64 + 1));
                model.insert(doc, v);
                if i % snapshot_every == 0 {
                    // A snapshot's cursors, made now, freeze the layers they walk.
                    let mut cursors = u.cursors(1);
                    let _ = newest(&mut cursors, doc);
                    held.push(u.clone());
                }
            }
            let mut cursors = u.cursors(1);
            let ascending = (0..3000).flat_map(|d| [d, d]);
            for doc in ascending.chain(reads.iter().copied()) {
                let got = newest(&mut cursors, doc).cloned();
                proptest::prop_assert_eq!(got, model.get(&doc).map(|&v| ColumnValue::Number(v)), "document {}", doc);
            }
            // Each document's version is its newest write's, its source's value the newest.
            for &doc in model.keys() {
                let last = writes.iter().rposition(|w| w.0 == doc).expect("written");
                proptest::prop_assert_eq!(u.version(doc), Some(at(last as u64 + 1)));
                proptest::prop_assert_eq!(u.of_doc(doc), vec![(1, model[&doc].to_string().into())]);
            }
            proptest::prop_assert_eq!(u.version(3000), None);
            // A range filter's bounds of each block hold every value in it.
            let values = UpdatedValues {
                base: None,
                layers: u.layers.clone(),
                cursors: u.cursors(1),
                field: 1,
                max_doc: 3000,
                one: [0],
            };
            for (&doc, &v) in &model {
                let (_, bounds) = values.block_bounds(doc);
                let (lo, hi) = bounds.expect("an updated block has bounds");
                proptest::prop_assert!(lo <= v && v <= hi, "document {} value {} outside {:?}", doc, v, (lo, hi));
            }
        }
    }

    #[test]
    fn layers_shared_with_a_snapshot_stay_as_they_were() {
        let mut u = Updates::default();
        let mut seq = 0;
        let mut snapshots = Vec::new();
        for round in 0..200i64 {
            for doc in 0..(round % 7) as DocId {
                seq += 1;
                let v = round * 10 + i64::from(doc);
                let value = ColumnValue::Number(v);
                u.set(doc, &[((round % 2) as FieldId, value, v.to_string().into())], at(seq));
            }
            snapshots.push((round, u.clone()));
        }
        assert!(u.layers.len() <= MAX_LAYERS, "{} layers", u.layers.len());
        for (round, s) in snapshots {
            // The newest value a snapshot sees for doc 0 of field 0 is from the last even round with docs.
            let want = (0..=round).rev().find(|r| r % 2 == 0 && r % 7 > 0).map(|r| r * 10);
            let got = s.of_doc(0).into_iter().find(|(f, _)| *f == 0).map(|(_, v)| v.parse::<i64>().unwrap());
            assert_eq!(got, want, "round {round}");
        }
        let back = Updates::decode("x", &u.encode(), 10).unwrap();
        assert_eq!(back.merged(), u.merged());
        assert_eq!(back.last_seq(), u.last_seq());
    }

    #[test]
    fn sources_take_updated_values_by_name_or_path() {
        let mut v = serde_json::json!({"a": 1, "o": {"b": 2}, "x.y": 3});
        set_path(&mut v, "a", Value::from(10));
        set_path(&mut v, "o.b", Value::from(20));
        set_path(&mut v, "x.y", Value::from(30));
        set_path(&mut v, "n.m", Value::from(40));
        assert_eq!(v, serde_json::json!({"a": 10, "o": {"b": 20}, "x.y": 30, "n": {"m": 40}}));
    }
}
