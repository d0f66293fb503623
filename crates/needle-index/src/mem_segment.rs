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

use needle_codecs::bloom::{self, BloomParams};
use needle_codecs::norms::encode_length;
use needle_codecs::postings::BloomPostings;
use needle_codecs::{FieldMeta, FieldStats, Postings, SegmentMeta, SegmentRead, SegmentWriter, TermPostings};
use needle_core::{DocId, Error, FieldId, Result};
use needle_storage::Directory;
use rustc_hash::FxHashMap;

use crate::analyzed::{AnalyzedDoc, FieldTokens, TokenRef};
use crate::mem_postings::{MemPostings, TermBuf};

struct FieldBuf {
    positions: bool,
    terms: FxHashMap<Box<[u8]>, u32>,
    postings: Vec<Arc<TermBuf>>,
    norms: Vec<u8>,
    /// Bloom filters of text fields: the parameters, and each term's hash and
    /// stop-word flag, computed once per term (not once per occurrence).
    bloom: Option<Arc<BloomParams>>,
    hashes: Vec<u64>,
    stop: Vec<bool>,
}

/// What one added occurrence changed.
struct Added {
    bytes: usize,
    new_doc: bool,
    new_term: bool,
    term: u32,
}

impl FieldBuf {
    fn new(positions: bool, bloom: Option<Arc<BloomParams>>) -> Self {
        let bloom = bloom.filter(|_| positions);
        FieldBuf {
            positions,
            terms: FxHashMap::default(),
            postings: Vec::new(),
            norms: Vec::new(),
            bloom,
            hashes: Vec::new(),
            stop: Vec::new(),
        }
    }

    /// Records one occurrence of `term` in `doc`.
    fn add(&mut self, term: &[u8], doc: DocId, position: u32, offsets: (u32, u32)) -> Added {
        let mut added = 0;
        let mut new_term = false;
        let id = match self.terms.get(term) {
            Some(&id) => id,
            None => {
                let id = self.postings.len() as u32;
                self.terms.insert(term.into(), id);
                self.postings.push(Arc::new(TermBuf::default()));
                if let Some(b) = &self.bloom {
                    self.hashes.push(bloom::term_hash(term));
                    self.stop.push(b.is_stop_word(term));
                }
                added += term.len() + 120;
                new_term = true;
                id
            }
        };
        let filter_bytes = self.bloom.as_ref().map_or(0, |b| b.shape.max_bytes());
        let buf = Arc::make_mut(&mut self.postings[id as usize]);
        let new_doc = buf.docs.last() != Some(&doc);
        if new_doc {
            buf.docs.push(doc);
            buf.freqs.push(1);
            buf.occ_start.push(buf.positions.len() as u32);
            buf.before.resize(buf.before.len() + filter_bytes, 0);
            buf.after.resize(buf.after.len() + filter_bytes, 0);
            added += 12 + 2 * filter_bytes;
        } else {
            *buf.freqs.last_mut().unwrap() += 1;
        }
        if self.positions {
            buf.positions.push(position);
            buf.offsets.push(offsets);
            added += 12;
        }
        Added { bytes: added, new_doc, new_term, term: id }
    }

    /// Fills the current document's filters: for each occurrence, the terms at
    /// the positions right before and after it (stop words left out).
    fn add_neighbors(&mut self, tokens: &[(u32, u32)]) {
        let Some(b) = self.bloom.clone() else { return };
        let stride = b.shape.max_bytes();
        for (i, &(term, position)) in tokens.iter().enumerate() {
            let before = i.checked_sub(1).map(|j| tokens[j]).filter(|&(_, p)| p + 1 == position);
            let after = tokens.get(i + 1).copied().filter(|&(_, p)| p == position + 1);
            let buf = Arc::make_mut(&mut self.postings[term as usize]);
            // The document's frequency is final: the whole field has been filed.
            let freq = *buf.freqs.last().expect("the term occurs in this document");
            let (len, hashes) = (b.shape.bytes(freq), b.shape.hashes(freq));
            let at = buf.before.len() - stride;
            for (neighbor, side) in [(before, &mut buf.before), (after, &mut buf.after)] {
                if let Some((n, _)) = neighbor.filter(|&(n, _)| !self.stop[n as usize]) {
                    bloom::insert(&mut side[at..at + len], self.hashes[n as usize], hashes);
                }
            }
        }
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
    pub fn add(&mut self, doc: AnalyzedDoc) -> DocId {
        let id = self.max_doc();
        for (field, tokens) in &doc.fields {
            match tokens {
                FieldTokens::Text { tokens, length } => self.add_text(*field, id, &doc, tokens, *length),
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

    fn add_text(
        &mut self,
        field: FieldId,
        doc: DocId,
        analyzed: &AnalyzedDoc,
        tokens: &[TokenRef],
        length: u32,
    ) {
        let bloom = self.bloom.clone();
        let buf = self.fields.entry(field).or_insert_with(|| FieldBuf::new(true, bloom));
        let (mut added, mut new_docs, mut new_terms) = (0, 0u64, 0u64);
        let mut ids = Vec::with_capacity(if buf.bloom.is_some() { tokens.len() } else { 0 });
        for t in tokens {
            let a = buf.add(analyzed.term(t), doc, t.position, (t.start, t.end));
            added += a.bytes;
            new_docs += u64::from(a.new_doc);
            new_terms += u64::from(a.new_term);
            if buf.bloom.is_some() {
                ids.push((a.term, t.position));
            }
        }
        buf.add_neighbors(&ids);
        if length > 0 {
            buf.norms.resize(doc as usize, 0);
            buf.norms.push(encode_length(length));
        }
        self.memory += added;
        let meta = self.field_meta(field, true);
        meta.stats.doc_count += u64::from(length > 0);
        meta.stats.sum_total_term_freq += u64::from(length);
        meta.stats.sum_doc_freq += new_docs;
        meta.terms += new_terms;
    }

    fn add_keyword(&mut self, field: FieldId, doc: DocId, values: &[String]) {
        let buf = self.fields.entry(field).or_insert_with(|| FieldBuf::new(false, None));
        let (mut added, mut new_docs, mut new_terms) = (0, 0u64, 0u64);
        for v in values {
            let a = buf.add(v.as_bytes(), doc, 0, (0, 0));
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
            .ok_or_else(|| Error::Index(format!("document {doc} is not in {}", self.name)))
    }
}
