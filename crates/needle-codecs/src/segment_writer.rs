//! Writes a segment: terms in key order, then norms, documents and the meta.

use std::collections::BTreeMap;
use std::sync::Arc;

use needle_core::{Error, FieldId, Result};
use needle_storage::Directory;

use crate::bloom::BloomParams;
use crate::checksummed::ChecksummedWriter;

use crate::doc_values::{BinaryBuf, ColumnBuf, ColumnRef, SortedKeywords};
use crate::meta::{FieldMeta, FieldStats, FileStamp, IndexOrder, SegmentMeta};
use crate::page::PackedWriter;
use crate::postings::{write_record_with, BloomPostings, RecordScratch, RecordSizes, TermPostings};
use crate::segment_reader::segment_files;
use crate::{doc_values, docstore, footer, postings, termmap};

enum Column {
    Numeric(ColumnBuf),
    Keyword(SortedKeywords),
    Binary(BinaryBuf),
}

/// Encodes term records as a segment's writer does, apart from it: a merge
/// encodes records on several threads and the writer appends them in term
/// order ([`SegmentWriter::add_record`]), so the file is the same.
#[derive(Clone, Default)]
pub struct RecordEncoder {
    /// The segment's documents: how common a list is.
    max_doc: u32,
    fields: BTreeMap<FieldId, FieldCoding>,
    bloom: Option<BloomParams>,
}

#[derive(Clone)]
struct FieldCoding {
    /// Whether the field keeps positions, offsets.
    stored: [bool; 2],
    norms: Option<Arc<[u8]>>,
}

/// What the writer records of an encoded term besides its bytes.
#[derive(Debug, Clone, Copy)]
pub struct EncodedRecord {
    sizes: RecordSizes,
    doc_freq: u64,
    total_term_freq: u64,
}

impl RecordEncoder {
    /// Appends the record of `field`'s term with postings `p` to `out`.
    pub fn encode(
        &self,
        scratch: &mut RecordScratch,
        field: FieldId,
        p: &TermPostings,
        out: &mut Vec<u8>,
    ) -> Result<EncodedRecord> {
        let coding =
            self.fields.get(&field).ok_or_else(|| Error::invalid(format!("field {field} not declared")))?;
        let norms = coding.norms.as_deref().unwrap_or(&[]);
        // Lists longer than a block keep their filters from the segment's
        // `min_freq`; lists too common to be a phrase's rarest term, none.
        let mut p = *p;
        if let (Some(b), Some(params)) = (p.bloom, &self.bloom) {
            p.bloom = params
                .record_shape(b.shape, p.docs.len(), self.max_doc)
                .map(|kept| BloomPostings { kept, ..b });
        }
        let sizes = write_record_with(scratch, &p, coding.stored, norms, out);
        let total_term_freq = p.freqs.iter().map(|&f| u64::from(f)).sum::<u64>();
        Ok(EncodedRecord { sizes, doc_freq: p.docs.len() as u64, total_term_freq })
    }
}

pub struct SegmentWriter {
    dir: Directory,
    name: String,
    max_doc: u32,
    postings: PackedWriter,
    terms: fst::MapBuilder<Vec<u8>>,
    fields: BTreeMap<FieldId, FieldMeta>,
    record: Vec<u8>,
    scratch: RecordScratch,
    /// The fields' norms and the filters' parameters, with what encoding needs.
    encoder: RecordEncoder,
    sizes: RecordSizes,
    /// The order of the documents, when they are sorted (the meta records it).
    sorted: Option<IndexOrder>,
    /// What each file written so far is (the meta records it).
    files: BTreeMap<String, FileStamp>,
    /// Doc values by field.
    columns: BTreeMap<FieldId, Column>,
}

