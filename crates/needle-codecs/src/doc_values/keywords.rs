//! Keyword doc values: a document's values as ids into a dictionary of the
//! field's distinct values. On disk the ids are ordinals into the sorted
//! dictionary (see the format in `mod.rs`); in memory they are the order in
//! which values first came, and the dictionary grows as documents are added.

use std::sync::Arc;

use needle_core::{DocId, Error, Result};
use parking_lot::RwLock;
use rustc_hash::FxHashMap;

use super::{mem_values, ColumnBuf, Cursor, DiskSource, NumericValues, ValueBatch};
use crate::bytes::{write_vint, ByteReader};

/// What a search reads a keyword column through, in memory or on disk.
pub trait KeywordValues {
    /// The value ids of `doc` (distinct; empty when it has none). A failed
    /// read records its error (see `needle_core::read_error`) and gives none.
    fn ids(&mut self, doc: DocId) -> &[i64];
    /// The value an id stands for.
    fn term(&self, id: i64) -> Arc<[u8]>;
    /// The values there are: ids run from 0 below this.
    fn term_count(&self) -> usize;
    /// The value ids of each of `docs` (ascending), into `out` (cleared first).
    fn fill_ids(&mut self, docs: &[DocId], out: &mut ValueBatch) {
        out.clear();
        for &doc in docs {
            out.push(self.ids(doc));
        }
    }
}

/// A segment's sorted distinct values.
pub struct Dictionary {
    terms: Vec<Arc<[u8]>>,
}

impl Dictionary {
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

pub(super) fn encode_dictionary(terms: &[Arc<[u8]>], out: &mut Vec<u8>) {
    write_vint(out, terms.len() as u64);
    for t in terms {
        write_vint(out, t.len() as u64);
        out.extend_from_slice(t);
    }
}

pub(super) fn decode_dictionary(bytes: &[u8], file: &str) -> Result<Dictionary> {
    let mut r = ByteReader::new(file, bytes);
    let count = r.vint()? as usize;
    if count > bytes.len() {
        return Err(Error::corrupt(file, "keyword dictionary counts more terms than it has bytes"));
    }
    let mut terms: Vec<Arc<[u8]>> = Vec::with_capacity(count);
    for _ in 0..count {
        let len = r.vint()? as usize;
        let term: Arc<[u8]> = r.take(len)?.into();
        if terms.last().is_some_and(|prev| *prev >= term) {
            return Err(Error::corrupt(file, "keyword dictionary out of order"));
        }
        terms.push(term);
    }
    Ok(Dictionary { terms })
}

pub(super) struct DiskKeywords {
    pub ords: Cursor<DiskSource>,
    pub dictionary: Arc<Dictionary>,
}

impl KeywordValues for DiskKeywords {
    fn ids(&mut self, doc: DocId) -> &[i64] {
        let terms = self.dictionary.len();
        if self.ords.values(doc).iter().any(|&o| o < 0 || o as usize >= terms) {
            let file = self.ords.source.file.name();
            needle_core::read_error::record(Error::corrupt(file, "keyword ordinal past its dictionary"));
            return &[];
        }
        self.ords.values(doc)
    }

    fn term(&self, id: i64) -> Arc<[u8]> {
        self.dictionary.terms[id as usize].clone()
    }

    fn term_count(&self) -> usize {
        self.dictionary.len()
    }

    fn fill_ids(&mut self, docs: &[DocId], out: &mut ValueBatch) {
        self.ords.fill(docs, out);
        if out.all().iter().fold(0, |acc, &o| acc | past_dictionary(o, self.dictionary.len())) < 0 {
            let file = self.ords.source.file.name();
            needle_core::read_error::record(Error::corrupt(file, "keyword ordinal past its dictionary"));
            out.clear();
            docs.iter().for_each(|_| out.push(&[]));
        }
    }
}

/// Negative when ordinal `o` is not one of a dictionary of `terms` values
/// (`o` negative, or `o - terms` not): sign bits and a subtraction, which
/// a compiler makes a vector loop over a batch (x86-64's baseline SSE2 has
/// no 64-bit comparison to make one of `o < 0 || o >= terms`).
fn past_dictionary(o: i64, terms: usize) -> i64 {
    let terms = i64::try_from(terms).unwrap_or(i64::MAX);
    o | !o.wrapping_sub(terms)
}

/// The values an in-memory keyword column has met, in order of arrival
/// (append-only: a reader's ids stay valid as it grows).
#[derive(Default)]
pub struct MemTerms {
    terms: RwLock<Vec<Arc<[u8]>>>,
    ids: RwLock<FxHashMap<Arc<[u8]>, i64>>,
}

impl MemTerms {
    /// The id of `term`, added if new (only the segment's writer adds).
    pub fn id(&self, term: &[u8]) -> i64 {
        if let Some(&id) = self.ids.read().get(term) {
            return id;
        }
        let term: Arc<[u8]> = term.into();
        let mut terms = self.terms.write();
        let id = terms.len() as i64;
        terms.push(term.clone());
        self.ids.write().insert(term, id);
        id
    }

    pub fn term(&self, id: i64) -> Arc<[u8]> {
        self.terms.read()[id as usize].clone()
    }

