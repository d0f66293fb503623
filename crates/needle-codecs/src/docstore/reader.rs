//! Reads a document store (format: see the module above).

use needle_core::{DocId, Error, Result};
use needle_storage::counters::{self, DataKind};
use needle_storage::{FileSlice, ReadBytes};
use zstd::zstd_safe::DDict;

use super::index::DocIndex;
use super::{record, Frame, INDEX_ENTRY_LEN, TRAILER_LEN};
use crate::bytes::{read_vint_lenient, ByteReader};

thread_local! {
    static DCTX: std::cell::RefCell<zstd::zstd_safe::DCtx<'static>> = std::cell::RefCell::new(zstd::zstd_safe::DCtx::create());
}

pub struct DocStoreReader {
    body: FileSlice,
    dict: DDict<'static>,
    dict_len: usize,
    index_start: usize,
    count: u32,
    index: DocIndex,
    /// The file's format version: 1 kept no head apart.
    version: u32,
}

/// Bytes read for a head at first: a frame's head length and an `_id` of up to 40 bytes or so.
const HEAD_GUESS: usize = 48;

impl DocStoreReader {
    /// `body` is the file without its footer (already verified), written in format `version`.
    pub fn open(body: FileSlice, version: u32) -> Result<Self> {
        let name = body.name().to_string();
        if body.len() < TRAILER_LEN {
            return Err(Error::corrupt(&name, "document store shorter than its trailer"));
        }
        let trailer = body.read(body.len() - TRAILER_LEN..body.len())?;
        let mut r = ByteReader::new(&name, &trailer);
        let dict_len = r.u64()? as usize;
        let index_start = r.u64()? as usize;
        let count = r.u32()?;
        let index_end = index_start.checked_add(count as usize * INDEX_ENTRY_LEN);
        if dict_len > index_start || index_end != Some(body.len() - TRAILER_LEN) {
            return Err(Error::corrupt(&name, "document store trailer does not match the file's size"));
        }
        let dict = DDict::try_create(&body.read(0..dict_len)?)
            .ok_or_else(|| Error::corrupt_at(&name, 0, "the compression dictionary does not load"))?;
        let index = DocIndex::build(&body, index_start, count)?;
        Ok(DocStoreReader { body, dict, dict_len, index_start, count, index, version })
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// Asks for the frames of `docs` to be read ahead, in one batch (seed
    /// 004's scheduling: the top hits' documents arrive together, not one
    /// device read after another).
    pub fn prefetch(&self, docs: &[DocId]) {
        let frames: Vec<_> =
            docs.iter().filter_map(|&d| self.index.frame(d)).map(|(frame, _)| frame).collect();
        self.body.will_need_all(&frames);
    }

    /// Where `doc`'s frame lies, and its record's length.
    fn frame(&self, doc: DocId) -> Result<(std::ops::Range<usize>, usize)> {
        self.index.frame(doc).ok_or_else(|| {
            Error::corrupt(self.body.name(), format!("document {doc} out of range ({} stored)", self.count))
        })
    }

    /// The stored record of `doc`.
    pub fn get(&self, doc: DocId) -> Result<Vec<u8>> {
        let name = self.body.name();
        let (frame, raw_len) = self.checked_frame(doc)?;
        counters::record_memory(DataKind::DocStore, INDEX_ENTRY_LEN);
        let (head, compressed) = self.split(&frame);
        let source_len = raw_len - head.len();
        let mut out = vec![0; raw_len];
        out[..head.len()].copy_from_slice(head);
        let source = &mut out[head.len()..];
        // One decompression context per thread: creating one costs more than decompressing a small document.
        let result = DCTX.with(|d| d.borrow_mut().decompress_using_ddict(source, compressed, &self.dict));
        let written = result.map_err(|code| {
            Error::corrupt(name, format!("document {doc}: {}", zstd::zstd_safe::get_error_name(code)))
        })?;
        if written != source_len {
            return Err(Error::corrupt(name, format!("document {doc} decompressed to the wrong length")));
        }
        Ok(out)
    }

    /// The store's dictionary; `None` in a store of format 1 (whose frames hold
    /// no head apart, so they cannot be copied into a store of today's format).
    pub fn dictionary(&self) -> Result<Option<Vec<u8>>> {
        match self.version {
            1 => Ok(None),
            _ => Ok(Some(self.body.read(0..self.dict_len)?.to_vec())),
        }
    }

    /// `doc`'s frame as stored, to be copied into a store with the same
    /// dictionary; `None` in a store of format 1. The frame's own header must
    /// give the source's length the index gives, as [`Self::get`] checks.
    pub fn frame_bytes(&self, doc: DocId) -> Result<Option<Frame>> {
        if self.version == 1 {
            return Ok(None);
        }
        let (frame, raw_len) = self.checked_frame(doc)?;
        Ok(Some(Frame { bytes: frame.to_vec(), raw_len }))
    }

    /// A frame's head and compressed source (format 1 kept no head apart).
    fn split<'a>(&self, frame: &'a [u8]) -> (&'a [u8], &'a [u8]) {
        match self.version {
            1 => (&[], frame),
            _ => split_head(frame),
        }
    }

