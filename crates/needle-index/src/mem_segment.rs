//! The in-memory segment: documents go in one at a time and are searchable at
//! once, through the same [`SegmentRead`] trait as on-disk segments. It holds
//! a term hash per field, growing posting buffers per term, a norms column per
//! text field and the stored records; [`MemSegment::flush`] writes it as an
//! on-disk segment.
//!
//! Readers get posting lists that share the term's buffers (`Arc`) and see the
//! documents present when they were opened. The writer appends through
//! `Arc::make_mut`, so a buffer a reader still holds is copied, never changed
//! under it; engines keep readers and writers of one segment apart with a lock
//! anyway, which makes the copy rare.

use std::sync::Arc;

use needle_codecs::bloom::BloomParams;
use needle_codecs::norms::encode_length;
use needle_codecs::postings::BloomPostings;
use needle_codecs::{FieldMeta, FieldStats, Postings, SegmentMeta, SegmentRead, SegmentWriter, TermPostings};
use needle_core::{DocId, Error, FieldId, Result};
use needle_storage::Directory;
use rustc_hash::FxHashMap;

use crate::analyzed::{AnalyzedDoc, FieldTokens};
use crate::grouped::GroupedText;
use crate::mem_postings::{MemPostings, TermBuf};

struct FieldBuf {
    positions: bool,
    terms: FxHashMap<Box<[u8]>, u32>,
    postings: Vec<Arc<TermBuf>>,
    norms: Vec<u8>,
    /// Bloom filters of text fields: their parameters (documents come with their filters filled).
    bloom: Option<Arc<BloomParams>>,
}

/// What one added occurrence changed.
struct Added {
    bytes: usize,
    new_doc: bool,
    new_term: bool,
}

impl FieldBuf {
    fn new(positions: bool, bloom: Option<Arc<BloomParams>>) -> Self {
        let bloom = bloom.filter(|_| positions);
        FieldBuf { positions, terms: FxHashMap::default(), postings: Vec::new(), norms: Vec::new(), bloom }
    }

    /// The id of `term`, added if new; and whether it was new.
    fn term_id(&mut self, term: &[u8]) -> (u32, bool) {
        if let Some(&id) = self.terms.get(term) {
            return (id, false);
        }
        let id = self.postings.len() as u32;
        self.terms.insert(term.into(), id);
        self.postings.push(Arc::new(TermBuf::default()));
        (id, true)
    }

    /// Records one occurrence of keyword `term` in `doc`.
    fn add_keyword(&mut self, term: &[u8], doc: DocId) -> Added {
        let (id, new_term) = self.term_id(term);
        let mut bytes = if new_term { term.len() + 120 } else { 0 };
        let buf = Arc::make_mut(&mut self.postings[id as usize]);
        let new_doc = buf.docs.last() != Some(&doc);
        if new_doc {
            buf.docs.push(doc);
            buf.freqs.push(1);
            buf.occ_start.push(0);
            bytes += 12;
        } else {
            *buf.freqs.last_mut().unwrap() += 1;
        }
        Added { bytes, new_doc, new_term }
    }

    /// Files the `i`-th term of a grouped text field of `doc`: one posting.
    fn add_grouped(&mut self, term: &[u8], doc: DocId, g: &GroupedText, i: usize) -> Added {
        let (id, new_term) = self.term_id(term);
        let occ = g.terms[i].occurrences.clone();
        let (before, after) = g.filters(i);
        let buf = Arc::make_mut(&mut self.postings[id as usize]);
        buf.docs.push(doc);
        buf.freqs.push(occ.len() as u32);
        buf.occ_start.push(buf.positions.len() as u32);
        buf.positions.extend_from_slice(&g.positions[occ.clone()]);
        buf.offsets.extend_from_slice(&g.offsets[occ.clone()]);
        buf.before.extend_from_slice(before);
        buf.after.extend_from_slice(after);
        let bytes =
            if new_term { term.len() + 120 } else { 0 } + 12 + before.len() + after.len() + 12 * occ.len();
        Added { bytes, new_doc: true, new_term }
    }
}