    /// The terms in order of arrival.
    pub fn all(&self) -> Vec<Arc<[u8]>> {
        self.terms.read().clone()
    }
}

struct MemKeywords {
    ids: Box<dyn NumericValues + Send>,
    terms: Arc<MemTerms>,
}

impl KeywordValues for MemKeywords {
    fn ids(&mut self, doc: DocId) -> &[i64] {
        self.ids.values(doc)
    }

    fn term(&self, id: i64) -> Arc<[u8]> {
        self.terms.term(id)
    }

    fn term_count(&self) -> usize {
        self.terms.terms.read().len()
    }

    fn fill_ids(&mut self, docs: &[DocId], out: &mut ValueBatch) {
        self.ids.fill(docs, out)
    }
}

/// Reads an in-memory keyword column (a view's copy of its ids) as its first `max_doc` documents.
pub fn mem_keywords(ids: ColumnBuf, terms: Arc<MemTerms>, max_doc: DocId) -> Box<dyn KeywordValues + Send> {
    Box::new(MemKeywords { ids: mem_values(ids, max_doc), terms })
}

/// A keyword column as a segment file holds it: ordinals into its sorted distinct terms.
pub struct SortedKeywords {
    pub ords: ColumnBuf,
    pub terms: Vec<Arc<[u8]>>,
}

/// Ids into `terms` (any order) made ordinals into the sorted distinct terms.
pub fn sorted_keywords(ids: &ColumnBuf, terms: &[Arc<[u8]>], max_doc: DocId) -> SortedKeywords {
    let mut order: Vec<usize> = (0..terms.len()).collect();
    order.sort_by(|&a, &b| terms[a].cmp(&terms[b]));
    let mut ordinal = vec![0i64; terms.len()];
    let mut sorted: Vec<Arc<[u8]>> = Vec::with_capacity(terms.len());
    for &i in &order {
        if sorted.last() != Some(&terms[i]) {
            sorted.push(terms[i].clone());
        }
        ordinal[i] = sorted.len() as i64 - 1;
    }
    let mut out = ColumnBuf::default();
    let mut scratch = Vec::new();
    for doc in 0..max_doc {
        let values = ids.get(doc);
        if values.is_empty() {
            continue;
        }
        scratch.clear();
        scratch.extend(values.iter().map(|&id| ordinal[id as usize]));
        scratch.sort_unstable();
        scratch.dedup();
        out.set(doc, &scratch);
    }
    SortedKeywords { ords: out, terms: sorted }
}

#[cfg(test)]
mod tests {
    use super::super::{encode_file, footer, ColumnRef, DocValuesReader, KIND, VERSION};
    use super::*;
    use needle_storage::FileSlice;

    #[test]
    fn an_ordinal_is_past_a_dictionary_when_negative_or_not_below_its_size() {
        let ords = [i64::MIN, -2, -1, 0, 1, 4, 5, 6, i64::MAX - 1, i64::MAX];
        // A dictionary is held in memory: it has fewer than 2^63 terms.
        for terms in [0usize, 1, 5, 6, i64::MAX as usize] {
            for o in ords {
                let past = o < 0 || o as u64 >= terms as u64;
                assert_eq!(past_dictionary(o, terms) < 0, past, "ordinal {o}, {terms} terms");
            }
        }
    }

    #[test]
    fn keyword_columns_round_trip_as_sorted_ordinals() {
        let docs: Vec<Vec<&str>> = (0..2500)
            .map(|i| match i % 4 {
                0 => vec![],
                1 => vec!["pear"],
                2 => vec!["apple", "zebra", "apple"],
                _ => vec![["fig", "kiwi", "date"][i % 3]],
            })
            .collect();
        let terms = MemTerms::default();
        let mut ids = ColumnBuf::default();
        for (d, values) in docs.iter().enumerate() {
            if !values.is_empty() {
                let mut v: Vec<i64> = values.iter().map(|t| terms.id(t.as_bytes())).collect();
                v.sort_unstable();
                v.dedup();
                ids.set(d as DocId, &v);
            }
        }
        let sorted = sorted_keywords(&ids, &terms.all(), docs.len() as DocId);
        let column = ColumnRef::Keyword { ords: &sorted.ords, terms: &sorted.terms };
        let bytes = encode_file(&[(2, column)], docs.len() as DocId);
        let (len, _) = footer::verify("f.dv", &bytes, KIND, VERSION).unwrap();
        let file = FileSlice::from_vec("f.dv", bytes[..len].to_vec());
        let reader = DocValuesReader::open(file, docs.len() as DocId, VERSION).unwrap();
        assert!(reader.is_keyword(2) && reader.values(2).is_none());
        let mut column = reader.keywords(2).unwrap().unwrap();
        for (d, want) in docs.iter().enumerate() {
            let mut want: Vec<&str> = want.clone();
            want.sort_unstable();
            want.dedup();
            let ids = column.ids(d as DocId).to_vec();
            let got: Vec<String> =
                ids.iter().map(|&o| String::from_utf8(column.term(o).to_vec()).unwrap()).collect();
            assert_eq!(got, want, "doc {d}");
        }
    }
}