    /// `doc`'s frame, read and counted, and its record's length, checked
    /// against the frame's own header: a damaged length must size no
    /// allocation, and a damaged frame must not be copied.
    fn checked_frame(&self, doc: DocId) -> Result<(ReadBytes, usize)> {
        let (range, raw_len) = self.frame(doc)?;
        let (start, len) = (range.start, range.len());
        let frame = self.body.read(range)?;
        counters::record(DataKind::DocStore, &self.body, start, len);
        let (head, compressed) = self.split(&frame);
        let damaged = |what: String| Error::corrupt_at(self.body.name(), self.body.position(start).1, what);
        let source_len = raw_len
            .checked_sub(head.len())
            .ok_or_else(|| damaged(format!("document {doc}: its head is longer than its record")))?;
        if !matches!(zstd::zstd_safe::get_frame_content_size(compressed), Ok(Some(n)) if n == source_len as u64)
        {
            return Err(damaged(format!(
                "document {doc}: its frame does not hold the {source_len} bytes the index says"
            )));
        }
        Ok((frame, raw_len))
    }

    /// The head of `doc`'s record (see `record.rs`): its `_id` and version,
    /// read without decompressing its source (in a store of format 1, which
    /// kept no head apart, cut from the whole record).
    pub fn head(&self, doc: DocId) -> Result<Vec<u8>> {
        if self.version == 1 {
            let mut whole = self.get(doc)?;
            whole.truncate(record::head_len(&whole));
            return Ok(whole);
        }
        let (range, _) = self.frame(doc)?;
        let start = range.start;
        let mut end = range.end.min(start + HEAD_GUESS);
        let mut bytes = self.body.read(start..end)?;
        let mut pos = 0;
        let head_len = read_vint_lenient(&bytes, &mut pos) as usize;
        let wanted = pos.saturating_add(head_len);
        if wanted > range.len() {
            let what = format!("document {doc}: its head runs past its frame");
            return Err(Error::corrupt_at(self.body.name(), self.body.position(start).1, what));
        }
        if wanted > bytes.len() {
            end = start + wanted;
            bytes = self.body.read(start..end)?;
        }
        counters::record_memory(DataKind::DocStore, INDEX_ENTRY_LEN);
        counters::record(DataKind::DocStore, &self.body, start, end - start);
        Ok(bytes[pos..wanted].to_vec())
    }

    /// Bytes of the dictionary, the frames (with padding) and the index.
    pub fn sizes(&self) -> (u64, u64, u64) {
        let dict = self.dict_len;
        (dict as u64, (self.index_start - dict) as u64, (self.body.len() - self.index_start) as u64)
    }
}

/// A frame of format 2: its head, and the compressed source after it. A
/// damaged head length takes the whole frame; the source's check then fails.
fn split_head(frame: &[u8]) -> (&[u8], &[u8]) {
    let mut pos = 0;
    let len = read_vint_lenient(frame, &mut pos) as usize;
    let end = pos.saturating_add(len).min(frame.len());
    (&frame[pos.min(end)..end], &frame[end..])
}
