//! An in-memory segment under construction: a term hash per field, growing
//! posting buffers per term, a norms column per text field, the stored sources.

use needle_analysis::Analyzer;
use needle_codecs::norms::encode_length;
use needle_codecs::{SegmentMeta, SegmentWriter, TermPostings};
use needle_core::{DocId, FieldId, Result};
use needle_storage::Directory;
use rustc_hash::FxHashMap;

use crate::POSITION_GAP;

/// How a field is indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldOptions {
    /// Positions and offsets are kept (text fields).
    pub positions: bool,
    /// A length norm is kept (text fields).
    pub norms: bool,
}

#[derive(Default)]
struct TermBuf {
    docs: Vec<DocId>,
    freqs: Vec<u32>,
    positions: Vec<u32>,
    offsets: Vec<(u32, u32)>,
}

struct FieldBuf {
    options: FieldOptions,
    terms: FxHashMap<Box<[u8]>, u32>,
    postings: Vec<TermBuf>,
    norms: Vec<u8>,
    doc_count: u64,
}

impl FieldBuf {
    fn new(options: FieldOptions) -> Self {
        FieldBuf {
            options,
            terms: FxHashMap::default(),
            postings: Vec::new(),
            norms: Vec::new(),
            doc_count: 0,
        }
    }

    /// Records one occurrence of `term` in `doc`; returns bytes of memory added.
    fn add(&mut self, term: &[u8], doc: DocId, position: u32, offsets: (u32, u32)) -> usize {
        let mut added = 0;
        let id = match self.terms.get(term) {
            Some(&id) => id,
            None => {
                let id = self.postings.len() as u32;
                self.terms.insert(term.into(), id);
                self.postings.push(TermBuf::default());
                added += term.len() + 96;
                id
            }
        };
        let buf = &mut self.postings[id as usize];
        if buf.docs.last() == Some(&doc) {
            *buf.freqs.last_mut().unwrap() += 1;
        } else {
            buf.docs.push(doc);
            buf.freqs.push(1);
            added += 8;
        }
        if self.options.positions {
            buf.positions.push(position);
            buf.offsets.push(offsets);
            added += 12;
        }
        added
    }
}

/// Builds one segment in memory; [`flush`](Self::flush) writes it.
#[derive(Default)]
pub struct SegmentBuilder {
    fields: FxHashMap<FieldId, FieldBuf>,
    stored: Vec<Vec<u8>>,
    memory: usize,
}

impl SegmentBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn max_doc(&self) -> DocId {
        self.stored.len() as DocId
    }

    /// Approximate bytes held.
    pub fn memory(&self) -> usize {
        self.memory
    }

    /// Starts a document; its fields are added with [`add_text`](Self::add_text)
    /// and [`add_keyword`](Self::add_keyword) before the next `add_document`.
    pub fn add_document(&mut self, stored: Vec<u8>) -> DocId {
        self.memory += stored.len() + 24;
        self.stored.push(stored);
        self.max_doc() - 1
    }

    fn field(&mut self, field: FieldId, options: FieldOptions) -> &mut FieldBuf {
        self.fields.entry(field).or_insert_with(|| FieldBuf::new(options))
    }

    /// Indexes the values of a text field of the current document. Values
    /// after the first continue its positions after a gap of [`POSITION_GAP`]
    /// and its offsets one byte after the previous value's end (as if joined by a space).
    pub fn add_text(&mut self, field: FieldId, analyzer: &Analyzer, values: &[&str]) {
        let doc = self.max_doc() - 1;
        let options = FieldOptions { positions: true, norms: true };
        let buf = self.field(field, options);
        let mut length = 0u32;
        let mut position = 0;
        let mut offset_base = 0u32;
        let mut added = 0;
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                position += POSITION_GAP;
            }
            position = analyzer.analyze(value, position, |t| {
                length += 1;
                added +=
                    buf.add(t.term.as_bytes(), doc, t.position, (t.start + offset_base, t.end + offset_base));
            });
            offset_base += value.len() as u32 + 1;
        }
        if length > 0 {
            buf.norms.resize(doc as usize, 0);
            buf.norms.push(encode_length(length));
            buf.doc_count += 1;
        }
        self.memory += added;
    }

    /// Indexes the values of a keyword field (each value one term) of the current document.
    pub fn add_keyword(&mut self, field: FieldId, values: &[&str]) {
        let doc = self.max_doc() - 1;
        let buf = self.field(field, FieldOptions { positions: false, norms: false });
        let mut added = 0;
        for v in values {
            added += buf.add(v.as_bytes(), doc, 0, (0, 0));
        }
        if !values.is_empty() {
            buf.doc_count += 1;
        }
        self.memory += added;
    }

    /// Writes the segment as `name` in `dir`.
    pub fn flush(self, dir: &Directory, name: &str) -> Result<SegmentMeta> {
        let max_doc = self.max_doc();
        let mut writer = SegmentWriter::create(dir, name, max_doc)?;
        let mut fields: Vec<_> = self.fields.into_iter().collect();
        fields.sort_by_key(|(id, _)| *id);
        for (id, mut buf) in fields {
            let norms = buf.options.norms.then(|| {
                buf.norms.resize(max_doc as usize, 0);
                std::mem::take(&mut buf.norms)
            });
            writer.add_field(id, buf.options.positions, buf.options.positions, norms, buf.doc_count);
            let mut terms: Vec<(Box<[u8]>, u32)> = buf.terms.into_iter().collect();
            terms.sort_unstable();
            for (term, tid) in terms {
                let t = &buf.postings[tid as usize];
                let p = TermPostings {
                    docs: &t.docs,
                    freqs: &t.freqs,
                    positions: &t.positions,
                    offsets: &t.offsets,
                };
                writer.add_term(id, &term, &p)?;
            }
        }
        let stored = self.stored;
        writer.write_docs(&mut |i| Ok(stored[i as usize].clone()))?;
        Ok(writer.finish()?.0)
    }
}