impl SegmentWriter {
    pub fn create(dir: &Directory, name: &str, max_doc: u32) -> Result<Self> {
        let post = dir.create(&segment_files(name)[0])?;
        Ok(SegmentWriter {
            dir: dir.clone(),
            name: name.to_string(),
            max_doc,
            postings: PackedWriter::new(ChecksummedWriter::new(post)),
            terms: fst::MapBuilder::memory(),
            fields: BTreeMap::new(),
            record: Vec::new(),
            scratch: RecordScratch::default(),
            encoder: RecordEncoder { max_doc, ..RecordEncoder::default() },
            sizes: RecordSizes::default(),
            sorted: None,
            files: BTreeMap::new(),
            columns: BTreeMap::new(),
        })
    }

    /// Declares a field before its terms. `norms` holds one byte per document
    /// (text fields); `doc_count` is the number of documents with the field.
    pub fn add_field(
        &mut self,
        field: FieldId,
        positions: bool,
        offsets: bool,
        norms: Option<Vec<u8>>,
        doc_count: u64,
    ) {
        let meta = FieldMeta {
            field,
            positions,
            offsets: offsets && positions,
            norms_index: None,
            stats: FieldStats { doc_count, ..FieldStats::default() },
            terms: 0,
        };
        let coding = FieldCoding { stored: [meta.positions, meta.offsets], norms: norms.map(Into::into) };
        self.encoder.fields.insert(field, coding);
        self.fields.insert(field, meta);
    }

    /// Records the Bloom filter parameters the terms' filters were built with.
    pub fn set_bloom(&mut self, params: Option<BloomParams>) {
        self.encoder.bloom = params;
    }

    /// An encoder of this segment's records, for a thread of its own (once
    /// every field is declared and the filters set).
    pub fn encoder(&self) -> RecordEncoder {
        self.encoder.clone()
    }

    /// The filters recorded for the segment.
    pub fn bloom(&self) -> Option<&BloomParams> {
        self.encoder.bloom.as_ref()
    }

    /// Records that the documents are written in `order`.
    pub fn set_sorted(&mut self, order: Option<IndexOrder>) {
        self.sorted = order;
    }

    /// Sets the number of documents with the field, when it is known only after its terms.
    pub fn set_doc_count(&mut self, field: FieldId, doc_count: u64) {
        if let Some(meta) = self.fields.get_mut(&field) {
            meta.stats.doc_count = doc_count;
        }
    }

    /// Writes one term's record. Terms must come in (field, term bytes) order.
    pub fn add_term(&mut self, field: FieldId, term: &[u8], p: &TermPostings) -> Result<()> {
        let mut record = std::mem::take(&mut self.record);
        record.clear();
        let encoded = self.encoder.encode(&mut self.scratch, field, p, &mut record);
        let added = encoded.and_then(|e| self.add_record(field, term, &record, &e));
        self.record = record;
        added
    }

    /// Writes one term's record as [`RecordEncoder::encode`] made it (for
    /// this writer's fields). Terms must come in (field, term bytes) order.
    pub fn add_record(
        &mut self,
        field: FieldId,
        term: &[u8],
        record: &[u8],
        e: &EncodedRecord,
    ) -> Result<()> {
        let state = self
            .fields
            .get_mut(&field)
            .ok_or_else(|| Error::invalid(format!("field {field} not declared")))?;
        // What a search reads stays on as few pages as can be; the offsets
        // after it may cross into the next page.
        let at = self.postings.place(record, e.sizes.searched())?;
        let key = termmap::key(field, term);
        self.terms
            .insert(&key, termmap::pack_entry(at, e.sizes.zone()))
            .map_err(|e| Error::invalid(format!("term map: {e} (terms out of order?)")))?;
        let stats = &mut state.stats;
        stats.sum_doc_freq += e.doc_freq;
        stats.sum_total_term_freq += e.total_term_freq;
        state.terms += 1;
        self.sizes.add(&e.sizes);
        Ok(())
    }

    /// Sets the numeric doc values of `field` (written by [`SegmentWriter::finish`]).
    pub fn add_numeric(&mut self, field: FieldId, column: ColumnBuf) {
        self.columns.insert(field, Column::Numeric(column));
    }

