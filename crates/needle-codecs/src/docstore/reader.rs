//! Reads a document store (format: see the module above).

use needle_core::{DocId, Error, Result};
use needle_storage::counters::{self, DataKind};
use needle_storage::{FileSlice, ReadBytes};
use zstd::zstd_safe::DDict;

use super::index::DocIndex;
use super::{record, Frame, INDEX_ENTRY_LEN, TRAILER_LEN, ZSTD_MAGIC};
use crate::bytes::{read_vint_lenient, ByteReader};

thread_local! {
    static DCTX: std::cell::RefCell<zstd::zstd_safe::DCtx<'static>> = std::cell::RefCell::new(zstd::zstd_safe::DCtx::create());
}

pub struct DocStoreReader {
    body: FileSlice,
    dicts: Vec<DDict<'static>>,
    /// Where each dictionary ends (the first starts at 0).
    dict_ends: Vec<usize>,
    runs: Runs,
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
        let layout = match version {
            1 | 2 => {
                let dict_len = r.u64()? as usize;
                let (index_start, count) = (r.u64()? as usize, r.u32()?);
                Layout { index_start, count, runs: 0, dicts: 1, one_dict: Some(dict_len) }
            }
            _ => {
                let (runs, dicts) = (r.u32()? as usize, r.u32()? as usize);
                let (index_start, count) = (r.u64()? as usize, r.u32()?);
                Layout { index_start, count, runs, dicts, one_dict: None }
            }
        };
        // Format 2 has no runs and no dictionary ends.
        let table_entries = match layout.one_dict {
            Some(_) => Some(0),
            None => layout.runs.checked_add(layout.dicts),
        };
        // The index: fixed entries before format 4, packed since (up to the tables).
        let tables_start = table_entries
            .and_then(|n| n.checked_mul(8))
            .and_then(|tables| (body.len() - TRAILER_LEN).checked_sub(tables));
        let index_end = match version {
            1..=3 => (layout.count as usize)
                .checked_mul(INDEX_ENTRY_LEN)
                .and_then(|index| index.checked_add(layout.index_start)),
            _ => tables_start.filter(|&t| t >= layout.index_start),
        };
        let Some(tables_start) = index_end.filter(|&end| Some(end) == tables_start && layout.dicts > 0)
        else {
            return Err(Error::corrupt(&name, "document store trailer does not match the file's size"));
        };
        let (index_start, count) = (layout.index_start, layout.count);
        let (runs, dict_ends) = match layout.one_dict {
            Some(dict_len) => (vec![(0, 0)], vec![dict_len]),
            None => read_tables(&body, tables_start, layout.runs, layout.dicts)?,
        };
        if dict_ends.windows(2).any(|w| w[0] > w[1]) || dict_ends.last().is_some_and(|&end| end > index_start)
        {
            return Err(Error::corrupt(
                &name,
                "document store dictionaries overlap or run past the documents",
            ));
        }
        let first_docs_ascend = match runs.first() {
            Some(first) => first.0 == 0 && runs.windows(2).all(|w| w[0].0 < w[1].0),
            None => count == 0,
        };
        if !first_docs_ascend || runs.iter().any(|&(_, d)| d >= dict_ends.len()) {
            return Err(Error::corrupt(
                &name,
                "document store dictionary runs are out of order or name no dictionary",
            ));
        }
        let mut dicts = Vec::with_capacity(dict_ends.len());
        for (i, &end) in dict_ends.iter().enumerate() {
            let start = if i == 0 { 0 } else { dict_ends[i - 1] };
            let dict = DDict::try_create(&body.read(start..end)?).ok_or_else(|| {
                Error::corrupt_at(&name, start as u64, format!("compression dictionary {i} does not load"))
            })?;
            dicts.push(dict);
        }
        let index = match version {
            1..=3 => DocIndex::build(&body, index_start, count)?,
            _ => DocIndex::read_packed(&body, index_start..tables_start, count)?,
        };
        Ok(DocStoreReader { body, dicts, dict_ends, runs, index_start, count, index, version })
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
        let dict = &self.dicts[self.dictionary_of(doc)];
        let compressed = self.zstd_frame(compressed);
        let result = DCTX.with(|d| d.borrow_mut().decompress_using_ddict(source, &compressed, dict));
        let written = result.map_err(|code| {
            Error::corrupt(name, format!("document {doc}: {}", zstd::zstd_safe::get_error_name(code)))
        })?;
        if written != source_len {
            return Err(Error::corrupt(name, format!("document {doc} decompressed to the wrong length")));
        }
        Ok(out)
    }

    /// The store's first dictionary (new records are compressed with it);
    /// `None` in a store of format 1 (whose frames hold no head apart, so
    /// they cannot be copied into a store of today's format).
    pub fn dictionary(&self) -> Result<Option<Vec<u8>>> {
        match self.version {
            1 => Ok(None),
            _ => Ok(Some(self.body.read(0..self.dict_ends[0])?.to_vec())),
        }
    }

    /// The store's dictionaries, in their order; none in a store of format 1.
    pub fn dictionaries(&self) -> Result<Vec<Vec<u8>>> {
        if self.version == 1 {
            return Ok(Vec::new());
        }
        let starts = std::iter::once(0).chain(self.dict_ends.iter().copied());
        starts.zip(&self.dict_ends).map(|(start, &end)| Ok(self.body.read(start..end)?.to_vec())).collect()
    }

    /// The number of the dictionary `doc` was compressed with.
    pub fn dictionary_of(&self, doc: DocId) -> usize {
        let run = self.runs.partition_point(|&(first, _)| first <= doc);
        self.runs[run.saturating_sub(1)].1
    }

    /// `doc`'s frame as stored, to be copied into a store with the same
    /// dictionary; `None` in a store of format 1. The frame's own header must
    /// give the source's length the index gives, as [`Self::get`] checks.
    pub fn frame_bytes(&self, doc: DocId) -> Result<Option<Frame>> {
        if self.version == 1 {
            return Ok(None);
        }
        let (frame, raw_len) = self.checked_frame(doc)?;
        let mut bytes = frame.to_vec();
        if self.version < 5 {
            // Today's frames leave out zstd's magic number (checked above: the frame parsed).
            let at = frame.len() - self.split(&frame).1.len();
            bytes.drain(at..at + ZSTD_MAGIC.len());
        }
        Ok(Some(Frame { bytes, raw_len, dict: self.dictionary_of(doc) }))
    }

    /// A frame's compressed source as zstd reads it: format 5 stores it
    /// without zstd's magic number, put back here.
    fn zstd_frame<'a>(&self, compressed: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        if self.version < 5 {
            return compressed.into();
        }
        let mut whole = Vec::with_capacity(ZSTD_MAGIC.len() + compressed.len());
        whole.extend_from_slice(&ZSTD_MAGIC);
        whole.extend_from_slice(compressed);
        whole.into()
    }

    /// The length a compressed source's frame header gives, if it parses.
    fn content_size(&self, compressed: &[u8]) -> Option<u64> {
        if self.version < 5 {
            return zstd::zstd_safe::get_frame_content_size(compressed).ok().flatten();
        }
        // A frame header is at most 18 bytes with the magic number: put it back on the stack.
        let mut header = [0u8; 18];
        let len = compressed.len().min(header.len() - ZSTD_MAGIC.len());
        header[..ZSTD_MAGIC.len()].copy_from_slice(&ZSTD_MAGIC);
        header[ZSTD_MAGIC.len()..ZSTD_MAGIC.len() + len].copy_from_slice(&compressed[..len]);
        zstd::zstd_safe::get_frame_content_size(&header[..ZSTD_MAGIC.len() + len]).ok().flatten()
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
        if self.content_size(compressed) != Some(source_len as u64) {
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

    /// Bytes of the dictionaries, the frames (with padding) and the index (with the runs).
    pub fn sizes(&self) -> (u64, u64, u64) {
        let dict = *self.dict_ends.last().expect("a store has a dictionary");
        (dict as u64, (self.index_start - dict) as u64, (self.body.len() - self.index_start) as u64)
    }
}

/// The first document of each run compressed with one dictionary, and the dictionary's number.
type Runs = Vec<(DocId, usize)>;

/// Where the index ends, as a store's trailer says.
struct Layout {
    index_start: usize,
    count: u32,
    runs: usize,
    dicts: usize,
    /// A store of format 1 or 2: its one dictionary's length.
    one_dict: Option<usize>,
}

/// The runs and dictionary ends of a store of format 3 (`runs` and `dicts` of them at `at`).
fn read_tables(body: &FileSlice, at: usize, runs: usize, dicts: usize) -> Result<(Runs, Vec<usize>)> {
    let bytes = body.read_once(at..at + 8 * (runs + dicts))?;
    let mut r = ByteReader::new(body.name(), &bytes);
    let mut run_list = Vec::with_capacity(runs);
    for _ in 0..runs {
        run_list.push((r.u32()?, r.u32()? as usize));
    }
    let mut ends = Vec::with_capacity(dicts);
    for _ in 0..dicts {
        ends.push(r.u64()? as usize);
    }
    Ok((run_list, ends))
}

/// A frame of format 2: its head, and the compressed source after it. A
/// damaged head length takes the whole frame; the source's check then fails.
fn split_head(frame: &[u8]) -> (&[u8], &[u8]) {
    let mut pos = 0;
    let len = read_vint_lenient(frame, &mut pos) as usize;
    let end = pos.saturating_add(len).min(frame.len());
    (&frame[pos.min(end)..end], &frame[end..])
}
