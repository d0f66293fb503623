//! Binary doc values: one byte string per document (Lucene's binary doc
//! values), for values kept only as doc values. A block of the file (see
//! `mod.rs` for the directory) is an offset index and the bytes:
//!
//! ```text
//! BinaryBlock := LenBits:u8 Lengths Bytes
//! Lengths     := Packed(LenBits, documents of the block)   each document's value length + 1 (0: no value)
//! Bytes       := the values, concatenated in document order
//! ```
//!
//! The block's entry counts the documents with a value, and its `Min`/`Max`
//! are the shortest and longest value's length. Example: documents `[ab] []
//! [c]` are `02 | 23 | 61 62 63` (lengths + 1: 3, 0, 2 in 2 bits each).

use std::sync::Arc;

use needle_core::{read_error, DocId, Error, Result};
use needle_storage::counters::{self, DataKind};
use needle_storage::FileSlice;

use super::{bits_for, pack, unpack, BlockEntry, BLOCK_DOCS};
use crate::bytes::ByteReader;

/// The values of up to [`BLOCK_DOCS`] consecutive documents.
#[derive(Debug, Clone, Default)]
pub struct BinaryBlock {
    /// Document `i`'s value is `bytes[spans[i].0..spans[i].1]`, when it has one.
    spans: Vec<Option<(u32, u32)>>,
    bytes: Vec<u8>,
}

impl BinaryBlock {
    fn docs(&self) -> usize {
        self.spans.len()
    }

    fn push(&mut self, value: Option<&[u8]>) {
        self.spans.push(value.map(|v| {
            let at = self.bytes.len() as u32;
            self.bytes.extend_from_slice(v);
            (at, self.bytes.len() as u32)
        }));
    }

    fn doc(&self, i: usize) -> Option<&[u8]> {
        let (a, b) = (*self.spans.get(i)?)?;
        Some(&self.bytes[a as usize..b as usize])
    }

    /// Documents with a value among the first `docs`.
    pub(super) fn with_values(&self, docs: usize) -> u32 {
        self.spans.iter().take(docs).filter(|s| s.is_some()).count() as u32
    }

    /// The shortest and longest value's length among the first `docs` documents.
    pub(super) fn bounds(&self, docs: usize) -> Option<(i64, i64)> {
        let lens = self.spans.iter().take(docs).flatten().map(|&(a, b)| i64::from(b - a));
        lens.clone().min().zip(lens.max())
    }

    /// Appends the first `docs` documents' block (nothing when none has a value).
    pub(super) fn encode(&self, docs: usize, out: &mut Vec<u8>) {
        if self.with_values(docs) == 0 {
            return;
        }
        let lens: Vec<u64> = (0..docs)
            .map(|i| self.spans.get(i).copied().flatten().map_or(0, |(a, b)| u64::from(b - a) + 1))
            .collect();
        let width = bits_for(lens.iter().copied().max().unwrap_or(0));
        out.push(width as u8);
        pack(lens.into_iter(), width, out);
        (0..docs).filter_map(|i| self.doc(i)).for_each(|v| out.extend_from_slice(v));
    }

    fn decode(bytes: &[u8], docs: usize, entry: &BlockEntry, file: &str) -> Result<Self> {
        let mut block = BinaryBlock::default();
        if entry.docs == 0 {
            return Ok(block);
        }
        let mut r = ByteReader::new(file, bytes);
        let width = u32::from(r.u8()?);
        if width > 33 {
            return Err(r.corrupt("binary doc values length width out of range"));
        }
        let mut lens = Vec::with_capacity(docs);
        let used = unpack(&bytes[r.position()..], width, docs, &mut lens)
            .ok_or_else(|| Error::corrupt(file, "binary doc values block cut short"))?;
        r.take(used)?;
        let total: u64 = lens.iter().map(|&l| l.saturating_sub(1)).sum();
        let present = lens.iter().filter(|&&l| l > 0).count();
        if total != r.remaining() as u64 || present != entry.docs as usize {
            return Err(r.corrupt("binary doc values lengths do not match the block"));
        }
        block.bytes = r.take(r.remaining())?.to_vec();
        let mut at = 0u32;
        for len in lens {
            block.spans.push(len.checked_sub(1).map(|l| {
                at += l as u32;
                (at - l as u32, at)
            }));
        }
        if block.bounds(docs) != entry.bounds {
            return Err(Error::corrupt(file, "binary doc values block does not hold its entry's lengths"));
        }
        Ok(block)
    }
}

/// A binary column being built or held in memory, shared by `Arc` blocks as
/// [`super::ColumnBuf`] is.
#[derive(Debug, Clone, Default)]
pub struct BinaryBuf {
    pub(super) blocks: Vec<Arc<BinaryBlock>>,
}

impl BinaryBuf {
    /// Sets the value of `doc`, which must come after every document set so far.
    pub fn set(&mut self, doc: DocId, value: &[u8]) {
        let (b, i) = (doc as usize / BLOCK_DOCS, doc as usize % BLOCK_DOCS);
        if self.blocks.len() <= b {
            self.blocks.resize_with(b + 1, Arc::default);
        }
        let block = Arc::make_mut(&mut self.blocks[b]);
        while block.docs() < i {
            block.push(None);
        }
        block.push(Some(value));
    }

    /// The value of `doc`, if it has one.
    pub fn get(&self, doc: DocId) -> Option<&[u8]> {
        let (b, i) = (doc as usize / BLOCK_DOCS, doc as usize % BLOCK_DOCS);
        self.blocks.get(b)?.doc(i)
    }