    /// Sets the keyword doc values of `field` (see `doc_values::sorted_keywords`).
    pub fn add_keywords(&mut self, field: FieldId, column: SortedKeywords) {
        self.columns.insert(field, Column::Keyword(column));
    }

    /// Sets the binary doc values of `field`.
    pub fn add_binary(&mut self, field: FieldId, column: BinaryBuf) {
        self.columns.insert(field, Column::Binary(column));
    }

    /// Bytes of postings written so far.
    pub fn bytes_written(&self) -> u64 {
        self.postings.position()
    }

    /// Writes the stored documents, fetched by `doc(i)` for `i` in `0..max_doc`.
    pub fn write_docs(&mut self, doc: &mut dyn FnMut(u32) -> Result<Vec<u8>>) -> Result<()> {
        let stamp = docstore::write_doc_store(self.docs_output()?, self.max_doc, doc)?;
        self.docs_written(stamp);
        Ok(())
    }

    /// The document store's file, for a caller that writes it apart (a
    /// merge writes it on a thread of its own while it adds terms); pass
    /// what writing it returns to [`Self::docs_written`].
    pub fn docs_output(&self) -> Result<ChecksummedWriter> {
        Ok(ChecksummedWriter::new(self.dir.create(&segment_files(&self.name)[3])?))
    }

    /// Records the document store written to [`Self::docs_output`].
    pub fn docs_written(&mut self, stamp: FileStamp) {
        self.files.insert("docs".into(), stamp);
    }

    /// Writes the term map, norms and meta; the segment is complete when this returns.
    pub fn finish(mut self) -> Result<(SegmentMeta, RecordSizes)> {
        let [_, terms_name, norms_name, _, values_name, meta_name] = segment_files(&self.name);
        self.files.insert("post".into(), self.postings.finish(postings::KIND, postings::VERSION)?);
        let mut terms = self.terms.into_inner().map_err(|e| Error::invalid(format!("term map: {e}")))?;
        footer::append(&mut terms, b"TERM", 1);
        self.files.insert("terms".into(), write_file(&self.dir, &terms_name, &terms)?);
        let mut norms = Vec::new();
        let mut fields = Vec::new();
        let mut next_norms = 0;
        for (field, mut meta) in self.fields {
            if let Some(column) = self.encoder.fields.get(&field).and_then(|c| c.norms.as_deref()) {
                debug_assert_eq!(column.len(), self.max_doc as usize);
                norms.extend_from_slice(column);
                meta.norms_index = Some(next_norms);
                next_norms += 1;
            }
            fields.push(meta);
        }
        footer::append(&mut norms, b"NORM", 1);
        self.files.insert("norms".into(), write_file(&self.dir, &norms_name, &norms)?);
        if !self.columns.is_empty() {
            let columns: Vec<_> = self
                .columns
                .iter()
                .map(|(&f, c)| match c {
                    Column::Numeric(c) => (f, ColumnRef::Numeric(c)),
                    Column::Keyword(k) => (f, ColumnRef::Keyword { ords: &k.ords, terms: &k.terms }),
                    Column::Binary(c) => (f, ColumnRef::Binary(c)),
                })
                .collect();
            let bytes = doc_values::encode_file(&columns, self.max_doc);
            self.files.insert("dv".into(), write_file(&self.dir, &values_name, &bytes)?);
        }
        let meta = SegmentMeta {
            max_doc: self.max_doc,
            fields,
            bloom: self.encoder.bloom,
            files: self.files,
            sorted: self.sorted,
        };
        write_file(&self.dir, &meta_name, &meta.encode())?;
        self.dir.sync()?;
        Ok((meta, self.sizes))
    }
}

/// Writes a whole file (ending in its footer); returns its stamp.
fn write_file(dir: &Directory, name: &str, bytes: &[u8]) -> Result<FileStamp> {
    let mut w = dir.create(name)?;
    w.write_all(bytes)?;
    let len = w.finish()?;
    Ok(FileStamp { len, crc: footer::stored_crc(bytes) })
}
