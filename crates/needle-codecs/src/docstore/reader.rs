//! Reads a document store (format: see the module above).

use needle_core::{DocId, Error, Result};
use needle_storage::counters::{self, DataKind};
use needle_storage::FileSlice;
use zstd::zstd_safe::DDict;

use super::index::DocIndex;
use super::{INDEX_ENTRY_LEN, TRAILER_LEN};
use crate::bytes::ByteReader;

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
}

impl DocStoreReader {
    /// `body` is the file without its footer (already verified).
    pub fn open(body: FileSlice) -> Result<Self> {
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
        Ok(DocStoreReader { body, dict, dict_len, index_start, count, index })
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

    /// The stored bytes of `doc`.
    pub fn get(&self, doc: DocId) -> Result<Vec<u8>> {
        let name = self.body.name();
        let (range, raw_len) = self.index.frame(doc).ok_or_else(|| {
            Error::corrupt(name, format!("document {doc} out of range ({} stored)", self.count))
        })?;
        let (start, len) = (range.start, range.len());
        let frame = self.body.read(range)?;
        counters::record_memory(DataKind::DocStore, INDEX_ENTRY_LEN);
        counters::record(DataKind::DocStore, &self.body, start, len);
        // The frame's header says its size too: a damaged length must not size an allocation.
        if !matches!(zstd::zstd_safe::get_frame_content_size(&frame[..]), Ok(Some(n)) if n == raw_len as u64)
        {
            let what = format!("document {doc}: its frame does not hold the {raw_len} bytes the index says");
            return Err(Error::corrupt_at(name, self.body.position(start).1, what));
        }
        let mut out = Vec::with_capacity(raw_len);
        // One decompression context per thread: creating one costs more than decompressing a small document.
        let result = DCTX.with(|d| d.borrow_mut().decompress_using_ddict(&mut out, &frame[..], &self.dict));
        result.map_err(|code| {
            Error::corrupt(name, format!("document {doc}: {}", zstd::zstd_safe::get_error_name(code)))
        })?;
        if out.len() != raw_len {
            return Err(Error::corrupt(name, format!("document {doc} decompressed to the wrong length")));
        }
        Ok(out)
    }

    /// Bytes of the dictionary, the frames (with padding) and the index.
    pub fn sizes(&self) -> (u64, u64, u64) {
        let dict = self.dict_len;
        (dict as u64, (self.index_start - dict) as u64, (self.body.len() - self.index_start) as u64)
    }
}