/// An in-memory segment, readable while it grows.
pub struct MemSegment {
    name: String,
    bloom: Option<Arc<BloomParams>>,
    fields: FxHashMap<FieldId, FieldBuf>,
    stored: Vec<Vec<u8>>,
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
            fields: FxHashMap::default(),
            stored: Vec::new(),
            meta: SegmentMeta { max_doc: 0, fields: Vec::new(), bloom: None },
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
        self.stored.len() as DocId
    }

    /// Approximate bytes held.
    pub fn memory(&self) -> usize {
        self.memory
    }

    /// Adds an analyzed document; it is searchable through this segment at once.
    /// Grouping its tokens by term ([`AnalyzedDoc::prepare`]) is the larger part
    /// of the work; it is skipped when the document comes prepared.
    pub fn add(&mut self, mut doc: AnalyzedDoc) -> DocId {
        doc.prepare(self.bloom.as_deref());
        let id = self.max_doc();
        let (_, grouped) = doc.grouped.as_ref().expect("prepared");
        let mut grouped = grouped.iter();
        for (field, tokens) in &doc.fields {
            match tokens {
                FieldTokens::Text { length, .. } => {
                    let g = grouped.next().expect("one group per text field");
                    self.add_text(*field, id, &doc, g, *length);
                }
                FieldTokens::Keyword(values) => self.add_keyword(*field, id, values),
            }
        }
        self.memory += doc.stored.len() + 24;
        self.stored.push(doc.stored);
        self.meta.max_doc = self.max_doc();
        id
    }

    fn field_meta(&mut self, field: FieldId, positions: bool) -> &mut FieldMeta {
        let i = match self.meta.fields.binary_search_by_key(&field, |f| f.field) {
            Ok(i) => i,
            Err(i) => {
                let norms_index = positions.then_some(u32::from(field));
                let meta = FieldMeta {
                    field,
                    positions,
                    offsets: positions,
                    norms_index,
                    stats: FieldStats::default(),
                    terms: 0,
                };
                self.meta.fields.insert(i, meta);
                i
            }
        };
        &mut self.meta.fields[i]
    }

    fn add_text(&mut self, field: FieldId, doc: DocId, analyzed: &AnalyzedDoc, g: &GroupedText, length: u32) {
        let bloom = self.bloom.clone();
        let buf = self.fields.entry(field).or_insert_with(|| FieldBuf::new(true, bloom));
        let (mut added, mut new_terms) = (0, 0u64);
        for (i, t) in g.terms.iter().enumerate() {
            let a = buf.add_grouped(analyzed.term_at(t.term), doc, g, i);
            added += a.bytes;
            new_terms += u64::from(a.new_term);
        }
        if length > 0 {
            buf.norms.resize(doc as usize, 0);
            buf.norms.push(encode_length(length));
        }
        self.memory += added;
        let meta = self.field_meta(field, true);
        meta.stats.doc_count += u64::from(length > 0);
        meta.stats.sum_total_term_freq += u64::from(length);
        meta.stats.sum_doc_freq += g.terms.len() as u64;
        meta.terms += new_terms;
    }

    fn add_keyword(&mut self, field: FieldId, doc: DocId, values: &[String]) {
        let buf = self.fields.entry(field).or_insert_with(|| FieldBuf::new(false, None));
        let (mut added, mut new_docs, mut new_terms) = (0, 0u64, 0u64);
        for v in values {
            let a = buf.add_keyword(v.as_bytes(), doc);
            added += a.bytes;
            new_docs += u64::from(a.new_doc);
            new_terms += u64::from(a.new_term);
        }
        self.memory += added;
        let meta = self.field_meta(field, false);
        meta.stats.doc_count += u64::from(!values.is_empty());
        meta.stats.sum_total_term_freq += values.len() as u64;
        meta.stats.sum_doc_freq += new_docs;
        meta.terms += new_terms;
    }

    /// Writes the segment as `name` in `dir`.
    pub fn flush(&self, dir: &Directory, name: &str) -> Result<SegmentMeta> {
        let max_doc = self.max_doc();
        let mut writer = SegmentWriter::create(dir, name, max_doc)?;
        writer.set_bloom(self.bloom.as_deref().cloned());
        let mut fields: Vec<_> = self.fields.iter().collect();
        fields.sort_by_key(|(id, _)| **id);
        for (&id, buf) in fields {
            let norms = buf.positions.then(|| {
                let mut n = buf.norms.clone();
                n.resize(max_doc as usize, 0);
                n
            });
            let doc_count = self.meta.field(id).map_or(0, |m| m.stats.doc_count);
            writer.add_field(id, buf.positions, buf.positions, norms, doc_count);
            let mut terms: Vec<(&[u8], u32)> = buf.terms.iter().map(|(t, &i)| (&t[..], i)).collect();
            terms.sort_unstable();
            for (term, tid) in terms {
                let t = &buf.postings[tid as usize];
                let bloom = buf.bloom.as_ref().map(|b| BloomPostings {
                    shape: b.shape,
                    before: &t.before,
                    after: &t.after,
                });
                let p = TermPostings {
                    bloom,
                    docs: &t.docs,
                    freqs: &t.freqs,
                    positions: &t.positions,
                    offsets: &t.offsets,
                };
                writer.add_term(id, term, &p)?;
            }
        }
        writer.write_docs(&mut |i| Ok(self.stored[i as usize].clone()))?;
        Ok(writer.finish()?.0)
    }
}

impl SegmentRead for MemSegment {
    fn name(&self) -> &str {
        &self.name
    }

    fn meta(&self) -> &SegmentMeta {
        &self.meta
    }

    fn postings(&self, field: FieldId, term: &[u8]) -> Result<Option<Box<dyn Postings>>> {
        let Some(buf) = self.fields.get(&field) else { return Ok(None) };
        let Some(&id) = buf.terms.get(term) else { return Ok(None) };
        let norms = buf.positions.then_some(&buf.norms[..]);
        let bloom = buf.bloom.as_ref().map(|b| b.shape);
        Ok(Some(Box::new(MemPostings::new(buf.postings[id as usize].clone(), buf.positions, norms, bloom))))
    }

    fn norms(&self, field: FieldId) -> Option<&[u8]> {
        self.fields.get(&field).filter(|f| f.positions).map(|f| &f.norms[..])
    }

    fn stored(&self, doc: DocId) -> Result<Vec<u8>> {
        self.stored
            .get(doc as usize)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("document {doc} in {}", self.name)))
    }
}