    /// Approximate bytes held.
    pub fn memory(&self) -> usize {
        self.blocks.iter().map(|b| b.bytes.len() + b.spans.len() * 12).sum()
    }
}

/// What a search reads a binary column through, in memory or on disk.
pub trait BinaryValues {
    /// The value of `doc`, if it has one. A failed read records its error
    /// (see `needle_core::read_error`) and gives none.
    fn value(&mut self, doc: DocId) -> Option<&[u8]>;
}

struct MemBinary {
    column: BinaryBuf,
    max_doc: DocId,
}

impl BinaryValues for MemBinary {
    fn value(&mut self, doc: DocId) -> Option<&[u8]> {
        // Documents past the view's end are not its (the writer may have added them since).
        (doc < self.max_doc).then(|| self.column.get(doc)).flatten()
    }
}

/// Reads `column` (a view's copy) as the first `max_doc` documents.
pub fn mem_binary(column: BinaryBuf, max_doc: DocId) -> Box<dyn BinaryValues + Send> {
    Box::new(MemBinary { column, max_doc })
}

/// A binary column of a file, its last used block kept decoded.
pub(super) struct DiskBinary {
    pub file: FileSlice,
    pub entries: Arc<[BlockEntry]>,
    pub max_doc: DocId,
    pub at: Option<(usize, Arc<BinaryBlock>)>,
}

impl DiskBinary {
    pub fn block(&self, b: usize) -> Result<Arc<BinaryBlock>> {
        let Some(e) = self.entries.get(b).filter(|e| e.docs > 0) else { return Ok(Arc::default()) };
        let bytes = self.file.read(e.offset..e.offset + e.len)?;
        counters::record(DataKind::DocValues, &self.file, e.offset, e.len);
        let docs = (self.max_doc as usize - b * BLOCK_DOCS).min(BLOCK_DOCS);
        BinaryBlock::decode(&bytes, docs, e, self.file.name()).map(Arc::new)
    }
}

impl BinaryValues for DiskBinary {
    fn value(&mut self, doc: DocId) -> Option<&[u8]> {
        let (b, i) = (doc as usize / BLOCK_DOCS, doc as usize % BLOCK_DOCS);
        if doc >= self.max_doc {
            return None;
        }
        if self.at.as_ref().is_none_or(|(at, _)| *at != b) {
            match self.block(b) {
                Ok(block) => self.at = Some((b, block)),
                Err(e) => {
                    read_error::record(e);
                    self.at = None;
                    return None;
                }
            }
        }
        self.at.as_ref()?.1.doc(i)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::{encode_file, footer, ColumnRef, DocValuesReader, KIND, VERSION};
    use super::*;

    fn column(docs: &[Option<Vec<u8>>]) -> BinaryBuf {
        let mut c = BinaryBuf::default();
        for (d, v) in docs.iter().enumerate() {
            if let Some(v) = v {
                c.set(d as DocId, v);
            }
        }
        c
    }

    fn reopened(docs: &[Option<Vec<u8>>], max_doc: usize) -> DocValuesReader {
        let bytes = encode_file(&[(5, ColumnRef::Binary(&column(docs)))], max_doc as DocId);
        let (len, _) = footer::verify("f.dv", &bytes, KIND, VERSION).unwrap();
        let file = FileSlice::from_vec("f.dv", bytes[..len].to_vec());
        DocValuesReader::open(file, max_doc as DocId, VERSION).unwrap()
    }

    proptest! {
        #[test]
        fn binary_columns_round_trip(
            docs in proptest::collection::vec(
                proptest::option::of(proptest::collection::vec(any::<u8>(), 0..20)), 0..2500),
        ) {
            let reader = reopened(&docs, docs.len());
            prop_assert!(reader.is_binary(5) && reader.values(5).is_none() && reader.keywords(5).unwrap().is_none());
            let mut values = reader.binary(5).unwrap();
            for (d, want) in docs.iter().enumerate() {
                prop_assert_eq!(values.value(d as DocId), want.as_deref(), "doc {}", d);
            }
            prop_assert!(values.value(docs.len() as DocId).is_none());
            read_error::check().unwrap();
        }
    }

    #[test]
    fn example_from_the_docs() {
        let docs = [Some(b"ab".to_vec()), None, Some(b"c".to_vec())];
        let bytes = encode_file(&[(0, ColumnRef::Binary(&column(&docs)))], 3);
        assert_eq!(&bytes[..5], [0x02, 0x23, b'a', b'b', b'c']);
    }

    #[test]
    fn documents_past_max_doc_are_left_out_and_damage_is_an_error() {
        let docs: Vec<Option<Vec<u8>>> = (0..1500u32).map(|i| Some(i.to_string().into_bytes())).collect();
        let reader = reopened(&docs, 1200);
        let mut values = reader.binary(5).unwrap();
        assert_eq!(values.value(1199), Some(&b"1199"[..]));
        assert_eq!(values.value(1200), None);
        read_error::check().unwrap();
        let bytes = encode_file(&[(5, ColumnRef::Binary(&column(&docs)))], 1500);
        let (len, _) = footer::verify("f.dv", &bytes, KIND, VERSION).unwrap();
        for at in [0, 1, 7, 300] {
            let mut damaged = bytes[..len].to_vec();
            damaged[at] ^= 0x5a;
            let reader = DocValuesReader::open(FileSlice::from_vec("f.dv", damaged), 1500, VERSION).unwrap();
            read_error::clear();
            let mut values = reader.binary(5).unwrap();
            assert_eq!(values.value(3), None, "byte {at}");
            let e = read_error::check().expect_err("a damaged offset index is an error");
            assert!(e.to_string().contains("f.dv"), "{e}");
        }
    }
}
